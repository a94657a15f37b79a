"""``MCPServerStdio``, ``MCPServerStreamableHttp`` and ``MCPServerSse`` (names and parameters of
the reference SDK 0.24, ``agents.mcp``), on the ``mcp`` package's client transports."""

from __future__ import annotations

import os
import tempfile
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, Generic, Literal, NotRequired, TypeVar

from typing_extensions import TypedDict

from ..redaction import register_secret
from .approval import RequireApprovalSetting
from .filters import ToolFilter
from .server import _UNSET, _ClientSessionServer

__all__ = [
    "MCPServerSse",
    "MCPServerSseParams",
    "MCPServerStdio",
    "MCPServerStdioParams",
    "MCPServerStreamableHttp",
    "MCPServerStreamableHttpParams",
]

_STDERR_KEEP = 64 * 1024  # bytes of a stdio server's stderr read back for messages


class MCPServerStdioParams(TypedDict):
    """How to start a stdio server (``mcp.StdioServerParameters``).

    ``env`` is added to a clean environment (the ``mcp`` package's default:
    ``HOME``, ``LOGNAME``, ``PATH``, ``SHELL``, ``TERM``, ``USER``); nothing else of Tandem's
    environment reaches the server.
    """

    command: str
    args: NotRequired[list[str]]
    env: NotRequired[dict[str, str]]
    cwd: NotRequired[str | Path]
    encoding: NotRequired[str]
    encoding_error_handler: NotRequired[Literal["strict", "ignore", "replace"]]


class MCPServerStreamableHttpParams(TypedDict):
    """Where a streamable HTTP server is: ``url``, ``headers``, ``timeout`` and
    ``sse_read_timeout`` (seconds or ``timedelta``), ``terminate_on_close``,
    ``httpx_client_factory`` (``(headers, timeout, auth) -> httpx2.AsyncClient``), ``auth``."""

    url: str
    headers: NotRequired[dict[str, str]]
    timeout: NotRequired[timedelta | float]
    sse_read_timeout: NotRequired[timedelta | float]
    terminate_on_close: NotRequired[bool]
    httpx_client_factory: NotRequired[Any]
    auth: NotRequired[Any]


class MCPServerSseParams(TypedDict):
    """Where a legacy SSE server is: ``url``, ``headers``, ``timeout``, ``sse_read_timeout``
    (seconds), ``auth``, ``httpx_client_factory``."""

    url: str
    headers: NotRequired[dict[str, str]]
    timeout: NotRequired[float]
    sse_read_timeout: NotRequired[float]
    auth: NotRequired[Any]
    httpx_client_factory: NotRequired[Any]


_ParamsT = TypeVar("_ParamsT", MCPServerStreamableHttpParams, MCPServerSseParams)


def _seconds(value: Any, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, timedelta):
        return value.total_seconds()
    return float(value)


def _register_header_secrets(headers: dict[str, str] | None, name: str) -> None:
    """Header values (tokens) are secrets: redacted wherever Tandem writes (issue 11)."""
    for key, value in (headers or {}).items():
        if not isinstance(value, str) or not value:
            continue
        token = value.split(" ", 1)[1] if value.lower().startswith("bearer ") else value
        if key.lower() in ("authorization", "x-api-key", "api-key") or "token" in key.lower():
            register_secret(token, source=f"mcp:{name}:{key}")


