"""The one door for agent child processes (CONVENTIONS item 16): start them under a supervisor.

Every process Tandem starts for the agent (shell commands, sandboxed or not; background
services; the Codex CLI) is started by :func:`spawn`, which runs it under
``supervisor.py`` (see that module): the child and everything it forks, ``setsid`` included,
is killed when the child exits, when Tandem asks, or when Tandem dies. Where Tandem may create
namespaces (root, or ``CAP_SYS_ADMIN``: :func:`can_isolate`), the child also runs in a PID and
mount namespace of its own with a fresh ``/proc``: the kernel kills the whole namespace with
it, and no process outside it (Tandem, and whatever launched Tandem) is visible. Setting
``TANDEM_PID_NAMESPACE=off`` in Tandem's environment turns that off (commands then see the
host's processes again, and ancestors' environments with them).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from .strays import (
    MARKER_ENV,
    become_subreaper,
    forget_supervisor,
    kill_strays,
    remember_supervisor,
)

__all__ = [
    "ISOLATION_ENV",
    "SUPERVISOR",
    "SpawnMode",
    "can_isolate",
    "finish",
    "isolation_wanted",
    "kill_now",
    "spawn",
    "supervised_argv",
    "terminate",
]

#: The supervisor script (standard library only, run with ``python -S -I``).
SUPERVISOR = Path(__file__).with_name("supervisor.py")

#: ``command``: everything dies with the program; ``service``: lives while a descendant lives.
SpawnMode = Literal["command", "service"]


#: ``off`` in Tandem's environment: no PID/mount namespace for any supervised program.
ISOLATION_ENV = "TANDEM_PID_NAMESPACE"
#: ``CAP_SYS_ADMIN``'s bit in ``/proc/self/status``'s ``CapEff`` mask.
_CAP_SYS_ADMIN = 21


def can_isolate() -> bool:
    """Whether supervisors started by this process can (most likely) put their program in a
    PID and mount namespace: effective uid 0, or ``CAP_SYS_ADMIN`` in the effective set
    (whatever :func:`isolation_wanted` says).

    A heuristic (a seccomp or LSM profile can still refuse ``unshare``; the supervisor then
    falls back to the subreaper design). Reads ``/proc/self/status``; ``False`` off Linux.
    """
    if not sys.platform.startswith("linux"):
        return False
    if os.geteuid() == 0:
        return True
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> _CAP_SYS_ADMIN & 1)
    except (OSError, ValueError, IndexError):
        pass
    return False


def isolation_wanted() -> bool:
    """``False`` when Tandem's environment says ``TANDEM_PID_NAMESPACE=off``, else ``True``."""
    return os.environ.get(ISOLATION_ENV, "").strip().lower() != "off"


def supervised_argv(
    argv: Sequence[str],
    *,
    mode: SpawnMode = "command",
    grace_ms: int = 500,
    isolate: bool | None = None,
) -> list[str]:
    """The command line that runs ``argv`` under a supervisor whose parent is this process.

    Args:
        argv: program and arguments; the program is looked up on ``PATH`` by the supervisor.
        mode: ``"command"`` or ``"service"`` (see ``supervisor.py``).
        grace_ms: milliseconds between SIGTERM and SIGKILL when the supervisor is terminated.
        isolate: a PID and mount namespace with a fresh ``/proc`` when the supervisor can
            create one (``MODE:auto``); ``False`` never (``MODE:off``); ``None``: as
            :func:`isolation_wanted` says.

    Returns:
        ``[sys.executable, "-S", "-I", SUPERVISOR, <pid>, <grace_ms>, <mode>:<auto|off>, "--",
        *argv]``.
    """
    return [
        sys.executable,
        "-S",
        "-I",
        str(SUPERVISOR),
        str(os.getpid()),
        str(max(0, int(grace_ms))),
        f"{mode}:{'auto' if (isolation_wanted() if isolate is None else isolate) else 'off'}",
        "--",
        *argv,
    ]


def _check_program(program: str, env: Mapping[str, str], cwd: Path) -> None:
    """Raise like ``exec`` would, before starting the supervisor (so callers keep ``OSError``)."""
    if os.sep in program:
        path = program if os.path.isabs(program) else os.path.join(cwd, program)
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", program)
        if not os.access(path, os.X_OK) or os.path.isdir(path):
            raise PermissionError(13, "Permission denied", program)
        return
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(2, "No such file or directory", program)


async def spawn(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str],
    protocol_factory: Callable[[], asyncio.SubprocessProtocol],
    mode: SpawnMode = "command",
    grace_ms: int = 500,
    isolate: bool | None = None,
    stdin: Any = asyncio.subprocess.DEVNULL,
    stdout: Any = asyncio.subprocess.PIPE,
    stderr: Any = asyncio.subprocess.PIPE,
    pass_fds: Sequence[int] = (),
) -> tuple[asyncio.SubprocessTransport, asyncio.SubprocessProtocol]:
    """Start ``argv`` under a supervisor, in a new session, with exactly ``env``.

    The supervisor's pid (``transport.get_pid()``) is also the process-group id of the
    supervisor and the program. Signal it with :func:`terminate` / :func:`kill_now`, not the
    program. This process becomes a child subreaper on first use (defence in depth: see
    :mod:`harnesses.spawn.strays`).

    Args:
        argv: program and arguments (no shell is added).
        cwd: working directory; env: the complete environment of the program (the caller
            scrubs secrets; nothing of ``os.environ`` is added).
        protocol_factory: as for ``loop.subprocess_exec``.
        mode: ``"command"`` or ``"service"``; grace_ms: SIGTERM-to-SIGKILL grace.
        isolate: run the program in a PID and mount namespace of its own when possible (see
            ``supervisor.py``; its processes then see only each other in ``/proc``);
            ``None`` (the default): unless ``TANDEM_PID_NAMESPACE=off``.
        stdin / stdout / stderr: as for ``loop.subprocess_exec``.
        pass_fds: file descriptors the program inherits under the same numbers (through the
            supervisor and its init, which never read them), e.g. the read end of a pipe that
            holds a secret so that it need not be in any environment (``subprocess`` semantics).

    Returns:
        ``(transport, protocol)`` from ``loop.subprocess_exec``.

    Raises:
        OSError: the program does not exist or is not executable (checked before starting).
    """
    if not argv:
        raise ValueError("empty argv")
    _check_program(argv[0], env, Path(cwd))
    become_subreaper()
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        protocol_factory,
        *supervised_argv(argv, mode=mode, grace_ms=grace_ms, isolate=isolate),
        cwd=cwd,
        env={**env, MARKER_ENV: str(os.getpid())},
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    remember_supervisor(transport.get_pid())
    return transport, protocol


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def terminate(supervisor_pid: int) -> None:
    """Ask a supervisor to SIGTERM its tree and SIGKILL what outlives the grace."""
    _signal(supervisor_pid, signal.SIGTERM)


def kill_now(supervisor_pid: int) -> None:
    """Ask a supervisor to SIGKILL its whole tree at once (it exits right after)."""
    _signal(supervisor_pid, signal.SIGHUP)


def finish(supervisor_pid: int) -> None:
    """After a supervisor exited: SIGKILL its process group and any stray (idempotent)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(supervisor_pid, signal.SIGKILL)
    kill_strays()
    forget_supervisor(supervisor_pid)  # after the sweep: a recycled pid must not match later
