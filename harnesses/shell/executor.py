"""The local ``ShellTool`` executor: each command through ``bash -c`` in the workspace."""

from __future__ import annotations

import asyncio
import inspect
import logging
import shutil
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from core.secret_handoff import full_environ
from core.tools.shell import (
    ShellCallOutcome,
    ShellCommandOutput,
    ShellCommandRequest,
    ShellResult,
)
from harnesses.spawn import ServiceRegistry, starts_service

from .environment import build_env, git_config_sets_ssh_command
from .events import (
    ShellCommandFinished,
    ShellCommandStarted,
    ShellEvent,
    ShellListener,
    ShellOutputChunk,
)
from .interactive import DEFAULT_INPUT_WAIT_S, INPUT_WAIT_HINT, TtyWait, read_eof_note
from .output import DEFAULT_HEAD_BYTES, DEFAULT_TAIL_BYTES, fit_texts
from .process import Stream, run_process
from .sandbox import SandboxMode, SandboxPlan, plan_sandbox

__all__ = ["DEFAULT_TIMEOUT_MS", "SubprocessShellExecutor"]

_log = logging.getLogger("harnesses")

#: Per-command limit when the model gives none, in milliseconds.
DEFAULT_TIMEOUT_MS = 120_000
#: Exit code reported for a command that could not be started or was refused.
_NOT_RUN_EXIT_CODE = 127
#: Dropped from a sandboxed command's environment: they name sockets outside the sandbox
#: (session bus, ssh/gpg agents, X11/Wayland displays, the runtime dir that holds them all),
#: which are masked anyway (``secret_paths.DEFAULT_SOCKET_PATHS``); an abstract X11 socket
#: would stay reachable with the network on.
SANDBOX_DROPPED_ENV = frozenset(
    {
        "DBUS_SESSION_BUS_ADDRESS",
        "SSH_AUTH_SOCK",
        "GPG_AGENT_INFO",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "XDG_RUNTIME_DIR",
    }
)
#: Appended to a sandboxed service's line: bwrap's pid 1 ends the PID namespace (killing every
#: process in it) as soon as the shell exits, so the shell waits for its jobs, then for any
#: other process left in the namespace (a daemon that forked away), polling once a second.
_KEEP_SERVICE_ALIVE = (
    "\nwait\n"
    "while :; do __tandem_left=; for __tandem_p in /proc/[0-9]*; do "
    '__tandem_p=${__tandem_p#/proc/}; [ "$__tandem_p" = 1 ] || [ "$__tandem_p" = "$$" ] || '
    '{ __tandem_left=1; break; }; done; [ -n "$__tandem_left" ] || break; sleep 1; wait; done'
)


def _input_wait_text(wait: TtyWait, seconds: float) -> str:
    """The note appended to the stderr of a command ended for waiting on a terminal."""
    return (
        f"\n[tandem: command ended: it {INPUT_WAIT_HINT}. {wait.name} (pid {wait.pid}) "
        f"waited {seconds:g} s on {wait.terminal} ({wait.syscall}) with no output, and "
        f"nobody can type there]\n"
    )


def _default_shell() -> str:
    return shutil.which("bash") or "/bin/sh"


async def _after_cancelled(plan: SandboxPlan) -> None:
    """Run ``plan.after_command`` for a cancelled command; a second cancellation while it runs
    does not stop it (the thread finishes the sweep)."""
    sweep = asyncio.ensure_future(asyncio.to_thread(plan.after_command))
    try:
        repairs = await asyncio.shield(sweep)
    except asyncio.CancelledError:
        return
    except Exception:
        _log.exception("sandbox sweep after a cancelled command failed")
        return
    if repairs:
        _log.warning("cancelled sandboxed command planted git paths: %s", "; ".join(repairs))


