"""The supervisor: one small process between Tandem and every child it starts for the agent.

Run as ``python -S -I supervisor.py PARENT_PID GRACE_MS MODE[:ISOLATION] -- PROGRAM ARGS...``
(standard library only, no site, isolated mode: about 10 ms of start-up). It

1. becomes a child subreaper (``PR_SET_CHILD_SUBREAPER``), so every orphan below it (a
   ``setsid -f`` or double-forked daemon included) is reparented to it, and asks for SIGTERM
   when Tandem dies (``PR_SET_PDEATHSIG``), re-checking ``getppid()`` against ``PARENT_PID``
   afterwards for the race where Tandem died before the ``prctl``;
2. starts ``PROGRAM`` in its own process group (so the reported pid, the supervisor's, is the
   group id of both), **in a PID and mount namespace of its own when it can** (below);
3. in ``MODE`` ``command``: when the program exits, SIGKILLs every descendant (walking the
   ``PPid`` links of ``/proc/*/stat`` until none is left), reaps them and exits with the
   program's status (``128 + signal`` when it was killed by one). In ``MODE`` ``service``: it
   keeps running while any descendant lives (a background service), and exits when the last
   one is gone;
4. on SIGTERM (a timeout, the window's Kill, Tandem's death): SIGTERMs every descendant,
   gives them ``GRACE_MS`` milliseconds, then SIGKILLs what is left; on SIGHUP or SIGINT:
   SIGKILLs every descendant at once.

The namespace (``ISOLATION`` ``auto``, the default; ``off`` skips it). As root or with
``CAP_SYS_ADMIN``, the supervisor calls ``unshare(CLONE_NEWPID)`` and forks a tiny *init*: the
pid 1 of the new PID namespace. The init (still this Python process, forked) enters a new mount
namespace, makes every mount private (``MS_REC|MS_PRIVATE`` on ``/``, so nothing propagates
back), mounts a fresh ``proc`` on ``/proc``, sets ``PR_SET_PDEATHSIG(SIGKILL)``, then starts
``PROGRAM`` (pid 2, default signal handling: the init, not the program, is the namespace's
pid 1) and reaps every process of the namespace. In ``command`` mode the init exits with the
program's status as soon as the program exits; in ``service`` mode once no other process of
the namespace is left. When the init exits or is killed, **the kernel SIGKILLs every process
of the namespace** and the supervisor's ``waitpid`` returns only once they are all gone: a
process that cleared its environment (``env -i``), called ``setsid`` and killed its parent
cannot outlive the command (red-team hole 6). Inside, ``kill -9 $PPID`` / ``kill -9 1``
does nothing (the kernel ignores SIGKILL sent to a namespace's init from inside), and the
supervisor, Tandem and everything above them are not in the fresh ``/proc``, so no
ancestor's ``environ`` is readable, whoever launched Tandem (hole 7). The program's cwd and
environment are unchanged; ``ps``, ``kill``, ``pgrep`` and ``lsof`` then see only the
command's own processes (not the user's other programs, nor a background service: each has
its namespace; the window's Kill stops services).

When ``unshare`` fails (an unprivileged user, a container without ``CAP_SYS_ADMIN``), the
supervisor falls back to the subreaper design above (no namespace; Tandem's strays sweep is the
second line, see ``strays.py``). An *unprivileged user namespace* would give the same isolation
to a normal user, but inside it ``sudo`` and setuid programs stop working, so it is not used.
When only the ``proc`` mount fails (a container whose security profile forbids ``mount``), the
PID namespace still kills everything, but ``/proc`` keeps showing the host's processes. A root
command in full mode is not contained by any of this (it can mount, load modules, write
``/proc/sys``): the namespace stops accidents and process tricks, not a hostile root.

Both the supervisor and its init are *undumpable* (``PR_SET_DUMPABLE 0``, red-team finding
6): a same-uid process can neither read their ``/proc/<pid>/environ`` or ``mem`` nor attach to
them; their ``/proc`` entries are owned by root. Root still can, which is why callers keep
secrets out of the environment they pass (the Codex key goes through a pipe, see
``harnesses/codex/process.py``). Reaping and killing need neither: ``/proc/<pid>/stat`` stays
world-readable and signals are not affected.

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
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_CLONE_NEWNS = 0x00020000
_CLONE_NEWPID = 0x20000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000
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


def _unshare_pid(libc: ctypes.CDLL) -> bool:
    """``unshare(CLONE_NEWPID)``: this process's next child is pid 1 of a new PID namespace.
    Returns ``False`` (and changes nothing) without the privilege."""
    return bool(libc.unshare(_CLONE_NEWPID) == 0)


def _fresh_proc(libc: ctypes.CDLL) -> bool:
    """In the namespace's init: a mount namespace of its own, every mount private (nothing
    propagates back to the host), a ``proc`` of the new PID namespace on ``/proc``. Returns
    whether ``/proc`` is the fresh one."""
    if libc.unshare(_CLONE_NEWNS) != 0:
        return False
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return False
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    return bool(libc.mount(b"proc", b"/proc", b"proc", flags, None) == 0)


def _init(libc: ctypes.CDLL, argv: list[str], service: bool, alive: int) -> int:
    """The namespace's pid 1 (a fork of the supervisor): start ``argv``, reap everything, and
    return the exit code (the program's; ``128 + signal`` when a signal killed it).

    ``alive`` is the non-blocking read end of a pipe whose write end only the supervisor
    holds: end-of-file means the supervisor died before ``PR_SET_PDEATHSIG`` took effect.
    """
    _prctl(libc, _PR_SET_PDEATHSIG, signal.SIGKILL)
    _prctl(libc, _PR_SET_DUMPABLE, 0)  # inherited from the fork already; stated for pid 1
    try:
        gone = os.read(alive, 1) == b""
    except BlockingIOError:  # the writer is alive (it never writes)
        gone = False
    os.close(alive)
    if gone:
        return 128 + signal.SIGKILL
    _fresh_proc(libc)
    program = _start(argv)
    code: int | None = None
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:  # nothing left in the namespace
            return code if code is not None else 128 + signal.SIGKILL
        if pid == program and code is None:
            code = _exit_code([status])
            if not service:  # the kernel kills the rest of the namespace when pid 1 exits
                return code


def _start_isolated(libc: ctypes.CDLL, argv: list[str], service: bool) -> int | None:
    """Fork the namespace's init (see the module docstring) and return its pid, or ``None``
    when this process may not create a PID namespace (the caller then starts ``argv``)."""
    if not _unshare_pid(libc):
        return None
    alive, keep = os.pipe()  # both close-on-exec; ``keep`` stays open here until exit
    os.set_blocking(alive, False)
    pid = os.fork()
    if pid == 0:  # the init: it never returns into the supervisor's code
        code = 127
        try:
            os.close(keep)
            code = _init(libc, argv, service, alive)
        except SystemExit as exc:  # _start: the program cannot be started
            code = exc.code if isinstance(exc.code, int) else 127
        except BaseException:  # pid 1 must exit, never unwind
            code = 127
        finally:
            os._exit(code)
    os.close(alive)
    return pid


def _parse(args: list[str]) -> tuple[int, float, bool, bool, list[str]] | None:
    """``(parent pid, grace in seconds, service?, isolate?, argv)``, or ``None`` on misuse."""
    if len(args) < 5 or args[3] != "--":
        return None
    mode, _, isolation = args[2].partition(":")
    if mode not in ("command", "service") or isolation not in ("", "auto", "off"):
        return None
    try:
        return int(args[0]), int(args[1]) / 1000, mode == "service", isolation != "off", args[4:]
    except ValueError:
        return None


def main(args: list[str]) -> int:
    """Supervise ``args`` (``PARENT_PID GRACE_MS MODE[:ISOLATION] -- PROGRAM ...``, with
    ``MODE`` ``command`` or ``service`` and ``ISOLATION`` ``auto`` (default) or ``off``);
    return the exit code."""
    parsed = _parse(args)
    if parsed is None:
        os.write(
            2,
            b"usage: supervisor.py PARENT_PID GRACE_MS command|service[:auto|:off] -- PROGRAM...\n",
        )
        return 125
    parent, grace_s, service, isolate, argv = parsed
    signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)
    libc = ctypes.CDLL(None, use_errno=True)
    # Undumpable: same-uid processes (the program's own commands) cannot read this process's
    # ``environ`` or ``mem`` or attach to it; its /proc files become
    # root-owned. ``exec`` resets the flag, so the program and its commands stay dumpable.
    _prctl(libc, _PR_SET_DUMPABLE, 0)
    _prctl(libc, _PR_SET_CHILD_SUBREAPER, 1)
    _prctl(libc, _PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # Tandem died before the prctl took effect
        return 128 + signal.SIGTERM
    child = (_start_isolated(libc, argv, service) if isolate else None) or _start(argv)
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