class MCPServerStdio(_ClientSessionServer):
    """A local MCP server started as a subprocess, speaking MCP over stdin/stdout.

    Args:
        params: :class:`MCPServerStdioParams` (``command``, ``args``, ``env``, ``cwd``...).
        cache_tools_list: fetch the tool list once (until ``invalidate_tools_cache()``).
        name: the server's name (default ``"stdio: <command>"``).
        client_session_timeout_seconds: read timeout of every MCP request in seconds
            (default 5; ``None``: none).
        tool_filter: a :class:`~core.mcp.filters.ToolFilterStatic` or a callable.
        use_structured_content: send ``structuredContent`` instead of the content blocks.
        max_retry_attempts: retries of a failed ``list_tools``/``call_tool`` (-1: no limit).
        retry_backoff_seconds_base / retry_backoff_seconds_max: exponential backoff.
        message_handler: the ``mcp.ClientSession`` message handler.
        require_approval: see :data:`core.mcp.approval.RequireApprovalSetting`.
        failure_error_function: ``(ctx, error) -> str`` for failed calls (default: the
            agent's ``mcp_config`` one, else the standard message); ``None`` re-raises.
        tool_meta_resolver / custom_data_extractor: accepted for compatibility (stored).
        tool_input_guardrails / tool_output_guardrails: given to each built function tool.
        max_list_pages: the most ``tools/list`` pages fetched.
        startup_timeout_seconds: Tandem: the limit of start plus ``initialize`` in seconds
            (default ``client_session_timeout_seconds``; Codex ``startup_timeout_sec``).
        tool_timeout_seconds: Tandem: the read timeout of ``tools/call`` in seconds (Codex
            ``tool_timeout_sec``).

    The server's stderr goes to a private temporary file; :meth:`stderr_tail` reads its last
    lines (bytes that are not UTF-8 are replaced) for error messages.
    """

    def __init__(
        self,
        params: MCPServerStdioParams,
        cache_tools_list: bool = False,
        name: str | None = None,
        client_session_timeout_seconds: float | None = 5,
        tool_filter: ToolFilter = None,
        use_structured_content: bool = False,
        max_retry_attempts: int = 0,
        retry_backoff_seconds_base: float = 1.0,
        message_handler: Any = None,
        require_approval: RequireApprovalSetting = None,
        failure_error_function: Any = _UNSET,
        tool_meta_resolver: Any = None,
        custom_data_extractor: Any = None,
        retry_backoff_seconds_max: float | None = None,
        *,
        tool_input_guardrails: list[Any] | None = None,
        tool_output_guardrails: list[Any] | None = None,
        max_list_pages: int | None = None,
        startup_timeout_seconds: float | None = None,
        tool_timeout_seconds: float | None = None,
    ) -> None:
        super().__init__(
            cache_tools_list=cache_tools_list,
            client_session_timeout_seconds=client_session_timeout_seconds,
            tool_filter=tool_filter,
            use_structured_content=use_structured_content,
            max_retry_attempts=max_retry_attempts,
            retry_backoff_seconds_base=retry_backoff_seconds_base,
            message_handler=message_handler,
            require_approval=require_approval,
            failure_error_function=failure_error_function,
            tool_meta_resolver=tool_meta_resolver,
            custom_data_extractor=custom_data_extractor,
            retry_backoff_seconds_max=retry_backoff_seconds_max,
            tool_input_guardrails=tool_input_guardrails,
            tool_output_guardrails=tool_output_guardrails,
            max_list_pages=max_list_pages,
            startup_timeout_seconds=startup_timeout_seconds,
            tool_timeout_seconds=tool_timeout_seconds,
        )
        from mcp import StdioServerParameters

        self.params = StdioServerParameters(
            command=params["command"],
            args=list(params.get("args", [])),
            env=params.get("env"),
            cwd=params.get("cwd"),
            encoding=params.get("encoding", "utf-8"),
            encoding_error_handler=params.get("encoding_error_handler", "strict"),
        )
        self._name = name or f"stdio: {self.params.command}"
        self._errlog: Any = None

    @property
    def name(self) -> str:
        """The server's name."""
        return self._name

    @asynccontextmanager
    async def _streams(self) -> Any:
        from mcp import stdio_client

        if self._errlog is not None:
            self._errlog.close()
        self._errlog = tempfile.TemporaryFile(mode="w+b")
        async with stdio_client(self.params, errlog=self._errlog) as streams:
            yield streams

    def create_streams(self) -> AbstractAsyncContextManager[Any]:
        """``mcp.stdio_client`` for :attr:`params`, stderr to a private temporary file."""
        return self._streams()

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The last ``lines`` lines of the server's stderr (decoded as UTF-8, bad bytes replaced)."""
        errlog = self._errlog
        if errlog is None or errlog.closed:
            return []
        fd = errlog.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - _STDERR_KEEP)
        data = os.pread(fd, size - start, start)
        text = data.decode("utf-8", errors="replace")
        return [line for line in text.splitlines() if line.strip()][-lines:]

    async def cleanup(self) -> None:
        """Stop the server process tree and close the stderr file."""
        await super().cleanup()
        if self._errlog is not None:
            self._errlog.close()


