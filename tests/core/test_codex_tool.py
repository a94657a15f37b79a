"""``codex_tool`` in core (spec §9): schema, options, threads, context keys, streaming, failures.

The Codex process is replaced by ``FakeExec`` (core's ``CodexExec`` seam) only in these pure unit
tests; tests/harnesses/test_codex_cli.py runs the real CLI.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict

from core import Agent, Runner, ToolApprovalItem, UserError
from core.context import ToolContext
from core.tools.codex import (
    DEFAULT_CODEX_DESCRIPTION,
    DEFAULT_STREAM_LIMIT_BYTES,
    STREAM_LIMIT_ENV,
    AgentMessageItem,
    CodexExecArgs,
    CodexOptions,
    CodexToolResult,
    CodexToolStreamEvent,
    CodexUsage,
    CommandExecutionItem,
    ErrorItem,
    FileChangeItem,
    FileUpdateChange,
    ItemCompletedEvent,
    ItemStartedEvent,
    ItemUpdatedEvent,
    McpToolCallItem,
    ReasoningItem,
    ThreadErrorEvent,
    ThreadOptions,
    ThreadStartedEvent,
    TodoListItem,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnOptions,
    TurnStartedEvent,
    UnknownEvent,
    UnknownItem,
    WebSearchItem,
    codex_tool,
    parse_event,
    parse_event_line,
    process,
    resolve_stream_limit,
    validate_codex_tool_names,
)
from core.tools.function import evaluate_is_enabled, evaluate_needs_approval, invoke_function_tool
from tests.support import items

SPEC_SCHEMA = {  # tools-wire-spec §9.2, verbatim
    "type": "object",
    "additionalProperties": False,
    "required": ["inputs", "thread_id"],
    "properties": {
        "inputs": {
            "type": "array",
            "minItems": 1,
            "items": {"$ref": "#/$defs/CodexToolInputItem"},
            "description": "Structured inputs appended to the Codex task. Provide at least one input item.",
        },
        "thread_id": {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "description": "Optional Codex thread ID to resume. If omitted, a new thread is started unless configured elsewhere.",
        },
    },
    "$defs": {
        "CodexToolInputItem": {
            "type": "object",
            "additionalProperties": False,
            "required": ["type", "text", "path"],
            "properties": {
                "type": {"enum": ["text", "local_image"], "type": "string"},
                "text": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "path": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            },
        }
    },
}


def turn(
    thread_id: str = "th_1",
    text: str | None = "final answer",
    usage: dict[str, int] | None = None,
    extra: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The JSONL events of one successful turn."""
    events: list[dict[str, Any]] = [
        {"type": "thread.started", "thread_id": thread_id},
        {"type": "turn.started"},
        *(extra or []),
    ]
    if text is not None:
        events.append(
            {"type": "item.completed", "item": {"id": "i9", "type": "agent_message", "text": text}}
        )
    events.append(
        {
            "type": "turn.completed",
            "usage": usage or {"input_tokens": 10, "cached_input_tokens": 2, "output_tokens": 5},
        }
    )
    return events


class FakeExec:
    """A scripted ``CodexExec``: each ``run`` yields the next script's lines, then may raise."""

    def __init__(self, *scripts: list[Any], error: Exception | None = None) -> None:
        self.scripts = list(scripts)
        self.error = error
        self.calls: list[CodexExecArgs] = []
        self.closed = 0

    async def run(self, args: CodexExecArgs):
        self.calls.append(args)
        script = self.scripts.pop(0) if self.scripts else []
        try:
            for event in script:
                yield event if isinstance(event, str) else json.dumps(event)
            if self.error is not None:
                raise self.error
        finally:
            self.closed += 1


def call_args(*texts: str, thread_id: str | None = None, images: tuple[str, ...] = ()) -> str:
    inputs: list[dict[str, Any]] = [{"type": "text", "text": t, "path": None} for t in texts]
    inputs += [{"type": "local_image", "text": None, "path": p} for p in images]
    return json.dumps({"inputs": inputs, "thread_id": thread_id})


def tool_ctx(context: Any = None, call_id: str = "call_1") -> ToolContext[Any]:
    call = items.function_call("codex", "{}", call_id=call_id)
    return ToolContext(
        context=context, tool_name="codex", tool_call_id=call_id, tool_arguments="", tool_call=call
    )


