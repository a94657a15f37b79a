"""``require_approval`` of an MCP server: the forms the reference SDK 0.24 accepts."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeAlias

from ..errors import UserError

__all__ = ["RequireApprovalSetting", "needs_approval_for_tool", "normalize_require_approval"]

RequireApprovalSetting: TypeAlias = Any
"""``None``/``"never"``/``False`` (no approval), ``"always"``/``True``, a ``{tool: "always" |
"never" | bool}`` map, ``{"always": {"tool_names": [...]}, "never": {"tool_names": [...]}}``,
or ``(run_context, agent, mcp_tool) -> bool`` (sync or async)."""


def _flag(value: object, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if value == "always":
        return True
    if value == "never":
        return False
    raise UserError(
        f"Invalid require_approval value at {where}: expected 'always' or 'never', got {value!r}."
    )


def _names(entry: object, where: str) -> list[str]:
    if not isinstance(entry, dict):
        raise UserError(f"Invalid require_approval.{where}: expected an object with tool_names")
    names = entry.get("tool_names", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise UserError(f"Invalid require_approval.{where}.tool_names: expected a list of strings")
    return names


def normalize_require_approval(
    setting: RequireApprovalSetting,
) -> bool | dict[str, bool] | Callable[..., Any]:
    """``require_approval`` as a bool, a ``{tool_name: bool}`` map or the callable.

    Raises:
        UserError: at construction, for a value of none of the accepted forms (or a tool in both
            ``always`` and ``never`` lists).
    """
    if setting is None:
        return False
    if callable(setting):
        return setting
    if isinstance(setting, dict):
        listed = any(
            isinstance(setting.get(k), dict) and "tool_names" in setting[k]
            for k in ("always", "never")
        )
        if listed:
            extra = sorted(set(setting) - {"always", "never"})
            if extra:
                raise UserError(
                    f"Invalid require_approval tool list policy: unexpected keys {extra!r}"
                )
            always = _names(setting.get("always", {}), "always")
            never = _names(setting.get("never", {}), "never")
            both = sorted(set(always) & set(never))
            if both:
                raise UserError(f"require_approval lists tools in both always and never: {both!r}")
            return {**{n: False for n in never}, **{n: True for n in always}}
        return {str(k): _flag(v, f"require_approval[{k!r}]") for k, v in setting.items()}
    return _flag(setting, "require_approval")


def needs_approval_for_tool(policy: Any, tool: Any, agent: Any) -> Any:
    """The ``FunctionTool.needs_approval`` value for ``tool`` under a normalized ``policy``.

    A map gives the tool's entry (default ``False``); a callable becomes
    ``async (run_context, args, call_id) -> bool`` calling ``policy(run_context, agent, tool)``.
    """
    if callable(policy):

        async def check(run_context: Any, _args: dict[str, Any], _call_id: str) -> bool:
            verdict = policy(run_context, agent, tool)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            return bool(verdict)

        return check
    if isinstance(policy, dict):
        return bool(policy.get(tool.name, False))
    return bool(policy)
