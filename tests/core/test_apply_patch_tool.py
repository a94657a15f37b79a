"""``ApplyPatchTool``: wire payload, call validation, approvals, execution and rejection (§5)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.context import RunContextWrapper
from core.errors import ModelBehaviorError, UserError
from core.items import ToolApprovalItem
from core.tools.apply_patch import ApplyPatchTool, normalize_apply_patch_result
from core.tools.editor import ApplyPatchOperation, ApplyPatchResult
from core.tools.local import ApprovalDecision, LocalCallHandler, LocalCallResult
from core.tools.v4a import apply_diff


class MemoryEditor:
    """A small in-memory editor (our test double of the seam) that uses the V4A engine."""

    def __init__(self, files: dict[str, str] | None = None) -> None:
        self.files = dict(files or {})
        self.seen: list[ApplyPatchOperation] = []

    def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        self.seen.append(operation)
        self.files[operation.path] = apply_diff("", operation.diff or "", mode="create")
        return ApplyPatchResult(status="completed", output=f"Created {operation.path}")

    async def update_file(self, operation: ApplyPatchOperation) -> str:
        self.seen.append(operation)
        if operation.path not in self.files:
            raise FileNotFoundError(f"{operation.path} does not exist")
        text = apply_diff(self.files[operation.path], operation.diff or "")
        target = operation.move_to or operation.path
        del self.files[operation.path]
        self.files[target] = text
        return f"Updated {target}"

    def delete_file(self, operation: ApplyPatchOperation) -> dict[str, Any]:
        self.seen.append(operation)
        if self.files.pop(operation.path, None) is None:
            return {"status": "failed", "output": f"{operation.path} not found"}
        return {"status": "completed", "output": ""}


def _call(*operations: dict[str, Any], call_id: str = "call_3") -> dict[str, Any]:
    call: dict[str, Any] = {"type": "apply_patch_call", "id": "ap_1", "call_id": call_id}
    call["status"] = "completed"
    if len(operations) == 1:
        call["operation"] = operations[0]
    else:
        call["operations"] = list(operations)
    return call


CREATE = {"type": "create_file", "path": "a.txt", "diff": "+hello\n"}


@pytest.fixture
def ctx() -> RunContextWrapper[Any]:
    return RunContextWrapper(context={"user": "test"})


# -- construction and payload (§5.1) -------------------------------------------------------------


def test_wire_payload_and_protocol() -> None:
    tool = ApplyPatchTool(MemoryEditor())
    assert isinstance(tool, LocalCallHandler)
    assert tool.name == "apply_patch" and tool.call_item_types == ("apply_patch_call",)
    assert tool.to_wire(None) == {"type": "apply_patch"}
    tool = ApplyPatchTool(MemoryEditor(), name="patcher", allowed_callers=["direct"])
    assert tool.to_wire("gpt-5") == {"type": "apply_patch", "allowed_callers": ["direct"]}
    assert tool.name == "patcher"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"allowed_callers": []},
        {"allowed_callers": ["direct", "direct"]},
        {"allowed_callers": ["human"]},
        {"needs_approval": "yes"},
        {"on_approval": 3},
    ],
)
def test_configuration_errors(kwargs: dict[str, Any]) -> None:
    with pytest.raises(UserError):
        ApplyPatchTool(MemoryEditor(), **kwargs)


def test_editor_must_have_the_three_methods() -> None:
    with pytest.raises(UserError, match="delete_file"):
        ApplyPatchTool(type("Half", (), {"create_file": print, "update_file": print})())  # type: ignore[arg-type]


# -- validation (§5.2) ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ({"type": "apply_patch_call", "operation": CREATE}, "Apply patch call is missing call_id."),
        ({**_call(CREATE), "call_id": ""}, "Apply patch call is missing call_id."),
        (_call({"type": "rename_file", "path": "a"}), "Unknown apply_patch operation: rename_file"),
        (_call({"path": "a"}), "Unknown apply_patch operation: None"),
        (
            _call({"type": "delete_file", "path": ""}),
            "Apply patch operation is missing a valid path.",
        ),
        (_call({"type": "delete_file"}), "Apply patch operation is missing a valid path."),
        (
            _call({"type": "create_file", "path": "a", "diff": ""}),
            "Apply patch operation create_file is missing the required diff payload.",
        ),
        (
            _call({"type": "update_file", "path": "a"}),
            "Apply patch operation update_file is missing the required diff payload.",
        ),
        (
            _call({"type": "update_file", "path": "a", "diff": "x", "move_to": ""}),
            "Apply patch operation move_to must be a non-empty path.",
        ),
        (
            _call({"type": "update_file", "path": "a", "diff": "x", "move_to": 7}),
            "Apply patch operation move_to must be a non-empty path.",
        ),
        ({**_call(CREATE), "operations": []}, "Apply patch call includes no operations."),
        (
            {"type": "apply_patch_call", "call_id": "c"},
            "Apply patch call is missing an operation payload.",
        ),
        (
            _call(CREATE, {"type": "delete_file", "path": ""}),
            "Apply patch operation is missing a valid path.",
        ),
    ],
)
def test_validate_call_errors(call: dict[str, Any], message: str) -> None:
    tool = ApplyPatchTool(MemoryEditor())
    with pytest.raises(ModelBehaviorError) as info:
        tool.validate_call(call)
    assert str(info.value) == message


def test_validate_call_accepts_operations_move_to_and_json_operation() -> None:
    tool = ApplyPatchTool(MemoryEditor())
    tool.validate_call(_call(CREATE))
    tool.validate_call(
        _call(CREATE, {"type": "update_file", "path": "a", "diff": "x", "move_to": "b"})
    )
    tool.validate_call({**_call(CREATE), "operation": json.dumps(CREATE)})


# -- execution and output (§5.3) -----------------------------------------------------------------


async def test_single_create_matches_the_verified_item(ctx: RunContextWrapper[Any]) -> None:
    editor = MemoryEditor()
    result = await ApplyPatchTool(editor).execute(ctx, _call(CREATE), agent=None)
    assert isinstance(result, LocalCallResult)
    assert result.input_item == {
        "type": "apply_patch_call_output",
        "call_id": "call_3",
        "status": "completed",
        "output": "Created a.txt",
    }
    assert result.output == "Created a.txt"
    assert editor.files == {"a.txt": "hello"}
    operation = editor.seen[0]
    assert (operation.type, operation.path, operation.diff, operation.move_to) == (
        "create_file",
        "a.txt",
        "+hello\n",
        None,
    )
    assert operation.ctx_wrapper is ctx


async def test_operations_run_in_order_and_outputs_join(ctx: RunContextWrapper[Any]) -> None:
    editor = MemoryEditor({"b.txt": "one\ntwo\n"})
    call = _call(
        CREATE,
        {"type": "update_file", "path": "b.txt", "diff": "@@\n-two\n+2", "move_to": "c.txt"},
        {"type": "delete_file", "path": "a.txt"},
    )
    result = await ApplyPatchTool(editor).execute(ctx, call, agent=None)
    assert [op.type for op in editor.seen] == ["create_file", "update_file", "delete_file"]
    assert editor.files == {"c.txt": "one\n2\n"}
    # the delete's empty output is not joined
    assert result.input_item == {
        "type": "apply_patch_call_output",
        "call_id": "call_3",
        "status": "completed",
        "output": "Created a.txt\nUpdated c.txt",
    }


async def test_failed_result_fails_the_call_but_later_operations_run(
    ctx: RunContextWrapper[Any],
) -> None:
    editor = MemoryEditor()
    call = _call({"type": "delete_file", "path": "nope.txt"}, CREATE)
    result = await ApplyPatchTool(editor).execute(ctx, call, agent=None)
    assert result.input_item == {
        "type": "apply_patch_call_output",
        "call_id": "call_3",
        "status": "failed",
        "output": "nope.txt not found\nCreated a.txt",
    }
    assert editor.files == {"a.txt": "hello"}


async def test_editor_exception_fails_with_its_text_and_stops(ctx: RunContextWrapper[Any]) -> None:
    editor = MemoryEditor()
    call = _call(
        CREATE,
        {"type": "update_file", "path": "missing", "diff": "-x"},
        {"type": "delete_file", "path": "a.txt"},
    )
    result = await ApplyPatchTool(editor).execute(ctx, call, agent=None)
    assert result.input_item == {
        "type": "apply_patch_call_output",
        "call_id": "call_3",
        "status": "failed",
        "output": "missing does not exist",
    }
    assert [op.type for op in editor.seen] == ["create_file", "update_file"]
    assert editor.files == {"a.txt": "hello"}


async def test_v4a_error_from_editor_is_reported(ctx: RunContextWrapper[Any]) -> None:
    editor = MemoryEditor({"b.txt": "a\nb\nc\n"})
    call = _call({"type": "update_file", "path": "b.txt", "diff": "@@\n-c\n+C\n@@\n-a\n+A"})
    result = await ApplyPatchTool(editor).execute(ctx, call, agent=None)
    assert result.input_item["status"] == "failed"
    assert result.input_item["output"] == "Invalid Context 3:\na"


class _Results:
    """An editor returning whatever the test queues, to check result normalisation."""

    def __init__(self, *results: Any) -> None:
        self.results = list(results)

    def _next(self, operation: ApplyPatchOperation) -> Any:
        value = self.results.pop(0)
        if isinstance(value, Exception):
            raise value
        return value

    create_file = update_file = delete_file = _next


@pytest.mark.parametrize(
    ("results", "item_tail"),
    [
        ((None,), {"status": "completed"}),
        (("",), {"status": "completed"}),
        ((ApplyPatchResult(),), {"status": "completed"}),
        (({"status": "failed"},), {"status": "failed"}),
        (({"status": "weird", "output": 5},), {"status": "completed", "output": "5"}),
        ((None, "x", {"output": "y"}), {"status": "completed", "output": "x\ny"}),
        ((RuntimeError(),), {"status": "failed", "output": "RuntimeError"}),
    ],
)
async def test_result_normalisation(
    ctx: RunContextWrapper[Any], results: tuple[Any, ...], item_tail: dict[str, Any]
) -> None:
    deletes = [{"type": "delete_file", "path": f"f{i}"} for i in range(len(results))]
    result = await ApplyPatchTool(_Results(*results)).execute(ctx, _call(*deletes), agent=None)
    assert result.input_item == {
        "type": "apply_patch_call_output",
        "call_id": "call_3",
        **item_tail,
    }


def test_normalize_apply_patch_result() -> None:
    assert normalize_apply_patch_result(None) is None
    assert normalize_apply_patch_result("out") == ApplyPatchResult(status=None, output="out")
    assert normalize_apply_patch_result({"status": "completed"}) == ApplyPatchResult(
        "completed", None
    )
    assert normalize_apply_patch_result(3) == ApplyPatchResult(None, "3")


async def test_execute_validates_the_call(ctx: RunContextWrapper[Any]) -> None:
    with pytest.raises(ModelBehaviorError, match="Unknown apply_patch operation: x"):
        await ApplyPatchTool(MemoryEditor()).execute(
            ctx, _call({"type": "x", "path": "a"}), agent=None
        )


# -- approvals and rejection (§5.3, §8) ----------------------------------------------------------


async def test_needs_approval_bool(ctx: RunContextWrapper[Any]) -> None:
    assert await ApplyPatchTool(MemoryEditor()).needs_approval(ctx, _call(CREATE)) is False
    assert await ApplyPatchTool(MemoryEditor(), needs_approval=True).needs_approval(
        ctx, _call(CREATE)
    )


@pytest.mark.parametrize("is_async", [False, True])
async def test_needs_approval_callable_per_operation(
    ctx: RunContextWrapper[Any], is_async: bool
) -> None:
    asked: list[tuple[str, str]] = []

    def decide(
        run_context: RunContextWrapper[Any], operation: ApplyPatchOperation, call_id: str
    ) -> bool:
        assert run_context is ctx
        asked.append((operation.path, call_id))
        return operation.type == "delete_file"

    async def decide_async(*args: Any) -> bool:
        return decide(*args)

    tool = ApplyPatchTool(MemoryEditor(), needs_approval=decide_async if is_async else decide)
    call = _call(
        CREATE,
        {"type": "delete_file", "path": "gone.txt"},
        {"type": "create_file", "path": "z.txt", "diff": "+z"},
    )
    assert await tool.needs_approval(ctx, call) is True
    assert asked == [("a.txt", "call_3"), ("gone.txt", "call_3")]  # stops at the first yes
    asked.clear()
    assert await tool.needs_approval(ctx, _call(CREATE, call_id="call_9")) is False
    assert asked == [("a.txt", "call_9")]


def _approval_item(call: dict[str, Any]) -> ToolApprovalItem:
    return ToolApprovalItem(agent=None, raw_item=call, tool_name="apply_patch")  # type: ignore[arg-type]


@pytest.mark.parametrize("is_async", [False, True])
@pytest.mark.parametrize(
    ("answer", "decision"),
    [
        ({"approve": True}, ApprovalDecision(approve=True)),
        (
            {"approve": False, "reason": "not in this repo"},
            ApprovalDecision(False, "not in this repo"),
        ),
        ({"reason": "undecided"}, None),
        (None, None),
        (ApprovalDecision(approve=False), ApprovalDecision(approve=False)),
    ],
)
async def test_on_approval(
    ctx: RunContextWrapper[Any], is_async: bool, answer: Any, decision: ApprovalDecision | None
) -> None:
    received: list[Any] = []
    item = _approval_item(_call(CREATE))

    def callback(run_context: RunContextWrapper[Any], approval: ToolApprovalItem) -> Any:
        received.append((run_context, approval))
        return answer

    async def callback_async(*args: Any) -> Any:
        return callback(*args)

    tool = ApplyPatchTool(MemoryEditor(), on_approval=callback_async if is_async else callback)
    assert await tool.on_approval(ctx, item) == decision
    assert received == [(ctx, item)]


async def test_on_approval_absent(ctx: RunContextWrapper[Any]) -> None:
    assert (
        await ApplyPatchTool(MemoryEditor()).on_approval(ctx, _approval_item(_call(CREATE))) is None
    )


def test_rejection_item() -> None:
    editor = MemoryEditor()
    result = ApplyPatchTool(editor).rejection(_call(CREATE), "Tool execution was not approved.")
    assert result.input_item == {
        "type": "apply_patch_call_output",
        "call_id": "call_3",
        "output": "Tool execution was not approved.",
        "status": "failed",
    }
    assert result.output == "Tool execution was not approved."
    assert editor.seen == [] and editor.files == {}