async def invoke(tool, args: str, ctx: ToolContext[Any] | None = None) -> Any:
    return await invoke_function_tool(tool, ctx or tool_ctx(), args)


# -- construction ----------------------------------------------------------------------------


def test_schema_is_exactly_the_spec_and_strict():
    tool = codex_tool()
    wire = tool.to_wire()
    assert wire["parameters"] == SPEC_SCHEMA
    assert wire["strict"] is True and wire["type"] == "function"
    assert tool.name == "codex" and tool.description == DEFAULT_CODEX_DESCRIPTION


def test_run_context_thread_id_omits_thread_id_property():
    params = codex_tool(use_run_context_thread_id=True).to_wire()["parameters"]
    assert params["required"] == ["inputs"] and "thread_id" not in params["properties"]
    assert params["$defs"] == SPEC_SCHEMA["$defs"]


@pytest.mark.parametrize("name", ["codex", "codex_review", "codex_a_b"])
def test_valid_names(name):
    assert codex_tool(name=name).name == name


@pytest.mark.parametrize("name", ["review", "Codex", "codexreview", "my_codex"])
def test_invalid_names(name):
    with pytest.raises(
        UserError, match=re.escape('Codex tool name must be "codex" or start with "codex_".')
    ):
        codex_tool(name=name)


def test_duplicate_codex_names_on_one_agent():
    validate_codex_tool_names([codex_tool(), codex_tool(name="codex_b")])
    with pytest.raises(UserError, match="Duplicate Codex tool names found: codex_b"):
        validate_codex_tool_names([codex_tool(name="codex_b"), codex_tool(name="codex_b")])


def test_unknown_option_keys_raise():
    with pytest.raises(UserError, match="Unknown codex_tool option"):
        codex_tool({"nmae": "codex"})
    with pytest.raises(UserError, match="Unknown default_thread_options option"):
        codex_tool(default_thread_options={"modle": "x"})
    with pytest.raises(UserError, match="Unknown codex_options option"):
        codex_tool(codex_options={"base": "x"})
    with pytest.raises(UserError, match="Unknown default_turn_options option"):
        codex_tool(default_turn_options={"idle": 1})


def test_options_dict_and_keywords_merge():
    tool = codex_tool({"name": "codex_x", "description": "from dict"}, description="kw wins")
    assert (tool.name, tool.description) == ("codex_x", "kw wins")


@pytest.mark.parametrize(
    "bad",
    [
        {"sandbox_mode": "yolo"},
        {"model_reasoning_effort": "max"},
        {"approval_policy": "always"},
        {"web_search_mode": "on"},
        {"network_access_enabled": "yes"},
        {"additional_directories": "/tmp"},
    ],
)
def test_thread_option_values_are_checked(bad):
    with pytest.raises(UserError):
        ThreadOptions(**bad)


@pytest.mark.parametrize("value", [0, -1, float("inf"), "5", True])
def test_idle_timeout_must_be_positive_finite(value):
    with pytest.raises(UserError):
        TurnOptions(idle_timeout_seconds=value)


def test_stream_limit_bounds(monkeypatch):
    for ok in (65_536, 67_108_864):
        assert CodexOptions(codex_subprocess_stream_limit_bytes=ok)
        assert resolve_stream_limit(ok, {}) == ok
    for bad in (65_535, 67_108_865):
        with pytest.raises(UserError, match="between 65536 and 67108864"):
            CodexOptions(codex_subprocess_stream_limit_bytes=bad)
    assert resolve_stream_limit(None, {}) == DEFAULT_STREAM_LIMIT_BYTES == 8_388_608
    assert resolve_stream_limit(None, {STREAM_LIMIT_ENV: "100000"}) == 100_000
    assert resolve_stream_limit(200_000, {STREAM_LIMIT_ENV: "100000"}) == 200_000
    for bad in ("1", "abc", "67108865"):
        with pytest.raises(UserError, match=STREAM_LIMIT_ENV):
            resolve_stream_limit(None, {STREAM_LIMIT_ENV: bad})


def test_web_search_mode_preferred_over_legacy_flag():
    assert ThreadOptions(web_search_enabled=True).effective_web_search_mode == "live"
    assert ThreadOptions(web_search_enabled=False).effective_web_search_mode == "disabled"
    both = ThreadOptions(web_search_enabled=True, web_search_mode="cached")
    assert both.effective_web_search_mode == "cached"
    assert ThreadOptions().effective_web_search_mode is None


