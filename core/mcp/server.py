"""``MCPServer``: the base of local MCP servers, a client session owned by one task.

The public names and parameters follow the reference SDK 0.24 (``agents.mcp.MCPServer``);
the transports are in :mod:`core.mcp.transports`.
"""

from __future__ import annotations

import abc
import asyncio
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import TYPE_CHECKING, Any, Literal

from ..errors import AgentsException, UserError
from .approval import RequireApprovalSetting, normalize_require_approval
from .filters import ToolFilter, apply_tool_filter

if TYPE_CHECKING:
    from mcp_types import CallToolResult
    from mcp_types import Tool as MCPTool

    from ..context import RunContextWrapper

__all__ = ["MCPServer", "MCPServerError", "MCPServerState"]

logger = logging.getLogger("core")

MCPServerState = Literal["stopped", "starting", "ready", "failed", "closed"]
"""``stopped`` (never connected), ``starting``, ``ready``, ``failed`` (the last start or the
connection failed; restarted on next use), ``closed`` (``cleanup()`` ran)."""

_UNSET: Any = object()


class MCPServerError(AgentsException):
    """A local MCP server failed: it did not start, timed out, or its connection broke.

    The function tools built from MCP tools turn it into a tool error the model sees; the run
    goes on and the server is restarted on its next use.
    """


class MCPServer(abc.ABC):
    """A Model Context Protocol server the agent's tools come from (``Agent(mcp_servers=...)``).

    Use it as an async context manager (``async with MCPServerStdio(...) as server``) or call
    :meth:`connect` and :meth:`cleanup` in the same task.
    """

    use_structured_content: bool = False
    failure_error_function: Any = _UNSET
    tool_input_guardrails: list[Any] | None = None
    tool_output_guardrails: list[Any] | None = None
    _needs_approval_policy: Any = False

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """A readable name of the server (used in tool-name prefixes and messages)."""

    @abc.abstractmethod
    async def connect(self) -> None:
        """Start or connect to the server."""

    @abc.abstractmethod
    async def cleanup(self) -> None:
        """Disconnect and stop the server."""

    @abc.abstractmethod
    async def list_tools(
        self, run_context: RunContextWrapper[Any] | None = None, agent: Any = None
    ) -> list[MCPTool]:
        """The server's tools, after the tool filter."""

    @abc.abstractmethod
    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        """Call one tool (MCP ``tools/call``)."""

    async def __aenter__(self) -> MCPServer:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.cleanup()


