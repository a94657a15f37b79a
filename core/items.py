"""Run items: what a run produced, in order (spec §10.2; names follow ``agents.items``).

Every item keeps ``raw_item`` as a plain JSON dict in Responses API wire form, so that turning
history back into request input is a copy, not a re-serialisation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .agent import Agent

__all__ = [
    "InputItem",
    "ItemHelpers",
    "MessageOutputItem",
    "ModelResponse",
    "ReasoningItem",
    "RunItem",
    "ToolApprovalItem",
    "ToolCallItem",
    "ToolCallOutputItem",
    "HandoffCallItem",
    "HandoffOutputItem",
    "MCPApprovalRequestItem",
    "MCPApprovalResponseItem",
    "MCPListToolsItem",
    "ToolSearchCallItem",
    "ToolSearchOutputItem",
    "mcp_approval_key",
]

#: Output item types that are tool calls (local or hosted).
TOOL_CALL_TYPES = frozenset(
    {
        "function_call",
        "computer_call",
        "shell_call",
        "apply_patch_call",
        "local_shell_call",
        "custom_tool_call",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
    }
)


@dataclass(eq=False)
class _RunItemBase:
    agent: Agent[Any]
    raw_item: dict[str, Any]
    type: str = field(init=False, default="")

    def to_input_item(self) -> dict[str, Any] | None:
        """The wire item to replay as request input, or ``None`` when it is never sent."""
        return _clean_for_input(self.raw_item)


@dataclass(eq=False)
class MessageOutputItem(_RunItemBase):
    """An assistant ``message`` output item (``message_output_item``)."""

    type: str = field(init=False, default="message_output_item")


@dataclass(eq=False)
class ReasoningItem(_RunItemBase):
    """A ``reasoning`` output item (``reasoning_item``)."""

    type: str = field(init=False, default="reasoning_item")


@dataclass(eq=False)
class ToolCallItem(_RunItemBase):
    """A tool call the model made (``tool_call_item``): function, shell, apply_patch, hosted..."""

    type: str = field(init=False, default="tool_call_item")
    description: str | None = None

    @property
    def call_id(self) -> str | None:
        return self.raw_item.get("call_id") or self.raw_item.get("id")

    @property
    def tool_name(self) -> str:
        return str(self.raw_item.get("name") or self.raw_item.get("type", ""))


@dataclass(eq=False)
class ToolCallOutputItem(_RunItemBase):
    """The output of a tool call (``tool_call_output_item``).

    Attributes:
        raw_item: the input item sent back (``function_call_output``, ``shell_call_output``...).
        output: the Python value the tool returned (before serialisation).
    """

    type: str = field(init=False, default="tool_call_output_item")
    output: Any = None
    custom_data: Any = None

    @property
    def call_id(self) -> str | None:
        return self.raw_item.get("call_id")


@dataclass(eq=False)
class HandoffCallItem(_RunItemBase):
    """A ``transfer_to_<agent>`` call (``handoff_call_item``)."""

    type: str = field(init=False, default="handoff_call_item")


@dataclass(eq=False)
class HandoffOutputItem(_RunItemBase):
    """The output of a handoff (``handoff_output_item``)."""

    type: str = field(init=False, default="handoff_output_item")


@dataclass(eq=False)
class ToolApprovalItem(_RunItemBase):
    """A tool call waiting for a human decision (spec §8). Never sent to the model.

    Attributes:
        tool_name: the tool's bookkeeping name (``"shell"`` for ``shell_call``...).
        tool_namespace: namespace of a namespaced function tool, else ``None``.
        arguments: the raw argument string (function tools) or a JSON rendering of the action.
    """

    type: str = field(init=False, default="tool_approval_item")
    tool_name: str = ""
    tool_namespace: str | None = None
    arguments: str | None = None

    @property
    def call_id(self) -> str:
        return str(self.raw_item.get("call_id") or self.raw_item.get("id") or "")

    @property
    def qualified_name(self) -> str:
        return f"{self.tool_namespace}.{self.tool_name}" if self.tool_namespace else self.tool_name

    @property
    def approval_key(self) -> str:
        """The key decisions are stored under: ``qualified_name``, except for a hosted MCP
        request (``mcp:<server_label>:<tool name>``; sticky per server and tool, spec §2.5)."""
        if self.raw_item.get("type") == "mcp_approval_request":
            return mcp_approval_key(str(self.raw_item.get("server_label")), self.tool_name)
        return self.qualified_name

    def to_input_item(self) -> dict[str, Any] | None:
        return None


def mcp_approval_key(server_label: str, tool_name: str) -> str:
    """Approval bookkeeping key of one hosted MCP tool (``mcp:<server_label>:<name>``)."""
    return f"mcp:{server_label}:{tool_name}"


def _strip_created_by(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_created_by(v) for k, v in value.items() if k != "created_by"}
    if isinstance(value, list):
        return [_strip_created_by(v) for v in value]
    return value


@dataclass(eq=False)
class ToolSearchCallItem(_RunItemBase):
    """A ``tool_search_call`` output item (``tool_search_call_item``, spec §3.7)."""

    type: str = field(init=False, default="tool_search_call_item")

    def to_input_item(self) -> dict[str, Any] | None:
        return _clean_for_input(_strip_created_by(self.raw_item))


@dataclass(eq=False)
class ToolSearchOutputItem(_RunItemBase):
    """A ``tool_search_output`` item: the tool definitions a search loaded (spec §3.7)."""

    type: str = field(init=False, default="tool_search_output_item")

    def to_input_item(self) -> dict[str, Any] | None:
        return _clean_for_input(_strip_created_by(self.raw_item))


@dataclass(eq=False)
class MCPListToolsItem(_RunItemBase):
    """A hosted MCP server's ``mcp_list_tools`` item (``mcp_list_tools_item``, spec §2.5)."""

    type: str = field(init=False, default="mcp_list_tools_item")


