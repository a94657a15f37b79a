"""FunctionTool construction, invocation, failures, timeouts, approvals, outputs (spec §1.1-§1.12)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Annotated, Any

import pytest
from agents.items import ItemHelpers
from openai.types.responses import ResponseFunctionToolCall
from pydantic import BaseModel, Field

from core import (
    FunctionTool,
    RunContextWrapper,
    ToolOutputFileContent,
    ToolOutputImage,
    ToolOutputText,
    default_tool_error_function,
    function_tool,
)
from core.context import ToolContext
from core.errors import ModelBehaviorError, ToolTimeoutError, UserError
from core.tools import (
    evaluate_is_enabled,
    evaluate_needs_approval,
    function_call_output_item,
    invoke_function_tool,
)


def make_ctx(tool: FunctionTool, args: str = "", context: Any = None) -> ToolContext[Any]:
    return ToolContext(
        context=context, tool_name=tool.name, tool_call_id="call_1", tool_arguments=args
    )


async def call(tool: FunctionTool, args: str, context: Any = None) -> Any:
    return await invoke_function_tool(tool, make_ctx(tool, args, context), args)


@pytest.fixture
def redaction_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_AGENTS_DONT_LOG_TOOL_DATA", "0")


@pytest.fixture(autouse=True)
def _default_redaction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_AGENTS_DONT_LOG_TOOL_DATA", raising=False)


# -- invocation pipeline (§1.7) ---------------------------------------------------------------


class Point(BaseModel):
    x: int
    y: int = 0


async def test_sync_function_runs_in_worker_thread_with_validated_args() -> None:
    seen: dict[str, Any] = {}

    @function_tool
    def place(p: Point, label: str = "here") -> str:
        seen["thread"] = threading.get_ident()
        seen["p"] = p
        return f"{label}:{p.x},{p.y}"

    assert await call(place, '{"p": {"x": 2}}') == "here:2,0"
    assert seen["thread"] != threading.get_ident()
    assert isinstance(seen["p"], Point)


async def test_async_function_awaited_and_context_passed_first() -> None:
    @function_tool
    async def whoami(ctx: ToolContext[Any], n: int) -> str:
        return f"{ctx.context}/{ctx.tool_name}/{ctx.tool_call_id}/{ctx.tool_arguments}/{n}"

    assert await call(whoami, '{"n": 4}', context="user") == 'user/whoami/call_1/{"n": 4}/4'

    @function_tool
    def plain(ctx: RunContextWrapper[Any]) -> str:
        return type(ctx).__name__

    assert await call(plain, "") == "ToolContext"  # decorator-built tools get the ToolContext


async def test_empty_arguments_mean_empty_object_and_defaults_apply() -> None:
    @function_tool
    def defaults(a: int = 5, *rest: int, k: str = "z") -> str:
        return f"{a}{rest}{k}"

    assert await call(defaults, "") == "5()z"
    assert await call(defaults, '{"a": 1, "rest": [2, 3], "k": "w"}') == "1(2, 3)w"


async def test_kwargs_binding() -> None:
    @function_tool(strict_mode=False)
    def collect(first: str, **extra: int) -> str:
        return json.dumps([first, extra])

    assert await call(collect, '{"first": "a", "extra": {"b": 2}}') == '["a", {"b": 2}]'


# -- failures (§1.9, §12 item 6) --------------------------------------------------------------


@function_tool
def boom(x: int) -> str:
    raise ValueError("kaboom")


GENERIC = "An error occurred while running the tool. Please try again. Error: "


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("{bad", GENERIC + "Invalid JSON input for tool boom"),
        ('{"x": "nope"}', GENERIC + "Invalid JSON input for tool boom"),
        ("[1]", GENERIC + "Invalid JSON input for tool boom: expected a JSON object"),
        ('{"x": 1}', GENERIC + "kaboom"),
    ],
)
async def test_default_failure_messages_with_redaction(args: str, expected: str) -> None:
    assert await call(boom, args) == expected


@pytest.mark.usefixtures("redaction_off")
async def test_default_failure_messages_without_redaction() -> None:
    assert await call(boom, "{bad") == (
        "An error occurred while parsing tool arguments. Please try again with valid JSON. "
        "Error: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    )
    text = await call(boom, '{"x": "nope"}')
    assert text.startswith(GENERIC + "Invalid JSON input for tool boom: 1 validation error")
    assert "int_parsing" in text


async def test_failure_error_function_none_reraises() -> None:
    @function_tool(failure_error_function=None)
    def raw(x: int) -> str:
        raise ValueError("kaboom")

    with pytest.raises(ModelBehaviorError) as bad_json:
        await call(raw, "{bad")
    assert str(bad_json.value) == "Invalid JSON input for tool raw"
    assert bad_json.value.__cause__ is None
    with pytest.raises(ValueError, match="kaboom"):
        await call(raw, '{"x": 1}')


@pytest.mark.usefixtures("redaction_off")
async def test_unredacted_errors_carry_payload_and_cause() -> None:
    @function_tool(failure_error_function=None)
    def raw(x: int) -> str:
        return ""

    with pytest.raises(ModelBehaviorError) as excinfo:
        await call(raw, "{bad")
    assert str(excinfo.value) == "Invalid JSON input for tool raw: {bad"
    assert isinstance(excinfo.value.__cause__, json.JSONDecodeError)


async def test_custom_failure_error_function_seed_block_9() -> None:
    seen: list[str] = []

    def my_custom_error_function(context: RunContextWrapper[Any], error: Exception) -> str:
        """A custom function to provide a user-friendly error message."""
        seen.append(str(error))
        return "An internal server error occurred. Please try again later."

    @function_tool(failure_error_function=my_custom_error_function)
    def get_user_profile(user_id: str) -> str:
        """Fetches a user profile from a mock API.
        This function demonstrates a 'flaky' or failing API call.
        """
        if user_id == "user_123":
            return "User profile for user_123 successfully retrieved."
        raise ValueError(
            f"Could not retrieve profile for user_id: {user_id}. API returned an error."
        )

    ok = await call(get_user_profile, '{"user_id": "user_123"}')
    assert ok == "User profile for user_123 successfully retrieved."
    failed = await call(get_user_profile, '{"user_id": "x"}')
    assert failed == "An internal server error occurred. Please try again later."
    assert seen == ["Could not retrieve profile for user_id: x. API returned an error."]

    async def async_formatter(ctx: RunContextWrapper[Any], error: Exception) -> str:
        return f"async:{type(error).__name__}"

    tool = function_tool(get_user_profile_impl, failure_error_function=async_formatter)
    assert await call(tool, '{"user_id": "x"}') == "async:ValueError"


def get_user_profile_impl(user_id: str) -> str:
    raise ValueError(user_id)


def test_default_tool_error_function_redacts_secrets() -> None:
    """Issue 11: an exception quoting a registered key (or a secret shape) reaches neither
    the model nor the journal through the default error text."""
    from core.redaction import REDACTED, register_secret

    register_secret("gw-51c0ffee", source="test")
    ctx = RunContextWrapper(context=None)
    text = default_tool_error_function(
        ctx, RuntimeError("login failed for gw-51c0ffee; password=hunter2hunter2")
    )
    assert text.startswith(GENERIC)
    assert "gw-51c0ffee" not in text and "hunter2hunter2" not in text
    assert REDACTED in text


def test_default_tool_error_function_texts() -> None:
    ctx = RunContextWrapper(context=None)
    assert default_tool_error_function(ctx, ValueError("x")) == GENERIC + "x"
    try:
        json.loads("{bad")
    except json.JSONDecodeError as exc:
        error = ModelBehaviorError("Invalid JSON input for tool t: {bad")
        error.__cause__ = exc
    assert default_tool_error_function(ctx, error).startswith(
        "An error occurred while parsing tool arguments. Please try again with valid JSON. "
        "Error: Expecting property name"
    )


async def test_inner_cancellation_goes_through_formatter() -> None:
    @function_tool
    async def cancelled_inside(x: int) -> str:
        raise asyncio.CancelledError("inner cancel")

    assert await call(cancelled_inside, '{"x": 1}') == GENERIC + "inner cancel"

    @function_tool(failure_error_function=None)
    async def cancelled_raw(x: int) -> str:
        raise asyncio.CancelledError()

    with pytest.raises(Exception) as excinfo:
        await call(cancelled_raw, '{"x": 1}')
    assert type(excinfo.value) is Exception


async def test_outer_cancellation_propagates() -> None:
    started = asyncio.Event()

    @function_tool
    async def waits(x: int) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    task = asyncio.ensure_future(call(waits, '{"x": 1}'))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# -- Field constraints at validation time (seed block 6) ------------------------------------


@pytest.mark.usefixtures("redaction_off")
async def test_field_constraints_enforced() -> None:
    @function_tool
    def score_a(score: int = Field(..., ge=0, le=100, description="Score from 0 to 100")) -> str:
        return f"Score recorded: {score}"

    @function_tool
    def score_b(
        score: Annotated[int, Field(..., ge=0, le=100, description="Score from 0 to 100")],
    ) -> str:
        return f"Score recorded: {score}"

    for tool in (score_a, score_b):
        assert await call(tool, '{"score": 42}') == "Score recorded: 42"
        too_big = await call(tool, '{"score": 101}')
        assert "less_than_equal" in too_big and too_big.startswith(GENERIC)
        assert "greater_than_equal" in await call(tool, '{"score": -1}')


# -- hand-built tools (seed block 5, §1.12) -----------------------------------------------------


def do_some_work(data: str) -> str:
    return "done"


class FunctionArgs(BaseModel):
    username: str
    age: int


async def run_function(ctx: RunContextWrapper[Any], args: str) -> str:
    parsed = FunctionArgs.model_validate_json(args)
    return do_some_work(data=f"{parsed.username} is {parsed.age} years old")


def test_hand_built_tool_seed_block_5() -> None:
    tool = FunctionTool(
        name="process_user",
        description="Processes extracted user data",
        params_json_schema=FunctionArgs.model_json_schema(),
        on_invoke_tool=run_function,
    )
    assert tool.params_json_schema == FunctionArgs.model_json_schema()
    payload = tool.to_wire()
    assert payload["parameters"]["additionalProperties"] is False
    assert payload["parameters"]["required"] == ["username", "age"]
    assert payload["strict"] is True


async def test_hand_built_context_type_and_no_failure_wrapper() -> None:
    seen: list[type] = []

    async def wants_wrapper(ctx: RunContextWrapper[Any], args: str) -> str:
        seen.append(type(ctx))
        return args

    async def wants_tool_ctx(ctx: ToolContext[Any], args: str) -> str:
        seen.append(type(ctx))
        raise RuntimeError("handle it yourself")

    a = FunctionTool("a", "d", {}, wants_wrapper)
    b = FunctionTool("b", "d", {}, wants_tool_ctx)
    assert await call(a, '{"k": 1}') == '{"k": 1}'
    with pytest.raises(RuntimeError, match="handle it yourself"):
        await call(b, "{}")
    assert seen == [RunContextWrapper, ToolContext]


def test_hand_built_defaulted_field_becomes_required() -> None:
    class Args(BaseModel):
        a: str
        b: int = 3

    tool = FunctionTool("t", "d", Args.model_json_schema(), run_function)
    assert tool.to_wire()["parameters"]["required"] == ["a", "b"]
    assert "required" not in tool.params_json_schema or tool.params_json_schema["required"] == ["a"]
    loose = FunctionTool("t", "d", Args.model_json_schema(), run_function, strict_json_schema=False)
    assert loose.to_wire()["parameters"] == Args.model_json_schema()
    assert loose.to_wire()["strict"] is False


def test_hand_built_dict_schema_rejected_when_strict() -> None:
    schema = {
        "type": "object",
        "properties": {"d": {"type": "object", "additionalProperties": True}},
    }
    with pytest.raises(UserError, match="additionalProperties"):
        FunctionTool("t", "d", schema, run_function)
    FunctionTool("t", "d", schema, run_function, strict_json_schema=False)


# -- construction validation (§1.1) -------------------------------------------------------------


async def _noop(ctx: Any, args: str) -> str:
    return ""


@pytest.mark.parametrize(
    ("timeout", "error", "fragment"),
    [
        (0, ValueError, "greater than 0"),
        (-1.0, ValueError, "greater than 0"),
        (float("inf"), ValueError, "finite"),
        (float("nan"), ValueError, "finite"),
        (True, TypeError, "positive number"),
        ("1", TypeError, "positive number"),
    ],
)
def test_timeout_validation(timeout: Any, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        FunctionTool("t", "d", {}, _noop, timeout_seconds=timeout)


def test_timeout_rejected_for_sync_functions_only() -> None:
    def sync_tool(x: int) -> str:
        return ""

    async def async_tool(x: int) -> str:
        return ""

    with pytest.raises(ValueError, match="only supported for async @function_tool handlers"):
        function_tool(sync_tool, timeout=1)
    assert function_tool(async_tool, timeout=1).timeout_seconds == 1.0
    assert FunctionTool("t", "d", {}, _noop, timeout_seconds=2).timeout_seconds == 2.0
    with pytest.raises(ValueError, match="timeout_behavior"):
        function_tool(async_tool, timeout_behavior="nope")  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("callers", "fragment"),
    [
        ([], "non-empty list"),
        ("direct", "non-empty list"),
        (("direct",), "non-empty list"),
        (["direct", "direct"], "duplicate caller 'direct'"),
        (["x"], "unsupported caller 'x'"),
    ],
)
def test_allowed_callers_validation(callers: Any, fragment: str) -> None:
    with pytest.raises(UserError, match=fragment):
        FunctionTool("t", "d", {}, _noop, allowed_callers=callers)


def test_decorator_options_stored() -> None:
    guard = object()
    extractor: Any = object()

    @function_tool(
        tool_input_guardrails=[guard],
        tool_output_guardrails=[guard],
        custom_data_extractor=extractor,
        needs_approval=True,
        is_enabled=False,
    )
    async def t() -> str:
        return ""

    assert t.tool_input_guardrails == [guard] and t.tool_output_guardrails == [guard]
    assert t.custom_data_extractor is extractor
    assert t.needs_approval is True and t.is_enabled is False
    assert t._namespace is None


# -- timeouts (§1.10, §12 item 7) -----------------------------------------------------------------


@function_tool(timeout=0.05)
async def slow_lookup(query: str) -> str:
    await asyncio.Event().wait()
    return f"Result for {query}"


async def test_timeout_error_as_result() -> None:
    out = await call(slow_lookup, '{"query": "q"}')
    assert out == "Tool 'slow_lookup' timed out after 0.05 seconds."


async def test_timeout_raise_exception() -> None:
    @function_tool(timeout=0.05, timeout_behavior="raise_exception")
    async def slow_tool() -> str:
        await asyncio.Event().wait()
        return "done"

    with pytest.raises(ToolTimeoutError) as excinfo:
        await call(slow_tool, "")
    assert excinfo.value.tool_name == "slow_tool"
    assert excinfo.value.timeout_seconds == 0.05
    assert str(excinfo.value) == "Tool 'slow_tool' timed out after 0.05 seconds."


@pytest.mark.parametrize("is_async", [False, True])
async def test_timeout_error_function(is_async: bool) -> None:
    received: list[Any] = []

    def sync_fn(ctx: RunContextWrapper[Any], error: Exception) -> str:
        received.append((ctx, error))
        return "custom timeout"

    async def async_fn(ctx: RunContextWrapper[Any], error: Exception) -> str:
        return sync_fn(ctx, error)

    @function_tool(timeout=0.05, timeout_error_function=async_fn if is_async else sync_fn)
    async def slow() -> str:
        await asyncio.Event().wait()
        return ""

    assert await call(slow, "") == "custom timeout"
    ctx, error = received[0]
    assert isinstance(ctx, ToolContext) and isinstance(error, ToolTimeoutError)


async def test_hand_built_timeout_and_fast_result() -> None:
    async def slow(ctx: Any, args: str) -> str:
        await asyncio.Event().wait()
        return ""

    tool = FunctionTool("hb", "d", {}, slow, timeout_seconds=2)
    # integer seconds format with :g
    task = asyncio.ensure_future(call(tool, ""))
    tool2 = FunctionTool("fast", "d", {}, _noop, timeout_seconds=5)
    assert await call(tool2, "") == ""
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    short = FunctionTool("hb", "d", {}, slow, timeout_seconds=0.01)
    assert await call(short, "") == "Tool 'hb' timed out after 0.01 seconds."


async def test_tool_raising_timeout_error_itself_is_not_a_timeout() -> None:
    async def raises(ctx: Any, args: str) -> str:
        raise TimeoutError("own")

    tool = FunctionTool("t", "d", {}, raises, timeout_seconds=5)
    with pytest.raises(TimeoutError, match="own"):
        await call(tool, "")


# -- is_enabled / needs_approval (§1.11) ----------------------------------------------------------


async def test_is_enabled_variants() -> None:
    ctx = RunContextWrapper(context={"on": True})
    seen: list[Any] = []

    def sync_check(run_ctx: RunContextWrapper[Any], agent: Any) -> bool:
        seen.append((run_ctx, agent))
        return run_ctx.context["on"]

    async def async_check(run_ctx: RunContextWrapper[Any], agent: Any) -> int:
        return 0

    assert await evaluate_is_enabled(FunctionTool("t", "d", {}, _noop), ctx, "agent") is True
    off = FunctionTool("t", "d", {}, _noop, is_enabled=False)
    assert await evaluate_is_enabled(off, ctx, "agent") is False
    assert await evaluate_is_enabled(
        FunctionTool("t", "d", {}, _noop, is_enabled=sync_check), ctx, "A"
    )
    assert seen == [(ctx, "A")]
    tool = FunctionTool("t", "d", {}, _noop, is_enabled=async_check)
    assert await evaluate_is_enabled(tool, ctx, "A") is False


async def test_needs_approval_variants_and_fail_closed() -> None:
    ctx = RunContextWrapper(context=None)
    calls: list[Any] = []

    def rule(run_ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
        calls.append((params, call_id))
        return params.get("x", 0) > 5

    async def async_rule(
        run_ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str
    ) -> str:
        return "yes"

    tool = FunctionTool("t", "d", {}, _noop, needs_approval=rule)
    assert await evaluate_needs_approval(tool, ctx, '{"x": 9}', "c1") is True
    assert await evaluate_needs_approval(tool, ctx, '{"x": 1}', "c2") is False
    for bad in ["", "{bad", "[1]", "NaN", '{"x": NaN}', '{"a": {"b": -Infinity}}', "null"]:
        assert await evaluate_needs_approval(tool, ctx, bad, "c3") is True
    assert calls == [({"x": 9}, "c1"), ({"x": 1}, "c2")]
    assert await evaluate_needs_approval(
        FunctionTool("t", "d", {}, _noop, needs_approval=async_rule), ctx, "{}", "c"
    )
    assert not await evaluate_needs_approval(FunctionTool("t", "d", {}, _noop), ctx, "{bad", "c")
    always = FunctionTool("t", "d", {}, _noop, needs_approval=True)
    assert await evaluate_needs_approval(always, ctx, "{}", "c") is True

    def broken(*_: Any) -> bool:
        raise RuntimeError("rule failed")

    with pytest.raises(RuntimeError, match="rule failed"):
        await evaluate_needs_approval(
            FunctionTool("t", "d", {}, _noop, needs_approval=broken), ctx, "{}", "c"
        )


# -- outputs (§1.8, §12 item 5) -----------------------------------------------------------------

OUTPUT_VALUES: list[Any] = [
    "sunny in Tokyo",
    "",
    {"a": 1},
    None,
    [],
    3,
    1.5,
    b"x",
    ToolOutputText(text="see"),
    ToolOutputImage(image_url="data:image/png;base64,AAA", detail="low"),
    ToolOutputImage(file_id="f"),
    ToolOutputFileContent(file_id="file_1", filename="a.pdf"),
    ToolOutputFileContent(file_url="u"),
    [
        ToolOutputText(text="see"),
        ToolOutputImage(image_url="data:image/png;base64,AAA", detail="low"),
        ToolOutputFileContent(file_id="file_1", filename="a.pdf"),
    ],
    ({"type": "text", "text": "a"},),
    [{"type": "text", "text": "a"}, ToolOutputText(text="b")],
    [{"type": "text", "text": "a"}, 3],
    {"type": "text", "text": "hi", "extra": 1},
    {"type": "text"},
    {"type": "image"},
    {"type": "image", "image_url": "u", "detail": "bad"},
    {"type": "image", "image_url": "u", "detail": "auto"},
    {"type": "file", "file_data": "d", "filename": "x"},
    {"type": "file", "filename": "x"},
]


@pytest.mark.parametrize("value", OUTPUT_VALUES, ids=repr)
def test_output_item_matches_reference(value: Any) -> None:
    ours = function_call_output_item({"type": "function_call", "call_id": "c1"}, value)
    reference_value = _to_reference(value)
    call_item = ResponseFunctionToolCall(
        type="function_call", call_id="c1", name="t", arguments="{}"
    )
    assert ours == dict(ItemHelpers.tool_call_output_item(call_item, reference_value))


def _to_reference(value: Any) -> Any:
    import agents

    mapping: dict[type, Any] = {
        ToolOutputText: agents.ToolOutputText,
        ToolOutputImage: agents.ToolOutputImage,
        ToolOutputFileContent: agents.ToolOutputFileContent,
    }
    if type(value) in mapping:
        return mapping[type(value)](**value.model_dump(exclude={"type"}))
    if isinstance(value, list):
        return [_to_reference(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_reference(v) for v in value)
    return value


def test_output_item_examples_from_spec() -> None:
    item = function_call_output_item({"call_id": "call_1"}, "sunny in Tokyo")
    assert item == {"call_id": "call_1", "output": "sunny in Tokyo", "type": "function_call_output"}
    assert list(item) == ["call_id", "output", "type"]
    with_caller = function_call_output_item(
        {"call_id": "c", "caller": {"type": "program", "caller_id": "p1"}}, None
    )
    assert with_caller["caller"] == {"type": "program", "caller_id": "p1"}
    assert with_caller["output"] == "None"


def test_structured_output_construction_validation() -> None:
    with pytest.raises(ValueError, match="image_url or file_id"):
        ToolOutputImage(detail="low")
    with pytest.raises(ValueError, match="file_data, file_url, or file_id"):
        ToolOutputFileContent(filename="x")
    with pytest.raises(ValueError):
        ToolOutputText()  # type: ignore[call-arg]


async def test_tool_returning_structured_output_end_to_end() -> None:
    @function_tool
    def picture() -> ToolOutputImage:
        return ToolOutputImage(file_id="f1")

    value = await call(picture, "")
    assert function_call_output_item({"call_id": "c"}, value)["output"] == [
        {"type": "input_image", "file_id": "f1"}
    ]