def test_bad_output_schema_is_rejected_at_construction():
    with pytest.raises(UserError, match='"type": "object"'):
        codex_tool(output_schema={"type": "string"})
    with pytest.raises(UserError, match="unsupported type"):
        codex_tool(output_schema={"properties": [{"name": "a", "schema": {"type": "object"}}]})


# -- calls -----------------------------------------------------------------------------------


async def test_call_maps_inputs_options_and_returns_json_result():
    fake = FakeExec(turn())
    tool = codex_tool(
        codex=fake,
        sandbox_mode="workspace-write",
        working_directory="/repo",
        skip_git_repo_check=True,
        default_thread_options=ThreadOptions(
            model="gpt-5.5", sandbox_mode="read-only", working_directory="/other"
        ),
    )
    ctx = tool_ctx()
    result = await invoke(tool, call_args("first", "second", images=("/a.png",)), ctx)
    assert isinstance(result, CodexToolResult)
    assert json.loads(str(result)) == {
        "thread_id": "th_1",
        "response": "final answer",
        "usage": {"input_tokens": 10, "cached_input_tokens": 2, "output_tokens": 5},
    }
    (args,) = fake.calls
    assert args.input == "first\n\nsecond" and args.images == ["/a.png"]
    assert args.thread_id is None
    opts = args.thread_options
    assert (opts.sandbox_mode, opts.working_directory, opts.skip_git_repo_check, opts.model) == (
        "workspace-write",
        "/repo",
        True,
        "gpt-5.5",
    )
    assert (ctx.usage.requests, ctx.usage.input_tokens, ctx.usage.output_tokens) == (1, 10, 5)
    assert (ctx.usage.total_tokens, ctx.usage.cached_input_tokens) == (15, 2)
    assert fake.closed == 1


async def test_default_response_and_last_agent_message_wins():
    extra = [
        {"type": "item.completed", "item": {"id": "a", "type": "agent_message", "text": "one"}}
    ]
    fake = FakeExec(turn(text=None), turn(text="two", extra=extra))
    tool = codex_tool(codex=fake)
    assert (await invoke(tool, call_args("x"))).response == "Codex task completed with inputs."
    assert (await invoke(tool, call_args("x"))).response == "two"


async def test_turn_options_reach_the_process():
    signal = asyncio.Event()
    fake = FakeExec(turn())
    tool = codex_tool(
        codex=fake,
        default_turn_options=TurnOptions(idle_timeout_seconds=7, signal=signal),
        output_schema={"type": "object", "properties": {"a": {"type": "string"}}},
    )
    await invoke(tool, call_args("x"))
    args = fake.calls[0]
    assert args.idle_timeout_seconds == 7.0 and args.signal is signal
    assert args.output_schema == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": False,
        "required": ["a"],
    }


async def test_output_schema_descriptor_becomes_json_schema():
    fake = FakeExec(turn())
    descriptor = {
        "title": "Answer",
        "properties": [
            {"name": "verdict", "schema": {"type": "string", "enum": ["ok", "bad"]}},
            {
                "name": "files",
                "description": "touched",
                "schema": {"type": "array", "items": {"type": "string"}},
            },
        ],
    }
    await invoke(codex_tool(codex=fake, output_schema=descriptor), call_args("x"))
    assert fake.calls[0].output_schema == {
        "type": "object",
        "additionalProperties": False,
        "title": "Answer",
        "properties": {
            "verdict": {"type": "string", "enum": ["ok", "bad"]},
            "files": {"type": "array", "items": {"type": "string"}, "description": "touched"},
        },
        "required": ["verdict", "files"],
    }


async def test_thread_id_precedence_call_then_context_then_option():
    fake = FakeExec(turn("th_call"), turn("th_ctx"), turn("th_opt"))
    tool = codex_tool(
        codex=fake, thread_id="th_opt", use_run_context_thread_id=True, parameters=None
    )
    # with use_run_context_thread_id the schema has no thread_id: use a tool that keeps it
    keep = codex_tool(codex=fake, thread_id="th_opt")
    context: dict[str, Any] = {"codex_thread_id": "th_ctx"}
    await invoke(keep, call_args("x", thread_id="th_call"), tool_ctx(context))
    await invoke(
        tool,
        json.dumps({"inputs": [{"type": "text", "text": "x", "path": None}]}),
        tool_ctx(context),
    )
    await invoke(
        tool, json.dumps({"inputs": [{"type": "text", "text": "x", "path": None}]}), tool_ctx({})
    )
    assert [a.thread_id for a in fake.calls] == ["th_call", "th_ctx", "th_opt"]


