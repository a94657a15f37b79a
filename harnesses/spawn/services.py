"""Background services: the only agent processes that outlive their command (never Tandem).

A command line whose last top-level operator is ``&`` (``npm run dev &``,
``python -m http.server 8000 &``, ``nohup ./serve >log 2>&1 &``), judged with bashlex, starts a
service. It runs under a supervisor in ``service`` mode (see ``supervisor.py``): the supervisor
stays while any descendant lives, dies with Tandem (``PR_SET_PDEATHSIG``), and is listed in
:class:`ServiceRegistry` (window: ``desktop/views/services_view.py``; ``tandem run`` prints it).

A service may carry an ``on_end`` hook (the sandbox's git sweep, ``SandboxPlan.after_command``):
it runs once, after the service's whole process tree is gone, whether the service exited on its
own, was killed from the window, or was killed by :meth:`ServiceRegistry.kill_all` at Tandem's
exit (there synchronously, before ``kill_all`` returns).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import select
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .spawner import finish, kill_now, spawn

__all__ = ["SERVICE_TAIL_BYTES", "Service", "ServiceRegistry", "starts_service"]

#: Bytes of each service's output kept (the tail).
SERVICE_TAIL_BYTES = 64 * 1024

_log = logging.getLogger("harnesses")


def starts_service(command: str) -> bool:
    """Whether ``command`` backgrounds its last top-level part (``... &``), per bashlex.

    A line bashlex cannot parse is not a service (it then runs as an ordinary command, whose
    descendants are all killed when it ends: the closed failure).
    """
    import bashlex  # lazily: its parser tables cost ~0.1-0.4 s at import (issue 15)

    try:
        trees = bashlex.parse(command)
    except Exception:  # bashlex raises several types (ParsingError, NotImplementedError...)
        return False
    if not trees:
        return False
    last = trees[-1]
    parts = getattr(last, "parts", None)
    if last.kind != "list" or not parts:
        return False
    tail = parts[-1]
    return tail.kind == "operator" and getattr(tail, "op", "") == "&"


@dataclass(eq=False)
class Service:
    """One background service.

    Attributes:
        number: ``#N`` in the list, from 1 in start order.
        pid: its supervisor's pid (also the process-group id).
        command: the command line.
        started_at: ``time.time()`` at start, in seconds.
        exit_code: ``None`` while running; else the exit status (128 + signal when killed).
        killed: Tandem (the user, or Tandem's exit) stopped it.
        repairs: what its ``on_end`` hook repaired once it ended (``"removed planted
            .../commondir"``...); also appended to its output as ``[sandbox: ...]`` lines.
    """

    number: int
    pid: int
    command: str
    started_at: float
    exit_code: int | None = None
    killed: bool = False
    repairs: list[str] = field(default_factory=list)
    _tail: bytearray = field(default_factory=bytearray, repr=False)
    _done: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    _on_end: Callable[[], list[str]] | None = field(default=None, repr=False)
    _ended: asyncio.Future[None] | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        """Whether the service's supervisor is still running."""
        return self.exit_code is None

    def output(self) -> str:
        """The kept tail of its stdout and stderr (interleaved as read), decoded."""
        return self._tail.decode("utf-8", "replace")

    def _run_on_end(self) -> None:
        """Run the ``on_end`` hook once (any thread); record and log its repairs."""
        hook, self._on_end = self._on_end, None
        if hook is None:
            return
        try:
            repairs = list(hook())
        except Exception:
            _log.exception("the end hook of background service #%d failed", self.number)
            return
        if repairs:
            _log.warning(
                "background service #%d planted git paths: %s", self.number, "; ".join(repairs)
            )
            self.repairs += repairs
            self._feed("".join(f"[sandbox: {text}]\n" for text in repairs).encode())

    def _feed(self, data: bytes) -> None:
        self._tail += data
        if len(self._tail) > SERVICE_TAIL_BYTES:
            del self._tail[: len(self._tail) - SERVICE_TAIL_BYTES]


class _ServiceProtocol(asyncio.SubprocessProtocol):
    def __init__(self, on_data: Callable[[bytes], None], on_exit: Callable[[], None]) -> None:
        self._on_data, self._on_exit = on_data, on_exit

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self._on_data(data)

    def process_exited(self) -> None:
        self._on_exit()


class ServiceRegistry:
    """The background services of one workspace.

    Listeners (``add_listener``) are called with the :class:`Service` whenever one starts,
    exits or is killed, on the event loop's thread.
    """

    def __init__(self) -> None:
        self._services: list[Service] = []
        self._transports: dict[int, asyncio.SubprocessTransport] = {}
        self._listeners: list[Callable[[Service], None]] = []

    def add_listener(self, listener: Callable[[Service], None]) -> Callable[[], None]:
        """Subscribe ``listener``; returns the function that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _notify(self, service: Service) -> None:
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):
                listener(service)

    def list(self) -> list[Service]:
        """Every service started, in start order (running and ended)."""
        return list(self._services)

    def running(self) -> list[Service]:
        """The services still running."""
        return [s for s in self._services if s.running]

    def get(self, number: int) -> Service | None:
        """The service ``#number``, or ``None``."""
        return next((s for s in self._services if s.number == number), None)

    async def start(
        self,
        argv: Sequence[str],
        *,
        command: str,
        cwd: Path | str,
        env: Mapping[str, str],
        wait_s: float = 1.0,
        on_end: Callable[[], list[str]] | None = None,
    ) -> Service:
        """Start ``argv`` as a service and wait up to ``wait_s`` seconds for it to settle.

        Args:
            argv: what to run (e.g. ``[*sandbox_prefix, "bash", "-c", command]``).
            command: the command line, for the list.
            cwd / env: working directory and complete environment.
            wait_s: bounded wait, in seconds, before returning (earlier if it exits).
            on_end: called once (in a worker thread, or synchronously in :meth:`kill_all`)
                after the service and every process it started are gone; returns repair
                messages, kept in :attr:`Service.repairs`. Also called when the start fails.

        Returns:
            The :class:`Service` (its ``exit_code`` is set when it already ended).

        Raises:
            OSError: the program could not be started.
        """
        loop = asyncio.get_running_loop()
        holder: list[Service] = []

        def on_data(data: bytes) -> None:
            if holder:
                holder[0]._feed(data)

        def on_exit() -> None:
            if holder:
                loop.call_soon(self._exited, holder[0])

        try:
            transport, _ = await spawn(
                argv,
                cwd=cwd,
                env=env,
                mode="service",
                protocol_factory=lambda: _ServiceProtocol(on_data, on_exit),
            )
        except BaseException:
            if on_end is not None:
                await asyncio.to_thread(on_end)
            raise
        service = Service(len(self._services) + 1, transport.get_pid(), command, time.time())
        service._on_end = on_end
        holder.append(service)
        self._services.append(service)
        self._transports[service.pid] = transport
        if transport.get_returncode() is not None:
            self._exited(service)
        self._notify(service)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(service._done.wait(), wait_s)
        return service

    def _exited(self, service: Service) -> None:
        if service._done.is_set():
            return
        transport = self._transports.pop(service.pid, None)
        code = transport.get_returncode() if transport is not None else None
        service.exit_code = (128 - code if code < 0 else code) if code is not None else -1
        finish(service.pid)
        if transport is not None:
            transport.close()
        if service._on_end is not None:  # the sweep runs off the event loop's thread
            ended = asyncio.get_running_loop().run_in_executor(None, service._run_on_end)
            service._ended = ended
            ended.add_done_callback(lambda _f: self._notify(service) if service.repairs else None)
        service._done.set()
        self._notify(service)

    def kill(self, number: int) -> bool:
        """SIGKILL service ``#number`` and all its processes. Returns whether it was running."""
        service = self.get(number)
        if service is None or not service.running:
            return False
        service.killed = True
        kill_now(service.pid)
        return True

    def kill_all(self, timeout_s: float = 2.0) -> list[Service]:
        """Kill every running service (on Tandem's exit). Returns those that were running.

        Then, for each killed service with an ``on_end`` hook, waits (bounded by ``timeout_s``
        seconds in all, on a pidfd: no polling) until its supervisor has exited, which it does
        only once its whole tree is gone, and runs the hook before returning, so the sweep
        happens even when the event loop stops right after.
        """
        running = self.running()
        for service in running:
            self.kill(service.number)
        deadline = time.monotonic() + timeout_s
        for service in running:
            if service._on_end is None:
                continue
            if _wait_exit(service.pid, max(0.0, deadline - time.monotonic())):
                service._run_on_end()
            else:
                _log.warning("background service #%d did not end; no sweep", service.number)
        return running

    async def wait_all(self, timeout_s: float = 2.0) -> bool:
        """Wait (bounded, ``timeout_s`` seconds) until no service runs and every end hook has
        finished; returns whether none runs."""
        pending = [asyncio.ensure_future(s._done.wait()) for s in self.running()]
        if pending:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*pending), timeout_s)
        hooks = [s._ended for s in self._services if s._ended is not None and not s._ended.done()]
        if hooks:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*hooks, return_exceptions=True), timeout_s)
        return not self.running()


def _wait_exit(pid: int, timeout_s: float) -> bool:
    """Whether process ``pid`` (a child of this process) exits within ``timeout_s`` seconds
    (a zombie counts as exited); waits on a pidfd."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    try:
        ready, _, _ = select.select([fd], [], [], timeout_s)
        return bool(ready)
    finally:
        os.close(fd)
