"""The hook ``Agent.get_all_tools`` calls: the function tools of ``agent.mcp_servers``."""

from __future__ import annotations

import logging
from typing import Any

from ..context import RunContextWrapper
from ..tools.function import FunctionTool, default_tool_error_function
from .server import MCPServerError
from .tools import MCPUtil

__all__ = ["MCPConfig", "get_mcp_tools"]

logger = logging.getLogger("core")

MCPConfig = dict[str, Any]
"""``Agent.mcp_config``: ``convert_schemas_to_strict`` (default ``False``),
``failure_error_function`` (default the standard one) and ``include_server_in_tool_names``
(default ``False``), as in the reference SDK 0.24; Tandem adds ``skip_failed_servers``
(default ``False``): a server that cannot be started is left out of the turn (its state says
why) instead of failing the run."""


async def get_mcp_tools(agent: Any, run_context: RunContextWrapper[Any]) -> list[FunctionTool]:
    """The MCP tools of ``agent`` for this turn (``Agent.get_mcp_tools`` of the SDK).

    Prefixed names avoid the names of the agent's own function tools and handoffs.

    Raises:
        UserError: a server not connected; duplicate names without prefixes.
        MCPServerError: a server could not be (re)started.
    """
    config: dict[str, Any] = dict(getattr(agent, "mcp_config", None) or {})
    prefixed = bool(config.get("include_server_in_tool_names", False))
    reserved: set[str] | None = None
    if prefixed:
        reserved = {t.name for t in agent.tools if isinstance(t, FunctionTool)}
        reserved.update(
            str(getattr(h, "tool_name", "") or f"transfer_to_{getattr(h, 'name', '')}")
            for h in getattr(agent, "handoffs", ())
        )
    servers = list(agent.mcp_servers)
    if config.get("skip_failed_servers"):  # Tandem: a server that cannot start is left out
        kept = []
        for server in servers:
            try:
                await server.list_tools(run_context, agent)
            except MCPServerError as exc:
                logger.warning("MCP server %s left out of this turn: %s", server.name, exc)
                continue
            kept.append(server)
        servers = kept
    return await MCPUtil.get_all_function_tools(
        servers,
        bool(config.get("convert_schemas_to_strict", False)),
        run_context,
        agent,
        failure_error_function=config.get("failure_error_function", default_tool_error_function),
        include_server_in_tool_names=prefixed,
        reserved_tool_names=reserved,
    )
