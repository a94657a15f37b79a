"""Builders for Responses API output items and usage objects in wire form (plain dicts)."""

from __future__ import annotations

import json
import uuid
from typing import Any

__all__ = [
    "apply_patch_call",
    "code_interpreter_call",
    "custom_tool_call",
    "file_search_call",
    "function_call",
    "image_generation_call",
    "mcp_approval_request",
    "mcp_call",
    "mcp_list_tools",
    "message",
    "new_id",
    "reasoning",
    "shell_call",
    "tool_search_call",
    "tool_search_output",
    "usage",
    "web_search_call",
]


def new_id(prefix: str) -> str:
    """Return a fresh id such as ``"msg_3f2a..."`` (prefix, underscore, 24 hex digits)."""
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def message(text: str, id: str | None = None) -> dict[str, Any]:
    """An assistant ``message`` output item with one ``output_text`` part (spec §11 (a))."""
    return {
        "type": "message",
        "id": id or new_id("msg"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    }


def function_call(
    name: str,
    arguments: str | dict[str, Any],
    call_id: str | None = None,
    namespace: str | None = None,
) -> dict[str, Any]:
    """A ``function_call`` output item (spec §1.6, §3.5).

    Args:
        name: tool name as the model calls it.
        arguments: a JSON string sent verbatim, or a dict serialised compactly.
        call_id: defaults to a fresh ``call_...`` id.
        namespace: set for calls to a tool inside a ``tool_namespace`` (key omitted when None).
    """
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))
    item: dict[str, Any] = {
        "type": "function_call",
        "id": new_id("fc"),
        "call_id": call_id or new_id("call"),
        "name": name,
        "arguments": args,
        "status": "completed",
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


def custom_tool_call(name: str, input: str, call_id: str | None = None) -> dict[str, Any]:
    """A ``custom_tool_call`` item (freeform tool, e.g. the Codex CLI's ``apply_patch``)."""
    return {
        "type": "custom_tool_call",
        "id": new_id("ctc"),
        "call_id": call_id or new_id("call"),
        "name": name,
        "input": input,
    }


def shell_call(
    commands: list[str] | str,
    call_id: str | None = None,
    timeout_ms: int | None = None,
    max_output_length: int | None = None,
) -> dict[str, Any]:
    """A ``shell_call`` output item (spec §4.3); a single string becomes a one-command list.

    Args:
        commands: shell command lines, run in order.
        call_id: defaults to a fresh ``call_...`` id.
        timeout_ms: per-call timeout in milliseconds (null when None).
        max_output_length: output cap in characters (null when None).
    """
    cmds = [commands] if isinstance(commands, str) else list(commands)
    return {
        "type": "shell_call",
        "id": new_id("sh"),
        "call_id": call_id or new_id("call"),
        "status": "completed",
        "action": {
            "commands": cmds,
            "timeout_ms": timeout_ms,
            "max_output_length": max_output_length,
        },
    }


def apply_patch_call(operation: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    """An ``apply_patch_call`` output item (spec §5.2).

    Args:
        operation: ``{"type": "create_file"|"update_file"|"delete_file", "path": ..., "diff": ...}``
            (no ``diff`` for ``delete_file``), copied as given.
        call_id: defaults to a fresh ``call_...`` id.
    """
    return {
        "type": "apply_patch_call",
        "id": new_id("apc"),
        "call_id": call_id or new_id("call"),
        "status": "completed",
        "operation": dict(operation),
    }


def web_search_call(query: str, id: str | None = None) -> dict[str, Any]:
    """A completed ``web_search_call`` with a ``search`` action (spec §2.1)."""
    return {
        "type": "web_search_call",
        "id": id or new_id("ws"),
        "status": "completed",
        "action": {"type": "search", "query": query},
    }


def file_search_call(
    queries: list[str], results: list[dict[str, Any]] | None = None, id: str | None = None
) -> dict[str, Any]:
    """A completed ``file_search_call``; ``results`` entries are ``{file_id, filename, score,
    text, attributes}`` (spec §2.2)."""
    return {
        "type": "file_search_call",
        "id": id or new_id("fs"),
        "queries": list(queries),
        "status": "completed",
        "results": results,
    }


def code_interpreter_call(
    code: str, logs: str | None = None, id: str | None = None, container_id: str = "cntr_1"
) -> dict[str, Any]:
    """A completed ``code_interpreter_call`` with one ``logs`` output when given (spec §2.3)."""
    return {
        "type": "code_interpreter_call",
        "id": id or new_id("ci"),
        "code": code,
        "container_id": container_id,
        "outputs": [{"type": "logs", "logs": logs}] if logs is not None else [],
        "status": "completed",
    }


def image_generation_call(result_b64: str | None, id: str | None = None) -> dict[str, Any]:
    """A completed ``image_generation_call`` whose ``result`` is a base64 image (spec §2.4)."""
    return {
        "type": "image_generation_call",
        "id": id or new_id("ig"),
        "status": "completed",
        "result": result_b64,
    }


def mcp_list_tools(server_label: str, names: list[str], id: str | None = None) -> dict[str, Any]:
    """An ``mcp_list_tools`` item listing tools with empty object schemas (spec §2.5)."""
    return {
        "type": "mcp_list_tools",
        "id": id or new_id("mcpl"),
        "server_label": server_label,
        "tools": [{"name": n, "input_schema": {"type": "object"}} for n in names],
    }


def mcp_call(
    server_label: str,
    name: str,
    arguments: str | dict[str, Any],
    output: str | None = None,
    id: str | None = None,
    approval_request_id: str | None = None,
) -> dict[str, Any]:
    """A completed ``mcp_call`` item (spec §2.5)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))
    item: dict[str, Any] = {
        "type": "mcp_call",
        "id": id or new_id("mcp"),
        "server_label": server_label,
        "name": name,
        "arguments": args,
        "output": output,
        "status": "completed",
    }
    if approval_request_id is not None:
        item["approval_request_id"] = approval_request_id
    return item


def mcp_approval_request(
    server_label: str, name: str, arguments: str | dict[str, Any], id: str | None = None
) -> dict[str, Any]:
    """An ``mcp_approval_request`` item (spec §2.5)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))
    return {
        "type": "mcp_approval_request",
        "id": id or new_id("mcpr"),
        "server_label": server_label,
        "name": name,
        "arguments": args,
    }


