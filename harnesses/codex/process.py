"""``SubprocessCodexExec``: runs ``codex exec --experimental-json`` for one turn (spec §9.3)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import shutil
import signal as signals
import tempfile
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from core.secret_handoff import handed_over
from core.tools.codex import (
    STREAM_LIMIT_ENV,
    CodexExecArgs,
    CodexOptions,
    resolve_stream_limit,
)
from harnesses.spawn import finish, kill_now, spawn, terminate

from .argv import (
    SHELL_EXCLUDE_KEY,
    SHELL_SNAPSHOT_KEY,
    build_argv,
    provider_config,
    shell_env_excludes,
)
from .binary import resolve_codex_binary
from .environment import KEY_ENV_NAMES, build_child_env, codex_home, needs_private_tmpdir
from .instructions import InstructionsSource, instructions_config

__all__ = ["STDERR_KEEP_BYTES", "CodexTurnWatch", "StallListener", "SubprocessCodexExec"]

logger = logging.getLogger("harnesses")

#: How much of stderr (the tail, in bytes) is kept for error messages.
STDERR_KEEP_BYTES = 65_536
_STDERR_IN_MESSAGE_CHARS = 4_000


class SubprocessCodexExec:
    """The real Codex CLI as a :class:`core.tools.codex.CodexExec`.

    Each :meth:`run` starts ``<codex> exec --experimental-json ...`` through the spawner
    (:mod:`harnesses.spawn`: a supervisor kills everything the CLI started when it ends or
    Tandem dies), writes the prompt to stdin and closes it, and yields stdout lines.
    When ``CODEX_HOME`` lies under the child's temp dir the child gets a private ``TMPDIR``
    inside ``CODEX_HOME``; a ``--output-schema`` file lives in a ``codex-output-schema-*``
    temp dir. Both are removed afterwards.

    The key reaches the CLI alone. With a provider override (``base_url``), it is not in the
    CLI's environment at all: Tandem writes it into a pipe, the CLI inherits the read end and
    its provider ``auth`` command reads it once (:func:`harnesses.codex.argv.key_reader`), so
    no ``/proc/<pid>/environ`` or ``cmdline`` of the supervisor, its init, the CLI or the
    commands it runs holds it, even for a root command in full access (red-team finding 6).
    Every run also adds ``shell_environment_policy.exclude`` for the key variables and turns
    the CLI's shell snapshot off (``features.shell_snapshot = false``: a login shell that
    would run with the CLI's whole environment), unless ``options.config`` sets it.

    With ``instructions``, every run reads them again (in a worker thread) and passes them as
    ``-c developer_instructions=...`` with ``-c project_doc_max_bytes=0``, so the CLI does not
    load the project's ``AGENTS.md`` files a second time (:mod:`harnesses.codex.instructions`);
    these two win over ``options.config``.

    Args:
        options: binary, base URL, API key, environment, stream limit and extra config.
        terminate_grace_seconds: seconds between SIGTERM and SIGKILL to the process group.
        use_login: run on the CLI's own sign-in (``codex login``, e.g. ChatGPT): no key
            variable in the child, no provider override (``base_url`` and ``api_key`` unused).
        inherit_key: take a key missing from ``options`` from ``env``, the parent environment
            or the start-up hand-over (default). ``False``: only ``options.api_key`` counts,
            so a keyless server gets no key at all (the desktop delegate).
        instructions: the project instructions' source, called at each run (``None``: the
            CLI loads ``AGENTS.md`` itself, as without Tandem).

    Attributes:
        active_pids: process ids of running turns (the group ids too).
        last_pid: the process id of the latest turn.
        last_stderr: stderr (tail, decoded) of the latest finished turn.
    """

    def __init__(
        self,
        options: CodexOptions | None = None,
        *,
        terminate_grace_seconds: float = 2.0,
        use_login: bool = False,
        inherit_key: bool = True,
        instructions: InstructionsSource | None = None,
    ) -> None:
        self.options = options or CodexOptions()
        self.instructions = instructions
        self.terminate_grace_seconds = terminate_grace_seconds
        self.use_login = use_login
        self.inherit_key = inherit_key
        self.active_pids: set[int] = set()
        self.last_pid: int | None = None
        self.last_stderr = ""

    def _extra_config(
        self, env: dict[str, str], key_fd: int | None = None, instructions: str | None = None
    ) -> dict[str, object]:
        """The ``--config`` pairs of a run: the provider override (with the key pipe's
        ``key_fd``), the user's config, the project ``instructions`` (``None``: none passed,
        the CLI loads its own), the shell-environment excludes, no shell snapshot."""
        config: dict[str, object] = {}
        if self.options.base_url and not self.use_login:
            config.update(provider_config(self.options.base_url, key_fd=key_fd))
        config.update(self.options.config or {})
        if instructions is not None:
            config.update(instructions_config(instructions))
        config[SHELL_EXCLUDE_KEY] = shell_env_excludes(config.get(SHELL_EXCLUDE_KEY))
        config.setdefault(SHELL_SNAPSHOT_KEY, False)
        return config

    def _take_key(self, env: dict[str, str]) -> str | None:
        """Remove the key variables from ``env`` when the key goes through the pipe (a
        provider override); return the key (``None``: none, or the CLI's own provider)."""
        if not self.options.base_url or self.use_login:
            return None
        key = env.get("CODEX_API_KEY") or env.get("OPENAI_API_KEY")
        for name in KEY_ENV_NAMES:
            env.pop(name, None)
        return key or None

    def _child_env(self) -> dict[str, str]:
        """The child's environment: with the session's key (``CODEX_API_KEY``, the provider's
        ``env_key``), or, with ``use_login``, without any key (the CLI's own sign-in)."""
        if not self.use_login and self.inherit_key:
            return build_child_env(_with_handed_over_key(self.options))
        options = dataclasses.replace(self.options, api_key=None)
        if options.env is None:
            options = dataclasses.replace(options, env=dict(os.environ))
        env = build_child_env(options, parent={})
        for name in KEY_ENV_NAMES:
            env.pop(name, None)
        if self.use_login:
            env.pop("OPENAI_BASE_URL", None)
        elif self.options.api_key:
            env["CODEX_API_KEY"] = self.options.api_key
        return env

    async def run(self, args: CodexExecArgs) -> AsyncGenerator[str, None]:
        """Run one turn; yield each stdout line (decoded, without the newline).

        Raises:
            CodexNotFoundError: no binary (a ``UserError``).
            UserError: an invalid stream limit in the environment.
            RuntimeError: ``"Codex stream idle for <n> seconds."``, a set ``signal``, a line
                over the stream limit, or ``"Codex exec exited with code <n>: <stderr>"``.
        """
        if args.signal is not None and args.signal.is_set():
            raise RuntimeError("Codex turn cancelled by signal before it started.")
        binary = resolve_codex_binary(self.options.codex_path_override)
        limit = resolve_stream_limit(self.options.codex_subprocess_stream_limit_bytes, os.environ)
        instructions = None
        if self.instructions is not None:  # read again for every turn (issue 16)
            instructions = await asyncio.to_thread(self.instructions)
        env = self._child_env()
        key_fd = _key_pipe(self._take_key(env))
        cleanup: list[Path] = []
        try:
            if needs_private_tmpdir(env):
                home = codex_home(env)
                home.mkdir(parents=True, exist_ok=True)
                private = Path(tempfile.mkdtemp(prefix=".tmp-", dir=home))
                cleanup.append(private)
                env["TMPDIR"] = str(private)
            schema_path = None
            if args.output_schema is not None:
                folder = Path(tempfile.mkdtemp(prefix="codex-output-schema-"))
                cleanup.append(folder)
                schema_path = folder / "schema.json"
                schema_path.write_text(json.dumps(args.output_schema), encoding="utf-8")
            argv = build_argv(
                args,
                output_schema_path=str(schema_path) if schema_path else None,
                extra_config=self._extra_config(env, key_fd, instructions),
            )
            async for line in self._spawn(binary, argv, env, args, limit, key_fd):
                yield line
        finally:
            if key_fd is not None:  # the CLI has its own copy (or never started)
                os.close(key_fd)
            for path in cleanup:
                shutil.rmtree(path, ignore_errors=True)

    async def _spawn(
        self,
        binary: str,
        argv: list[str],
        env: dict[str, str],
        args: CodexExecArgs,
        limit: int,
        key_fd: int | None = None,
    ) -> AsyncGenerator[str, None]:
        loop = asyncio.get_running_loop()
        transport, protocol = await spawn(
            [binary, *argv],
            cwd=os.getcwd(),
            env=env,
            protocol_factory=lambda: asyncio.subprocess.SubprocessStreamProtocol(limit, loop),
            grace_ms=int(self.terminate_grace_seconds * 1000),
            stdin=asyncio.subprocess.PIPE,
            pass_fds=() if key_fd is None else (key_fd,),
        )
        proc = asyncio.subprocess.Process(transport, protocol, loop)  # type: ignore[arg-type]
        self.last_pid = proc.pid
        self.active_pids.add(proc.pid)
        stderr = bytearray()
        assert proc.stdout is not None and proc.stderr is not None
        stderr_task = asyncio.ensure_future(_drain(proc.stderr, stderr))
        try:
            await _write_prompt(proc, args.input)
            while True:
                line = await self._next_line(proc.stdout, args, limit)
                if not line:
                    break
                yield line.decode("utf-8", "replace").rstrip("\r\n")
            code = await proc.wait()
            await stderr_task
            self.last_stderr = stderr.decode("utf-8", "replace")
            if code != 0:
                tail = self.last_stderr.strip()[-_STDERR_IN_MESSAGE_CHARS:]
                raise RuntimeError(f"Codex exec exited with code {code}: {tail}")
        finally:
            await self._stop(proc)
            if not stderr_task.done():
                stderr_task.cancel()
            await asyncio.gather(stderr_task, return_exceptions=True)
            if not self.last_stderr:
                self.last_stderr = stderr.decode("utf-8", "replace")
            self.active_pids.discard(proc.pid)

    async def _next_line(
        self, stdout: asyncio.StreamReader, args: CodexExecArgs, limit: int
    ) -> bytes:
        """The next stdout line (``b""`` at EOF), watching the idle timeout and the signal."""
        try:
            if args.idle_timeout_seconds is None and args.signal is None:
                return await stdout.readline()
            read = asyncio.ensure_future(stdout.readline())
            waiters: set[asyncio.Future[object]] = {read}  # type: ignore[arg-type]
            stop = None
            if args.signal is not None:
                stop = asyncio.ensure_future(args.signal.wait())
                waiters.add(stop)  # type: ignore[arg-type]
            try:
                done, _ = await asyncio.wait(
                    waiters, timeout=args.idle_timeout_seconds, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                for waiter in waiters:
                    waiter.cancel()
                await asyncio.gather(*waiters, return_exceptions=True)
            if read in done and not read.cancelled():
                return read.result()
            if stop is not None and stop in done:
                raise RuntimeError("Codex turn cancelled by signal.")
            raise RuntimeError(f"Codex stream idle for {args.idle_timeout_seconds:g} seconds.")
        except ValueError as exc:  # StreamReader: a line longer than the limit
            raise RuntimeError(
                f"Codex output line exceeded the stream limit of {limit} bytes (raise "
                f"codex_subprocess_stream_limit_bytes or {STREAM_LIMIT_ENV})."
            ) from exc

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        """Make sure the CLI and everything it started are gone: its supervisor SIGTERMs the
        tree, SIGKILLs what outlives the grace, and exits; SIGKILL of the group only if not."""
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        try:
            if proc.returncode is None:
                terminate(proc.pid)
                try:
                    await asyncio.wait_for(proc.wait(), self.terminate_grace_seconds + 2.0)
                except TimeoutError:
                    _signal_group(proc.pid, signals.SIGKILL)
                    await proc.wait()
        except BaseException:
            kill_now(proc.pid)  # cancelled while stopping: the supervisor kills all, no waiting
            raise
        finally:
            finish(proc.pid)  # leftovers of the group and strays (commands Codex ran)


def _with_handed_over_key(options: CodexOptions) -> CodexOptions:
    """``options`` with ``api_key`` from the start-up hand-over when neither the options nor
    their ``env`` give one (the key is no longer in ``os.environ``: ``core.secret_handoff``)."""
    if options.api_key or any(
        (options.env or {}).get(n) for n in ("CODEX_API_KEY", "OPENAI_API_KEY")
    ):
        return options
    key = handed_over("CODEX_API_KEY") or handed_over("OPENAI_API_KEY")
    return dataclasses.replace(options, api_key=key) if key else options


def _key_pipe(key: str | None) -> int | None:
    """A pipe holding ``key`` (written, write end closed); returns the read end, or ``None``
    without a key. Raises ``RuntimeError`` for a key larger than the pipe (64 KiB)."""
    if not key:
        return None
    read, write = os.pipe()  # close-on-exec: only ``pass_fds`` hands ``read`` on
    try:
        os.set_blocking(write, False)
        data = key.encode("utf-8")
        if os.write(write, data) != len(data):
            raise BlockingIOError
    except BlockingIOError:
        os.close(read)
        raise RuntimeError("The API key is too long to hand to the Codex CLI.") from None
    finally:
        os.close(write)
    return read


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _write_prompt(proc: asyncio.subprocess.Process, prompt: str) -> None:
    """Write the prompt and close stdin (the CLI waits for EOF; pitfall 8)."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(prompt.encode("utf-8"))
        await proc.stdin.drain()
        proc.stdin.close()
        await proc.stdin.wait_closed()
    except (BrokenPipeError, ConnectionResetError):
        logger.debug("codex exec closed stdin early")


async def _drain(stream: asyncio.StreamReader, sink: bytearray) -> None:
    """Read ``stream`` to EOF, keeping the last ``STDERR_KEEP_BYTES`` bytes in ``sink``."""
    while chunk := await stream.read(65_536):
        sink += chunk
        if len(sink) > STDERR_KEEP_BYTES:
            del sink[: len(sink) - STDERR_KEEP_BYTES]


StallListener = Callable[[bool, float, Callable[[], None]], None]
"""``(stalled, idle_seconds, stop)``: ``stalled`` is ``True`` when a turn produced no stdout
line for ``idle_seconds`` and ``False`` when it produced one again; ``stop`` kills it."""


class CodexTurnWatch:
    """A :class:`core.tools.codex.CodexExec` around another one: stall reports and *Stop*.

    A turn that prints no JSONL line for ``stall_seconds`` is reported to ``on_stall``
    (once, until a line arrives again); it keeps running until :meth:`stop` or the tool's own
    ``idle_timeout_seconds``. :meth:`stop` sets the signal of every running turn, so the
    inner process is terminated (its whole group, ``harnesses.spawn``) and the tool returns
    ``"Codex was stopped by the user."`` to the model (issue 17: a stalled Codex is reported
    within the configured time and can be stopped).

    Args:
        inner: the process implementation (usually :class:`SubprocessCodexExec`).
        stall_seconds: seconds without a line before a turn counts as stalled (> 0).
        on_stall: the :data:`StallListener` (called on the event loop).

    Raises:
        ValueError: ``stall_seconds`` is not a number > 0.
    """

    def __init__(
        self, inner: Any, *, stall_seconds: float, on_stall: StallListener | None = None
    ) -> None:
        if isinstance(stall_seconds, bool) or not stall_seconds > 0:
            raise ValueError("stall_seconds must be a number of seconds > 0")
        self.inner = inner
        self.stall_seconds = float(stall_seconds)
        self.on_stall = on_stall
        self._stops: set[asyncio.Event] = set()

    @property
    def running(self) -> int:
        """How many turns are running."""
        return len(self._stops)

    def stop(self) -> None:
        """Terminate every running turn (the card's *Stop*)."""
        for event in list(self._stops):
            event.set()

    def _report(self, stalled: bool, idle: float) -> None:
        if self.on_stall is None:
            return
        try:
            self.on_stall(stalled, idle, self.stop)
        except Exception:  # a viewer's failure must not break the turn
            logger.exception("codex stall listener failed")

    async def run(self, args: CodexExecArgs) -> AsyncGenerator[str, None]:
        """Run ``args`` on ``inner``, reporting stalls; same contract as ``inner.run``.

        Raises:
            RuntimeError: ``"Codex was stopped by the user."`` after :meth:`stop`, else
                whatever ``inner`` raises.
        """
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        self._stops.add(stop)
        forward = None
        if args.signal is not None:
            outer = args.signal
            forward = asyncio.ensure_future(_forward(outer, stop))
        state: dict[str, Any] = {"stalled": False, "timer": None}

        def fire() -> None:
            state["stalled"] = True
            self._report(True, self.stall_seconds)

        def arm() -> None:
            timer = state["timer"]
            if timer is not None:
                timer.cancel()
            state["timer"] = loop.call_later(self.stall_seconds, fire)

        lines = self.inner.run(dataclasses.replace(args, signal=stop))
        arm()
        try:
            async for line in lines:
                arm()
                if state["stalled"]:
                    state["stalled"] = False
                    self._report(False, 0.0)
                yield line
        except RuntimeError as exc:
            if stop.is_set() and (args.signal is None or not args.signal.is_set()):
                raise RuntimeError("Codex was stopped by the user.") from exc
            raise
        finally:
            timer = state["timer"]
            if timer is not None:
                timer.cancel()
            if state["stalled"]:
                self._report(False, 0.0)
            aclose = getattr(lines, "aclose", None)
            if aclose is not None:
                await aclose()
            if forward is not None:
                forward.cancel()
                await asyncio.gather(forward, return_exceptions=True)
            self._stops.discard(stop)


async def _forward(source: asyncio.Event, target: asyncio.Event) -> None:
    await source.wait()
    target.set()
