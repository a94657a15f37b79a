"""``ApplyPatchTool``: routes ``apply_patch_call`` items to an ``ApplyPatchEditor`` (spec §5)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

from .._util import maybe_await as _maybe_await
from ..errors import ModelBehaviorError, UserError
from .editor import ApplyPatchEditor, ApplyPatchOperation, ApplyPatchResult
from .local import ApprovalDecision, LocalCallResult, ask_on_approval

if TYPE_CHECKING:
    from ..agent import Agent
    from ..context import RunContextWrapper
    from ..items import ToolApprovalItem

__all__ = [
    "ApplyPatchApprovalFunction",
    "ApplyPatchOnApprovalFunction",
    "ApplyPatchTool",
    "coerce_apply_patch_operations",
    "normalize_apply_patch_result",
]

#: ``(run_context, operation, call_id) -> bool``, sync or async (spec §5.3).
ApplyPatchApprovalFunction: TypeAlias = Callable[
    ["RunContextWrapper[Any]", ApplyPatchOperation, str], "bool | Awaitable[bool]"
]
#: ``(run_context, ToolApprovalItem) -> {"approve": bool, "reason"?: str} | None``, sync or async.
ApplyPatchOnApprovalFunction: TypeAlias = Callable[
    ["RunContextWrapper[Any]", "ToolApprovalItem"], Any
]

_OPERATION_TYPES = ("create_file", "update_file", "delete_file")
_STATUSES = ("completed", "failed")
_ALLOWED_CALLERS = ("direct", "programmatic")


def coerce_apply_patch_operations(
    call: Mapping[str, Any], ctx_wrapper: RunContextWrapper[Any] | None = None
) -> list[ApplyPatchOperation]:
    """Validate an ``apply_patch_call`` and return its operations, in order (spec §5.2).

    Reads ``operations`` (a list) when present, else the single ``operation``. An operation is
    ``{"type", "path", "diff"?, "move_to"?}``; a JSON string holding that object is accepted too
    (the ``custom_tool_call`` / ``function_call`` fallback).

    Args:
        call: the raw ``apply_patch_call`` output item.
        ctx_wrapper: stored on each operation as ``ctx_wrapper``.

    Returns:
        One :class:`ApplyPatchOperation` per operation; ``diff`` is ``None`` for ``delete_file``.

    Raises:
        ModelBehaviorError: ``"Apply patch call is missing call_id."``, ``"Apply patch call is
            missing an operation payload."``, ``"Apply patch call includes no operations."``,
            ``"Unknown apply_patch operation: <type>"``, ``"Apply patch operation is missing a
            valid path."``, ``"Apply patch operation <type> is missing the required diff
            payload."``, ``"Apply patch operation move_to must be a non-empty path."``.
    """
    _call_id(call)
    payloads: Any
    if call.get("operations") is not None:
        payloads = call["operations"]
        if isinstance(payloads, (str, bytes)) or not isinstance(payloads, Sequence):
            payloads = [payloads]
        if not payloads:
            raise ModelBehaviorError("Apply patch call includes no operations.")
    elif call.get("operation") is not None:
        payloads = [call["operation"]]
    else:
        raise ModelBehaviorError("Apply patch call is missing an operation payload.")
    return [_coerce_operation(payload, ctx_wrapper) for payload in payloads]


def normalize_apply_patch_result(result: Any) -> ApplyPatchResult | None:
    """Bring an editor's return value to :class:`ApplyPatchResult` (spec §5.1).

    ``ApplyPatchResult`` → itself; ``None`` → ``None``; a mapping → its ``status`` (kept only
    when ``"completed"``/``"failed"``) and ``output`` (``str()``'d); anything else → its ``str()``
    as ``output`` with no status.
    """
    if result is None or isinstance(result, ApplyPatchResult):
        return result
    if isinstance(result, Mapping):
        status = result.get("status")
        output = result.get("output")
        return ApplyPatchResult(
            status=status if status in _STATUSES else None,
            output=None if output is None else str(output),
        )
    return ApplyPatchResult(status=None, output=str(result))


class ApplyPatchTool:
    """Lets the model edit files through an :class:`ApplyPatchEditor` (spec §5).

    Implements :class:`~core.tools.local.LocalCallHandler` for ``apply_patch_call`` items.

    Args:
        editor: applies operations; methods may be sync or async (spec §5.1).
        name: bookkeeping name for approvals and hooks (not sent).
        needs_approval: ``bool`` or ``(run_context, ApplyPatchOperation, call_id) -> bool`` (sync
            or async), evaluated per operation until one needs approval (spec §5.3).
        on_approval: ``(run_context, ToolApprovalItem) -> {"approve": bool, "reason"?: str}`` or
            ``None`` (sync or async), consulted when approval is needed (spec §4.5, §8).
        custom_data_extractor: SDK-only metadata hook for the output item; stored for the runner,
            never sent.
        allowed_callers: ``["direct"]``, ``["programmatic"]`` or both; sent when set.

    Raises:
        UserError: an editor without ``create_file``/``update_file``/``delete_file``, a
            non-callable callback, or invalid ``allowed_callers``.
    """

    call_item_types: ClassVar[tuple[str, ...]] = ("apply_patch_call",)

    def __init__(
        self,
        editor: ApplyPatchEditor,
        name: str = "apply_patch",
        needs_approval: bool | ApplyPatchApprovalFunction = False,
        on_approval: ApplyPatchOnApprovalFunction | None = None,
        *,
        custom_data_extractor: Callable[..., Any] | None = None,
        allowed_callers: list[Literal["direct", "programmatic"]] | None = None,
    ) -> None:
        for method in ("create_file", "update_file", "delete_file"):
            if not callable(getattr(editor, method, None)):
                raise UserError(f"ApplyPatchTool editor must implement {method}().")
        if not isinstance(needs_approval, bool) and not callable(needs_approval):
            raise UserError("ApplyPatchTool needs_approval must be a bool or a callable.")
        if on_approval is not None and not callable(on_approval):
            raise UserError("ApplyPatchTool on_approval must be callable.")
        if custom_data_extractor is not None and not callable(custom_data_extractor):
            raise UserError("ApplyPatchTool custom_data_extractor must be callable.")
        self.editor = editor
        self.name = name
        self.needs_approval_setting = needs_approval
        self.on_approval_callback = on_approval
        self.custom_data_extractor = custom_data_extractor
        self.allowed_callers = _validate_allowed_callers(allowed_callers)

    def __repr__(self) -> str:
        return f"ApplyPatchTool(name={self.name!r}, editor={self.editor!r})"

    def to_wire(self, model: str | None = None) -> dict[str, Any]:
        """``{"type": "apply_patch"}`` plus ``allowed_callers`` when set (spec §5.1)."""
        payload: dict[str, Any] = {"type": "apply_patch"}
        if self.allowed_callers is not None:
            payload["allowed_callers"] = list(self.allowed_callers)
        return payload

    def validate_call(self, call: dict[str, Any]) -> None:
        """Raise ``ModelBehaviorError`` for a malformed call (see
        :func:`coerce_apply_patch_operations` for the texts)."""
        coerce_apply_patch_operations(call)

    async def needs_approval(self, ctx: RunContextWrapper[Any], call: dict[str, Any]) -> bool:
        """Evaluate ``needs_approval`` per operation, stopping at the first ``True`` (spec §5.3)."""
        setting = self.needs_approval_setting
        if isinstance(setting, bool):
            return setting
        call_id = _call_id(call)
        for operation in coerce_apply_patch_operations(call, ctx):
            if await _maybe_await(setting(ctx, operation, call_id)):
                return True
        return False

    async def on_approval(
        self, ctx: RunContextWrapper[Any], item: ToolApprovalItem
    ) -> ApprovalDecision | None:
        """Ask the ``on_approval`` callback; ``None`` when absent or undecided (spec §4.5, §8)."""
        return await ask_on_approval(self.on_approval_callback, ctx, item)

    async def execute(
        self, ctx: RunContextWrapper[Any], call: dict[str, Any], agent: Agent[Any] | None = None
    ) -> LocalCallResult:
        """Run the operations serially through the editor (spec §5.3).

        The status starts ``completed``; a result with ``status: "failed"`` makes the call
        ``failed`` (later operations still run); non-empty outputs are joined with ``\\n``. An
        exception from the editor stops the call: status ``failed``, output = the exception text
        (or its class name when the text is empty).

        Returns:
            ``LocalCallResult`` with ``input_item`` ``{"type": "apply_patch_call_output",
            "call_id", "status", "output"?}`` (``output`` omitted when empty) and ``output`` the
            joined text.

        Raises:
            ModelBehaviorError: a malformed call (as :meth:`validate_call`).
        """
        call_id = _call_id(call)
        operations = coerce_apply_patch_operations(call, ctx)
        status: Literal["completed", "failed"] = "completed"
        outputs: list[str] = []
        try:
            for operation in operations:
                method = getattr(self.editor, operation.type)
                result = normalize_apply_patch_result(await _maybe_await(method(operation)))
                if result is None:
                    continue
                if result.status == "failed":
                    status = "failed"
                if result.output:
                    outputs.append(result.output)
        except Exception as exc:  # the editor's failure is reported to the model, not raised
            status = "failed"
            outputs = [str(exc) or type(exc).__name__]
        text = "\n".join(outputs)
        item: dict[str, Any] = {"type": "apply_patch_call_output", "call_id": call_id}
        item["status"] = status
        if text:
            item["output"] = text
        return LocalCallResult(input_item=item, output=text)

    def rejection(self, call: dict[str, Any], message: str) -> LocalCallResult:
        """``{"type": "apply_patch_call_output", "call_id", "output": message, "status":
        "failed"}`` for a rejected call (spec §5.3, §8)."""
        item = {
            "type": "apply_patch_call_output",
            "call_id": _call_id(call),
            "output": message,
            "status": "failed",
        }
        return LocalCallResult(input_item=item, output=message)


def _call_id(call: Mapping[str, Any]) -> str:
    call_id = call.get("call_id")
    if call_id is None or call_id == "":
        raise ModelBehaviorError("Apply patch call is missing call_id.")
    return str(call_id)


def _coerce_operation(
    payload: Any, ctx_wrapper: RunContextWrapper[Any] | None
) -> ApplyPatchOperation:
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except ValueError:
            payload = None
    get = payload.get if isinstance(payload, Mapping) else (lambda key: None)
    op_type = get("type")
    if op_type not in _OPERATION_TYPES:
        raise ModelBehaviorError(f"Unknown apply_patch operation: {op_type}")
    path = get("path")
    if not isinstance(path, str) or not path:
        raise ModelBehaviorError("Apply patch operation is missing a valid path.")
    diff = None
    if op_type != "delete_file":
        diff = get("diff")
        if not isinstance(diff, str) or not diff:
            raise ModelBehaviorError(
                f"Apply patch operation {op_type} is missing the required diff payload."
            )
    move_to = get("move_to")
    if move_to is not None and (not isinstance(move_to, str) or not move_to):
        raise ModelBehaviorError("Apply patch operation move_to must be a non-empty path.")
    return ApplyPatchOperation(
        type=op_type, path=path, diff=diff, ctx_wrapper=ctx_wrapper, move_to=move_to
    )


def _validate_allowed_callers(
    allowed_callers: list[Literal["direct", "programmatic"]] | None,
) -> list[Literal["direct", "programmatic"]] | None:
    if allowed_callers is None:
        return None
    values = list(allowed_callers) if isinstance(allowed_callers, (list, tuple)) else None
    if (
        not values
        or any(value not in _ALLOWED_CALLERS for value in values)
        or len(set(values)) != len(values)
    ):
        raise UserError(
            "allowed_callers must be a non-empty list of unique values from "
            "'direct' and 'programmatic'."
        )
    return values
