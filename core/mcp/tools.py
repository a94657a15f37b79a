"""MCP tools as function tools: schemas, names (server prefix), invocation, errors."""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import logging
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..errors import ModelBehaviorError, UserError
from ..tools.function import FunctionTool, default_tool_error_function
from ..tools.strict_schema import ensure_strict_json_schema
from .approval import needs_approval_for_tool
from .results import call_result_to_output
from .server import _UNSET, MCPServer

if TYPE_CHECKING:
    from mcp_types import Tool as MCPTool

    from ..context import RunContextWrapper

__all__ = ["MCPUtil", "mcp_tool_binding", "prefixed_tool_name"]

logger = logging.getLogger("core")

_MAX_NAME = 64  # the Responses API's function-name limit
_HASH_CHARS = 8


def _safe(value: str, fallback: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", value.encode("ascii", "replace").decode()).strip("_-")
    return safe or fallback


def _shorten(base: str, seed: str, *, force_hash: bool = False) -> str:
    if not force_hash and len(base) <= _MAX_NAME:
        return base
    digest = hashlib.sha1(seed.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    stem = base[: _MAX_NAME - _HASH_CHARS - 1].rstrip("_-") or "mcp"
    return f"{stem}_{digest}"


def prefixed_tool_name(server_name: str, tool_name: str) -> str:
    """``mcp_<server>__<tool>``: characters outside ``[A-Za-z0-9_-]`` become ``_``; a name over
    64 characters keeps a stem and gets ``_<8 hex of sha1(server NUL tool)>`` (the reference
    SDK 0.24's ``include_server_in_tool_names`` naming)."""
    base = f"mcp_{_safe(server_name, 'server')}__{_safe(tool_name, 'tool')}"
    return _shorten(base, f"{server_name}\0{tool_name}")


def mcp_tool_binding(tool: FunctionTool) -> tuple[str, str] | None:
    """``(server name, MCP tool name)`` of a function tool built from an MCP tool, else ``None``."""
    binding = getattr(tool, "_mcp_tool_binding", None)
    return binding if isinstance(binding, tuple) else None


def _input_schema(tool: MCPTool) -> dict[str, Any]:
    schema = getattr(tool, "input_schema", None)
    if schema is None:
        schema = getattr(tool, "inputSchema", None)
    return copy.deepcopy(dict(schema or {}))


def _description(tool: MCPTool) -> str:
    if tool.description:
        return str(tool.description)
    title = getattr(tool, "title", None) or getattr(
        getattr(tool, "annotations", None), "title", None
    )
    return str(title or "")


def _has_open_object_or_ref(node: Any) -> bool:
    """Whether a schema has a ``$ref`` or an object node without declared properties that is
    not closed: such MCP schemas stay non-strict (strict mode would forbid the arguments the
    server accepts; reference SDK 0.24 rejects them the same way)."""
    if not isinstance(node, dict):
        return False
    if "$ref" in node:
        return True
    kind = node.get("type")
    is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
    if kind is None and isinstance(node.get("properties"), dict):
        is_object = True
    if is_object and not node.get("properties") and node.get("additionalProperties") is not False:
        return True
    children: list[Any] = []
    for key in ("properties", "$defs", "definitions"):
        if isinstance(node.get(key), dict):
            children.extend(node[key].values())
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(node.get(key), list):
            children.extend(node[key])
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            children.append(node[key])
    return any(_has_open_object_or_ref(child) for child in children)


class MCPUtil:
    """Conversion of MCP tools to function tools (names follow ``agents.mcp.MCPUtil``)."""

    @classmethod
    async def get_all_function_tools(
        cls,
        servers: list[MCPServer],
        convert_schemas_to_strict: bool,
        run_context: RunContextWrapper[Any],
        agent: Any,
        failure_error_function: Any = default_tool_error_function,
        include_server_in_tool_names: bool = False,
        reserved_tool_names: set[str] | None = None,
    ) -> list[FunctionTool]:
        """The function tools of all ``servers``, server by server, each in server order.

        Without ``include_server_in_tool_names`` the MCP names are used as they are, and a
        name two servers share is a :class:`UserError`. With it, each tool is named by
        :func:`prefixed_tool_name`; a prefixed name that collides with another one or with
        ``reserved_tool_names`` gets a hash suffix.

        Raises:
            UserError: duplicate tool names across servers; a server not connected.
            MCPServerError: a server could not be (re)started.
        """
        batches: list[tuple[MCPServer, list[MCPTool]]] = []
        for server in servers:
            batches.append((server, await server.list_tools(run_context, agent)))
        names = cls._names(batches, include_server_in_tool_names, reserved_tool_names or set())
        result: list[FunctionTool] = []
        seen: set[str] = set()
        for (server, tools), public in zip(batches, names, strict=True):
            built = [
                cls.to_function_tool(
                    tool,
                    server,
                    convert_schemas_to_strict,
                    agent,
                    failure_error_function,
                    tool_name_override=name,
                )
                for tool, name in zip(tools, public, strict=True)
            ]
            duplicates = sorted({t.name for t in built} & seen)
            if duplicates:
                raise UserError(
                    f"Duplicate tool names found across MCP servers: {', '.join(map(repr, duplicates))}. "
                    "Pass `mcp_config={'include_server_in_tool_names': True}` on the agent to prefix "
                    "tool names with their server name."
                )
            seen.update(t.name for t in built)
            result.extend(built)
        return result

    @staticmethod
    def _names(
        batches: list[tuple[MCPServer, list[MCPTool]]], prefixed: bool, reserved: set[str]
    ) -> list[list[str]]:
        if not prefixed:
            return [[t.name for t in tools] for _, tools in batches]
        bases = [
            [f"mcp_{_safe(s.name, 'server')}__{_safe(t.name, 'tool')}" for t in tools]
            for s, tools in batches
        ]
        counts = Counter(b for row in bases for b in row)
        used = set(reserved)
        out: list[list[str]] = []
        for (server, tools), row in zip(batches, bases, strict=True):
            names: list[str] = []
            for tool, base in zip(tools, row, strict=True):
                seed = f"{server.name}\0{tool.name}"
                name = _shorten(base, seed, force_hash=counts[base] > 1 or base in reserved)
                index = 1
                while name in used:
                    name = _shorten(base, f"{seed}\0{index}", force_hash=True)
                    index += 1
                used.add(name)
                names.append(name)
            out.append(names)
        return out

    @classmethod
    def to_function_tool(
        cls,
        tool: MCPTool,
        server: MCPServer,
        convert_schemas_to_strict: bool,
        agent: Any = None,
        failure_error_function: Any = default_tool_error_function,
        tool_name_override: str | None = None,
    ) -> FunctionTool:
        """One MCP tool as a :class:`FunctionTool` calling ``server``.

        The schema is the tool's ``inputSchema`` (``properties: {}`` added when missing);
        with ``convert_schemas_to_strict`` its strict form is used when it has one, else the
        tool stays non-strict. The description is the MCP description, else its title.
        ``needs_approval`` comes from the server's ``require_approval``. The tool carries
        ``_mcp_tool_binding = (server name, tool name)`` and ``_mcp_annotations``.

        A failed call (a server that crashed, timed out or could not restart; a JSON-RPC error)
        becomes the output of the server's ``failure_error_function`` (default: the agent's,
        else :func:`default_tool_error_function`); with ``None`` the error is raised.
        """
        public = tool_name_override or tool.name
        schema = _input_schema(tool)
        was_empty = schema == {}
        schema.setdefault("properties", {})
        strict = False
        if convert_schemas_to_strict and (was_empty or not _has_open_object_or_ref(schema)):
            try:
                schema = ensure_strict_json_schema(copy.deepcopy(schema))
                strict = True
            except Exception:
                logger.info("MCP tool schema of %s cannot be made strict", public)
        on_failure = server.failure_error_function
        if on_failure is _UNSET:
            on_failure = failure_error_function

        async def fail(ctx: Any, exc: Exception) -> Any:
            if on_failure is None:
                raise exc
            value = on_failure(ctx, exc)
            if inspect.isawaitable(value):
                value = await value
            return value

        async def on_invoke(ctx: Any, arguments: str) -> Any:
            try:
                data = json.loads(arguments) if arguments else {}
            except ValueError as exc:
                error = ModelBehaviorError(f"Invalid JSON input for tool {public}")
                error.__cause__ = exc
                return await fail(ctx, error)
            if not isinstance(data, dict):
                return await fail(
                    ctx,
                    ModelBehaviorError(
                        f"Invalid JSON input for tool {public}: expected a JSON object"
                    ),
                )
            try:
                result = await server.call_tool(tool.name, data)
            except Exception as exc:
                return await fail(ctx, exc)
            return call_result_to_output(
                result,
                tool_name=tool.name,
                server_name=server.name,
                use_structured_content=server.use_structured_content,
            )

        function_tool = FunctionTool(
            name=public,
            description=_description(tool),
            params_json_schema=schema,
            on_invoke_tool=on_invoke,
            strict_json_schema=False,
            tool_input_guardrails=list(server.tool_input_guardrails)
            if server.tool_input_guardrails
            else None,
            tool_output_guardrails=list(server.tool_output_guardrails)
            if server.tool_output_guardrails
            else None,
            needs_approval=needs_approval_for_tool(server._needs_approval_policy, tool, agent),
        )
        if strict:  # the strict form is already computed: send it as is
            function_tool.params_json_schema = schema
            function_tool.strict_json_schema = True
            function_tool._strict_params_json_schema = schema
        function_tool._mcp_tool_binding = (server.name, tool.name)  # type: ignore[attr-defined]
        function_tool._mcp_annotations = copy.deepcopy(getattr(tool, "annotations", None))  # type: ignore[attr-defined]
        return function_tool