def tool_search_call(
    arguments: dict[str, Any],
    execution: str = "server",
    call_id: str | None = None,
    id: str | None = None,
) -> dict[str, Any]:
    """A completed ``tool_search_call`` (spec §3.7), with a ``created_by`` the runner strips."""
    return {
        "type": "tool_search_call",
        "id": id or new_id("tsc"),
        "call_id": call_id,
        "arguments": dict(arguments),
        "execution": execution,
        "status": "completed",
        "created_by": "resp_server",
    }


def tool_search_output(
    tools: list[dict[str, Any]],
    execution: str = "server",
    call_id: str | None = None,
    id: str | None = None,
) -> dict[str, Any]:
    """A completed ``tool_search_output`` carrying loaded tool definitions (spec §3.7)."""
    return {
        "type": "tool_search_output",
        "id": id or new_id("tso"),
        "call_id": call_id,
        "execution": execution,
        "status": "completed",
        "tools": [dict(t) for t in tools],
        "created_by": "resp_server",
    }


def reasoning(summary_text: str) -> dict[str, Any]:
    """A ``reasoning`` output item with one ``summary_text`` entry."""
    return {
        "type": "reasoning",
        "id": new_id("rs"),
        "summary": [{"type": "summary_text", "text": summary_text}],
    }


def usage(
    input_tokens: int,
    output_tokens: int,
    *,
    cached_tokens: int = 0,
    reasoning_tokens: int = 0,
) -> dict[str, Any]:
    """A full ``usage`` object (tokens); ``total_tokens`` is input plus output."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached_tokens, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input_tokens + output_tokens,
    }