async def test_call_thread_id_beats_context_with_custom_parameters():
    class Item(BaseModel):
        type: Literal["text", "local_image"]
        text: str | None = None
        path: str | None = None

    class Params(BaseModel):
        inputs: list[Item]
        thread_id: str | None = None

    fake = FakeExec(turn("th_call"))
    tool = codex_tool(codex=fake, parameters=Params, use_run_context_thread_id=True)
    assert "thread_id" in tool.to_wire()["parameters"]["properties"]
    context = {"codex_thread_id": "th_ctx"}
    await invoke(tool, call_args("x", thread_id="th_call"), tool_ctx(context))
    assert fake.calls[0].thread_id == "th_call"
    assert context["codex_thread_id"] == "th_call"


@pytest.mark.parametrize(
    ("name", "key"),
    [("codex", "codex_thread_id"), ("codex_review", "codex_thread_id_review")],
)
async def test_default_run_context_keys(name, key):
    fake = FakeExec(turn("th_new"), turn("th_new"))
    tool = codex_tool(codex=fake, name=name, use_run_context_thread_id=True)
    context: dict[str, Any] = {}
    args = json.dumps({"inputs": [{"type": "text", "text": "x", "path": None}]})
    await invoke(tool, args, tool_ctx(context))
    assert context == {key: "th_new"}
    await invoke(tool, args, tool_ctx(context))
    assert [a.thread_id for a in fake.calls] == [None, "th_new"]


async def test_custom_run_context_key_and_context_kinds():
    @dataclass
    class DC:
        slot: str | None = None

    class Model(BaseModel):
        model_config = ConfigDict(extra="allow")

    class Slotted:
        __slots__ = ("k",)

    args = json.dumps({"inputs": [{"type": "text", "text": "x", "path": None}]})
    for context in (DC(), Model(), Slotted()):
        fake = FakeExec(turn("th_k"))
        tool = codex_tool(codex=fake, use_run_context_thread_id=True, run_context_thread_id_key="k")
        result = await invoke(tool, args, tool_ctx(context))
        assert isinstance(result, CodexToolResult), result
        assert context.k == "th_k"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "context",
    [None, (1, 2), "text"],
)
async def test_immutable_run_context_is_a_tool_error(context):
    fake = FakeExec(turn())
    tool = codex_tool(codex=fake, use_run_context_thread_id=True)
    out = await invoke(
        tool,
        json.dumps({"inputs": [{"type": "text", "text": "x", "path": None}]}),
        tool_ctx(context),
    )
    assert "needs a mutable run context" in out and not fake.calls


async def test_frozen_contexts_are_rejected():
    @dataclass(frozen=True)
    class Frozen:
        codex_thread_id: str | None = None

    class FrozenModel(BaseModel):
        model_config = ConfigDict(frozen=True)
        codex_thread_id: str | None = None

    args = json.dumps({"inputs": [{"type": "text", "text": "x", "path": None}]})
    for context in (Frozen(), FrozenModel()):
        tool = codex_tool(codex=FakeExec(turn()), use_run_context_thread_id=True)
        out = await invoke(tool, args, tool_ctx(context))
        assert "frozen" in out


async def test_thread_id_stored_in_context_after_failure():
    failing = [
        {"type": "thread.started", "thread_id": "th_f"},
        {"type": "turn.failed", "error": {"message": "nope"}},
    ]
    tool = codex_tool(codex=FakeExec(failing), use_run_context_thread_id=True)
    context: dict[str, Any] = {}
    out = await invoke(
        tool,
        json.dumps({"inputs": [{"type": "text", "text": "x", "path": None}]}),
        tool_ctx(context),
    )
    assert (
        out
        == "An error occurred while running the tool. Please try again. Error: Codex turn failed: nope"
    )
    assert context == {"codex_thread_id": "th_f"}


