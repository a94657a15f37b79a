"""Whether a sed script provably only prints: print commands on line, range and regex addresses."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["sed_problems"]

# One address: a line number, `first~step`, `$`, or a `/regex/` with GNU's I/M flags. The
# regex runs to the first `/` not escaped by a backslash, and may hold neither a newline nor
# a `[`: GNU sed 4.9 lets a bracket expression hold the delimiter (`/[/]/p` is one address),
# so a `[` could make sed end the regex later than this parser and see a command hidden in
# what looked like a regex. Custom delimiters (`\%re%`) are not accepted either: what is
# not recognised asks.
_REGEX = r"/(?:[^/\\\n\[]|\\[^\n\[])*/[IM]*"
_ADDR1 = rf"(?:\d+~\d+|\d+|\$|{_REGEX})"
_ADDR2 = rf"(?:\d+|\$|{_REGEX}|[+~]\d+)"
# The commands that only print or stop: `p`, `P`, `l` (optional line length), `=` (the line
# number), `q`/`Q` (optional exit code). No `w`/`W`/`r`/`R`/`e`/`s`/`y`/`a`/`i`/`c`, no
# blocks, labels or comments.
_COMMAND = re.compile(
    rf"[ \t]*(?:{_ADDR1}(?:[ \t]*,[ \t]*{_ADDR2})?)?[ \t]*(?:![ \t]*)?"
    r"(?:[pP=]|l(?:[ \t]*\d+)?|[qQ](?:[ \t]*\d+)?)[ \t]*"
)
_EMPTY = re.compile(r"[ \t]*")


def sed_problems(scripts: Sequence[str], *, quiet: bool) -> list[str]:
    """Why ``sed`` with these scripts cannot be vouched for as read-only.

    The scripts (``-e`` values, or the first operand) are joined by newlines, as GNU sed
    4.9 joins them (``sed(1)``, "-e script"). A script passes only when every command,
    separated by ``;`` or a newline, is one of ``p``, ``P``, ``l [N]``, ``=``, ``q [N]``,
    ``Q [N]`` on an optional address or range (``N``, ``$``, ``N~S``, ``/re/[IM]``, and
    for the second address ``+N``/``~N``), optionally negated with ``!``. Everything else
    (``w FILE``, ``W``, ``s///w``, ``s///e``, ``e``, ``r``/``R``, blocks, comments, custom
    regex delimiters) is a problem: what cannot be analysed fails closed.

    Args:
        scripts: the script texts, in order.
        quiet: whether ``-n``/``--quiet``/``--silent`` was given (required: the read-only
            form prints only what the script asks for).

    Returns:
        Human-readable problems; empty when the scripts only print.
    """
    problems: list[str] = []
    if not quiet:
        problems.append("runs sed without `-n`; only `sed -n` with print commands is vouched for")
    if not scripts:
        problems.append("runs sed without a script Tandem can see")
        return problems
    for command in _split("\n".join(scripts)):
        if _EMPTY.fullmatch(command) or _COMMAND.fullmatch(command):
            continue
        shown = command.strip()
        if len(shown) > 40:
            shown = shown[:40] + "…"
        problems.append(
            f"runs the sed command `{shown}`, which may write, run or read other files "
            "(only print commands on line addresses are vouched for)"
        )
        break
    return problems


def _split(script: str) -> list[str]:
    """Split at `;` and newlines outside `/regex/` addresses (a backslash escapes one char)."""
    parts: list[str] = []
    current: list[str] = []
    in_regex = False
    i = 0
    while i < len(script):
        char = script[i]
        if in_regex and char == "\\" and i + 1 < len(script):
            current.append(script[i : i + 2])
            i += 2
            continue
        if char == "/":
            in_regex = not in_regex
        elif not in_regex and char in ";\n":
            parts.append("".join(current))
            current = []
            i += 1
            continue
        elif in_regex and char == "\n":
            in_regex = False  # a newline in a regex: the command will not match and asks
        current.append(char)
        i += 1
    parts.append("".join(current))
    return parts
