"""The optional tools the settings add to Tandem's agent: OpenAI-hosted tools, MCP servers."""

from __future__ import annotations

from typing import Any

from core import CodeInterpreterTool, HostedMCPTool, ImageGenerationTool, WebSearchTool
from core.settings import Settings

__all__ = ["hosted_tools"]


def hosted_tools(settings: Settings) -> list[Any]:
    """The hosted tools ``settings`` turn on, in a fixed order: web search, code interpreter
    (an automatic container), image generation, then one ``HostedMCPTool`` per MCP server.

    MCP servers get no ``on_approval_request``: their approval requests interrupt the run and
    are answered where the run is watched (the window's approval panel, ``tandem run``'s
    prompt), spec §2.5.
    """
    tools: list[Any] = []
    if settings.web_search:
        tools.append(WebSearchTool())
    if settings.code_interpreter:
        config = {"type": "code_interpreter", "container": {"type": "auto"}}
        tools.append(CodeInterpreterTool(tool_config=config))
    if settings.image_generation:
        tools.append(ImageGenerationTool(tool_config={"type": "image_generation"}))
    for server in settings.mcp_servers:
        mcp: dict[str, Any] = {
            "type": "mcp",
            "server_label": server.label,
            "server_url": server.url,
            "require_approval": server.require_approval,
        }
        if server.allowed_tools:
            mcp["allowed_tools"] = list(server.allowed_tools)
        tools.append(HostedMCPTool(tool_config=mcp))
    return tools
