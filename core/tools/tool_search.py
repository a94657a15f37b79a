"""Hosted tool search: ``ToolSearchTool``, ``tool_namespace`` and their request rules (spec §3)."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import UserError
from .function import FunctionTool
from .hosted import HostedMCPTool

__all__ = [
    "FunctionToolLookup",
    "ToolSearchTool",
    "namespace_description",
    "tool_namespace",
    "tools_payload",
    "validate_named_tool_choice",
    "validate_tool_search_configuration",
]

_NAMESPACE_DESCRIPTION = "_namespace_description"


@dataclass(slots=True)
class ToolSearchTool:
    """Lets the model load deferred tools, namespaces and hosted MCP servers (spec §3.1).

    Attributes:
        description: optional description sent to the model.
        execution: ``"server"`` (hosted; the default when unset) or ``"client"`` (manual
            orchestration: the standard runner raises when the model emits such a call).
        parameters: optional JSON schema of client search arguments.

    Raises:
        UserError: an ``execution`` other than ``"server"``, ``"client"`` or ``None``.
    """

    description: str | None = None
    execution: Literal["server", "client"] | None = None
    parameters: Any = None

    def __post_init__(self) -> None:
        if self.execution not in (None, "server", "client"):
            raise UserError(
                f"ToolSearchTool execution must be 'server', 'client' or None, got "
                f"{self.execution!r}."
            )

    @property
    def name(self) -> str:
        return "tool_search"

    def to_wire(self, model: str | None = None) -> dict[str, Any]:
        """``{"type": "tool_search"}`` plus ``description``/``execution``/``parameters`` when set."""
        payload: dict[str, Any] = {"type": "tool_search"}
        if self.description is not None:
            payload["description"] = self.description
        if self.execution is not None:
            payload["execution"] = self.execution
        if self.parameters is not None:
            payload["parameters"] = copy.deepcopy(self.parameters)
        return payload


def tool_namespace(
    *, name: str, description: str, tools: Iterable[FunctionTool]
) -> list[FunctionTool]:
    """Copies of ``tools`` grouped under namespace ``name`` (spec §3.3).

    The copies are sent as one ``{"type": "namespace", ...}`` entry placed where the first of
    them appears in ``Agent.tools`` and are called with ``"namespace": name``. Members may be
    immediate or ``defer_loading=True``. Arguments are keyword-only, as in openai-agents 0.24.

    Args:
        name: the namespace name (non-empty after stripping).
        description: the namespace description shown to the model (non-empty after stripping).
        tools: ``FunctionTool`` instances; the originals are left untouched.

    Returns:
        The namespaced copies, in order (spread them into ``Agent.tools``).

    Raises:
        UserError: an empty name or description, a tool that is not a ``FunctionTool``, or a
            tool named like the namespace (that shape is reserved for deferred top-level tools).
    """
    if not isinstance(name, str) or not name.strip():
        raise UserError("tool_namespace() requires a non-empty name.")
    if not isinstance(description, str) or not description.strip():
        raise UserError(f"tool_namespace({name!r}) requires a non-empty description.")
    name, description = name.strip(), description.strip()
    grouped: list[FunctionTool] = []
    for tool in tools:
        if not isinstance(tool, FunctionTool):
            raise UserError(
                f"tool_namespace({name!r}) only accepts FunctionTool instances, got "
                f"{type(tool).__name__}."
            )
        if tool.name == name:
            raise UserError(
                f"Tool `{tool.name}` cannot have the same name as its namespace {name!r}; that "
                "shape is reserved for deferred top-level tools."
            )
        member = copy.copy(tool)
        member._namespace = name
        setattr(member, _NAMESPACE_DESCRIPTION, description)
        grouped.append(member)
    return grouped


def namespace_description(tool: FunctionTool) -> str | None:
    """The description ``tool_namespace`` gave ``tool``, or ``None`` when not namespaced."""
    value = getattr(tool, _NAMESPACE_DESCRIPTION, None)
    return value if isinstance(value, str) else None


def _wire(tool: Any, model: str | None) -> dict[str, Any]:
    to_wire = getattr(tool, "to_wire", None)
    if to_wire is None:
        raise UserError(f"Unsupported tool type {type(tool).__name__}")
    payload: dict[str, Any] = to_wire(model) if inspect.signature(to_wire).parameters else to_wire()
    return payload


def tools_payload(tools: list[Any], model: str | None) -> list[dict[str, Any]]:
    """The request's ``tools`` array: each tool's payload in order, namespace members folded
    into one ``namespace`` entry at the position of the first member (spec §0, §3.3).

    Raises:
        UserError: a tool without ``to_wire``, or members of one namespace with different
            descriptions ("All tools in namespace '<ns>' must share the same description.").
    """
    payload: list[dict[str, Any]] = []
    groups: dict[str, dict[str, Any]] = {}
    for tool in tools:
        namespace = tool._namespace if isinstance(tool, FunctionTool) else None
        if namespace is None:
            payload.append(_wire(tool, model))
            continue
        description = namespace_description(tool) or ""
        group = groups.get(namespace)
        if group is None:
            group = {
                "type": "namespace",
                "name": namespace,
                "description": description,
                "tools": [],
            }
            groups[namespace] = group
            payload.append(group)
        elif group["description"] != description:
            raise UserError(
                f"All tools in namespace '{namespace}' must share the same description."
            )
        group["tools"].append(_wire(tool, model))
    return payload


# -- validation (spec §3.4, §3.6) ----------------------------------------------------------------


def _is_deferred_top_level(tool: FunctionTool) -> bool:
    return tool.defer_loading and tool._namespace is None


def validate_tool_search_configuration(tools: list[Any]) -> None:
    """Check the enabled tools of a Responses request (spec §3.4).

    Raises:
        UserError: more than one ``ToolSearchTool``; a deferred function tool or deferred
            hosted MCP server without one; a ``ToolSearchTool`` with nothing to search; two
            function tools with the same qualified name, or two deferred top-level tools with
            the same name.
    """
    searches = [t for t in tools if isinstance(t, ToolSearchTool)]
    if len(searches) > 1:
        raise UserError("Only one ToolSearchTool() is allowed when using OpenAI Responses models.")
    functions = [t for t in tools if isinstance(t, FunctionTool)]
    deferred = [t for t in functions if t.defer_loading] + [
        t for t in tools if isinstance(t, HostedMCPTool) and t.defer_loading
    ]
    if deferred and not searches:
        raise UserError(
            "Deferred-loading Responses tools require ToolSearchTool() when using OpenAI "
            "Responses models."
        )
    namespaced = [t for t in functions if t._namespace is not None]
    if searches and not deferred and not namespaced:
        raise UserError(
            "ToolSearchTool() requires at least one searchable Responses surface: a function "
            "tool with defer_loading=True, a tool_namespace(...) group, or a HostedMCPTool "
            "with tool_config['defer_loading'] = True."
        )
    seen: dict[tuple[str, str], FunctionTool] = {}
    for tool in functions:
        if tool._namespace is not None:
            key, shown = (tool._namespace, tool.name), f"{tool._namespace}.{tool.name}"
        elif tool.defer_loading:
            key, shown = ("<deferred>", tool.name), f"deferred top-level tool {tool.name}"
        else:
            key, shown = ("", tool.name), tool.name
        if key in seen:
            raise UserError(
                f"Ambiguous function tool configuration: more than one tool resolves to "
                f"{shown!r}. Rename one of them or place them in different namespaces."
            )
        seen[key] = tool


def validate_named_tool_choice(choice: str, tools: list[Any]) -> None:
    """Refuse a named ``tool_choice`` that cannot target a callable tool (spec §3.6).

    Only names involved in tool search are refused; other unknown names pass through as
    before (``{"type": "function", "name": ...}``).

    Raises:
        UserError: ``"tool_search"`` without a real function tool of that name; a namespace
            name; the bare inner name of a namespaced tool with no top-level tool of that
            name; a deferred-only top-level tool; ``"required"`` with deferred tools and no
            ``ToolSearchTool``.
    """
    functions = [t for t in tools if isinstance(t, FunctionTool)]
    has_search = any(isinstance(t, ToolSearchTool) for t in tools)
    if choice == "required":
        deferred = any(t.defer_loading for t in functions) or any(
            isinstance(t, HostedMCPTool) and t.defer_loading for t in tools
        )
        if deferred and not has_search:
            raise UserError(
                "tool_choice='required' with deferred-loading tools requires ToolSearchTool(): "
                "the model could not load any of them."
            )
        return
    if choice in ("auto", "none"):
        return
    top_level = [t for t in functions if t._namespace is None and not t.defer_loading]
    if any(t.name == choice for t in top_level):
        return
    if choice == "tool_search":
        where = "with ToolSearchTool()" if has_search else "without ToolSearchTool()"
        raise UserError(
            f"tool_choice='tool_search' is not supported {where}: it does not force a tool "
            "search. Use tool_choice='auto' or 'required' instead."
        )
    namespaces = {t._namespace for t in functions if t._namespace is not None}
    inner = {t.name for t in functions if t._namespace is not None}
    if choice in namespaces or choice in inner:
        raise UserError(
            "Named tool_choice must target a callable tool, not a namespace wrapper or bare "
            f"inner name: {choice!r}. Use tool_choice='auto' or 'required', or name a "
            "top-level function tool."
        )
    if any(t.name == choice and _is_deferred_top_level(t) for t in functions):
        raise UserError(
            f"Named tool_choice {choice!r} targets a deferred-loading tool that the model "
            "cannot call before tool search loads it. Use tool_choice='auto' or 'required'."
        )


# -- dispatch (spec §3.5) ------------------------------------------------------------------------


class FunctionToolLookup:
    """Finds the function tool a ``function_call`` targets by (namespace, name).

    A namespaced tool answers only calls carrying its namespace. A deferred top-level tool
    answers a call whose namespace equals its own name (the synthetic namespace tool search
    gives it) and a bare-name call when no visible top-level tool has that name.
    """

    __slots__ = ("_deferred", "_namespaced", "_visible")

    def __init__(self, tools: list[Any]) -> None:
        self._visible: dict[str, FunctionTool] = {}
        self._deferred: dict[str, FunctionTool] = {}
        self._namespaced: dict[tuple[str, str], FunctionTool] = {}
        for tool in tools:
            if not isinstance(tool, FunctionTool):
                continue
            if tool._namespace is not None:
                self._namespaced[(tool._namespace, tool.name)] = tool
            elif tool.defer_loading:
                self._deferred[tool.name] = tool
            else:
                self._visible[tool.name] = tool

    def find(self, namespace: str | None, name: str) -> FunctionTool | None:
        """The tool for a call, or ``None`` ("tool not found")."""
        if namespace:
            found = self._namespaced.get((namespace, name))
            if found is None and namespace == name:
                found = self._deferred.get(name)
            return found
        return self._visible.get(name) or self._deferred.get(name)
