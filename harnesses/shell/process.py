"""Run one command under a supervisor with bounded, streamed output and a hard timeout.

The command goes through the spawner (:mod:`harnesses.spawn`): its supervisor is the leader of
a new session and process group, and kills every descendant of the command (``setsid`` and
double-forked daemons included) when the command ends, on timeout, on cancellation and when
Tandem dies.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harnesses.spawn import finish, kill_now, spawn, terminate

from .interactive import InputWaitWatch, TtyWait
from .output import DEFAULT_HEAD_BYTES, DEFAULT_TAIL_BYTES, BoundedCapture

__all__ = ["ProcessResult", "kill_group", "run_process"]

Stream = Literal["stdout", "stderr"]
_log = logging.getLogger("harnesses")
_READ_SIZE = 64 * 1024
#: How long to wait for stdout/stderr EOF after the process group was killed, in seconds. Only a
#: process that left the group (``setsid``) while holding the pipes can make this wait expire.
_DRAIN_TIMEOUT_S = 2.0
#: Longest pause between two looks for a terminal wait, in seconds.
_INPUT_WAIT_POLL_S = 0.25


@dataclass(slots=True)
class ProcessResult:
    """How one process ended.

    Attributes:
        pid: process id of the command's supervisor (also the process-group id of the
            supervisor and the command).
        exit_code: exit status, ``128 + signal`` when killed by a signal, ``None`` on timeout.
        timed_out: killed because the timeout expired.
        stdout: kept standard output (decoded, with an omission marker if bytes were dropped).
        stderr: likewise for standard error.
        stdout_dropped_bytes / stderr_dropped_bytes: bytes of each stream not kept.
        duration_ms: wall time from spawn to exit, in milliseconds.
        input_wait: the process found waiting on a terminal when the command was ended for
            it (``run_process(input_wait_s=...)``), else ``None``; ``exit_code`` is then the
            status the ended command had (``128 + SIGTERM`` for most).
    """

    pid: int
    exit_code: int | None
    timed_out: bool
    stdout: str
    stderr: str
    stdout_dropped_bytes: int
    stderr_dropped_bytes: int
    duration_ms: int
    input_wait: TtyWait | None = None

    @property
    def dropped_bytes(self) -> int:
        """Bytes of stdout + stderr not kept."""
        return self.stdout_dropped_bytes + self.stderr_dropped_bytes


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to every process of group ``pgid``; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class _ExitAwareProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Stream protocol that also resolves ``exited`` when the process itself exits.

    ``Process.wait()`` only returns once stdout/stderr are closed too, which a background child
    holding the pipes can delay forever; the leader's exit is what starts the group cleanup.
    """

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def _spawn(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], grace_ms: int
) -> tuple[asyncio.subprocess.Process, asyncio.Future[None]]:
    """Start ``argv`` through the spawner (a supervisor in a new session, stdin from /dev/null,
    piped stdout/stderr), also returning a future that resolves when the supervisor exits."""
    loop = asyncio.get_running_loop()
    protocols: list[_ExitAwareProtocol] = []

    def factory() -> _ExitAwareProtocol:
        protocols.append(_ExitAwareProtocol(limit=_READ_SIZE, loop=loop))
        return protocols[0]

    transport, _ = await spawn(argv, cwd=cwd, env=env, protocol_factory=factory, grace_ms=grace_ms)
    return asyncio.subprocess.Process(transport, protocols[0], loop), protocols[0].exited


async def _terminate(
    proc: asyncio.subprocess.Process, exited: asyncio.Future[None], grace_s: float
) -> None:
    """Ask the supervisor to SIGTERM the tree (it SIGKILLs what outlives ``grace_s``); SIGKILL
    the group ourselves only if the supervisor does not exit in time."""
    terminate(proc.pid)
    try:
        await asyncio.wait_for(asyncio.shield(exited), grace_s + _DRAIN_TIMEOUT_S)
    except TimeoutError:
        kill_group(proc.pid, signal.SIGKILL)
        await exited


async def _pump(
    reader: asyncio.StreamReader,
    capture: BoundedCapture,
    stream: Stream,
    on_chunk: Callable[[Stream, str], Awaitable[None]] | None,
) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")("replace") if on_chunk else None
    while chunk := await reader.read(_READ_SIZE):
        capture.feed(chunk)
        if decoder is not None and on_chunk is not None:
            text = decoder.decode(chunk)
            if text:
                await on_chunk(stream, text)
    if decoder is not None and on_chunk is not None:
        text = decoder.decode(b"", final=True)
        if text:
            await on_chunk(stream, text)


