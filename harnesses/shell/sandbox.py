"""Bubblewrap (``bwrap``) sandboxing of shell commands (PRODUCT.md "Sandbox")."""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "SandboxMode",
    "SandboxPlan",
    "bwrap_argv",
    "find_bwrap",
    "plan_sandbox",
    "sandbox_available",
    "sandbox_unavailable_reason",
]

#: ``off``: no sandbox; ``read-only``: the whole filesystem read-only; ``workspace-write``:
#: read-only except the workspace (and a private ``/tmp``).
SandboxMode = Literal["off", "read-only", "workspace-write"]
_MODES = ("off", "read-only", "workspace-write")


def find_bwrap() -> str | None:
    """The absolute path of ``bwrap`` on ``PATH``, or ``None``."""
    return shutil.which("bwrap")


@functools.cache
def _probe(bwrap: str) -> str | None:
    """Run a trivial sandboxed command once per binary; ``None`` when it works, else why not."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--unshare-pid", "--unshare-net", "--die-with-parent", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap failed: {detail[0] if detail else f'exit code {done.returncode}'}"
    return None


def sandbox_unavailable_reason() -> str | None:
    """``None`` when sandboxing works here, else a one-line reason (``"bwrap not found"``...).

    The first call runs ``bwrap ... true`` (blocking, a few ms); the answer is cached per binary.
    """
    bwrap = find_bwrap()
    if bwrap is None:
        return "bwrap not found"
    return _probe(bwrap)


def sandbox_available() -> bool:
    """Whether ``bwrap`` is on ``PATH`` and can create a sandbox here."""
    return sandbox_unavailable_reason() is None


def bwrap_argv(bwrap: str, mode: SandboxMode, workspace: Path, *, network: bool) -> list[str]:
    """The ``bwrap`` prefix for ``mode`` (the command follows after ``--``).

    Layout: ``/`` bound read-only, fresh ``/dev`` and ``/proc``, a private ``/tmp`` (tmpfs), the
    workspace bound again after it (read-write in ``workspace-write`` mode, read-only otherwise,
    so a workspace under ``/tmp`` stays visible), cwd = workspace, a new PID namespace (so every
    process of the command dies with it), ``--die-with-parent``, and ``--unshare-net`` unless
    ``network``.

    ``--new-session`` is deliberately not used: commands have no controlling terminal (the
    executor starts them in a new session with stdin from ``/dev/null``), so the TIOCSTI
    injection it guards against is impossible, and staying in the executor's process group lets
    a timeout kill reach every sandboxed process.
    """
    ws = str(workspace)
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += ["--bind" if mode == "workspace-write" else "--ro-bind", ws, ws]
    argv += ["--chdir", ws, "--unshare-pid", "--die-with-parent"]
    if not network:
        argv.append("--unshare-net")
    argv.append("--")
    return argv


@dataclass(frozen=True, slots=True)
class SandboxPlan:
    """How one command will run.

    Attributes:
        prefix: argv to put before the shell (empty when not sandboxed).
        mode: the requested mode.
        sandboxed: whether the command really runs under ``bwrap``.
        unavailable: why a requested sandbox could not be used (``None`` otherwise).
    """

    prefix: tuple[str, ...]
    mode: SandboxMode
    sandboxed: bool
    unavailable: str | None = None


def plan_sandbox(mode: SandboxMode, workspace: Path, *, network: bool) -> SandboxPlan:
    """Decide how to run under ``mode`` (may probe ``bwrap`` once, see above).

    Raises:
        ValueError: an unknown ``mode``.
    """
    if mode not in _MODES:
        raise ValueError(f"unknown sandbox mode {mode!r}; expected one of {_MODES}")
    if mode == "off":
        return SandboxPlan(prefix=(), mode=mode, sandboxed=False)
    reason = sandbox_unavailable_reason()
    bwrap = find_bwrap()
    if reason is not None or bwrap is None:
        return SandboxPlan(prefix=(), mode=mode, sandboxed=False, unavailable=reason)
    prefix = bwrap_argv(bwrap, mode, workspace, network=network)
    return SandboxPlan(prefix=tuple(prefix), mode=mode, sandboxed=True)