class SubprocessShellExecutor:
    """Runs the commands of a ``shell_call`` as local subprocesses (optionally under ``bwrap``).

    Each command runs via ``<shell> -c`` in its own process group with cwd = ``workspace``,
    stdin from ``/dev/null``, a non-interactive environment without secrets
    (:func:`~harnesses.shell.environment.build_env`), and is killed on timeout. Commands of one
    call run sequentially; after a timeout the remaining commands are not run.

    Args:
        workspace: the working directory of every command (made absolute).
        sandbox: ``"off"``, ``"read-only"`` or ``"workspace-write"`` (see ``sandbox.py``).
            When ``bwrap`` is missing or unusable the command runs unsandboxed and the result
            says so (``provider_data["sandbox_unavailable"]`` and a stderr notice), unless
            ``require_sandbox`` refuses to run it.
        network: allow network access inside the sandbox (ignored when ``sandbox="off"``).
        allow_env: variable names kept although they look like secrets.
        env: extra variables (override the non-interactive defaults such as ``TERM``).
        default_timeout_ms: per-command limit in milliseconds when the action has none;
            ``None`` for no limit.
        listener: receives :data:`~harnesses.shell.events.ShellEvent` notifications.
        head_bytes / tail_bytes: bytes kept from the start / end of each stream per command.
        kill_grace_ms: time between SIGTERM and SIGKILL on timeout, in milliseconds.
        require_sandbox: refuse (exit code 127) rather than run unsandboxed.
        shell: the shell binary (default ``bash`` on ``PATH``, else ``/bin/sh``).
        services: when given, a command line ending in ``&`` starts a background service
            there (``harnesses.spawn.starts_service``) and returns after a short bounded wait.
        hidden_paths / shown_paths: secret paths the sandbox hides in addition to the
            defaults / defaults it shows again (``secret_paths.plan_hidden``).
        input_wait_s: end a command once one of its processes has waited on a terminal
            for this many seconds with no output and no CPU, appending
            :data:`~harnesses.shell.interactive.INPUT_WAIT_HINT` to its stderr
            (``Settings.shell_input_wait_seconds``; ``None`` or ``0``: never). Commands have
            no controlling terminal, so this only happens on a terminal the command made
            itself (``pty.spawn``, ``expect``...); see docs/shell.md.
    """

    def __init__(
        self,
        workspace: Path | str,
        *,
        sandbox: SandboxMode = "off",
        network: bool = False,
        allow_env: Collection[str] = frozenset(),
        env: Mapping[str, str] | None = None,
        default_timeout_ms: int | None = DEFAULT_TIMEOUT_MS,
        listener: ShellListener | None = None,
        head_bytes: int = DEFAULT_HEAD_BYTES,
        tail_bytes: int = DEFAULT_TAIL_BYTES,
        kill_grace_ms: int = 500,
        require_sandbox: bool = False,
        shell: str | None = None,
        services: ServiceRegistry | None = None,
        hidden_paths: Collection[Path] = (),
        shown_paths: Collection[Path] = (),
        input_wait_s: float | None = DEFAULT_INPUT_WAIT_S,
    ) -> None:
        self.workspace = Path(workspace).resolve()
        self.sandbox: SandboxMode = sandbox
        self.network = network
        self.allow_env = frozenset(allow_env)
        self.env = dict(env or {})
        self.default_timeout_ms = default_timeout_ms
        self.listener = listener
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self.kill_grace_ms = kill_grace_ms
        self.require_sandbox = require_sandbox
        self.shell = shell or _default_shell()
        self.services = services
        self.hidden_paths: list[Path] = list(hidden_paths)
        self.shown_paths: list[Path] = list(shown_paths)
        self.input_wait_s = input_wait_s
        #: Plans of sandboxed services still running: swept before each new command too, so
        #: what a service planted meanwhile is undone before the next plan could trust it.
        self._live: list[SandboxPlan] = []
        self._sweep_lock = threading.Lock()

    async def __call__(self, request: ShellCommandRequest) -> ShellResult:
        """Run ``request.data.action`` and return one output entry per command run."""
        action = request.data.action
        return await self.run(
            action.commands,
            call_id=request.data.call_id,
            timeout_ms=action.timeout_ms,
            max_output_length=action.max_output_length,
        )

    async def run(
        self,
        commands: Sequence[str],
        *,
        call_id: str = "",
        timeout_ms: int | None = None,
        max_output_length: int | None = None,
    ) -> ShellResult:
        """Run ``commands`` in order.

        Args:
            commands: shell command lines.
            call_id: used in listener events.
            timeout_ms: per-command limit in milliseconds (``None``/0: ``default_timeout_ms``).
            max_output_length: character budget shared by all stdout/stderr texts; each text
                over its share keeps its head and tail around an omission marker.

        Returns:
            A :class:`ShellResult`; each entry's ``provider_data`` holds ``working_directory``,
            ``sandboxed``, ``sandbox_mode``, ``network``, ``pid``, ``duration_ms``,
            ``dropped_bytes`` and, when relevant, ``sandbox_unavailable``.
        """
        early = await asyncio.to_thread(self._sweep_live)
        plan = await asyncio.to_thread(
            plan_sandbox,
            self.sandbox,
            self.workspace,
            network=self.network,
            hidden_extra=self.hidden_paths,
            hidden_shown=self.shown_paths,
        )
        early += plan.disarmed
        if early:
            _log.warning("git paths planted before this command were disarmed: %s", early)
        limit = timeout_ms or self.default_timeout_ms
        outputs: list[ShellCommandOutput] = []
        for index, command in enumerate(commands):
            entry = await self._run_one(call_id, index, command, plan, limit)
            if index == 0 and early:
                entry.stderr = "".join(f"[sandbox: {t}]\n" for t in early) + entry.stderr
                data = entry.provider_data if entry.provider_data is not None else {}
                data["sandbox_repairs"] = [*early, *data.get("sandbox_repairs", [])]
                entry.provider_data = data
            outputs.append(entry)
            if entry.outcome.type == "timeout":
                break
        if max_output_length is not None:
            texts = [text for entry in outputs for text in (entry.stdout, entry.stderr)]
            fitted = fit_texts(texts, max_output_length)
            for i, entry in enumerate(outputs):
                entry.stdout, entry.stderr = fitted[2 * i], fitted[2 * i + 1]
        provider_data: dict[str, Any] = {
            "working_directory": str(self.workspace),
            "sandbox_mode": plan.mode,
            "sandboxed": plan.sandboxed,
        }
        if plan.unavailable:
            provider_data["sandbox_unavailable"] = plan.unavailable
        return ShellResult(
            output=outputs, max_output_length=max_output_length, provider_data=provider_data
        )

    def _sweep_live(self) -> list[str]:
        """Sweep the plans of the sandboxed services still running (blocking; see ``_live``)."""
        repairs: list[str] = []
        with self._sweep_lock:
            for plan in list(self._live):
                try:
                    repairs += plan.after_command()
                except Exception:
                    _log.exception("sandbox sweep of a running service failed")
        return repairs

    async def _emit(self, event: ShellEvent) -> None:
        if self.listener is None:
            return
        try:
            result = self.listener(event)
            if inspect.isawaitable(result):
                await result
        except Exception:
            _log.exception("shell listener failed on %s", event.type)

    def _env(self, plan: SandboxPlan) -> dict[str, str]:
        return self.command_env(sandboxed=plan.sandboxed)

    def command_env(self, *, sandboxed: bool) -> dict[str, str]:
        """The environment a command gets (also what the policy judges it with,
        ``Workspace.decide_commands``): :func:`build_env` over Tandem's environment, and in
        the sandbox ``TMPDIR=/tmp`` without :data:`SANDBOX_DROPPED_ENV`. ``GIT_SSH_COMMAND``
        stays unset when git config (global, or the workspace's) sets ``core.sshCommand``
        (:func:`~harnesses.shell.environment.git_config_sets_ssh_command`)."""
        base = full_environ()
        configured = git_config_sets_ssh_command({**base, **self.env}, [self.workspace])
        env = build_env(base, allow_env=self.allow_env, extra=self.env, ssh_configured=configured)
        if sandboxed:
            env["TMPDIR"] = "/tmp"  # the only writable temp dir inside the sandbox
            for name in SANDBOX_DROPPED_ENV:
                env.pop(name, None)
        return env

    async def _run_one(
        self, call_id: str, index: int, command: str, plan: SandboxPlan, timeout_ms: int | None
    ) -> ShellCommandOutput:
        notice = ""
        if plan.unavailable:
            verb = "refused to run" if self.require_sandbox else "ran unsandboxed"
            notice = f"[sandbox unavailable: {plan.unavailable}; command {verb}]\n"
        provider_data: dict[str, Any] = {
            "working_directory": str(self.workspace),
            "sandboxed": plan.sandboxed,
            "sandbox_mode": plan.mode,
            "network": self.network or plan.mode == "off",
        }
        if plan.unavailable:
            provider_data["sandbox_unavailable"] = plan.unavailable
        if plan.unavailable and self.require_sandbox:
            return ShellCommandOutput(
                stderr=notice,
                outcome=ShellCallOutcome(type="exit", exit_code=_NOT_RUN_EXIT_CODE),
                command=command,
                provider_data=provider_data,
            )

        async def on_start(pid: int) -> None:
            provider_data["pid"] = pid
            await self._emit(
                ShellCommandStarted(
                    call_id=call_id,
                    command_index=index,
                    command=command,
                    pid=pid,
                    working_directory=str(self.workspace),
                    sandboxed=plan.sandboxed,
                    sandbox_mode=plan.mode,
                    sandbox_unavailable=plan.unavailable,
                )
            )
            if notice:
                await self._emit(ShellOutputChunk(call_id, index, "stderr", notice))

        async def on_chunk(stream: Stream, text: str) -> None:
            await self._emit(ShellOutputChunk(call_id, index, stream, text))

        if self.services is not None and starts_service(command):
            return await self._start_service(call_id, index, command, plan, notice, provider_data)
        # disarms a planted commondir the moment it appears, not only after the command
        watch = await asyncio.to_thread(plan.watch)
        try:
            done = await run_process(
                [*plan.prefix, self.shell, "-c", command],
                cwd=self.workspace,
                env=self._env(plan),
                timeout_ms=timeout_ms,
                on_start=on_start,
                on_chunk=on_chunk if self.listener is not None else None,
                head_bytes=self.head_bytes,
                tail_bytes=self.tail_bytes,
                kill_grace_ms=self.kill_grace_ms,
                input_wait_s=self.input_wait_s,
            )
        except OSError as exc:
            watch.stop()
            return ShellCommandOutput(
                stderr=f"{notice}failed to start command: {exc}",
                outcome=ShellCallOutcome(type="exit", exit_code=_NOT_RUN_EXIT_CODE),
                command=command,
                provider_data=provider_data,
            )
        except asyncio.CancelledError:
            # run_process killed the command's tree; what it planted is undone all the same
            watch.stop()
            await _after_cancelled(plan)
            raise
        repairs = watch.stop()
        repairs += await asyncio.to_thread(plan.after_command)
        if repairs:  # the command planted git redirections; they are undone, and said
            _log.warning("sandboxed command planted git paths: %s", "; ".join(repairs))
            notice += "".join(f"[sandbox: {text}]\n" for text in repairs)
            provider_data["sandbox_repairs"] = repairs
        provider_data["duration_ms"] = done.duration_ms
        provider_data["dropped_bytes"] = done.dropped_bytes
        provider_data["stdout_dropped_bytes"] = done.stdout_dropped_bytes
        provider_data["stderr_dropped_bytes"] = done.stderr_dropped_bytes
        hint = ""
        if done.input_wait is not None:
            hint = _input_wait_text(done.input_wait, self.input_wait_s or 0)
            provider_data["input_wait"] = {
                "pid": done.input_wait.pid,
                "process": done.input_wait.name,
                "terminal": done.input_wait.terminal,
                "syscall": done.input_wait.syscall,
            }
        else:
            hint = read_eof_note(command, done.exit_code)
        if hint:
            await self._emit(ShellOutputChunk(call_id, index, "stderr", hint))
        await self._emit(
            ShellCommandFinished(
                call_id=call_id,
                command_index=index,
                exit_code=done.exit_code,
                timed_out=done.timed_out,
                duration_ms=done.duration_ms,
                sandboxed=plan.sandboxed,
                dropped_bytes=done.dropped_bytes,
            )
        )
        outcome = (
            ShellCallOutcome(type="timeout")
            if done.timed_out
            else ShellCallOutcome(type="exit", exit_code=done.exit_code)
        )
        return ShellCommandOutput(
            stdout=done.stdout,
            stderr=notice + done.stderr + hint,
            outcome=outcome,
            command=command,
            provider_data=provider_data,
        )

    async def _start_service(
        self,
        call_id: str,
        index: int,
        command: str,
        plan: SandboxPlan,
        notice: str,
        provider_data: dict[str, Any],
    ) -> ShellCommandOutput:
        """Start ``command`` (it ends in ``&``) as a background service; see ``harnesses.spawn``."""
        assert self.services is not None
        line = command + _KEEP_SERVICE_ALIVE if plan.sandboxed else command
        watch = await asyncio.to_thread(plan.watch)
        sweeps = plan.sandboxed and plan.mode == "workspace-write" and plan.git is not None
        if sweeps:
            self._live.append(plan)

        def on_end() -> list[str]:
            """After the service's whole tree is gone: disarm and sweep what it planted."""
            repairs = watch.stop()
            with self._sweep_lock:
                if plan in self._live:
                    self._live.remove(plan)
                repairs += plan.after_command()
            return repairs

        try:
            service = await self.services.start(
                [*plan.prefix, self.shell, "-c", line],
                command=command,
                cwd=self.workspace,
                env=self._env(plan),
                on_end=on_end if sweeps else None,
            )
        except OSError as exc:
            return ShellCommandOutput(
                stderr=f"{notice}failed to start command: {exc}",
                outcome=ShellCallOutcome(type="exit", exit_code=_NOT_RUN_EXIT_CODE),
                command=command,
                provider_data=provider_data,
            )
        provider_data.update(pid=service.pid, service=service.number)
        await self._emit(
            ShellCommandStarted(
                call_id=call_id,
                command_index=index,
                command=command,
                pid=service.pid,
                working_directory=str(self.workspace),
                sandboxed=plan.sandboxed,
                sandbox_mode=plan.mode,
                sandbox_unavailable=plan.unavailable,
            )
        )
        if service.running:
            text = (
                f"started background service #{service.number} (pid {service.pid}); it keeps "
                f"running after this command (until killed or Tandem exits); output so far:\n"
                f"{service.output()}"
            )
            code = 0
        else:
            text = (
                f"background service #{service.number} already exited; output:\n{service.output()}"
            )
            code = service.exit_code
        await self._emit(ShellOutputChunk(call_id, index, "stdout", text))
        await self._emit(
            ShellCommandFinished(
                call_id=call_id,
                command_index=index,
                exit_code=code,
                timed_out=False,
                duration_ms=0,
                sandboxed=plan.sandboxed,
                dropped_bytes=0,
            )
        )
        return ShellCommandOutput(
            stdout=text,
            stderr=notice,
            outcome=ShellCallOutcome(type="exit", exit_code=code),
            command=command,
            provider_data=provider_data,
        )