@dataclass(eq=False)
class MCPApprovalRequestItem(_RunItemBase):
    """A hosted MCP ``mcp_approval_request`` (``mcp_approval_request_item``, spec §2.5)."""

    type: str = field(init=False, default="mcp_approval_request_item")


@dataclass(eq=False)
class MCPApprovalResponseItem(_RunItemBase):
    """The ``mcp_approval_response`` input item answering a request (spec §2.5).

    ``raw_item`` is ``{"type": "mcp_approval_response", "approval_request_id", "approve"}``
    plus ``reason`` (rejections with a reason) and ``caller`` (copied from the request).
    """

    type: str = field(init=False, default="mcp_approval_response_item")


@dataclass(eq=False)
class InputItem(_RunItemBase):
    """An input item the runner itself adds to the history (``input_item``), e.g. a note to
    the model after a local tool recovered from a crash (a browser restarted)."""

    type: str = field(init=False, default="input_item")


RunItem = (
    InputItem
    | MessageOutputItem
    | ReasoningItem
    | ToolCallItem
    | ToolCallOutputItem
    | HandoffCallItem
    | HandoffOutputItem
    | ToolApprovalItem
    | ToolSearchCallItem
    | ToolSearchOutputItem
    | MCPListToolsItem
    | MCPApprovalRequestItem
    | MCPApprovalResponseItem
)

ItemKind = Literal[
    "message_output_item",
    "reasoning_item",
    "tool_call_item",
    "tool_call_output_item",
    "handoff_call_item",
    "handoff_output_item",
    "tool_approval_item",
    "tool_search_call_item",
    "tool_search_output_item",
    "mcp_list_tools_item",
    "mcp_approval_request_item",
    "mcp_approval_response_item",
]


@dataclass(slots=True)
class ModelResponse:
    """One model round trip: ``output`` items (wire dicts), ``usage``, ids."""

    output: list[dict[str, Any]]
    usage: Any
    response_id: str | None = None
    request_id: str | None = None


def _clean_for_input(raw: dict[str, Any]) -> dict[str, Any]:
    """Drop keys the API refuses in input: ``status: null`` and ``created_by`` (spec §10.1),
    and an ``id`` Tandem made up for a server that sent none (:mod:`.models.stream_ids`): the
    server never issued it, so it does not go back."""
    made_up = _is_made_up_id(raw.get("id"))
    if not made_up and "created_by" not in raw and raw.get("status", "") is not None:
        return raw
    return {
        k: v
        for k, v in raw.items()
        if k != "created_by" and not (k == "status" and v is None) and not (k == "id" and made_up)
    }


def _is_made_up_id(value: Any) -> bool:
    from .models.stream_ids import GENERATED_ID_MARK

    return isinstance(value, str) and GENERATED_ID_MARK in value


class ItemHelpers:
    """Helpers over items (names follow ``agents.ItemHelpers``)."""

    @staticmethod
    def extract_last_text(message: dict[str, Any]) -> str | None:
        """Concatenated ``output_text`` of one message item, or ``None`` if it has none."""
        if message.get("type") != "message":
            return None
        parts = [
            c.get("text", "")
            for c in message.get("content") or []
            if c.get("type") == "output_text"
        ]
        return "".join(parts) if parts else None

    @staticmethod
    def text_message_output(item: MessageOutputItem) -> str:
        """All ``output_text`` of a message item, concatenated."""
        return ItemHelpers.extract_last_text(item.raw_item) or ""

    @staticmethod
    def text_message_outputs(items: list[RunItem]) -> str:
        """Text of every message item in ``items``, concatenated."""
        return "".join(
            ItemHelpers.text_message_output(i) for i in items if isinstance(i, MessageOutputItem)
        )

    @staticmethod
    def input_to_new_input_list(value: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A string becomes ``[{"content": s, "role": "user"}]``; a list is copied (spec §0)."""
        if isinstance(value, str):
            return [{"content": value, "role": "user"}]
        return [dict(item) for item in value]
