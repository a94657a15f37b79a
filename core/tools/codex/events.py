"""Typed Codex ``exec --experimental-json`` JSONL events and thread items (spec §9.4)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "AgentMessageItem",
    "CodexUsage",
    "CommandExecutionItem",
    "ErrorItem",
    "FileChangeItem",
    "FileUpdateChange",
    "ItemCompletedEvent",
    "ItemStartedEvent",
    "ItemUpdatedEvent",
    "McpToolCallError",
    "McpToolCallItem",
    "McpToolCallResult",
    "ReasoningItem",
    "ThreadErrorEvent",
    "ThreadEvent",
    "ThreadItem",
    "ThreadStartedEvent",
    "TodoEntry",
    "TodoListItem",
    "TurnCompletedEvent",
    "TurnFailedEvent",
    "TurnStartedEvent",
    "UnknownEvent",
    "UnknownItem",
    "WebSearchItem",
    "parse_event",
    "parse_event_line",
    "parse_item",
]


def _str(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return value if isinstance(value, str) else default


def _int(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# -- items ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AgentMessageItem:
    """A message of the Codex agent (the last completed one is the tool's response)."""

    id: str
    text: str
    type: Literal["agent_message"] = field(default="agent_message", init=False)


@dataclass(frozen=True, slots=True)
class ReasoningItem:
    """A reasoning summary of the Codex agent."""

    id: str
    text: str
    type: Literal["reasoning"] = field(default="reasoning", init=False)


@dataclass(frozen=True, slots=True)
class CommandExecutionItem:
    """A command Codex ran: ``status`` is ``in_progress`` / ``completed`` / ``failed``."""

    id: str
    command: str
    aggregated_output: str = ""
    status: str = "in_progress"
    exit_code: int | None = None
    type: Literal["command_execution"] = field(default="command_execution", init=False)


@dataclass(frozen=True, slots=True)
class FileUpdateChange:
    """One changed file: ``kind`` is ``add`` / ``delete`` / ``update``; ``path`` as the CLI gives it."""

    path: str
    kind: str


@dataclass(frozen=True, slots=True)
class FileChangeItem:
    """A patch Codex applied: ``status`` is ``completed`` / ``failed``."""

    id: str
    changes: tuple[FileUpdateChange, ...] = ()
    status: str = "completed"
    type: Literal["file_change"] = field(default="file_change", init=False)


@dataclass(frozen=True, slots=True)
class McpToolCallResult:
    """What an MCP tool returned: ``content`` blocks and optional ``structured_content``."""

    content: list[Any] = field(default_factory=list)
    structured_content: Any = None


@dataclass(frozen=True, slots=True)
class McpToolCallError:
    """Why an MCP tool call failed."""

    message: str


@dataclass(frozen=True, slots=True)
class McpToolCallItem:
    """An MCP tool call made by Codex."""

    id: str
    server: str
    tool: str
    arguments: Any = None
    status: str = "in_progress"
    result: McpToolCallResult | None = None
    error: McpToolCallError | None = None
    type: Literal["mcp_tool_call"] = field(default="mcp_tool_call", init=False)


@dataclass(frozen=True, slots=True)
class WebSearchItem:
    """A web search made by Codex."""

    id: str
    query: str
    type: Literal["web_search"] = field(default="web_search", init=False)


@dataclass(frozen=True, slots=True)
class TodoEntry:
    """One entry of Codex's to-do list."""

    text: str
    completed: bool = False


@dataclass(frozen=True, slots=True)
class TodoListItem:
    """Codex's running to-do list."""

    id: str
    items: tuple[TodoEntry, ...] = ()
    type: Literal["todo_list"] = field(default="todo_list", init=False)


@dataclass(frozen=True, slots=True)
class ErrorItem:
    """A non-fatal error reported as an item (e.g. ignored configuration settings)."""

    id: str
    message: str
    type: Literal["error"] = field(default="error", init=False)


@dataclass(frozen=True, slots=True)
class UnknownItem:
    """An item of a type this version does not know; ``raw`` is the JSON object."""

    id: str
    item_type: str
    raw: dict[str, Any]
    type: Literal["unknown"] = field(default="unknown", init=False)


ThreadItem: TypeAlias = (
    AgentMessageItem
    | ReasoningItem
    | CommandExecutionItem
    | FileChangeItem
    | McpToolCallItem
    | WebSearchItem
    | TodoListItem
    | ErrorItem
    | UnknownItem
)


def _mcp_result(value: Any) -> McpToolCallResult | None:
    if not isinstance(value, Mapping):
        return None
    content = value.get("content")
    return McpToolCallResult(
        content=list(content) if isinstance(content, list) else [],
        structured_content=value.get("structured_content"),
    )


def parse_item(data: Mapping[str, Any]) -> ThreadItem:
    """A thread item from its JSON object (unknown types become :class:`UnknownItem`)."""
    kind = _str(data, "type")
    item_id = _str(data, "id")
    if kind == "agent_message":
        return AgentMessageItem(item_id, _str(data, "text"))
    if kind == "reasoning":
        return ReasoningItem(item_id, _str(data, "text"))
    if kind == "command_execution":
        exit_code = data.get("exit_code")
        return CommandExecutionItem(
            item_id,
            _str(data, "command"),
            _str(data, "aggregated_output"),
            _str(data, "status", "in_progress"),
            exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None,
        )
    if kind == "file_change":
        changes = data.get("changes")
        return FileChangeItem(
            item_id,
            tuple(
                FileUpdateChange(_str(c, "path"), _str(c, "kind"))
                for c in (changes if isinstance(changes, list) else [])
                if isinstance(c, Mapping)
            ),
            _str(data, "status", "completed"),
        )
    if kind == "mcp_tool_call":
        error = data.get("error")
        return McpToolCallItem(
            item_id,
            _str(data, "server"),
            _str(data, "tool"),
            data.get("arguments"),
            _str(data, "status", "in_progress"),
            _mcp_result(data.get("result")),
            McpToolCallError(_str(error, "message")) if isinstance(error, Mapping) else None,
        )
    if kind == "web_search":
        return WebSearchItem(item_id, _str(data, "query"))
    if kind == "todo_list":
        entries = data.get("items")
        return TodoListItem(
            item_id,
            tuple(
                TodoEntry(_str(e, "text"), bool(e.get("completed")))
                for e in (entries if isinstance(entries, list) else [])
                if isinstance(e, Mapping)
            ),
        )
    if kind == "error":
        return ErrorItem(item_id, _str(data, "message"))
    return UnknownItem(item_id, kind, dict(data))


# -- events --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CodexUsage:
    """Token usage of a Codex turn (as the CLI reports it: cumulative over the thread).

    Attributes:
        input_tokens / cached_input_tokens / output_tokens: token counts.
        reasoning_output_tokens: reasoning tokens (not part of the tool's JSON output).
    """

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0

    def to_json(self) -> dict[str, int]:
        """``{"input_tokens", "cached_input_tokens", "output_tokens"}`` (spec §9.6)."""
        return {
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "output_tokens": self.output_tokens,
        }


@dataclass(frozen=True, slots=True)
class ThreadStartedEvent:
    """The thread exists; ``thread_id`` is what a later call resumes."""

    thread_id: str
    type: Literal["thread.started"] = field(default="thread.started", init=False)


@dataclass(frozen=True, slots=True)
class TurnStartedEvent:
    """The turn began."""

    type: Literal["turn.started"] = field(default="turn.started", init=False)


@dataclass(frozen=True, slots=True)
class ItemStartedEvent:
    """An item began (e.g. a command started running)."""

    item: ThreadItem
    type: Literal["item.started"] = field(default="item.started", init=False)


@dataclass(frozen=True, slots=True)
class ItemUpdatedEvent:
    """An item changed (e.g. the to-do list)."""

    item: ThreadItem
    type: Literal["item.updated"] = field(default="item.updated", init=False)


@dataclass(frozen=True, slots=True)
class ItemCompletedEvent:
    """An item finished."""

    item: ThreadItem
    type: Literal["item.completed"] = field(default="item.completed", init=False)


@dataclass(frozen=True, slots=True)
class TurnCompletedEvent:
    """The turn finished; ``usage`` may be missing."""

    usage: CodexUsage | None = None
    type: Literal["turn.completed"] = field(default="turn.completed", init=False)


@dataclass(frozen=True, slots=True)
class TurnFailedEvent:
    """The turn failed with ``message`` (fatal)."""

    message: str
    type: Literal["turn.failed"] = field(default="turn.failed", init=False)


@dataclass(frozen=True, slots=True)
class ThreadErrorEvent:
    """A stream-level error notice, e.g. ``"Reconnecting... 1/5"`` (fatal only if no turn end)."""

    message: str
    type: Literal["error"] = field(default="error", init=False)


@dataclass(frozen=True, slots=True)
class UnknownEvent:
    """An event of a type this version does not know; ``raw`` is the JSON object."""

    event_type: str
    raw: dict[str, Any]
    type: Literal["unknown"] = field(default="unknown", init=False)


ThreadEvent: TypeAlias = (
    ThreadStartedEvent
    | TurnStartedEvent
    | ItemStartedEvent
    | ItemUpdatedEvent
    | ItemCompletedEvent
    | TurnCompletedEvent
    | TurnFailedEvent
    | ThreadErrorEvent
    | UnknownEvent
)

_ITEM_EVENTS: dict[str, type[ItemStartedEvent | ItemUpdatedEvent | ItemCompletedEvent]] = {
    "item.started": ItemStartedEvent,
    "item.updated": ItemUpdatedEvent,
    "item.completed": ItemCompletedEvent,
}


def parse_event(data: Mapping[str, Any]) -> ThreadEvent:
    """A thread event from its JSON object (unknown types become :class:`UnknownEvent`)."""
    kind = _str(data, "type")
    if kind == "thread.started":
        return ThreadStartedEvent(_str(data, "thread_id"))
    if kind == "turn.started":
        return TurnStartedEvent()
    if kind in _ITEM_EVENTS:
        item = data.get("item")
        if isinstance(item, Mapping):
            return _ITEM_EVENTS[kind](parse_item(item))
    elif kind == "turn.completed":
        usage = data.get("usage")
        if not isinstance(usage, Mapping):
            return TurnCompletedEvent(None)
        return TurnCompletedEvent(
            CodexUsage(
                _int(usage, "input_tokens"),
                _int(usage, "cached_input_tokens"),
                _int(usage, "output_tokens"),
                _int(usage, "reasoning_output_tokens"),
            )
        )
    elif kind == "turn.failed":
        error = data.get("error")
        return TurnFailedEvent(_str(error, "message") if isinstance(error, Mapping) else "")
    elif kind == "error":
        return ThreadErrorEvent(_str(data, "message"))
    return UnknownEvent(kind, dict(data))


def parse_event_line(line: str | bytes) -> ThreadEvent:
    """Parse one stdout line of ``codex exec --experimental-json``.

    Raises:
        ValueError: the line is not a JSON object (message quotes at most 200 characters).
    """
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"Failed to parse Codex event line: {text[:200]!r}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"Codex event line is not a JSON object: {text[:200]!r}")
    return parse_event(data)
