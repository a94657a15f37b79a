"""How command wrappers (sudo, env, timeout, xargs, sh -c …) hand over to the command they run."""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = [
    "SHELLS",
    "WRAPPERS",
    "Strip",
    "Word",
    "program_name",
    "shell_input",
    "shell_script",
    "strip_wrapper",
]


class Word(NamedTuple):
    """One shell word after quote removal; ``dynamic`` when it holds ``$x``, ``$(…)``, ``<(…)``.

    ``raw`` is the word as written in the source (quotes and ``$HOME`` kept), for static
    expansion; empty for words that did not come from shell source (then ``source`` quotes
    ``text``).
    """

    text: str
    dynamic: bool = False
    raw: str = ""

    @property
    def source(self) -> str:
        """The word as the shell sees it: ``raw``, or ``text`` quoted when there is none."""
        return self.raw or shlex.quote(self.text)


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
        chdir: directories the wrapped command runs in (``env -C DIR``), in order.
        reads: files the wrapper itself reads (``xargs -a FILE``).
    """

    inner: list[Word]
    env: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    privileged: bool = False
    hidden_args: bool = False
    opaque: str | None = None
    chdir: list[Word] = field(default_factory=list)
    reads: list[Word] = field(default_factory=list)


SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"})
_SUDO_ARGS = {"u", "g", "p", "C", "D", "r", "t", "U", "T", "R", "h"}
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


_UNKNOWN = "--?"


def _options(
    words: list[Word],
    with_arg: set[str],
    long_with_arg: frozenset[str] | set[str] = frozenset(),
    longs: frozenset[str] | set[str] = frozenset(),
) -> tuple[int, dict[str, str]]:
    """Skip leading options; return the index of the first operand and the options seen.

    Short options may be clustered (``-fn``) and take their argument attached (``-sKILL``)
    or as the next word; long options take ``--opt=value`` or, when listed in
    ``long_with_arg``, the next word. ``--`` ends the options. When ``longs`` lists the
    program's long options, an unambiguous prefix stands for its option (getopt_long:
    ``--ch=/`` is ``--chdir=/``) and an unknown or ambiguous one is recorded under ``"--?"``.
    """
    seen: dict[str, str] = {}
    i = 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            return i + 1, seen
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            if longs and name not in longs:
                hits = [n for n in longs if n.startswith(name)]
                if len(hits) != 1:
                    seen[_UNKNOWN] = name
                    i += 1
                    continue
                name = hits[0]
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


_STDIN_FILES = ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-")


def shell_input(words: list[Word], *, source: bool = False) -> str | None:
    """Where a shell run without ``-c`` reads its script (bash(1) "INVOCATION").

    ``words`` starts after the shell's name (for ``source``/``.``, after the builtin).

    Returns:
        ``"stdin"`` when it reads standard input (no script operand, ``-s``, ``-``,
        ``/dev/stdin``); ``"hidden"`` when the script is a pipe only known at run time
        (``<(…)``, ``/dev/fd/N``); ``None`` when it runs a script file.
    """
    i = 0
    reads_stdin = False
    while not source and i < len(words):
        text = words[i].text
        if text in ("--", "-"):
            i += 1
            break
        if text.startswith("--"):
            i += 2 if text in ("--rcfile", "--init-file") else 1
            continue
        if text[:1] in ("-", "+") and len(text) > 1:
            reads_stdin = reads_stdin or "s" in text[1:]
            i += 2 if ("o" in text[1:] or "O" in text[1:]) else 1
            continue
        break
    if reads_stdin or i >= len(words):
        return None if source else "stdin"
    script = words[i]
    if script.text in _STDIN_FILES:
        return "stdin"
    if script.raw.startswith(("<(", ">(")) or script.text.startswith(("/dev/fd/", "/proc/")):
        return "hidden"
    return None


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
    if name == "nohup":
        return Strip(inner=args) if args else None
    strip = _strip_gnu(name, args)
    if strip is not None or name in _GNU_LONGS:
        return strip
    if name in ("command", "builtin", "exec"):
        start, opts = _options(args, {"a"})
        if "-v" in opts or "-V" in opts or start >= len(args):
            return None
        return Strip(inner=args[start:])
    return None


# Long options of the GNU wrappers (coreutils 9, findutils 4.9, GNU time 1.9), so that
# abbreviations resolve as getopt_long resolves them.
# fmt: off
_GNU_LONGS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "env": (frozenset({"--ignore-environment", "--null", "--unset", "--chdir", "--split-string",
                       "--block-signal", "--default-signal", "--ignore-signal",
                       "--list-signal-handling", "--debug", "--help", "--version"}),
            frozenset({"--unset", "--chdir", "--split-string"})),
    "timeout": (frozenset({"--foreground", "--kill-after", "--preserve-status", "--signal",
                           "--verbose", "--help", "--version"}),
                frozenset({"--kill-after", "--signal"})),
    "nice": (frozenset({"--adjustment", "--help", "--version"}), frozenset({"--adjustment"})),
    "stdbuf": (frozenset({"--input", "--output", "--error", "--help", "--version"}),
               frozenset({"--input", "--output", "--error"})),
    "time": (frozenset({"--output", "--append", "--format", "--portability", "--verbose",
                        "--quiet", "--help", "--version"}),
             frozenset({"--output", "--format"})),
    "xargs": (frozenset({"--arg-file", "--delimiter", "--eof", "--exit", "--help",
                         "--interactive", "--max-args", "--max-chars", "--max-lines",
                         "--max-procs", "--no-run-if-empty", "--null", "--open-tty",
                         "--process-slot-var", "--replace", "--show-limits", "--verbose",
                         "--version"}),
              frozenset({"--arg-file", "--delimiter", "--max-args", "--max-procs",
                         "--max-chars", "--process-slot-var"})),
    "ionice": (frozenset({"--class", "--classdata", "--pid", "--pgid", "--ignore", "--uid",
                          "--help", "--version"}),
               frozenset({"--class", "--classdata", "--pid", "--pgid", "--uid"})),
}
_GNU_SHORT = {"env": {"u", "C", "S"}, "timeout": {"s", "k"}, "nice": {"n"},
              "stdbuf": {"i", "o", "e"}, "time": {"o", "f"}, "ionice": {"c", "n", "p", "P", "u"},
              "xargs": {"a", "d", "E", "I", "L", "n", "P", "s"}}
# fmt: on


def _strip_gnu(name: str, args: list[Word]) -> Strip | None:
    """Strip one of the GNU wrappers in :data:`_GNU_LONGS`; ``None`` for other names."""
    if name not in _GNU_LONGS:
        return None
    longs, with_arg = _GNU_LONGS[name]
    if name == "nice" and args and re.fullmatch(r"-\d+", args[0].text):  # `nice -5 cmd`
        args = args[1:]
    start, opts = _options(args, _GNU_SHORT[name], with_arg, longs)
    if _UNKNOWN in opts:
        return Strip(inner=[], opaque=f"cannot tell what `{name} --{opts[_UNKNOWN]}` does")
    if name == "env":
        if "-S" in opts or "--split-string" in opts:
            return Strip(inner=[], opaque="`env -S` splits its command at run time")
        chdir = [_value_word(args, v) for k, v in opts.items() if k in ("-C", "--chdir")]
        start, env = _assignments(args, start)
        if start >= len(args):
            return None
        return Strip(inner=args[start:], env=env, chdir=chdir)
    if name == "timeout":
        start += 1  # the duration
    if name == "xargs":
        reads = [_value_word(args, v) for k, v in opts.items() if k in ("-a", "--arg-file")]
        slot = opts.get("--process-slot-var")
        return Strip(
            inner=args[start:] or [Word("echo")],
            hidden_args=True,
            reads=reads,
            env=[slot] if slot else [],
        )
    if start >= len(args):
        return None
    writes = [v for k, v in opts.items() if k in ("-o", "--output") and v and name == "time"]
    return Strip(inner=args[start:], writes=writes)


def _value_word(args: list[Word], value: str) -> Word:
    """The source word behind an option value (so ``env -C "$HOME"`` keeps its quoting)."""
    for word in args:
        if word.text == value:
            return word
        if word.text.endswith(value) and word.raw:
            cut = len(word.text) - len(value)
            prefix = word.text[:cut]
            if word.raw.startswith(prefix):
                return Word(value, word.dynamic, word.raw[len(prefix) :])
    return Word(value, True, "`?`")  # unknown spelling: unresolvable


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