async def test_persist_session_reuses_thread_and_rejects_another():
    fake = FakeExec(
        turn("th_p", usage={"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 4}),
        turn("th_p", usage={"input_tokens": 25, "cached_input_tokens": 3, "output_tokens": 9}),
    )
    tool = codex_tool(codex=fake, persist_session=True)
    ctx = tool_ctx()
    first = await invoke(tool, call_args("a"), ctx)
    second = await invoke(tool, call_args("b", thread_id="th_p"), ctx)
    assert [a.thread_id for a in fake.calls] == [None, "th_p"]
    assert first.thread_id == second.thread_id == "th_p"
    # the CLI reports cumulative usage per thread: the run counts each turn once
    assert second.usage == CodexUsage(25, 3, 9)
    assert (ctx.usage.requests, ctx.usage.input_tokens, ctx.usage.output_tokens) == (2, 25, 9)
    out = await invoke(tool, call_args("c", thread_id="th_other"), ctx)
    assert "keeps thread th_p" in out and "th_other" in out and len(fake.calls) == 2


async def test_without_persist_session_each_call_starts_new_thread():
    fake = FakeExec(turn("t1"), turn("t2"))
    tool = codex_tool(codex=fake)
    await invoke(tool, call_args("a"))
    await invoke(tool, call_args("b"))
    assert [a.thread_id for a in fake.calls] == [None, None]


async def test_on_stream_gets_every_typed_event_sync_and_async():
    extra = [
        {
            "type": "item.started",
            "item": {
                "id": "c",
                "type": "command_execution",
                "command": "ls",
                "status": "in_progress",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "c",
                "type": "command_execution",
                "command": "ls",
                "aggregated_output": "a\n",
                "exit_code": 0,
                "status": "completed",
            },
        },
        {
            "type": "item.updated",
            "item": {"id": "t", "type": "todo_list", "items": [{"text": "do", "completed": False}]},
        },
        {"type": "something.new", "x": 1},
    ]
    seen_sync: list[CodexToolStreamEvent] = []
    seen_async: list[str] = []

    async def on_async(event: CodexToolStreamEvent) -> None:
        await asyncio.sleep(0)
        seen_async.append(event.event.type)

    for callback in (seen_sync.append, on_async):
        tool = codex_tool(codex=FakeExec(turn(extra=extra)), on_stream=callback)
        await invoke(tool, call_args("x"), tool_ctx(call_id="cx"))
    types = [e.event.type for e in seen_sync]
    assert (
        types
        == seen_async
        == [
            "thread.started",
            "turn.started",
            "item.started",
            "item.completed",
            "item.updated",
            "unknown",
            "item.completed",
            "turn.completed",
        ]
    )
    assert isinstance(seen_sync[3].event, ItemCompletedEvent)
    assert seen_sync[3].event.item == CommandExecutionItem("c", "ls", "a\n", "completed", 0)
    assert seen_sync[0].tool_call["call_id"] == "cx"
    assert seen_sync[-1].thread.id == "th_1"


async def test_on_stream_failure_does_not_break_the_turn():
    def bad(event):
        raise RuntimeError("viewer broke")

    result = await invoke(codex_tool(codex=FakeExec(turn()), on_stream=bad), call_args("x"))
    assert isinstance(result, CodexToolResult) and result.response == "final answer"


async def test_retry_error_events_are_not_fatal():
    extra = [{"type": "error", "message": "Reconnecting... 1/5"}]
    result = await invoke(codex_tool(codex=FakeExec(turn(extra=extra))), call_args("x"))
    assert isinstance(result, CodexToolResult)


async def test_error_event_without_turn_end_fails():
    script = [{"type": "thread.started", "thread_id": "t"}, {"type": "error", "message": "gone"}]
    out = await invoke(codex_tool(codex=FakeExec(script)), call_args("x"))
    assert out.endswith("Error: Codex stream error: gone")


async def test_process_errors_go_through_failure_function():
    fake = FakeExec([], error=RuntimeError("Codex exec exited with code 1: bad flag"))
    out = await invoke(codex_tool(codex=fake), call_args("x"))
    assert out == (
        "An error occurred while running the tool. Please try again. "
        "Error: Codex exec exited with code 1: bad flag"
    )
    custom = codex_tool(
        codex=FakeExec([], error=RuntimeError("x")),
        failure_error_function=lambda c, e: f"custom: {e}",
    )
    assert await invoke(custom, call_args("x")) == "custom: x"
    raising = codex_tool(
        codex=FakeExec([], error=RuntimeError("boom")), failure_error_function=None
    )
    with pytest.raises(RuntimeError, match="boom"):
        await invoke(raising, call_args("x"))


async def test_unparseable_line_is_a_tool_error():
    out = await invoke(codex_tool(codex=FakeExec(["not json"])), call_args("x"))
    assert "Failed to parse Codex event line" in out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("{bad", "while parsing tool arguments. Please try again with valid JSON"),
        (json.dumps({"inputs": [], "thread_id": None}), "at least one input item"),
        (
            json.dumps({"inputs": [{"type": "text", "text": "", "path": None}], "thread_id": None}),
            "non-empty 'text'",
        ),
        (
            json.dumps(
                {"inputs": [{"type": "text", "text": "a", "path": "/p"}], "thread_id": None}
            ),
            "must not have a 'path'",
        ),
        (
            json.dumps(
                {"inputs": [{"type": "local_image", "text": None, "path": " "}], "thread_id": None}
            ),
            "non-empty 'path'",
        ),
        (
            json.dumps(
                {"inputs": [{"type": "local_image", "text": "t", "path": "/p"}], "thread_id": None}
            ),
            "must not have 'text'",
        ),
        (
            json.dumps(
                {"inputs": [{"type": "video", "text": "t", "path": None}], "thread_id": None}
            ),
            "'text' or 'local_image'",
        ),
        (call_args("x", thread_id="  "), "non-blank"),
        (
            json.dumps({"inputs": [{"type": "text", "text": "a", "path": None}], "extra": 1}),
            "unknown keys",
        ),
    ],
)
async def test_invalid_arguments_are_tool_errors(arguments, message):
    fake = FakeExec(turn())
    out = await invoke(codex_tool(codex=fake), arguments)
    assert out.startswith("An error occurred while ") and message in out
    assert not fake.calls


