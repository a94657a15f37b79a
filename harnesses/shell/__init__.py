"""Local shell executor for ``ShellTool``: subprocesses, optional bubblewrap sandbox."""

from .environment import build_env, is_secret
from .events import (
    ShellCommandFinished,
    ShellCommandStarted,
    ShellEvent,
    ShellListener,
    ShellOutputChunk,
)
from .executor import DEFAULT_TIMEOUT_MS, SubprocessShellExecutor
from .output import BoundedCapture, fit_texts
from .sandbox import (
    SandboxMode,
    bwrap_argv,
    find_bwrap,
    sandbox_available,
    sandbox_unavailable_reason,
)

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "BoundedCapture",
    "SandboxMode",
    "ShellCommandFinished",
    "ShellCommandStarted",
    "ShellEvent",
    "ShellListener",
    "ShellOutputChunk",
    "SubprocessShellExecutor",
    "build_env",
    "bwrap_argv",
    "find_bwrap",
    "fit_texts",
    "is_secret",
    "sandbox_available",
    "sandbox_unavailable_reason",
]
