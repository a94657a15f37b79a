"""The supervisor: one small process between Tandem and every child it starts for the agent.

Run as ``python -S -I supervisor.py PARENT_PID GRACE_MS MODE -- PROGRAM ARGS...`` (standard
library only, no site, isolated mode: about 10 ms of start-up). It

1. becomes a child subreaper (``PR_SET_CHILD_SUBREAPER``), so every orphan below it (a
   ``setsid -f`` or double-forked daemon included) is reparented to it, and asks for SIGTERM
   when Tandem dies (``PR_SET_PDEATHSIG``), re-checking ``getppid()`` against ``PARENT_PID``
   afterwards for the race where Tandem died before the ``prctl``;
2. starts ``PROGRAM`` in its own process group (so the reported pid, the supervisor's, is the
   group id of both);
3. in ``MODE`` ``command``: when the program exits, SIGKILLs every descendant (walking the
   ``PPid`` links of ``/proc/*/stat`` until none is left), reaps them and exits with the
   program's status (``128 + signal`` when it was killed by one). In ``MODE`` ``service``: it
   keeps running while any descendant lives (a background service), and exits when the last
   one is gone;
4. on SIGTERM (a timeout, the window's Kill, Tandem's death): SIGTERMs every descendant,
   gives them ``GRACE_MS`` milliseconds, then SIGKILLs what is left; on SIGHUP or SIGINT:
   SIGKILLs every descendant at once.

Exit codes of its own: 127 when the program cannot be started, 125 on a usage error, 143 when
Tandem was already gone at start-up. It must stay importable with ``-S -I`` (no third-party or
Tandem imports).
"""

from __future__ import annotations

import _signal as signal  # the C module: ``signal`` would import enum (+10 ms of start-up)
import ctypes
import os
import sys
import time

__all__ = ["main"]

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_WAITED = (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _prctl(libc: ctypes.CDLL, option: int, value: int) -> None:
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _children_map() -> dict[int, list[int]]:
    """Parent pid -> child pids, from ``/proc/*/stat`` (zombies included: they need reaping)."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def _descendants() -> list[int]:
    """Every process below this one (pids, breadth first)."""
    tree = _children_map()
    found: list[int] = []
    frontier = [os.getpid()]
    while frontier:
        nxt: list[int] = []
        for pid in frontier:
            nxt.extend(tree.get(pid, ()))
        found.extend(nxt)
        frontier = nxt
    return found


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _reap(child: int, status: list[int]) -> None:
    """Reap every exited child; record the program's wait status in ``status``."""
    while True:
        try:
            pid, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == child and not status:
            status.append(code)


def _kill_everything(child: int, status: list[int]) -> None:
    """SIGKILL and reap descendants until none is left (new forks are caught by the rescan)."""
    for _ in range(10_000):
        _reap(child, status)
        remaining = _descendants()
        if not remaining:
            return
        _signal_all(remaining, signal.SIGKILL)
        # The killed processes become zombies of their parents; those parents are killed too,
        # so the zombies are reparented here. Wait for one SIGCHLD (bounded) before rescanning.
        signal.sigtimedwait([signal.SIGCHLD], 0.05)


def _exit_code(status: list[int]) -> int:
    if not status:
        return 128 + signal.SIGKILL
    code = status[0]
    if os.WIFSIGNALED(code):
        return 128 + os.WTERMSIG(code)
    return os.WEXITSTATUS(code) if os.WIFEXITED(code) else 1


def _start(argv: list[str]) -> int:
    try:
        return os.posix_spawnp(argv[0], argv, os.environ, setsigmask=(), setsigdef=_WAITED)
    except OSError as exc:
        os.write(2, f"tandem: cannot start {argv[0]}: {exc.strerror}\n".encode())
        sys.exit(127)


def main(args: list[str]) -> int:
    """Supervise ``args`` (``PARENT_PID GRACE_MS MODE -- PROGRAM ...``); return the exit code."""
    if len(args) < 5 or args[3] != "--" or args[2] not in ("command", "service"):
        os.write(2, b"usage: supervisor.py PARENT_PID GRACE_MS command|service -- PROGRAM...\n")
        return 125
    parent, grace_s, service, argv = (
        int(args[0]),
        int(args[1]) / 1000,
        args[2] == "service",
        args[4:],
    )
    signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)
    libc = ctypes.CDLL(None, use_errno=True)
    _prctl(libc, _PR_SET_CHILD_SUBREAPER, 1)
    _prctl(libc, _PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # Tandem died before the prctl took effect
        return 128 + signal.SIGTERM
    child = _start(argv)
    status: list[int] = []
    kill_at: float | None = None
    while True:
        _reap(child, status)
        if status and (not service or not _descendants()):
            break
        timeout = None if kill_at is None else max(0.0, kill_at - time.monotonic())
        if timeout is None:
            info = signal.sigwaitinfo(_WAITED)
            signo = info.si_signo
        else:
            got = signal.sigtimedwait(_WAITED, timeout)
            signo = got.si_signo if got is not None else -1
        if signo in (signal.SIGHUP, signal.SIGINT) or signo == -1:
            break
        if signo == signal.SIGTERM and kill_at is None:
            _signal_all(_descendants(), signal.SIGTERM)
            kill_at = time.monotonic() + grace_s
    _kill_everything(child, status)
    return _exit_code(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