async def test_without_a_registered_process_the_call_explains(monkeypatch):
    monkeypatch.setattr(process, "_factory", None)
    out = await invoke(codex_tool(), call_args("x"))
    assert "No Codex process implementation is available: import harnesses.codex" in out


async def test_registered_factory_gets_codex_options(monkeypatch):
    seen: list[CodexOptions] = []
    fake = FakeExec(turn())

    def factory(options: CodexOptions) -> FakeExec:
        seen.append(options)
        return fake

    monkeypatch.setattr(process, "_factory", factory)
    tool = codex_tool(codex_options={"base_url": "http://127.0.0.1:1/v1", "api_key": "k"})
    await invoke(tool, call_args("x"))
    await invoke(tool, call_args("y"))
    assert [(o.base_url, o.api_key) for o in seen] == [("http://127.0.0.1:1/v1", "k")]


async def test_needs_approval_and_is_enabled_are_the_function_tool_settings():
    assert await evaluate_needs_approval(codex_tool(needs_approval=True), tool_ctx(), "{}", "c")
    checker = codex_tool(
        needs_approval=lambda ctx, args, call_id: args["inputs"][0]["text"] == "rm"
    )
    assert await evaluate_needs_approval(checker, tool_ctx(), call_args("rm"), "c")
    assert not await evaluate_needs_approval(checker, tool_ctx(), call_args("ls"), "c")
    assert not await evaluate_is_enabled(codex_tool(is_enabled=False), tool_ctx(), None)
    assert await evaluate_is_enabled(
        codex_tool(is_enabled=lambda ctx, agent: True), tool_ctx(), None
    )


# -- through the runner (outer agent on the local Responses server) ---------------------------


async def test_runner_gets_tool_output_and_usage(responses_server, model):
    fake = FakeExec(turn(text="workspace has 3 files"))
    agent = Agent(name="a", model=model, tools=[codex_tool(codex=fake)])
    responses_server.enqueue([items.function_call("codex", call_args("count files"), call_id="k1")])
    responses_server.enqueue([items.message("3 files")])
    result = await Runner.run(agent, "how many files?")
    assert result.final_output == "3 files"
    sent = [
        i
        for i in responses_server.requests[1].body["input"]
        if i.get("type") == "function_call_output"
    ]
    assert json.loads(sent[0]["output"])["response"] == "workspace has 3 files"
    wire = responses_server.requests[0].body["tools"][0]
    assert wire["name"] == "codex" and wire["parameters"] == SPEC_SCHEMA
    usage = result.context_wrapper.usage
    assert usage.requests == 3  # two model requests plus the Codex turn
    assert usage.input_tokens >= 10 and usage.output_tokens >= 5


