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
import struct
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
#: A ``tfd:`` line of an epoll fd's ``fdinfo``: target fd (decimal), events (hex).
_EPOLL_TARGET = re.compile(r"tfd:\s*(\d+)\s+events:\s*([0-9a-fA-F]+)")
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


def _syscalls(pid: int) -> list[tuple[int, list[int]]]:
    """``(syscall number, its six arguments)`` of each sleeping thread of ``pid``; empty when
    unreadable (ptrace rules), running, or not in a system call."""
    found: list[tuple[int, list[int]]] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall", "rb") as handle:
                words = handle.read().split()
            found.append((int(words[0]), [int(w, 16) for w in words[1:7]]))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _int32(value: int) -> int:
    """The low 32 bits of a register as a signed ``int`` (a C ``int`` argument)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _memory(pid: int, address: int, size: int) -> bytes | None:
    """``size`` bytes of ``pid``'s memory at ``address`` (``None``: unreadable)."""
    if address == 0 or not 0 < size <= 1 << 16:
        return None
    try:
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as handle:
            handle.seek(address)
            data = handle.read(size)
    except (OSError, OverflowError, ValueError):
        return None
    return data if len(data) == size else None


def _polled_fds(pid: int, name: str, args: list[int]) -> list[int] | None:
    """The fds an *infinite* ``poll``/``select``/``epoll`` wait of ``pid`` waits to read
    (``[]``: the wait has a timeout or reads nothing; ``None``: cannot be told).

    Timeouts (poll(2), select(2), epoll_wait(2)): ``poll``/``epoll_wait``/``epoll_pwait``
    take an ``int`` (negative: infinite); ``ppoll``/``pselect6``/``select``/``epoll_pwait2``
    a pointer (``NULL``: infinite). The fd set: ``struct pollfd`` (8 bytes: ``int fd``,
    ``short events``) with ``POLLIN``; the ``readfds`` bitmap; for epoll, the ``tfd:``
    lines of ``/proc/<pid>/fdinfo/<epfd>`` (proc(5)) whose events hold ``EPOLLIN``.
    """
    if name in ("poll", "ppoll"):
        infinite = _int32(args[2]) < 0 if name == "poll" else args[2] == 0
        count = args[1]
        if not infinite or count == 0:
            return []
        data = _memory(pid, args[0], 8 * count)
        if data is None:
            return None
        entries = [struct.unpack_from("=ih", data, 8 * i) for i in range(count)]
        return [fd for fd, events in entries if fd >= 0 and events & 0x1]  # POLLIN
    if name in ("select", "pselect6"):
        nfds = _int32(args[0])
        if args[4] != 0 or args[1] == 0 or not 0 < nfds <= 1 << 16:
            return []
        data = _memory(pid, args[1], (nfds + 63) // 64 * 8)
        if data is None:
            return None
        bits = int.from_bytes(data, "little")
        return [fd for fd in range(nfds) if bits >> fd & 1]
    if name.startswith("epoll"):
        infinite = args[3] == 0 if name == "epoll_pwait2" else _int32(args[3]) < 0
        if not infinite:
            return []
        try:
            with open(f"/proc/{pid}/fdinfo/{_int32(args[0])}", encoding="ascii") as handle:
                lines = handle.read().splitlines()
        except (OSError, UnicodeDecodeError):
            return None
        fds = []
        for line in lines:
            match = _EPOLL_TARGET.match(line)
            if match and int(match[2], 16) & 0x1:  # EPOLLIN
                fds.append(int(match[1]))
        return fds
    return None


def find_tty_wait(pid: int, info: tuple[str, str, int, int, int, int]) -> TtyWait | None:
    """Whether process ``pid`` (its :func:`process_tree` entry ``info``) sleeps waiting for
    terminal input: state ``S``, and one of its threads in a read whose fd is a terminal, or
    in a ``poll``/``select``/``epoll`` wait *without a timeout* whose read set holds a
    terminal, while its process group is the terminal's foreground group. A finite wait (a
    timer, a network wait, an idle event loop) is not one (red-team finding 9). ``None``
    when not, or when that cannot be told (fails closed: no kill)."""
    comm, state, _, pgrp, tpgid, _ = info
    tables = _SYSCALLS.get(platform.machine().lower())
    if state != "S" or tables is None:
        return None
    reads, polls = tables
    for number, args in _syscalls(pid):
        if number in reads and 0 <= args[0] < 1 << 20:
            terminal = _terminal_of(pid, args[0])
            if terminal is not None:
                return TtyWait(pid, comm, terminal, reads[number])
        elif number in polls and tpgid == pgrp:
            for fd in _polled_fds(pid, polls[number], args) or ():  # None: unsure, no kill
                terminal = _terminal_of(pid, fd)
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
