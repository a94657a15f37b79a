"""The JSONL events of ``tandem run --json`` (documented in docs/tandem-run.md).

In the spirit of ``codex exec --json``: one JSON object a line on stdout, each with a
``type``. Items carry an ``id`` (the Responses API ``call_id``, or the item's ``id``) and an
item ``type``: ``agent_message``, ``reasoning``, ``command_execution``, ``file_change``,
``mcp_tool_call``, ``tool_call``. Every string passes through :func:`core.redaction.redact`
(issue 11) before it is written.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from core.items import ItemHelpers
from core.redaction import redact_text

__all__ = ["EVENT_TYPES", "ITEM_TYPES", "EventWriter", "item_of"]

#: Every ``type`` a line can have.
EVENT_TYPES = (
    "session.started",
    "item.started",
    "item.updated",
    "item.completed",
    "approval.requested",
    "turn.completed",
    "error",
    "session.ended",
)
#: Every ``item.type``.
ITEM_TYPES = (
    "agent_message",
    "reasoning",
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "tool_call",
)


class EventWriter:
    """Writes events as JSON lines (a no-op when ``out`` is ``None``: ``--json`` not given).

    Args:
        out: the stream (stdout), flushed after every line so a reader sees it at once.
    """

    def __init__(self, out: TextIO | None) -> None:
        self._out = out

    @property
    def enabled(self) -> bool:
        """``--json`` was given."""
        return self._out is not None

    def emit(self, kind: str, /, **fields: Any) -> None:
        """Write one event ``{"type": kind, **fields}``.

        Raises:
            ValueError: ``kind`` is not one of :data:`EVENT_TYPES` (a programming error).
        """
        if kind not in EVENT_TYPES:
            raise ValueError(f"unknown event type {kind!r}")
        if self._out is None:
            return
        line = json.dumps(_redacted({"type": kind, **fields}), ensure_ascii=False, default=str)
        self._out.write(line + "\n")
        self._out.flush()


def item_of(
    name: str,
    raw: dict[str, Any],
    output: Any,
    mcp: Any = None,
    started: dict[str, str] | None = None,
) -> tuple[str, dict[str, Any]] | None:
    """The event of one run item stream event (spec §10.3 names), or ``None`` to skip it.

    Args:
        name: ``tool_called``, ``tool_output``, ``message_output_created``,
            ``reasoning_item_created`` (others are skipped).
        raw: the item's Responses API wire dict.
        output: a tool output's Python value (``None`` when unknown).
        mcp: the run's :class:`harnesses.mcp.LocalMcpServers` (MCP calls get server and tool).
        started: call id -> item type of the calls started so far (filled here), so an
            output carries its call's type.

    Returns:
        ``(event type, item dict)``: ``item.started`` for a call, ``item.completed`` for its
        output, a message or a reasoning summary.
    """
    if name == "message_output_created":
        text = ItemHelpers.extract_last_text(raw) or ""
        return "item.completed", {
            "id": str(raw.get("id", "")),
            "type": "agent_message",
            "text": text,
        }
    if name == "reasoning_item_created":
        summary = " ".join(str(s.get("text", "")) for s in raw.get("summary", []) or [])
        return "item.completed", {
            "id": str(raw.get("id", "")),
            "type": "reasoning",
            "text": summary,
        }
    call_id = str(raw.get("call_id") or raw.get("id") or "")
    kind = raw.get("type")
    if name == "tool_called":
        item: dict[str, Any] = {"id": call_id, "status": "in_progress"}
        if kind == "shell_call":
            item |= {
                "type": "command_execution",
                "commands": list(raw.get("action", {}).get("commands", [])),
            }
        elif kind == "apply_patch_call":
            op = raw.get("operation", {})
            item |= {"type": "file_change", "operation": op.get("type"), "path": op.get("path")}
        else:
            item |= _tool_call(raw, mcp)
        if started is not None:
            started[call_id] = str(item["type"])
        return "item.started", item
    if name == "tool_output":
        item = {"id": call_id, "status": "completed"}
        if kind == "shell_call_output":
            entries = raw.get("output", []) or []
            item |= {
                "type": "command_execution",
                "output": "".join(
                    str(e.get("stdout", "")) + str(e.get("stderr", "")) for e in entries
                ),
                "exit_codes": [e.get("outcome", {}).get("exit_code") for e in entries],
            }
            if any(e.get("outcome", {}).get("type") == "timeout" for e in entries):
                item["status"] = "timed_out"
            elif any(e.get("outcome", {}).get("exit_code") for e in entries):
                item["status"] = "failed"
        elif kind == "apply_patch_call_output":
            item |= {"type": "file_change", "output": str(raw.get("output", ""))}
            if raw.get("status") == "failed":
                item["status"] = "failed"
        else:
            kind_of = (started or {}).get(call_id, "tool_call")
            text = str(output if output is not None else raw.get("output", ""))
            item |= {"type": kind_of if kind_of == "mcp_tool_call" else "tool_call", "output": text}
        return "item.completed", item
    return None


def _tool_call(raw: dict[str, Any], mcp: Any) -> dict[str, Any]:
    name = str(raw.get("name") or raw.get("type") or "")
    arguments = str(raw.get("arguments", ""))
    described = mcp.describe_call(name, arguments) if mcp is not None else None
    if described is not None:  # issue 18: a local MCP server's tool
        server, tool, _pretty = described
        return {
            "type": "mcp_tool_call",
            "server": server,
            "tool": tool,
            "arguments": _json(arguments),
        }
    if raw.get("type") == "mcp_approval_request":
        return {
            "type": "mcp_tool_call",
            "server": raw.get("server_label"),
            "tool": name,
            "arguments": _json(arguments),
        }
    return {"type": "tool_call", "name": name, "arguments": _json(arguments)}


def _redacted(value: Any) -> Any:
    """Each string redacted on its own (a redaction never breaks the JSON)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(v) for v in value]
    return value


def _json(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text
