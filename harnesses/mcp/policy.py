"""Which MCP tool calls ask first: per server and per tool allow/ask/deny, ``readOnlyHint``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.mcp import ToolFilterStatic
from core.mcp.config import LocalMcpServer
from core.policy.modes import ApprovalMode

__all__ = ["approval_callable", "needs_approval", "static_filter"]


def _read_only_hint(tool: Any) -> bool:
    annotations = getattr(tool, "annotations", None)
    return bool(
        getattr(annotations, "read_only_hint", None) or getattr(annotations, "readOnlyHint", None)
    )


def needs_approval(config: LocalMcpServer, tool: Any, mode: ApprovalMode) -> bool:
    """Whether a call of ``tool`` asks the user first (issue 18 item 3).

    * ``full`` mode: never (as for every tool).
    * the tool's rule (``tools.NAME``, else the server's ``approval``) is ``allow``: never.
    * ``ask`` (the default): always, except a tool declaring ``readOnlyHint`` in the ``ask``
      and ``auto`` modes; in ``read-only`` mode every call asks.

    ``deny`` tools are never offered (:func:`static_filter`), so they never get here.
    """
    if mode == ApprovalMode.FULL:
        return False
    rule = config.tool_approval(tool.name)
    if rule == "allow":
        return False
    if rule == "deny":
        return True
    return not (_read_only_hint(tool) and mode in (ApprovalMode.ASK, ApprovalMode.AUTO))


def approval_callable(
    config: LocalMcpServer, mode: Callable[[], ApprovalMode]
) -> Callable[[Any, Any, Any], bool]:
    """``require_approval`` for :class:`core.mcp.MCPServerStdio` & co: ``(ctx, agent, tool)``
    -> :func:`needs_approval` under the mode in force at call time."""

    def check(_ctx: Any, _agent: Any, tool: Any) -> bool:
        return needs_approval(config, tool, mode())

    return check


def static_filter(config: LocalMcpServer) -> ToolFilterStatic | None:
    """The tools offered: ``enabled_tools`` (all when unset) less ``disabled_tools`` and the
    ``deny`` ones; a server whose ``approval`` is ``deny`` offers only tools ruled otherwise."""
    allowed = None if config.enabled_tools is None else list(config.enabled_tools)
    if config.approval == "deny":
        ruled = [name for name, rule in config.tools.items() if rule != "deny"]
        allowed = ruled if allowed is None else [n for n in allowed if n in ruled]
    blocked = [*config.disabled_tools, *(n for n, r in config.tools.items() if r == "deny")]
    result: ToolFilterStatic = {}
    if allowed is not None:
        result["allowed_tool_names"] = allowed
    if blocked:
        result["blocked_tool_names"] = blocked
    return result or None
