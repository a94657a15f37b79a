"""Recognise ``apply_patch`` run through the shell (the Codex CLI's spelling) as a patch.

Codex-trained models edit files by running ``apply_patch`` with a ``*** Begin Patch`` envelope
through their shell tool. The Codex CLI intercepts such a command instead of running it
(``codex-rs/apply-patch/src/invocation.rs``, ``maybe_parse_apply_patch``). This module is
Tandem's detector: it says whether a ``shell_call``'s ``commands`` are *only* such invocations,
and extracts each envelope and its working directory. It runs nothing and reads no file.

Accepted spellings (each command line must be exactly one of them):

- ``apply_patch <<'EOF'`` … ``EOF`` (any delimiter, quoted or not, ``<<`` or ``<<-``); the body
  is taken raw, as the Codex CLI does: nothing in it is expanded or run.
- ``apply_patch '*** Begin Patch…'`` (the envelope as the one argument, without expansions).
- ``applypatch`` instead of ``apply_patch``.
- ``cd <dir> && apply_patch …`` (one literal directory, ``&&`` only: Codex's rule).
- ``bash -lc "<one of the above>"`` (also ``-c``, ``sh``, ``zsh``), when the script is a
  literal string (no ``$…`` or `` `…` `` the outer shell would expand).
- the argv forms ``["apply_patch", "*** Begin Patch…"]`` and ``["bash", "-lc", "<script>"]``
  as a whole ``commands`` list.

Anything else (a pipe, ``;``, ``||``, a redirection, a second command before or after, an
assignment prefix, an expansion in an argument) is *not* a patch: the call stays a normal
command and goes through the command policy, so an envelope smuggled next to another command
never bypasses it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "APPLY_PATCH_COMMANDS",
    "ShellPatch",
    "detect_shell_patches",
    "looks_like_envelope",
    "parse_shell_patch",
    "resolve_patch_path",
    "success_summary",
]

#: Command names the Codex CLI treats as ``apply_patch`` (``APPLY_PATCH_COMMANDS``).
APPLY_PATCH_COMMANDS = frozenset({"apply_patch", "applypatch"})
_SHELLS = frozenset({"bash", "sh", "zsh"})
_SHELL_FLAGS = frozenset({"-c", "-lc"})
_BEGIN = "*** Begin Patch"
#: ``<<[-] DELIM`` ending the first line of a heredoc command (delimiter quoted or not).
_HEREDOC_TAIL = re.compile(r"<<(-?)[ \t]*(?:'([^'\n]+)'|\"([^\"\n]+)\"|([A-Za-z0-9_.\-]+))[ \t]*$")
_MAX_DEPTH = 2


@dataclass(frozen=True, slots=True)
class ShellPatch:
    """One ``apply_patch`` invocation found in a shell command.

    Attributes:
        patch: the envelope text exactly as ``apply_patch`` would read it (heredoc body or
            argument), starting with ``*** Begin Patch``.
        workdir: the directory of a leading ``cd <dir> &&`` (as written, relative to the
            command's working directory), else ``None``.
        command: the command line the model wrote (for display).
    """

    patch: str
    workdir: str | None
    command: str


def looks_like_envelope(text: str) -> bool:
    """Whether ``text`` (after leading blanks) starts with ``*** Begin Patch``.

    A cheap test used before parsing; a padded header (``***  Begin Patch``) is not
    recognised here.
    """
    return text.lstrip().startswith(_BEGIN)


def detect_shell_patches(commands: Sequence[str]) -> list[ShellPatch] | None:
    """The ``apply_patch`` invocations of a ``shell_call``, when that is all it does.

    Args:
        commands: the call's ``action.commands`` (each a shell command line), or an argv list
            (``["apply_patch", "<envelope>"]``, ``["bash", "-lc", "<script>"]``).

    Returns:
        One :class:`ShellPatch` per command, in order, when every command is a pure
        ``apply_patch`` invocation carrying an envelope; ``None`` otherwise (the call is then
        an ordinary command for the policy and the shell).
    """
    items = [str(c) for c in commands if c is not None]
    if not items:
        return None
    argv = _from_argv(items, 0)
    if argv is not None:
        return [argv]
    found: list[ShellPatch] = []
    for command in items:
        patch = parse_shell_patch(command)
        if patch is None:
            return None
        found.append(patch)
    return found


def parse_shell_patch(command: str) -> ShellPatch | None:
    """Parse one shell command line as an ``apply_patch`` invocation.

    Args:
        command: a shell command line (a bash script).

    Returns:
        The invocation, or ``None`` when the line is anything but one accepted spelling (see
        the module docstring) or carries no ``*** Begin Patch`` envelope.
    """
    return _script(command, command, 0)


def resolve_patch_path(path: str, workdir: str | None) -> str:
    """A patch path as seen from the workspace root, given the invocation's ``cd`` directory.

    ``cd sub && apply_patch`` with ``*** Update File: a.py`` names ``sub/a.py`` (the Codex CLI
    joins the path to the effective working directory). Nothing is resolved on disk:
    confinement judges the result (``..`` or an absolute path is refused there).

    Args:
        path: the path in the envelope header.
        workdir: :attr:`ShellPatch.workdir`.

    Returns:
        ``path`` when ``workdir`` is ``None`` or ``"."``, or ``path`` is absolute; else
        ``workdir/path`` normalised lexically (``posixpath.normpath``: ``src/../a`` is ``a``,
        ``src/../../a`` stays ``../a`` and is refused by confinement).
    """
    if not workdir or workdir == "." or path.startswith("/"):
        return path
    return posixpath.normpath(posixpath.join(workdir, path))


def success_summary(changes: Sequence[tuple[str, str]]) -> str:
    """The Codex CLI's report of a landed patch (``print_summary``).

    Args:
        changes: ``(letter, path)`` pairs, letter ``"A"`` (added), ``"M"`` (modified; a moved
            file is reported under its new path) or ``"D"`` (deleted).

    Returns:
        ``"Success. Updated the following files:\\nA new.txt\\nM src/a.py\\n"``: added, then
        modified, then deleted files, each group in patch order.
    """
    lines = ["Success. Updated the following files:"]
    for letter in ("A", "M", "D"):
        lines.extend(f"{letter} {path}" for kind, path in changes if kind == letter)
    return "\n".join(lines) + "\n"


# -- internals --------------------------------------------------------------------------------


def _from_argv(argv: list[str], depth: int, shown: str | None = None) -> ShellPatch | None:
    """``[apply_patch, <envelope>]`` or ``[bash, -lc, <script>]`` as an argv."""
    shown = " ".join(argv) if shown is None else shown
    if len(argv) == 2 and argv[0] in APPLY_PATCH_COMMANDS and looks_like_envelope(argv[1]):
        return ShellPatch(argv[1], None, shown)
    if len(argv) == 3 and _is_shell(argv[0]) and argv[1] in _SHELL_FLAGS and depth < _MAX_DEPTH:
        return _script(argv[2], shown, depth + 1)
    return None


def _is_shell(word: str) -> bool:
    return word.rsplit("/", 1)[-1] in _SHELLS


def _script(src: str, shown: str, depth: int) -> ShellPatch | None:
    if _BEGIN not in src:
        return None
    text = src.strip("\n")
    head, _, rest = text.partition("\n")
    tail = _HEREDOC_TAIL.search(head)
    if tail is not None and "\n" in text:
        found = _heredoc(head[: tail.start()], tail, rest, shown)
        if found is not None:
            return found
    return _single_line(src, shown, depth)


def _heredoc(prefix: str, tail: re.Match[str], rest: str, shown: str) -> ShellPatch | None:
    """``<prefix> <<DELIM`` + body + ``DELIM``, with nothing after the delimiter line."""
    strip_tabs = tail.group(1) == "-"
    delimiter = tail.group(2) or tail.group(3) or tail.group(4)
    body: list[str] = []
    lines = rest.split("\n")
    for index, line in enumerate(lines):
        candidate = line.lstrip("\t") if strip_tabs else line
        if candidate.rstrip("\r") == delimiter:
            if any(extra.strip() for extra in lines[index + 1 :]):
                return None  # a command after the heredoc
            break
        body.append(candidate)
    else:
        return None  # unterminated: not Codex's form; the shell and the policy judge it
    patch = "\n".join(body)
    if not looks_like_envelope(patch):
        return None
    ok, workdir = _invocation(prefix)
    if not ok:
        return None
    return ShellPatch(patch + "\n", workdir, shown)


def _single_line(src: str, shown: str, depth: int) -> ShellPatch | None:
    """``apply_patch '<envelope>'`` or ``bash -lc '<script>'`` parsed as one simple command."""
    words = _words(src)
    if words is None:
        return None
    return _from_argv(words, depth, shown)


def _invocation(prefix: str) -> tuple[bool, str | None]:
    """Check ``prefix`` is ``apply_patch`` or ``cd <dir> && apply_patch``.

    Returns:
        ``(True, None)``, ``(True, <the cd directory>)``, or ``(False, None)`` when the
        prefix is anything else.
    """
    no: tuple[bool, str | None] = (False, None)
    trees = _parse(prefix)
    if trees is None or len(trees) != 1:
        return no
    tree = trees[0]
    if tree.kind == "command":
        words = _literal_words(tree)
        return (True, None) if words is not None and len(words) == 1 and _is_apply(words) else no
    if tree.kind != "list" or len(tree.parts) != 3:
        return no
    cd, operator, apply = tree.parts
    if operator.kind != "operator" or getattr(operator, "op", None) != "&&":
        return no
    if cd.kind != "command" or apply.kind != "command":
        return no
    cd_words = _literal_words(cd)
    apply_words = _literal_words(apply)
    if cd_words is None or len(cd_words) != 2 or cd_words[0] != "cd" or not cd_words[1]:
        return no
    if apply_words is None or len(apply_words) != 1 or not _is_apply(apply_words):
        return no
    return True, cd_words[1]


def _is_apply(words: list[str]) -> bool:
    return bool(words) and words[0] in APPLY_PATCH_COMMANDS


def _words(src: str) -> list[str] | None:
    """The literal words of ``src`` when it is one simple command, else ``None``."""
    trees = _parse(src)
    if trees is None or len(trees) != 1 or trees[0].kind != "command":
        return None
    return _literal_words(trees[0])


def _literal_words(node: Any) -> list[str] | None:
    """Words of a simple command; ``None`` if it has redirections, assignments or expansions."""
    words: list[str] = []
    for part in node.parts:
        if part.kind != "word" or getattr(part, "parts", None):
            return None  # redirect, assignment, $x, $(…), `…`, ~, <(…)
        words.append(part.word)
    return words


def _parse(src: str) -> list[Any] | None:
    if not src.strip() or _has_unclosed_brace(src):
        return None
    import bashlex  # lazily: its parser tables cost ~0.1-0.4 s at import (issue 15)

    try:
        return list(bashlex.parse(src))
    except Exception:  # bashlex raises several types on odd input: then it is no patch
        return None


def _has_unclosed_brace(src: str) -> bool:
    """An unclosed ``${`` sends bashlex 0.18 into an endless loop (see core.policy)."""
    start = src.find("${")
    while start != -1:
        depth = 0
        for char in src[start + 1 :]:
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    break
        if depth != 0:
            return True
        start = src.find("${", start + 2)
    return False
