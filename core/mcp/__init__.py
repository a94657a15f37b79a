"""Local MCP servers: stdio, streamable HTTP and SSE, as ``agents.mcp`` names them (issue 18)."""

from __future__ import annotations

from .agent_tools import MCPConfig, get_mcp_tools
from .approval import RequireApprovalSetting
from .filters import (
    ToolFilter,
    ToolFilterCallable,
    ToolFilterContext,
    ToolFilterStatic,
    create_static_tool_filter,
)
from .results import call_result_to_output
from .server import MCPServer, MCPServerError, MCPServerState
from .tools import MCPUtil, mcp_tool_binding, prefixed_tool_name
from .transports import (
    MCPServerSse,
    MCPServerSseParams,
    MCPServerStdio,
    MCPServerStdioParams,
    MCPServerStreamableHttp,
    MCPServerStreamableHttpParams,
)

__all__ = [
    "MCPConfig",
    "MCPServer",
    "MCPServerError",
    "MCPServerSse",
    "MCPServerSseParams",
    "MCPServerState",
    "MCPServerStdio",
    "MCPServerStdioParams",
    "MCPServerStreamableHttp",
    "MCPServerStreamableHttpParams",
    "MCPUtil",
    "RequireApprovalSetting",
    "ToolFilter",
    "ToolFilterCallable",
    "ToolFilterContext",
    "ToolFilterStatic",
    "call_result_to_output",
    "create_static_tool_filter",
    "get_mcp_tools",
    "mcp_tool_binding",
    "prefixed_tool_name",
]
