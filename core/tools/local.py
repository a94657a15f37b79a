"""The seam between the runner and local runtime tools (shell, apply_patch, local_shell, computer).

The runner knows nothing about shells or editors: every local tool that handles an output item
type other than ``function_call`` implements :class:`LocalCallHandler`. The runner finds the
handler by ``call_item_types``, asks it whether a call needs approval, runs it (serially, in
model order, spec §10.1 step 6) and appends the input item it returns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..agent import Agent
    from ..context import RunContextWrapper
    from ..items import ToolApprovalItem

__all__ = ["ApprovalDecision", "LocalCallHandler", "LocalCallResult", "ask_on_approval"]


@dataclass(slots=True)
class LocalCallResult:
    """What a handler returns for one call.

    Attributes:
        input_item: the wire item to send back (e.g. ``shell_call_output``), a plain dict.
        output: the Python-side value recorded in ``ToolCallOutputItem.output`` (e.g. the
            rendered shell output string).
    """

    input_item: dict[str, Any]
    output: Any


@dataclass(slots=True)
class ApprovalDecision:
    """An ``on_approval`` answer: ``approve`` and an optional ``reason`` (the rejection text)."""

    approve: bool
    reason: str | None = None


@runtime_checkable
class LocalCallHandler(Protocol):
    """Implemented by ``ShellTool``, ``LocalShellTool``, ``ApplyPatchTool`` and ``ComputerTool``.

    Attributes:
        name: bookkeeping name used for approvals (``"shell"``, ``"apply_patch"``...).
        call_item_types: output item types handled (``("shell_call",)``...).
    """

    name: str
    call_item_types: ClassVar[tuple[str, ...]]

    def to_wire(self, model: str | None) -> dict[str, Any]:
        """The entry for the request's ``tools`` array."""
        ...

    def validate_call(self, call: dict[str, Any]) -> None:
        """Raise ``ModelBehaviorError`` for a malformed call (before approval or execution)."""
        ...

    async def needs_approval(self, ctx: RunContextWrapper[Any], call: dict[str, Any]) -> bool:
        """Whether this call needs a human decision."""
        ...

    async def on_approval(
        self, ctx: RunContextWrapper[Any], item: ToolApprovalItem
    ) -> ApprovalDecision | None:
        """Consult the tool's ``on_approval`` callback; ``None`` means "ask the host"."""
        ...

    async def execute(
        self, ctx: RunContextWrapper[Any], call: dict[str, Any], agent: Agent[Any]
    ) -> LocalCallResult:
        """Run the call and build its output item. Errors are reported in the item, not raised,
        except those the spec says fail the run."""
        ...

    def rejection(self, call: dict[str, Any], message: str) -> LocalCallResult:
        """The output item for a rejected call (spec §4.5, §5.3)."""
        ...


async def ask_on_approval(
    callback: Callable[..., Any] | None, ctx: RunContextWrapper[Any], item: ToolApprovalItem
) -> ApprovalDecision | None:
    """Consult a tool's ``on_approval`` callback (sync or async, spec §4.5).

    The callback returns an :class:`ApprovalDecision`, a mapping ``{"approve": bool,
    "reason"?: str}``, or anything else for "undecided" (the run then interrupts).

    Returns:
        The decision, or ``None`` when there is no callback or it did not decide.
    """
    if callback is None:
        return None
    from .._util import maybe_await

    answer = await maybe_await(callback(ctx, item))
    if isinstance(answer, ApprovalDecision):
        return answer
    if not isinstance(answer, Mapping) or answer.get("approve") is None:
        return None
    reason = answer.get("reason")
    return ApprovalDecision(
        approve=bool(answer["approve"]), reason=None if reason is None else str(reason)
    )
