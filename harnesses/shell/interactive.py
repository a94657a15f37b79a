"""Spot a command that waits for someone to type at a terminal (issue 13 Build 4).

Commands have no controlling terminal (the spawner starts them in a new session, stdin from
``/dev/null``), so opening ``/dev/tty`` fails at once. A command can still make a terminal of
its own (``python -c 'import pty; pty.spawn(...)'``, ``expect``, ``unbuffer``) and then wait on
it for ever. :class:`InputWaitWatch` reads ``/proc`` for the command's process tree and says
when, for ``quiet_s`` seconds in a row, a process of the tree sleeps in a read (or a
``poll``/``select``/``epoll`` wait) on a terminal, no process of the tree used CPU, the tree
did not change and the command wrote no output.

It fails closed: whatever cannot be read (a process that ended, ``/proc/<pid>/syscall``
refused by ptrace rules, an architecture whose syscall numbers are not listed) counts as
"not waiting", so an unsure watch never ends a command; the normal timeout still does.
Sources: proc(5) (``stat`` fields 3, 5, 8, 14, 15; ``task/<tid>/syscall``; ``fd/``),
the kernel's syscall tables (``arch/x86/entry/syscalls/syscall_64.tbl``,
``include/uapi/asm-generic/unistd.h``).
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass, field

__all__ = [
    "DEFAULT_INPUT_WAIT_S",
    "INPUT_WAIT_HINT",
    "InputWaitWatch",
    "TtyWait",
    "find_tty_wait",
    "process_tree",
    "read_eof_note",
]

#: Seconds of waiting on a terminal (no output, no CPU) before a command is ended.
DEFAULT_INPUT_WAIT_S = 3.0
#: What the command's output gets when it was ended for that (the issue's wording).
INPUT_WAIT_HINT = "waited for interactive input; pass -m / --no-edit / -y"

# fmt: off
#: ``machine -> (read-like syscalls: the fd is the first argument, poll-like waits)``.
_SYSCALLS: dict[str, tuple[dict[int, str], dict[int, str]]] = {
    "x86_64": (
        {0: "read", 17: "pread64", 19: "readv", 295: "preadv", 327: "preadv2"},
        {7: "poll", 23: "select", 232: "epoll_wait", 270: "pselect6", 271: "ppoll",
         281: "epoll_pwait", 441: "epoll_pwait2"},
    ),
    "aarch64": (
        {63: "read", 65: "readv", 67: "pread64", 69: "preadv", 286: "preadv2"},
        {22: "epoll_pwait", 72: "pselect6", 73: "ppoll", 441: "epoll_pwait2"},
    ),
}
# fmt: on
_SYSCALLS["amd64"] = _SYSCALLS["x86_64"]
_SYSCALLS["arm64"] = _SYSCALLS["aarch64"]
#: A terminal a person would type at: a pty's slave side, a virtual console, a serial line.
#: ``/dev/ptmx`` (the master side, held by the program that made the pty) is not one.
_TERMINAL = re.compile(r"/dev/(pts/\d+|tty\w*|console)")
#: The ``read`` builtin in command position (line start, after ``;``/``&``/``(``/``{`` or a
#: compound-command keyword).
_READ_BUILTIN = re.compile(r"(?:^|[;&(){}]|\b(?:then|do|else|if|while|until|!))\s*read(?:\s|$)")


@dataclass(frozen=True, slots=True)
class TtyWait:
    """One process found waiting on a terminal.

    Attributes:
        pid: its process id (as seen from Tandem's ``/proc``).
        name: its ``comm`` (e.g. ``"ssh-keygen"``).
        terminal: the terminal it waits on (e.g. ``"/dev/pts/3"``).
        syscall: the system call it sleeps in (``"read"``, ``"poll"``...).
    """

    pid: int
    name: str
    terminal: str
    syscall: str


def _stat(pid: int) -> tuple[str, str, int, int, int, int] | None:
    """``(comm, state, ppid, pgrp, tpgid, utime + stime)`` of ``pid``, or ``None``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    head, _, tail = raw.rpartition(b")")
    fields = tail.split()
    try:
        comm = head.split(b"(", 1)[1].decode("utf-8", "replace")
        return (
            comm,
            fields[0].decode(),
            int(fields[1]),
            int(fields[2]),
            int(fields[5]),
            int(fields[11]) + int(fields[12]),
        )
    except (IndexError, ValueError):
        return None


def process_tree(root: int) -> dict[int, tuple[str, str, int, int, int, int]]:
    """``root`` and every descendant: ``pid -> (comm, state, ppid, pgrp, tpgid, cpu_ticks)``.

    Walks the ``PPid`` links of every ``/proc/<pid>/stat`` (``task/*/children`` needs
    ``CONFIG_PROC_CHILDREN``, often missing). Empty when ``root`` is gone.
    """
    stats: dict[int, tuple[str, str, int, int, int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := _stat(int(entry))) is not None:
            stats[int(entry)] = found
    if root not in stats:
        return {}
    children: dict[int, list[int]] = {}
    for pid, info in stats.items():
        children.setdefault(info[2], []).append(pid)
    tree = {root: stats[root]}
    frontier = [root]
    while frontier:
        frontier = [child for pid in frontier for child in children.get(pid, ()) if child != pid]
        tree.update((pid, stats[pid]) for pid in frontier)
    return tree


def _terminal_of(pid: int, fd: int) -> str | None:
    try:
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return None
    return target if _TERMINAL.fullmatch(target) else None


def _syscalls(pid: int) -> list[tuple[int, int]]:
    """``(syscall number, first argument)`` of each sleeping thread of ``pid``; empty when
    unreadable (ptrace rules), running, or not in a system call."""
    found: list[tuple[int, int]] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall", "rb") as handle:
                words = handle.read().split()
            found.append((int(words[0]), int(words[1], 16)))
        except (OSError, IndexError, ValueError):
            continue
    return found


def find_tty_wait(pid: int, info: tuple[str, str, int, int, int, int]) -> TtyWait | None:
    """Whether process ``pid`` (its :func:`process_tree` entry ``info``) sleeps waiting for
    terminal input: state ``S``, and one of its threads in a read whose fd is a terminal, or
    in a ``poll``/``select``/``epoll`` wait while its stdin is a terminal whose foreground
    process group is its own. ``None`` when not, or when that cannot be told."""
    comm, state, _, pgrp, tpgid, _ = info
    tables = _SYSCALLS.get(platform.machine().lower())
    if state != "S" or tables is None:
        return None
    reads, polls = tables
    for number, first in _syscalls(pid):
        if number in reads and 0 <= first < 1 << 20:
            terminal = _terminal_of(pid, first)
            if terminal is not None:
                return TtyWait(pid, comm, terminal, reads[number])
        elif number in polls and tpgid == pgrp:
            terminal = _terminal_of(pid, 0)
            if terminal is not None:
                return TtyWait(pid, comm, terminal, polls[number])
    return None


@dataclass(slots=True)
class InputWaitWatch:
    """Successive looks at one command's process tree; see the module docstring.

    Call :meth:`observe` every few hundred milliseconds (blocking ``/proc`` reads: a few
    milliseconds for a few hundred processes; run it off the event loop).

    Args:
        root: the supervisor's pid (the command and all it starts are its descendants).
        quiet_s: seconds the wait must last, without output, CPU or a change of the tree.
    """

    root: int
    quiet_s: float = DEFAULT_INPUT_WAIT_S
    _since: float | None = field(default=None, init=False)
    _output: int = field(default=-1, init=False)
    _shape: tuple[tuple[int, int], ...] = field(default=(), init=False)

    def observe(self, now: float, output_bytes: int) -> TtyWait | None:
        """One look at the tree.

        Args:
            now: a monotonic time in seconds.
            output_bytes: bytes the command has written so far (stdout + stderr).

        Returns:
            The waiting process once the tree has waited on a terminal, unchanged, for
            ``quiet_s`` seconds up to ``now``; else ``None``.
        """
        if output_bytes != self._output:  # output flows: no need to read /proc
            self._output, self._since = output_bytes, None
            return None
        tree = process_tree(self.root)
        shape = tuple(sorted((pid, info[5]) for pid, info in tree.items()))
        waiting = next(
            (w for pid, info in tree.items() if (w := find_tty_wait(pid, info)) is not None),
            None,
        )
        if waiting is None or shape != self._shape or self._since is None:
            self._shape = shape
            self._since = now if waiting is not None else None
            return None
        return waiting if now - self._since >= self.quiet_s else None


def read_eof_note(command: str, exit_code: int | None) -> str:
    """The note for a shell ``read`` that got end of input from ``/dev/null`` (``""`` if none).

    bash's ``read`` returns 1 at end of input without a word. A line that exits with 1, runs
    ``read`` as a command and redirects or pipes nothing (no ``<`` or ``|`` anywhere, so the
    input was the command's stdin, ``/dev/null``) gets a one-line explanation; any other
    line gets none (a heuristic that errs towards silence).
    """
    if exit_code != 1 or "<" in command or "|" in command:
        return ""
    if not _READ_BUILTIN.search(command):
        return ""
    return (
        "\n[tandem: `read` got end of input: stdin is /dev/null and there is no terminal, so "
        "nobody can type an answer; put the value in the command instead (x=value, or "
        "printf 'value\\n' | ...)]\n"
    )
