"""Run context objects handed to tools and callbacks (seed: ``RunContextWrapper``, ``ToolContext``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .usage import Usage

if TYPE_CHECKING:
    from .agent import Agent
    from .run_config import RunConfig

__all__ = ["ApprovalRecord", "RunContextWrapper", "ToolContext", "TContext"]

TContext = TypeVar("TContext")


@dataclass(slots=True)
class ApprovalRecord:
    """Approval decisions for one tool (keyed by qualified tool name in the wrapper).

    ``approved``/``rejected`` are either ``True`` (sticky: every call) or a list of call ids.
    """

    approved: bool | list[str] = field(default_factory=list)
    rejected: bool | list[str] = field(default_factory=list)
    rejection_messages: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "approved": self.approved,
            "rejected": self.rejected,
            "rejection_messages": dict(self.rejection_messages),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ApprovalRecord:
        return cls(
            approved=data.get("approved", []),
            rejected=data.get("rejected", []),
            rejection_messages=dict(data.get("rejection_messages", {})),
        )


@dataclass(eq=False)
class RunContextWrapper(Generic[TContext]):
    """What tools, hooks and callbacks receive: the user's context object plus run data.

    Attributes:
        context: the object passed as ``Runner.run(..., context=...)`` (any type; ``None`` default).
        usage: tokens used so far by the run (:class:`~core.usage.Usage`).
        tool_input: parsed structured input when the run is a nested ``Agent.as_tool`` run.
    """

    context: TContext
    usage: Usage = field(default_factory=Usage)
    tool_input: Any = None
    _approvals: dict[str, ApprovalRecord] = field(default_factory=dict, repr=False)
    #: Interrupted nested ``Agent.as_tool`` runs by outer call id (a ``RunState``, or its JSON
    #: after deserialisation), resumed when the outer run resumes (spec §7.4, §8).
    _nested_runs: dict[str, Any] = field(default_factory=dict, repr=False)

    # -- approvals (spec §8) -------------------------------------------------------------
    def is_tool_approved(self, tool_name: str, call_id: str) -> bool | None:
        """``True`` approved, ``False`` rejected, ``None`` undecided for this call."""
        record = self._approvals.get(tool_name)
        if record is None:
            return None
        if record.approved is True:
            return True
        if record.rejected is True:
            return False
        if isinstance(record.approved, list) and call_id in record.approved:
            return True
        if isinstance(record.rejected, list) and call_id in record.rejected:
            return False
        return None

    def rejection_message(self, tool_name: str, call_id: str) -> str | None:
        """The message given to ``reject`` for this call, if any."""
        record = self._approvals.get(tool_name)
        if record is None:
            return None
        return record.rejection_messages.get(call_id) or record.rejection_messages.get("*")

    def approve_tool(self, tool_name: str, call_id: str, *, always_approve: bool = False) -> None:
        """Record approval of one call (or of every call of the tool when ``always_approve``)."""
        record = self._approvals.setdefault(tool_name, ApprovalRecord())
        if always_approve:
            record.approved, record.rejected = True, []
            return
        if isinstance(record.rejected, list) and call_id in record.rejected:
            record.rejected.remove(call_id)
        if isinstance(record.approved, list) and call_id not in record.approved:
            record.approved.append(call_id)

    def reject_tool(
        self,
        tool_name: str,
        call_id: str,
        *,
        always_reject: bool = False,
        rejection_message: str | None = None,
    ) -> None:
        """Record rejection of one call (or of every call of the tool when ``always_reject``)."""
        record = self._approvals.setdefault(tool_name, ApprovalRecord())
        if always_reject:
            record.rejected, record.approved = True, []
            if rejection_message is not None:
                record.rejection_messages["*"] = rejection_message
        else:
            if isinstance(record.approved, list) and call_id in record.approved:
                record.approved.remove(call_id)
            if isinstance(record.rejected, list) and call_id not in record.rejected:
                record.rejected.append(call_id)
        if rejection_message is not None:
            record.rejection_messages[call_id] = rejection_message


@dataclass(eq=False)
class ToolContext(RunContextWrapper[TContext]):
    """The context a function tool receives for one call (spec §1.7 step 6).

    Attributes:
        tool_name: the called tool's name; ``tool_call_id``: the call's ``call_id``;
        tool_arguments: the raw JSON argument string; ``tool_call``: the raw output item;
        tool_namespace: the namespace for namespaced tools, else ``None``;
        agent: the agent running the tool; ``run_config``: the run's :class:`RunConfig`.
    """

    tool_name: str = ""
    tool_call_id: str = ""
    tool_arguments: str = ""
    tool_call: Any = None
    tool_namespace: str | None = None
    agent: Agent[Any] | None = None
    run_config: RunConfig | None = None

    @property
    def qualified_tool_name(self) -> str:
        """``namespace.name`` for namespaced tools, else the bare name."""
        return f"{self.tool_namespace}.{self.tool_name}" if self.tool_namespace else self.tool_name

    @classmethod
    def from_run_context(
        cls,
        wrapper: RunContextWrapper[TContext],
        *,
        tool_name: str,
        tool_call_id: str,
        tool_arguments: str,
        tool_call: Any = None,
        tool_namespace: str | None = None,
        agent: Agent[Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> ToolContext[TContext]:
        """A ``ToolContext`` sharing ``context``, ``usage`` and approvals with ``wrapper``."""
        return cls(
            context=wrapper.context,
            usage=wrapper.usage,
            tool_input=wrapper.tool_input,
            _approvals=wrapper._approvals,
            _nested_runs=wrapper._nested_runs,
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            tool_arguments=tool_arguments,
            tool_call=tool_call,
            tool_namespace=tool_namespace,
            agent=agent,
            run_config=run_config,
        )
