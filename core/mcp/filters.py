"""MCP tool filters: static allow/block lists and callables (names follow ``agents.mcp``)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NotRequired, TypeAlias

from typing_extensions import TypedDict

from ..context import RunContextWrapper

if TYPE_CHECKING:
    from mcp_types import Tool as MCPTool

__all__ = [
    "ToolFilter",
    "ToolFilterCallable",
    "ToolFilterContext",
    "ToolFilterStatic",
    "apply_tool_filter",
    "create_static_tool_filter",
]


class ToolFilterStatic(TypedDict):
    """A static filter: ``allowed_tool_names`` (whitelist) and/or ``blocked_tool_names``.

    Both apply when both are given: a tool must be allowed and not blocked (reference SDK
    0.24, ``agents.mcp.ToolFilterStatic``).
    """

    allowed_tool_names: NotRequired[list[str]]
    blocked_tool_names: NotRequired[list[str]]


@dataclass
class ToolFilterContext:
    """What a callable filter receives with each tool.

    Attributes:
        run_context: the run's context wrapper.
        agent: the agent listing the tools.
        server_name: the server's ``name``.
    """

    run_context: RunContextWrapper[Any]
    agent: Any
    server_name: str


ToolFilterCallable: TypeAlias = Callable[[ToolFilterContext, "MCPTool"], bool | Awaitable[bool]]
"""``(ToolFilterContext, mcp Tool) -> bool`` (sync or async): keep the tool when true."""

ToolFilter: TypeAlias = ToolFilterCallable | ToolFilterStatic | None


def create_static_tool_filter(
    allowed_tool_names: list[str] | None = None,
    blocked_tool_names: list[str] | None = None,
) -> ToolFilterStatic | None:
    """A :class:`ToolFilterStatic` from the two lists; ``None`` when both are ``None``."""
    if allowed_tool_names is None and blocked_tool_names is None:
        return None
    result: ToolFilterStatic = {}
    if allowed_tool_names is not None:
        result["allowed_tool_names"] = list(allowed_tool_names)
    if blocked_tool_names is not None:
        result["blocked_tool_names"] = list(blocked_tool_names)
    return result


async def apply_tool_filter(
    tools: list[MCPTool],
    tool_filter: ToolFilter,
    *,
    run_context: RunContextWrapper[Any] | None,
    agent: Any,
    server_name: str,
) -> list[MCPTool]:
    """The tools ``tool_filter`` keeps, in server order.

    A callable filter needs ``run_context`` and ``agent``; without them (a direct
    ``server.list_tools()``) it is not applied, as in the reference SDK. A callable that
    raises drops that tool (fail closed) and the others are still checked.
    """
    if tool_filter is None:
        return list(tools)
    if isinstance(tool_filter, dict):
        allowed = tool_filter.get("allowed_tool_names")
        blocked = set(tool_filter.get("blocked_tool_names") or [])
        return [
            t for t in tools if (allowed is None or t.name in allowed) and t.name not in blocked
        ]
    if run_context is None or agent is None:
        return list(tools)
    context = ToolFilterContext(run_context=run_context, agent=agent, server_name=server_name)
    kept: list[MCPTool] = []
    for tool in tools:
        try:
            verdict = tool_filter(context, tool)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception:
            continue
        if verdict:
            kept.append(tool)
    return kept