async def _watch_input_wait(
    pid: int, quiet_s: float, out: BoundedCapture, err: BoundedCapture
) -> TtyWait:
    """Return once the command under supervisor ``pid`` has waited on a terminal for
    ``quiet_s`` seconds (see :class:`~harnesses.shell.interactive.InputWaitWatch`)."""
    watch = InputWaitWatch(pid, quiet_s)
    pause = min(_INPUT_WAIT_POLL_S, max(quiet_s / 4, 0.01))
    while True:
        await asyncio.sleep(pause)
        written = out.total_bytes + err.total_bytes
        try:
            found = await asyncio.to_thread(watch.observe, time.monotonic(), written)
        except Exception:  # fail closed: a broken watch never ends a command
            _log.exception("terminal-wait watch failed; the command keeps running")
            await asyncio.Event().wait()
        if found is not None:
            return found


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    # asyncio has no public way to close a finished process's pipes; the transport does it.
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


async def _first_of(exited: asyncio.Future[None], watcher: asyncio.Task[TtyWait] | None) -> None:
    """Return when ``exited`` resolves or ``watcher`` finishes; cancelling this cancels
    neither (``asyncio.wait`` leaves them to the caller)."""
    waits: set[asyncio.Future[Any]] = {exited} if watcher is None else {exited, watcher}
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_ms: int | None,
    on_start: Callable[[int], Awaitable[None]] | None = None,
    on_chunk: Callable[[Stream, str], Awaitable[None]] | None = None,
    head_bytes: int = DEFAULT_HEAD_BYTES,
    tail_bytes: int = DEFAULT_TAIL_BYTES,
    kill_grace_ms: int = 500,
    input_wait_s: float | None = None,
) -> ProcessResult:
    """Spawn ``argv`` under a supervisor, stream and collect its output, and clean up its tree.

    Args:
        argv: program and arguments (no shell is added here).
        cwd: working directory; ``env``: the complete environment.
        timeout_ms: kill the whole process group after this many milliseconds (SIGTERM, then
            SIGKILL after ``kill_grace_ms``); ``None`` for no limit.
        on_start: awaited with the pid right after spawning.
        on_chunk: awaited with ``(stream, text)`` for each decoded chunk, in order per stream
            (an incremental UTF-8 decoder keeps split multibyte characters whole).
        head_bytes / tail_bytes: bytes kept from the start / end of each stream.
        input_wait_s: end the command (as on timeout, SIGTERM then SIGKILL) once a process
            of it has waited on a terminal for this many seconds with no output and no CPU
            (:mod:`harnesses.shell.interactive`); ``None`` or ``<= 0``: never.

    Returns:
        The :class:`ProcessResult`. When the command exits, every remaining descendant (e.g. a
        background child, ``setsid`` included) is killed with SIGKILL by its supervisor.

    Raises:
        OSError: the program could not be started. On cancellation the group is killed and
            ``CancelledError`` propagates.
    """
    started = time.monotonic()
    proc, exited = await _spawn(argv, cwd=cwd, env=env, grace_ms=kill_grace_ms)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = BoundedCapture(head_bytes, tail_bytes), BoundedCapture(head_bytes, tail_bytes)
    pumps = [
        asyncio.create_task(_pump(proc.stdout, out, "stdout", on_chunk)),
        asyncio.create_task(_pump(proc.stderr, err, "stderr", on_chunk)),
    ]
    timed_out = False
    waited: TtyWait | None = None
    watcher: asyncio.Task[TtyWait] | None = None
    try:
        if on_start is not None:
            await on_start(proc.pid)
        timeout_s = timeout_ms / 1000 if timeout_ms else None
        if input_wait_s is not None and input_wait_s > 0:
            watcher = asyncio.create_task(_watch_input_wait(proc.pid, input_wait_s, out, err))
        try:
            await asyncio.wait_for(_first_of(exited, watcher), timeout_s)
        except TimeoutError:
            timed_out = True
        if watcher is not None and watcher.done() and not exited.done() and not timed_out:
            waited = watcher.result()
        if watcher is not None:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        if timed_out or waited is not None:
            await _terminate(proc, exited, kill_grace_ms / 1000)
        duration_ms = int((time.monotonic() - started) * 1000)
        finish(proc.pid)  # the supervisor killed the tree; this catches its group and strays
        _, pending = await asyncio.wait(pumps, timeout=_DRAIN_TIMEOUT_S)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
        if pending:
            _close_pipes(proc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), _DRAIN_TIMEOUT_S)
    except BaseException:
        if watcher is not None:
            watcher.cancel()
        kill_now(proc.pid)
        for task in pumps:
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(exited), _DRAIN_TIMEOUT_S)
        finish(proc.pid)
        _close_pipes(proc)
        raise
    code = proc.returncode
    exit_code = None if timed_out else (128 - code if code is not None and code < 0 else code)
    stdout, stderr = out.text(), err.text()  # text() finishes the tail trim: count drops after
    return ProcessResult(
        pid=proc.pid,
        exit_code=exit_code,
        timed_out=timed_out,
        stdout=stdout,
        stderr=stderr,
        stdout_dropped_bytes=out.dropped_bytes,
        stderr_dropped_bytes=err.dropped_bytes,
        duration_ms=duration_ms,
        input_wait=waited,
    )
