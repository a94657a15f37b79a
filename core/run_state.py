"""``RunState``: a paused run that can be approved, serialised and resumed (spec §8)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .agent import Agent
from .context import ApprovalRecord, RunContextWrapper
from .context_window.state import ContextState
from .errors import UserError
from .items import (
    HandoffCallItem,
    HandoffOutputItem,
    InputItem,
    MCPApprovalRequestItem,
    MCPApprovalResponseItem,
    MCPListToolsItem,
    MessageOutputItem,
    ModelResponse,
    ReasoningItem,
    RunItem,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
    ToolSearchCallItem,
    ToolSearchOutputItem,
)
from .usage import Usage

__all__ = ["SCHEMA_VERSION", "RunState"]

logger = logging.getLogger("core")

#: Version of Tandem's serialised run state; a newer one is refused.
SCHEMA_VERSION = "1.0"

_ITEM_CLASSES: dict[str, type[Any]] = {
    "input_item": InputItem,
    "message_output_item": MessageOutputItem,
    "reasoning_item": ReasoningItem,
    "tool_call_item": ToolCallItem,
    "tool_call_output_item": ToolCallOutputItem,
    "handoff_call_item": HandoffCallItem,
    "handoff_output_item": HandoffOutputItem,
    "tool_approval_item": ToolApprovalItem,
    "tool_search_call_item": ToolSearchCallItem,
    "tool_search_output_item": ToolSearchOutputItem,
    "mcp_list_tools_item": MCPListToolsItem,
    "mcp_approval_request_item": MCPApprovalRequestItem,
    "mcp_approval_response_item": MCPApprovalResponseItem,
}


@dataclass(eq=False)
class RunState:
    """Everything needed to resume a run, in memory.

    Use :meth:`approve` / :meth:`reject` on the items of :meth:`get_interruptions`, then
    ``Runner.run(agent, state)``: approved calls run, rejected ones get rejection outputs,
    and no model request is made before that (spec §8).
    """

    current_agent: Agent[Any]
    original_input: str | list[dict[str, Any]]
    context: RunContextWrapper[Any]
    generated_items: list[RunItem] = field(default_factory=list)
    model_responses: list[ModelResponse] = field(default_factory=list)
    last_model_output: list[dict[str, Any]] | None = None
    current_turn: int = 0
    max_turns: int | None = 10
    previous_response_id: str | None = None
    conversation_id: str | None = None
    auto_previous_response_id: bool = False
    tool_use_tracker: dict[str, bool] = field(default_factory=dict)
    #: The session's compaction state (issue 14), ``None`` without context management.
    context_state: ContextState | None = None

    # -- decisions -------------------------------------------------------------------------
    def get_interruptions(self) -> list[ToolApprovalItem]:
        """The pending approval items."""
        return [i for i in self.generated_items if isinstance(i, ToolApprovalItem)]

    def approve(self, approval_item: ToolApprovalItem, always_approve: bool = False) -> None:
        """Approve this call (or, with ``always_approve``, every call of the tool in this run).

        Hosted MCP requests are keyed by server label and tool name; approvals of a nested
        ``Agent.as_tool`` run are decided here, on the outer state (spec §2.5, §8).
        """
        self.context.approve_tool(
            approval_item.approval_key, approval_item.call_id, always_approve=always_approve
        )

    def reject(
        self,
        approval_item: ToolApprovalItem,
        always_reject: bool = False,
        *,
        rejection_message: str | None = None,
    ) -> None:
        """Reject this call; ``rejection_message`` is what the model is told (spec §8 precedence)."""
        self.context.reject_tool(
            approval_item.approval_key,
            approval_item.call_id,
            always_reject=always_reject,
            rejection_message=rejection_message,
        )

    # -- serialisation ---------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the run context object is kept only if it is JSON-serialisable).

        For the snapshots taken at every approval pause, :class:`core.run_state_snapshot.
        SnapshotMemo` gives an equal dict whose items are frozen once per session.
        """
        return self._json(_item_to_json, None, _response_to_json)

    def _json(
        self,
        item_json: Callable[[RunItem], dict[str, Any]],
        wire: Callable[[Any], Any] | None,
        response_json: Callable[[ModelResponse], dict[str, Any]],
    ) -> dict[str, Any]:
        """:meth:`to_json` with the items made by ``item_json``, ``wire`` (each item of a list
        ``original_input``; ``None``: the input as it is) and ``response_json``."""
        original: Any = self.original_input
        if wire is not None and isinstance(original, list):
            original = [wire(i) for i in original]
        return {
            "$schemaVersion": SCHEMA_VERSION,
            "current_turn": self.current_turn,
            "current_agent": {"name": self.current_agent.name},
            "original_input": original,
            "max_turns": self.max_turns,
            "context": {
                "usage": self.context.usage.to_json(),
                "approvals": {k: v.to_json() for k, v in self.context._approvals.items()},
                "context": _jsonable_or_none(self.context.context),
                "tool_input": _jsonable_or_none(self.context.tool_input),
                "nested_runs": {
                    call_id: run.to_json() if isinstance(run, RunState) else run
                    for call_id, run in self.context._nested_runs.items()
                },
            },
            "tool_use_tracker": dict(self.tool_use_tracker),
            "model_responses": [response_json(r) for r in self.model_responses],
            "last_model_output": self.last_model_output,
            "generated_items": [item_json(i) for i in self.generated_items],
            "previous_response_id": self.previous_response_id,
            "conversation_id": self.conversation_id,
            "auto_previous_response_id": self.auto_previous_response_id,
            "context_state": (
                self.context_state.to_json() if self.context_state is not None else None
            ),
        }

    def to_string(self) -> str:
        """:meth:`to_json` as indented JSON text."""
        return json.dumps(self.to_json(), indent=2, ensure_ascii=False)

    @classmethod
    async def from_json(cls, initial_agent: Agent[Any], state_json: dict[str, Any]) -> RunState:
        """Rebuild a state for ``initial_agent`` (agents are matched by name).

        Raises:
            UserError: the data is not a run state or has a newer schema version.
        """
        if not isinstance(state_json, dict) or "$schemaVersion" not in state_json:
            raise UserError("Not a serialised RunState (no $schemaVersion)")
        version = str(state_json["$schemaVersion"])
        if _version_tuple(version) > _version_tuple(SCHEMA_VERSION):
            raise UserError(
                f"RunState schema version {version} is newer than supported {SCHEMA_VERSION}"
            )
        agents = _agents_by_name(initial_agent)
        ctx_data = state_json.get("context") or {}
        context: RunContextWrapper[Any] = RunContextWrapper(
            context=ctx_data.get("context"),
            usage=Usage.from_json(ctx_data.get("usage") or {}),
            tool_input=ctx_data.get("tool_input"),
        )
        context._approvals = {
            k: ApprovalRecord.from_json(v) for k, v in (ctx_data.get("approvals") or {}).items()
        }
        context._nested_runs = dict(ctx_data.get("nested_runs") or {})
        current_name = (state_json.get("current_agent") or {}).get("name")
        return cls(
            current_agent=agents.get(str(current_name), initial_agent),
            original_input=state_json.get("original_input", []),
            context=context,
            generated_items=[
                _item_from_json(d, agents, initial_agent)
                for d in state_json.get("generated_items", [])
            ],
            model_responses=[
                ModelResponse(
                    output=r["output"],
                    usage=r.get("usage"),
                    response_id=r.get("response_id"),
                    request_id=r.get("request_id"),
                )
                for r in state_json.get("model_responses", [])
            ],
            last_model_output=state_json.get("last_model_output"),
            current_turn=int(state_json.get("current_turn", 0)),
            max_turns=state_json.get("max_turns", 10),
            previous_response_id=state_json.get("previous_response_id"),
            conversation_id=state_json.get("conversation_id"),
            auto_previous_response_id=bool(state_json.get("auto_previous_response_id", False)),
            tool_use_tracker=dict(state_json.get("tool_use_tracker") or {}),
            context_state=(
                ContextState.from_json(state_json["context_state"])
                if state_json.get("context_state")
                else None
            ),
        )

    @classmethod
    async def from_string(cls, initial_agent: Agent[Any], state_string: str) -> RunState:
        """:meth:`from_json` from JSON text.

        Raises:
            UserError: the text is not JSON or not a run state.
        """
        try:
            data = json.loads(state_string)
        except ValueError as exc:
            raise UserError(f"RunState text is not JSON: {exc}") from exc
        return await cls.from_json(initial_agent, data)


