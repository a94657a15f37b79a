"""Typed, frozen stream events of ``Runner.run_streamed`` (spec §10.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .agent import Agent
    from .items import RunItem

__all__ = [
    "AgentUpdatedStreamEvent",
    "RawResponsesStreamEvent",
    "RunItemStreamEvent",
    "StreamEvent",
    "RunItemEventName",
]

RunItemEventName = Literal[
    "message_output_created",
    "handoff_requested",
    "handoff_occured",
    "tool_called",
    "tool_search_called",
    "tool_search_output_created",
    "tool_output",
    "reasoning_item_created",
    "mcp_approval_requested",
    "mcp_approval_response",
    "mcp_list_tools",
]


@dataclass(frozen=True, slots=True)
class RawResponsesStreamEvent:
    """One Responses SSE event as parsed by ``openai`` (``data.type`` e.g. ``response.output_text.delta``)."""

    data: Any
    type: Literal["raw_response_event"] = "raw_response_event"


@dataclass(frozen=True, slots=True)
class RunItemStreamEvent:
    """A run item was created; ``name`` is one of :data:`RunItemEventName`."""

    name: RunItemEventName
    item: RunItem
    type: Literal["run_item_stream_event"] = "run_item_stream_event"


@dataclass(frozen=True, slots=True)
class AgentUpdatedStreamEvent:
    """The running agent changed (first event of a run, and after a handoff)."""

    new_agent: Agent[Any]
    type: Literal["agent_updated_stream_event"] = "agent_updated_stream_event"


StreamEvent = RawResponsesStreamEvent | RunItemStreamEvent | AgentUpdatedStreamEvent