class _ClientSessionServer(MCPServer):
    """An :class:`MCPServer` over an ``mcp.ClientSession``; subclasses give the transport.

    The transport and the session are entered and left by one owner task, so calls may come
    from any task (tool calls run in tasks of their own) and a dead connection can be replaced
    from whichever call notices it.
    """

    def __init__(
        self,
        *,
        cache_tools_list: bool,
        client_session_timeout_seconds: float | None,
        tool_filter: ToolFilter,
        use_structured_content: bool,
        max_retry_attempts: int,
        retry_backoff_seconds_base: float,
        message_handler: Any,
        require_approval: RequireApprovalSetting,
        failure_error_function: Any,
        tool_meta_resolver: Any,
        custom_data_extractor: Any,
        retry_backoff_seconds_max: float | None,
        tool_input_guardrails: list[Any] | None,
        tool_output_guardrails: list[Any] | None,
        max_list_pages: int | None,
        startup_timeout_seconds: float | None,
        tool_timeout_seconds: float | None,
    ) -> None:
        if max_retry_attempts < -1:
            raise UserError("max_retry_attempts must be >= -1 (-1: retry without limit)")
        self.cache_tools_list = cache_tools_list
        self.client_session_timeout_seconds = client_session_timeout_seconds
        self.tool_filter = tool_filter
        self.use_structured_content = use_structured_content
        self.max_retry_attempts = max_retry_attempts
        self.retry_backoff_seconds_base = retry_backoff_seconds_base
        self.retry_backoff_seconds_max = retry_backoff_seconds_max
        self.message_handler = message_handler
        self.failure_error_function = failure_error_function
        self.tool_meta_resolver = tool_meta_resolver
        self.custom_data_extractor = custom_data_extractor
        self.tool_input_guardrails = tool_input_guardrails
        self.tool_output_guardrails = tool_output_guardrails
        self.max_list_pages = max_list_pages
        self.startup_timeout_seconds = (
            startup_timeout_seconds
            if startup_timeout_seconds is not None
            else client_session_timeout_seconds
        )
        self.tool_timeout_seconds = tool_timeout_seconds
        self._needs_approval_policy = normalize_require_approval(require_approval)
        self.state: MCPServerState = "stopped"
        self.last_error: str | None = None
        self.state_listeners: list[Callable[[MCPServer], None]] = []
        self._session: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._wanted = False
        self._cache: list[MCPTool] | None = None
        self._cache_dirty = True
        self._lock: asyncio.Lock | None = None
        self.server_initialize_result: Any = None

    # -- what subclasses give ------------------------------------------------------------
    @abc.abstractmethod
    def create_streams(self) -> AbstractAsyncContextManager[Any]:
        """The transport: an async context manager yielding ``(read_stream, write_stream)``."""

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The last ``lines`` lines the server wrote to stderr (stdio servers; else ``[]``)."""
        return []

    # -- state -----------------------------------------------------------------------------
    def _set_state(self, state: MCPServerState, error: str | None = None) -> None:
        self.state = state
        if state in ("ready", "starting"):
            self.last_error = None
        elif error is not None:
            self.last_error = error
        for listener in list(self.state_listeners):
            try:
                listener(self)
            except Exception:
                logger.exception("MCP state listener failed")

    @property
    def cached_tools(self) -> list[MCPTool] | None:
        """The last tool list fetched from the server (before filtering), or ``None``."""
        return self._cache

    def invalidate_tools_cache(self) -> None:
        """Fetch the tool list again on the next :meth:`list_tools`."""
        self._cache_dirty = True

    # -- connection ------------------------------------------------------------------------
    async def connect(self) -> None:
        """Start the server and run the MCP ``initialize`` handshake.

        Raises:
            MCPServerError: the server did not start, exited, or did not answer within
                ``startup_timeout_seconds`` (default ``client_session_timeout_seconds``); the
                message ends with the last stderr lines of a stdio server.
        """
        self._wanted = True
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._start()

    async def _start(self) -> None:
        if self._session is not None and self._owner is not None and not self._owner.done():
            return
        await self._stop()
        self._set_state("starting")
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[Any] = loop.create_future()
        self._closing = asyncio.Event()
        self._owner = loop.create_task(self._own(ready, self._closing))
        try:
            if self.startup_timeout_seconds is None:
                session = await asyncio.shield(ready)
            else:
                session = await asyncio.wait_for(
                    asyncio.shield(ready), self.startup_timeout_seconds
                )
        except BaseException as exc:
            await self._stop()
            message = self._failure_text(exc, starting=True)
            self._set_state("failed", message)
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise MCPServerError(message) from exc
        self._session = session
        self._set_state("ready")

    async def _own(self, ready: asyncio.Future[Any], closing: asyncio.Event) -> None:
        from mcp import ClientSession

        try:
            async with AsyncExitStack() as stack:
                read, write, *_ = await stack.enter_async_context(self.create_streams())
                kwargs: dict[str, Any] = {
                    "read_timeout_seconds": self.client_session_timeout_seconds
                }
                if self.message_handler is not None:
                    kwargs["message_handler"] = self.message_handler
                session = await stack.enter_async_context(ClientSession(read, write, **kwargs))
                self.server_initialize_result = await session.initialize()
                if not ready.done():
                    ready.set_result(session)
                await closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not closing.is_set():
                self._session = None
                self._set_state("failed", self._failure_text(exc, starting=False))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if not ready.done():
                ready.set_exception(MCPServerError(f"MCP server '{self.name}' closed"))

    async def _stop(self) -> None:
        owner, self._owner = self._owner, None
        self._session = None
        if owner is None:
            return
        if self._closing is not None:
            self._closing.set()
        if not owner.done():
            try:
                await asyncio.wait_for(asyncio.shield(owner), 10)
            except TimeoutError:
                owner.cancel()
        await asyncio.gather(owner, return_exceptions=True)

    async def cleanup(self) -> None:
        """Stop the server (a stdio server's process tree is ended) and forget the session."""
        self._wanted = False
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._stop()
        self._set_state("closed")

    def start_on_first_use(self) -> None:
        """Tandem: connect on the first ``list_tools``/``call_tool`` instead of requiring
        :meth:`connect` (the window builds its agent synchronously); :meth:`cleanup` still
        stops the server."""
        self._wanted = True

    async def _ensure_session(self) -> Any:
        if not self._wanted:
            raise UserError(
                f"Server not initialized. Make sure you call `connect()` first. ({self.name})"
            )
        alive = self._session is not None and self._owner is not None and not self._owner.done()
        if alive:
            return self._session
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # restart on next use (issue 18 item 1)
            await self._start()
        return self._session

    def _failure_text(self, exc: BaseException, *, starting: bool) -> str:
        what = _describe(exc)
        if starting and isinstance(exc, TimeoutError):
            what = f"no answer within {self.startup_timeout_seconds:g} s"
        verb = "failed to start" if starting else "stopped"
        text = f"MCP server '{self.name}' {verb}: {what}"
        tail = self.stderr_tail(5)
        if tail:
            text += "\nstderr:\n" + "\n".join(tail)
        return text

    async def _with_retries(self, op: Callable[[Any], Any], what: str) -> Any:
        attempt = 0
        while True:
            session = await self._ensure_session()
            try:
                return await op(session)
            except Exception as exc:
                broken = _is_connection_error(exc) or self._owner is None or self._owner.done()
                if broken:
                    await self._mark_broken(exc)
                retry = self.max_retry_attempts == -1 or attempt < self.max_retry_attempts
                if not retry:
                    if broken:
                        raise MCPServerError(self._failure_text(exc, starting=False)) from exc
                    raise
                delay = self.retry_backoff_seconds_base * (2**attempt)
                if self.retry_backoff_seconds_max is not None:
                    delay = min(delay, self.retry_backoff_seconds_max)
                attempt += 1
                logger.info("retrying MCP %s on %s (attempt %d)", what, self.name, attempt)
                await asyncio.sleep(delay)

    async def _mark_broken(self, exc: BaseException) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._stop()
        self._set_state("failed", self._failure_text(exc, starting=False))

    # -- MCP requests ----------------------------------------------------------------------
    async def list_tools(
        self, run_context: RunContextWrapper[Any] | None = None, agent: Any = None
    ) -> list[MCPTool]:
        """The server's tools (MCP ``tools/list``, all pages), filtered by ``tool_filter``.

        With ``cache_tools_list`` the list is fetched once until :meth:`invalidate_tools_cache`.
        A server that listed its tools before and now cannot be restarted offers that last
        list, so the model's calls reach it and come back as tool errors (issue 18).

        Raises:
            UserError: :meth:`connect` was not called.
            MCPServerError: the server could not be (re)started.
        """
        if not (self.cache_tools_list and not self._cache_dirty and self._cache is not None):

            async def fetch(session: Any) -> list[MCPTool]:
                tools: list[MCPTool] = []
                cursor: str | None = None
                pages = 0
                while True:
                    if cursor is None:
                        page = await session.list_tools()
                    else:
                        from mcp_types import PaginatedRequestParams

                        page = await session.list_tools(
                            params=PaginatedRequestParams(cursor=cursor)
                        )
                    tools.extend(page.tools)
                    pages += 1
                    cursor = getattr(page, "next_cursor", None) or getattr(page, "nextCursor", None)
                    if not cursor or (
                        self.max_list_pages is not None and pages >= self.max_list_pages
                    ):
                        return tools

            try:
                self._cache = await self._with_retries(fetch, "tools/list")
                self._cache_dirty = False
            except MCPServerError:
                if self._cache is None:
                    raise
                # a server that ran before keeps its tools: their calls become tool errors
                logger.warning("MCP server %s is down; offering its last tool list", self.name)
        assert self._cache is not None
        return await apply_tool_filter(
            self._cache,
            self.tool_filter,
            run_context=run_context,
            agent=agent,
            server_name=self.name,
        )

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        """Call ``tool_name`` with ``arguments`` (MCP ``tools/call``).

        A server whose connection broke is restarted first (issue 18: "restarted on its next
        use"). The read timeout is ``tool_timeout_seconds`` when set, else
        ``client_session_timeout_seconds``.

        Raises:
            UserError: :meth:`connect` was not called.
            MCPServerError: the server crashed during the call or could not be restarted.
            mcp.shared.exceptions.MCPError: the server answered with a JSON-RPC error.
        """

        async def call(session: Any) -> Any:
            kwargs: dict[str, Any] = {}
            if self.tool_timeout_seconds is not None:
                kwargs["read_timeout_seconds"] = self.tool_timeout_seconds
            if meta is not None:
                kwargs["meta"] = meta
            return await session.call_tool(tool_name, arguments or {}, **kwargs)

        return await self._with_retries(call, f"tools/call {tool_name}")

    async def list_prompts(self) -> Any:
        """MCP ``prompts/list``."""
        return await self._with_retries(lambda s: s.list_prompts(), "prompts/list")

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """MCP ``prompts/get``."""
        return await self._with_retries(lambda s: s.get_prompt(name, arguments), "prompts/get")

    async def list_resources(self) -> Any:
        """MCP ``resources/list``."""
        return await self._with_retries(lambda s: s.list_resources(), "resources/list")

    async def read_resource(self, uri: str) -> Any:
        """MCP ``resources/read``."""
        return await self._with_retries(lambda s: s.read_resource(uri), "resources/read")


def _is_connection_error(exc: BaseException) -> bool:
    import anyio
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(exc, MCPError):
        return getattr(exc.error, "code", None) == CONNECTION_CLOSED
    return isinstance(
        exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError, EOFError)
    )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
