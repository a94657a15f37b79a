"""Typed notifications the shell executor sends while commands run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "ShellCommandFinished",
    "ShellCommandStarted",
    "ShellEvent",
    "ShellListener",
    "ShellOutputChunk",
]


@dataclass(frozen=True, slots=True)
class ShellCommandStarted:
    """A command was spawned.

    Attributes:
        call_id: the ``shell_call``'s id; ``command_index``: position in ``action.commands``.
        command: the command line; ``pid``: the process (and process-group) id.
        working_directory: the cwd; ``sandboxed``: runs under ``bwrap``;
        sandbox_mode: the requested mode; ``sandbox_unavailable``: why a requested sandbox
            could not be used (``None`` otherwise).
    """

    call_id: str
    command_index: int
    command: str
    pid: int
    working_directory: str
    sandboxed: bool
    sandbox_mode: str
    sandbox_unavailable: str | None = None
    type: Literal["shell_command_started"] = "shell_command_started"


@dataclass(frozen=True, slots=True)
class ShellOutputChunk:
    """Decoded text read from one stream, in order (``stream`` is ``stdout`` or ``stderr``)."""

    call_id: str
    command_index: int
    stream: Literal["stdout", "stderr"]
    text: str
    type: Literal["shell_output_chunk"] = "shell_output_chunk"


@dataclass(frozen=True, slots=True)
class ShellCommandFinished:
    """A command ended.

    Attributes:
        exit_code: the exit status (128 + signal number when killed by a signal), ``None`` on
            timeout; ``timed_out``: killed after ``timeout_ms``; ``duration_ms``: wall time in
            milliseconds; ``sandboxed``: ran under ``bwrap``; ``dropped_bytes``: output bytes not
            kept (stdout + stderr).
    """

    call_id: str
    command_index: int
    exit_code: int | None
    timed_out: bool
    duration_ms: int
    sandboxed: bool
    dropped_bytes: int = 0
    type: Literal["shell_command_finished"] = "shell_command_finished"


ShellEvent: TypeAlias = ShellCommandStarted | ShellOutputChunk | ShellCommandFinished

#: Receives every event; may be sync or async. Exceptions it raises are logged and ignored.
ShellListener: TypeAlias = Callable[[ShellEvent], "Awaitable[None] | None"]