def _version_tuple(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in version.split("."))
    except ValueError as exc:
        raise UserError(f"Bad RunState schema version {version!r}") from exc


def _usage_json(usage: Any) -> Any:
    if usage is None or isinstance(usage, dict):
        return usage
    dumped = usage.model_dump(mode="json")
    return dumped


def _jsonable_or_none(value: Any) -> Any:
    if value is None:
        return None
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        logger.warning(
            "run context of type %s is not JSON-serialisable; not saved", type(value).__name__
        )
        return None
    return value


def _agents_by_name(agent: Agent[Any]) -> dict[str, Agent[Any]]:
    found: dict[str, Agent[Any]] = {}
    pending = [agent]
    while pending:
        current = pending.pop()
        if current.name in found:
            continue
        found[current.name] = current
        pending.extend(h for h in current.handoffs if isinstance(h, Agent))
        pending.extend(
            nested
            for tool in current.tools
            if isinstance(nested := getattr(tool, "agent", None), Agent)
        )
    return found


def _response_to_json(r: ModelResponse) -> dict[str, Any]:
    return {
        "output": r.output,
        "usage": _usage_json(r.usage),
        "response_id": r.response_id,
        "request_id": r.request_id,
    }


def _item_to_json(item: RunItem) -> dict[str, Any]:
    return _item_json_fields(item, item.raw_item)