async def test_runner_needs_approval_interrupts_and_disabled_tool_is_hidden(
    responses_server, model
):
    fake = FakeExec(turn())
    agent = Agent(
        name="a",
        model=model,
        tools=[
            codex_tool(codex=fake, needs_approval=True),
            codex_tool(name="codex_off", is_enabled=False),
        ],
    )
    responses_server.enqueue([items.function_call("codex", call_args("x"), call_id="k1")])
    result = await Runner.run(agent, "go")
    assert [type(i) for i in result.interruptions] == [ToolApprovalItem]
    assert not fake.calls
    assert [t["name"] for t in responses_server.requests[0].body["tools"]] == ["codex"]


# -- event parsing (spec §9.4) ----------------------------------------------------------------


def test_parse_every_event_and_item_type():
    assert parse_event({"type": "thread.started", "thread_id": "t"}) == ThreadStartedEvent("t")
    assert parse_event({"type": "turn.started"}) == TurnStartedEvent()
    assert parse_event({"type": "turn.completed"}) == TurnCompletedEvent(None)
    assert parse_event(
        {
            "type": "turn.completed",
            "usage": {
                "input_tokens": 1,
                "cached_input_tokens": 2,
                "output_tokens": 3,
                "reasoning_output_tokens": 4,
            },
        }
    ) == TurnCompletedEvent(CodexUsage(1, 2, 3, 4))
    assert parse_event({"type": "turn.failed", "error": {"message": "m"}}) == TurnFailedEvent("m")
    assert parse_event({"type": "error", "message": "r"}) == ThreadErrorEvent("r")
    unknown = parse_event({"type": "x.y", "a": 1})
    assert (
        isinstance(unknown, UnknownEvent) and unknown.event_type == "x.y" and unknown.raw["a"] == 1
    )

    def item(data):
        event = parse_event({"type": "item.updated", "item": data})
        assert isinstance(event, ItemUpdatedEvent)
        return event.item

    assert item({"id": "1", "type": "agent_message", "text": "t"}) == AgentMessageItem("1", "t")
    assert item({"id": "1", "type": "reasoning", "text": "r"}) == ReasoningItem("1", "r")
    assert item(
        {"id": "1", "type": "command_execution", "command": "c", "status": "in_progress"}
    ) == CommandExecutionItem("1", "c")
    assert item(
        {
            "id": "1",
            "type": "file_change",
            "status": "failed",
            "changes": [{"path": "a", "kind": "add"}, {"path": "b", "kind": "delete"}],
        }
    ) == FileChangeItem(
        "1", (FileUpdateChange("a", "add"), FileUpdateChange("b", "delete")), "failed"
    )
    mcp = item(
        {
            "id": "1",
            "type": "mcp_tool_call",
            "server": "s",
            "tool": "t",
            "arguments": {"q": 1},
            "status": "completed",
            "result": {"content": [{"type": "text", "text": "x"}], "structured_content": {"k": 2}},
        }
    )
    assert (
        isinstance(mcp, McpToolCallItem)
        and mcp.result is not None
        and mcp.result.structured_content == {"k": 2}
    )
    failed = item(
        {
            "id": "1",
            "type": "mcp_tool_call",
            "server": "s",
            "tool": "t",
            "status": "failed",
            "error": {"message": "no"},
        }
    )
    assert (
        isinstance(failed, McpToolCallItem)
        and failed.error is not None
        and failed.error.message == "no"
    )
    assert item({"id": "1", "type": "web_search", "query": "q"}) == WebSearchItem("1", "q")
    todo = item({"id": "1", "type": "todo_list", "items": [{"text": "a", "completed": True}]})
    assert isinstance(todo, TodoListItem) and todo.items[0].completed is True
    assert item({"id": "1", "type": "error", "message": "e"}) == ErrorItem("1", "e")
    assert isinstance(item({"id": "1", "type": "hologram"}), UnknownItem)
    started = parse_event_line(
        '{"type":"item.started","item":{"id":"z","type":"reasoning","text":""}}'
    )
    assert isinstance(started, ItemStartedEvent)
    with pytest.raises(ValueError, match="not a JSON object"):
        parse_event_line("[1]")
