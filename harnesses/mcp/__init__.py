"""Local MCP servers for Tandem's agent: launch (clean env, supervisor, sandbox) and policy."""

from __future__ import annotations

from .policy import approval_callable, needs_approval, static_filter
from .servers import MCP_CONFIG, LocalMcpServers, ServerStatus, build_server

__all__ = [
    "MCP_CONFIG",
    "LocalMcpServers",
    "ServerStatus",
    "approval_callable",
    "build_server",
    "needs_approval",
    "static_filter",
]