class _HttpServer(_ClientSessionServer, Generic[_ParamsT]):
    """The construction the two HTTP transports share: the parameters of
    :class:`MCPServerStdio` with the transport's own ``params`` (their header values that
    carry tokens are registered as secrets)."""

    def __init__(
        self,
        params: _ParamsT,
        cache_tools_list: bool = False,
        name: str | None = None,
        client_session_timeout_seconds: float | None = 5,
        tool_filter: ToolFilter = None,
        use_structured_content: bool = False,
        max_retry_attempts: int = 0,
        retry_backoff_seconds_base: float = 1.0,
        message_handler: Any = None,
        require_approval: RequireApprovalSetting = None,
        failure_error_function: Any = _UNSET,
        tool_meta_resolver: Any = None,
        custom_data_extractor: Any = None,
        retry_backoff_seconds_max: float | None = None,
        *,
        tool_input_guardrails: list[Any] | None = None,
        tool_output_guardrails: list[Any] | None = None,
        max_list_pages: int | None = None,
        startup_timeout_seconds: float | None = None,
        tool_timeout_seconds: float | None = None,
    ) -> None:
        super().__init__(
            cache_tools_list=cache_tools_list,
            client_session_timeout_seconds=client_session_timeout_seconds,
            tool_filter=tool_filter,
            use_structured_content=use_structured_content,
            max_retry_attempts=max_retry_attempts,
            retry_backoff_seconds_base=retry_backoff_seconds_base,
            message_handler=message_handler,
            require_approval=require_approval,
            failure_error_function=failure_error_function,
            tool_meta_resolver=tool_meta_resolver,
            custom_data_extractor=custom_data_extractor,
            retry_backoff_seconds_max=retry_backoff_seconds_max,
            tool_input_guardrails=tool_input_guardrails,
            tool_output_guardrails=tool_output_guardrails,
            max_list_pages=max_list_pages,
            startup_timeout_seconds=startup_timeout_seconds,
            tool_timeout_seconds=tool_timeout_seconds,
        )
        self.params: _ParamsT = params
        self._name = name or f"url: {params['url']}"
        _register_header_secrets(params.get("headers"), self._name)

    @property
    def name(self) -> str:
        """The server's name."""
        return self._name


class MCPServerStreamableHttp(_HttpServer[MCPServerStreamableHttpParams]):
    """A local (or remote) MCP server over streamable HTTP.

    Takes :class:`MCPServerStreamableHttpParams` and the same keyword arguments as
    :class:`MCPServerStdio`. Header values that carry tokens (``Authorization``, ``*token*``,
    API-key headers) are registered as secrets, so they never reach the journal.
    """

    @asynccontextmanager
    async def _streams(self) -> Any:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        params = self.params
        timeout = httpx2.Timeout(
            _seconds(params.get("timeout"), 5.0),
            read=_seconds(params.get("sse_read_timeout"), 300.0),
        )
        factory = params.get("httpx_client_factory") or create_mcp_http_client
        client = factory(headers=params.get("headers"), timeout=timeout, auth=params.get("auth"))
        async with (
            client,
            streamable_http_client(
                params["url"],
                http_client=client,
                terminate_on_close=params.get("terminate_on_close", True),
            ) as streams,
        ):
            yield streams

    def create_streams(self) -> AbstractAsyncContextManager[Any]:
        """``mcp.client.streamable_http.streamable_http_client`` for :attr:`params`."""
        return self._streams()


class MCPServerSse(_HttpServer[MCPServerSseParams]):
    """An MCP server over the legacy HTTP+SSE transport (:class:`MCPServerSseParams`; the
    keyword arguments of :class:`MCPServerStdio`)."""

    def create_streams(self) -> AbstractAsyncContextManager[Any]:
        """``mcp.client.sse.sse_client`` for :attr:`params`."""
        from mcp.client.sse import sse_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        params = self.params
        return sse_client(
            params["url"],
            headers=params.get("headers"),
            timeout=_seconds(params.get("timeout"), 5.0),
            sse_read_timeout=_seconds(params.get("sse_read_timeout"), 300.0),
            httpx_client_factory=params.get("httpx_client_factory") or create_mcp_http_client,
            auth=params.get("auth"),
        )
