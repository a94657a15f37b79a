"""Defence in depth: Tandem is a child subreaper and kills agent processes reparented to it.

A command can SIGKILL its own supervisor (``kill -9 $PPID``); its descendants are then
reparented to the nearest subreaper, which is Tandem once :func:`become_subreaper` ran. They
are recognised as agent processes (and not as Tandem's own children such as Playwright's driver
or git) by the marker variable :data:`MARKER_ENV` in their exec-time environment, or by a
session id that a supervisor created.

This sweep matters only when the supervisor could not create a PID namespace (an unprivileged
user: see ``supervisor.py``). In a namespace, ``kill -9 $PPID`` reaches the namespace's init,
which the kernel protects, the supervisor is not visible, and every process of the command
dies with the namespace. Known limit without a namespace: a process that re-executes itself
with an empty environment (``env -i``) *and* calls ``setsid`` after killing its supervisor is
not recognised; it is still killed by Tandem's exit only if it is in a supervisor's group.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

__all__ = [
    "MARKER_ENV",
    "become_subreaper",
    "forget_supervisor",
    "kill_strays",
    "remember_supervisor",
    "set_undumpable",
]

#: Set in the environment of every supervised program: ``TANDEM_SPAWNED=<Tandem's pid>``.
MARKER_ENV = "TANDEM_SPAWNED"
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_state = {"subreaper": False}
_live: set[int] = set()
_sessions: set[int] = set()


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``); idempotent.

    Returns:
        Whether this process is a subreaper now.
    """
    if not _state["subreaper"]:
        _state["subreaper"] = _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    return _state["subreaper"]


def set_undumpable() -> bool:
    """``prctl(PR_SET_DUMPABLE, 0)``: same-uid processes can no longer read this process's
    ``/proc/<pid>/mem``, ``environ`` or attach to it (root still can). Returns success."""
    return _prctl(_PR_SET_DUMPABLE, 0)


def remember_supervisor(pid: int) -> None:
    """Record a supervisor just started (its pid is also its session id)."""
    _live.add(pid)
    _sessions.add(pid)


def forget_supervisor(pid: int) -> None:
    """The supervisor ``pid`` exited and its strays were swept: forget its pid and session
    (so that a later process that happens to get the same pid is not taken for a stray)."""
    _live.discard(pid)
    _sessions.discard(pid)


def _stat(pid: int) -> tuple[int, int] | None:
    """``(ppid, session id)`` of ``pid``, or ``None`` when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return int(fields[1]), int(fields[3])
    except (OSError, IndexError, ValueError):
        return None


def _marked(pid: int, me: int) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return f"{MARKER_ENV}={me}".encode() in handle.read().split(b"\0")
    except OSError:
        return False


def kill_strays() -> list[int]:
    """SIGKILL and reap every agent process reparented to this one.

    Returns:
        The pids killed (empty when there was none, or off Linux).
    """
    if not os.path.isdir("/proc"):
        return []
    me = os.getpid()
    killed: list[int] = []
    for _ in range(100):
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in _live:
                continue
            pid = int(entry)
            stat = _stat(pid)
            if stat is None or stat[0] != me:
                continue
            if stat[1] in _sessions or _marked(pid, me):
                found.append(pid)
        if not found:
            return killed
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
        killed += found
    return killed