def _item_json_fields(item: RunItem, raw_item: Any) -> dict[str, Any]:
    """The serialised form of ``item``, with ``raw_item`` standing for ``item.raw_item``."""
    data: dict[str, Any] = {"type": item.type, "agent": item.agent.name, "raw_item": raw_item}
    if isinstance(item, ToolCallOutputItem):
        data["output"] = item.output if _is_json(item.output) else str(item.output)
    if isinstance(item, ToolApprovalItem):
        data.update(
            tool_name=item.tool_name, tool_namespace=item.tool_namespace, arguments=item.arguments
        )
    return data


_JSON_SCALARS = (str, int, float, bool, type(None))


def _is_json(value: Any) -> bool:
    """Whether ``json.dumps`` takes ``value`` (a scalar is taken at once, without encoding:
    a tool's output is usually a string, and encoding it at every snapshot cost the whole
    history's outputs)."""
    if type(value) in _JSON_SCALARS:
        return True
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _item_from_json(
    data: dict[str, Any], agents: dict[str, Agent[Any]], default: Agent[Any]
) -> RunItem:
    cls = _ITEM_CLASSES.get(data.get("type", ""))
    if cls is None:
        raise UserError(f"Unknown run item type in RunState: {data.get('type')!r}")
    agent = agents.get(data.get("agent", ""), default)
    if cls is ToolCallOutputItem:
        return ToolCallOutputItem(agent=agent, raw_item=data["raw_item"], output=data.get("output"))
    if cls is ToolApprovalItem:
        return ToolApprovalItem(
            agent=agent,
            raw_item=data["raw_item"],
            tool_name=data.get("tool_name", ""),
            tool_namespace=data.get("tool_namespace"),
            arguments=data.get("arguments"),
        )
    item: RunItem = cls(agent=agent, raw_item=data["raw_item"])
    return item
