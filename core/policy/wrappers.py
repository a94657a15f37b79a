"""How command wrappers (sudo, env, timeout, xargs, sh -c …) hand over to the command they run."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = ["SHELLS", "WRAPPERS", "Strip", "Word", "program_name", "shell_script", "strip_wrapper"]


class Word(NamedTuple):
    """One shell word after quote removal; ``dynamic`` when it holds ``$x``, ``$(…)``, ``<(…)``."""

    text: str
    dynamic: bool = False


@dataclass(slots=True)
class Strip:
    """What stripping one wrapper gave.

    Attributes:
        inner: the wrapped command's words (may be empty when the wrapper stands alone).
        env: names of ``NAME=value`` assignments the wrapper sets (``env A=1 cmd``).
        writes: files the wrapper itself writes (``time -o FILE``).
        privileged: the wrapper raises privileges (sudo, doas).
        hidden_args: the wrapped command gets more arguments at run time (xargs).
        opaque: why the wrapped command cannot be known before it runs, or ``None``.
    """

    inner: list[Word]
    env: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    privileged: bool = False
    hidden_args: bool = False
    opaque: str | None = None


SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"})
_SUDO_ARGS = {"u", "g", "p", "C", "D", "r", "t", "U", "T", "R", "h"}
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _options(
    words: list[Word], with_arg: set[str], long_with_arg: frozenset[str] | set[str] = frozenset()
) -> tuple[int, dict[str, str]]:
    """Skip leading options; return the index of the first operand and the options seen.

    Short options may be clustered (``-fn``) and take their argument attached (``-sKILL``)
    or as the next word; long options take ``--opt=value`` or, when listed in
    ``long_with_arg``, the next word. ``--`` ends the options.
    """
    seen: dict[str, str] = {}
    i = 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            return i + 1, seen
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            if not eq and name in long_with_arg and i + 1 < len(words):
                value = words[i + 1].text
                i += 1
            seen[name] = value
            i += 1
            continue
        if not text.startswith("-") or text == "-" or re.fullmatch(r"-\d+", text):
            return i, seen
        letters = text[1:]
        for pos, letter in enumerate(letters):
            if letter in with_arg:
                value = letters[pos + 1 :]
                if not value and i + 1 < len(words):
                    value = words[i + 1].text
                    i += 1
                seen["-" + letter] = value
                break
            seen["-" + letter] = ""
        i += 1
    return i, seen


def _assignments(words: list[Word], start: int) -> tuple[int, list[str]]:
    names: list[str] = []
    i = start
    while i < len(words) and _ASSIGN.match(words[i].text):
        names.append(words[i].text.split("=", 1)[0])
        i += 1
    return i, names


def shell_script(words: list[Word]) -> tuple[bool, Word | None]:
    """For ``bash [opts] -c SCRIPT …`` return ``(True, SCRIPT)``; ``(False, None)`` without -c.

    ``words`` starts after the shell's name. ``-o``/``-O`` take an argument; ``(True, None)``
    means ``-c`` was given without a script.
    """
    has_c = False
    i = 0
    while i < len(words):
        text = words[i].text
        if text in ("--", "-"):
            i += 1
            break
        if text.startswith("--"):
            if text in ("--rcfile", "--init-file"):
                i += 1
            i += 1
            continue
        if text[:1] in ("-", "+") and len(text) > 1:
            letters = text[1:]
            if "c" in letters:
                has_c = True
            if "o" in letters or "O" in letters:
                i += 1
            i += 1
            continue
        break
    if not has_c:
        return False, None
    return True, (words[i] if i < len(words) else None)


def strip_wrapper(name: str, args: list[Word]) -> Strip | None:
    """Strip the wrapper ``name`` (a program basename) from ``args`` (the words after it).

    Returns:
        A :class:`Strip`, or ``None`` when ``name`` is not a wrapper or does not act as one
        here (``env`` alone prints the environment, ``command -v x`` is a query, ``sudo -l``
        runs nothing): the caller then judges it as an ordinary program.
    """
    if name in ("sudo", "doas"):
        with_arg = _SUDO_ARGS if name == "sudo" else {"u", "C"}
        start, opts = _options(args, with_arg)
        start, env = _assignments(args, start)
        if start >= len(args):
            if "-i" in opts or "-s" in opts:
                return Strip(inner=[], privileged=True, opaque=f"`{name}` opens a root shell")
            return None
        return Strip(inner=args[start:], env=env, privileged=True)
    if name == "env":
        start, opts = _options(args, {"u", "C", "S"})
        if "-S" in opts or "--split-string" in opts:
            return Strip(inner=[], opaque="`env -S` splits its command at run time")
        start, env = _assignments(args, start)
        if start >= len(args):
            return None
        return Strip(inner=args[start:], env=env)
    if name == "nohup":
        return Strip(inner=args) if args else None
    if name == "timeout":
        start, _ = _options(args, {"s", "k"}, {"--signal", "--kill-after"})
        if start + 1 >= len(args):
            return None
        return Strip(inner=args[start + 1 :])
    if name == "time":
        start, opts = _options(args, {"o", "f"}, {"--output", "--format"})
        if start >= len(args):
            return None
        writes = [v for k, v in opts.items() if k in ("-o", "--output") and v]
        return Strip(inner=args[start:], writes=writes)
    if name == "nice":
        if args and re.fullmatch(r"-\d+", args[0].text):  # `nice -5 cmd`
            args = args[1:]
        start, _ = _options(args, {"n"}, {"--adjustment"})
        return Strip(inner=args[start:]) if start < len(args) else None
    if name == "ionice":
        start, _ = _options(args, {"c", "n", "p", "P", "u"})
        return Strip(inner=args[start:]) if start < len(args) else None
    if name == "stdbuf":
        start, _ = _options(args, {"i", "o", "e"})
        return Strip(inner=args[start:]) if start < len(args) else None
    if name in ("command", "builtin", "exec"):
        start, opts = _options(args, {"a"})
        if "-v" in opts or "-V" in opts or start >= len(args):
            return None
        return Strip(inner=args[start:])
    if name == "xargs":
        start, _ = _options(
            args,
            {"a", "d", "E", "I", "L", "n", "P", "s"},
            {"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars"},
        )
        inner = args[start:] or [Word("echo")]
        return Strip(inner=inner, hidden_args=True)
    return None


# fmt: off
WRAPPERS = frozenset(
    {
        "sudo", "doas", "env", "nohup", "timeout", "time", "nice", "ionice", "stdbuf",
        "command", "builtin", "exec", "xargs",
    }
)
# fmt: on


def program_name(word: str) -> str:
    """The basename of a program word (``/usr/bin/git`` → ``git``)."""
    return posixpath.basename(word) if "/" in word else word
