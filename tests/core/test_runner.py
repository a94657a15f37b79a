"""The run loop against the local Responses server through the real ``openai`` client."""

from __future__ import annotations

import asyncio
import json

import pytest

from core import (
    Agent,
    MaxTurnsExceeded,
    MessageOutputItem,
    ModelBehaviorError,
    ModelSettings,
    RunConfig,
    Runner,
    ToolCallItem,
    ToolCallOutputItem,
    function_tool,
)
from tests.support import items


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@function_tool
def boom(x: int) -> str:
    """Always fails."""
    raise RuntimeError("kaboom")


def _inputs(server, index):
    return server.requests[index].body["input"]


async def test_text_answer_and_request_envelope(responses_server, model):
    responses_server.enqueue([items.message("hello there")])
    agent = Agent(name="a", instructions="be brief", model=model)
    result = await Runner.run(agent, "hi")
    assert result.final_output == "hello there"
    body = responses_server.requests[0].body
    assert body["input"] == [{"content": "hi", "role": "user"}]
    assert body["instructions"] == "be brief"
    assert body["tools"] == [] and body["include"] == []
    assert body["model"] == "test-model"
    assert "tool_choice" not in body and "parallel_tool_calls" not in body and "stream" not in body
    assert [type(i) for i in result.new_items] == [MessageOutputItem]
    assert result.context_wrapper.usage.requests == 1
    assert result.context_wrapper.usage.total_tokens > 0


async def test_function_call_round_trip_replays_call_before_output(responses_server, model):
    call = items.function_call("add", {"a": 2, "b": 3}, call_id="call_1")
    responses_server.enqueue([call])
    responses_server.enqueue([items.message("5")])
    agent = Agent(name="a", model=model, tools=[add])
    result = await Runner.run(agent, "add 2 and 3")
    assert result.final_output == "5"
    second = _inputs(responses_server, 1)
    assert second[0] == {"content": "add 2 and 3", "role": "user"}
    assert second[1]["type"] == "function_call" and second[1]["call_id"] == "call_1"
    assert second[2] == {"call_id": "call_1", "output": "5", "type": "function_call_output"}
    wire_tool = responses_server.requests[0].body["tools"][0]
    assert (
        wire_tool["type"] == "function"
        and wire_tool["name"] == "add"
        and wire_tool["strict"] is True
    )
    assert [type(i) for i in result.new_items] == [
        ToolCallItem,
        ToolCallOutputItem,
        MessageOutputItem,
    ]
    assert result.new_items[1].output == 5


async def test_function_tools_run_concurrently_outputs_in_call_order(responses_server, model):
    second_started = asyncio.Event()
    order: list[str] = []

    @function_tool
    async def first() -> str:
        """Waits until the second tool has started (deadlocks if tools run serially)."""
        await asyncio.wait_for(second_started.wait(), timeout=5)
        order.append("first")
        return "one"

    @function_tool
    async def second() -> str:
        """Starts, then finishes first."""
        second_started.set()
        order.append("second")
        return "two"

    responses_server.enqueue(
        [
            items.function_call("first", "{}", call_id="c1"),
            items.function_call("second", "{}", call_id="c2"),
        ]
    )
    responses_server.enqueue([items.message("done")])
    agent = Agent(name="a", model=model, tools=[first, second])
    await Runner.run(agent, "go")
    assert order == ["second", "first"]
    outputs = [i for i in _inputs(responses_server, 1) if i.get("type") == "function_call_output"]
    assert [(o["call_id"], o["output"]) for o in outputs] == [("c1", "one"), ("c2", "two")]


async def test_malformed_arguments_and_raising_tool_become_outputs(responses_server, model):
    responses_server.enqueue(
        [
            items.function_call("add", "{not json", call_id="c1"),
            items.function_call("boom", {"x": 1}, call_id="c2"),
        ]
    )
    responses_server.enqueue([items.message("recovered")])
    agent = Agent(name="a", model=model, tools=[add, boom])
    result = await Runner.run(agent, "go")
    assert result.final_output == "recovered"
    outputs = {
        o["call_id"]: o["output"]
        for o in _inputs(responses_server, 1)
        if o.get("type") == "function_call_output"
    }
    assert (
        outputs["c1"]
        == "An error occurred while running the tool. Please try again. Error: Invalid JSON input for tool add"
    )
    assert (
        outputs["c2"] == "An error occurred while running the tool. Please try again. Error: kaboom"
    )


async def test_unknown_tool_raises_model_behavior_error(responses_server, model):
    responses_server.enqueue([items.function_call("nope", "{}")])
    agent = Agent(name="helper", model=model, tools=[add])
    with pytest.raises(ModelBehaviorError, match="Tool nope not found in agent helper"):
        await Runner.run(agent, "go")


async def test_unknown_tool_returned_to_model_when_configured(responses_server, model):
    responses_server.enqueue([items.function_call("nope", "{}", call_id="c9")])
    responses_server.enqueue([items.message("ok")])
    agent = Agent(name="helper", model=model, tools=[add])
    result = await Runner.run(
        agent, "go", run_config=RunConfig(tool_not_found_behavior="return_error_to_model")
    )
    assert result.final_output == "ok"
    assert _inputs(responses_server, 1)[-1] == {
        "call_id": "c9",
        "output": "Tool 'nope' not found.",
        "type": "function_call_output",
    }


async def test_max_turns_is_enforced(responses_server, model):
    for n in range(3):
        responses_server.enqueue([items.function_call("add", {"a": n, "b": 1})])
    agent = Agent(name="a", model=model, tools=[add])
    with pytest.raises(MaxTurnsExceeded, match=r"Max turns \(2\) exceeded"):
        await Runner.run(agent, "loop", max_turns=2)
    assert len(responses_server.requests) == 2


async def test_tool_choice_conversion_and_reset(responses_server, model):
    responses_server.enqueue([items.function_call("add", {"a": 1, "b": 1})])
    responses_server.enqueue([items.message("2")])
    agent = Agent(
        name="a",
        model=model,
        tools=[add],
        model_settings=ModelSettings(tool_choice="add", parallel_tool_calls=True, temperature=0.1),
    )
    await Runner.run(agent, "go")
    first, second = (r.body for r in responses_server.requests)
    assert first["tool_choice"] == {"type": "function", "name": "add"}
    assert first["parallel_tool_calls"] is True and first["temperature"] == 0.1
    assert "tool_choice" not in second


async def test_streamed_event_order(responses_server, model):
    responses_server.enqueue([items.function_call("add", {"a": 1, "b": 2}, call_id="c1")])
    responses_server.enqueue([items.message("three")])
    agent = Agent(name="a", model=model, tools=[add])
    result = Runner.run_streamed(agent, "go")
    seen: list[str] = []
    async for event in result.stream_events():
        if event.type == "raw_response_event":
            if event.data.type in ("response.completed", "response.created"):
                seen.append(event.data.type)
        elif event.type == "run_item_stream_event":
            seen.append(event.name)
        else:
            seen.append(event.type)
    assert seen == [
        "agent_updated_stream_event",
        "response.created",
        "response.completed",
        "tool_called",
        "tool_output",
        "response.created",
        "response.completed",
        "message_output_created",
    ]
    assert result.final_output == "three" and result.is_complete
    assert responses_server.requests[0].body["stream"] is True


async def test_stream_terminal_failure_raises(responses_server, model):
    responses_server.enqueue([items.message("partial")], terminal="failed")
    result = Runner.run_streamed(Agent(name="a", model=model), "go")
    with pytest.raises(ModelBehaviorError, match=r"terminal event response\.failed"):
        async for _ in result.stream_events():
            pass


async def test_transient_http_error_is_retried(responses_server, openai_client):
    from core import OpenAIResponsesModel

    client = openai_client.with_options(max_retries=2)
    responses_server.enqueue_error(500, "flaky", headers={"retry-after-ms": "10"})
    responses_server.enqueue([items.message("after retry")])
    agent = Agent(name="a", model=OpenAIResponsesModel("m", client))
    result = await Runner.run(agent, "go")
    assert result.final_output == "after retry"
    assert len(responses_server.requests) == 2


async def test_cut_stream_is_retried(responses_server, openai_client):
    from core import OpenAIResponsesModel

    responses_server.enqueue([items.message("lost")], cut_after_events=3)
    responses_server.enqueue([items.message("whole")])
    model = OpenAIResponsesModel("m", openai_client, retry_backoff_s=0.01)
    result = Runner.run_streamed(Agent(name="a", model=model), "go")
    async for _ in result.stream_events():
        pass
    assert result.final_output == "whole"


async def test_cancel_streamed_run_stops_tools(responses_server, model):
    started = asyncio.Event()
    cancelled = asyncio.Event()

    @function_tool
    async def slow() -> str:
        """Runs until cancelled."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    responses_server.enqueue([items.function_call("slow", "{}")])
    result = Runner.run_streamed(Agent(name="a", model=model, tools=[slow]), "go")

    async def consume() -> None:
        async for _ in result.stream_events():
            pass

    consumer = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    result.cancel()
    await asyncio.wait_for(consumer, 5)
    assert cancelled.is_set()
    assert result.is_complete and result.final_output is None


async def test_previous_response_id_sends_only_new_items(responses_server, model):
    responses_server.enqueue(
        [items.function_call("add", {"a": 1, "b": 1}, call_id="c1")], id="resp_1"
    )
    responses_server.enqueue([items.message("2")], id="resp_2")
    agent = Agent(name="a", model=model, tools=[add])
    await Runner.run(agent, "go", previous_response_id="resp_0")
    first, second = (r.body for r in responses_server.requests)
    assert first["previous_response_id"] == "resp_0"
    assert second["previous_response_id"] == "resp_1"
    assert second["input"] == [{"call_id": "c1", "output": "2", "type": "function_call_output"}]


async def test_structured_output_type(responses_server, model):
    from pydantic import BaseModel

    class Answer(BaseModel):
        value: int

    responses_server.enqueue([items.message(json.dumps({"value": 7}))])
    result = await Runner.run(Agent(name="a", model=model, output_type=Answer), "go")
    assert result.final_output == Answer(value=7)
    fmt = responses_server.requests[0].body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["name"] == "final_output" and fmt["strict"] is True


def test_run_sync(responses_server):
    import openai

    from core import OpenAIResponsesModel

    responses_server.enqueue([items.message("sync ok")])

    async def go():
        client = openai.AsyncOpenAI(base_url=responses_server.base_url, api_key="k", max_retries=0)
        return OpenAIResponsesModel("m", client)

    model = asyncio.run(go())
    # a fresh client per loop: run_sync makes its own loop
    result = Runner.run_sync(Agent(name="a", model=model), "hi")
    assert result.final_output == "sync ok"


async def test_malformed_local_call_goes_back_to_the_model_when_configured(
    responses_server, model, tmp_path
):
    from core import ShellTool

    async def executor(request):
        return "never"

    agent = Agent(name="a", model=model, tools=[ShellTool(executor=executor)])
    bad = items.shell_call(["ls"], call_id="s1", timeout_ms=5)
    bad["action"]["timeout_ms"] = -5
    responses_server.enqueue([bad])
    with pytest.raises(ModelBehaviorError, match="timeout must be a positive integer"):
        await Runner.run(agent, "go")
    responses_server.enqueue([bad])
    responses_server.enqueue([items.message("sorry")])
    config = RunConfig(
        malformed_tool_call_behavior="return_error_to_model",
        tool_not_found_behavior="return_error_to_model",
    )
    result = await Runner.run(agent, "go", run_config=config)
    assert result.final_output == "sorry"
    output = responses_server.requests[-1].body["input"][-1]
    assert output["type"] == "shell_call_output" and output["call_id"] == "s1"
    assert "Invalid shell_call: Shell call action timeout" in output["output"][0]["stderr"]


async def test_auto_previous_response_id_from_run_config(responses_server, model):
    """Issue 15 item 4: the opt-in sends the full history once, then only the new items."""
    for n in (1, 2):
        responses_server.enqueue(
            [items.function_call("add", {"a": n, "b": 1}, call_id=f"c{n}")], id=f"resp_{n}"
        )
    responses_server.enqueue([items.message("done")], id="resp_3")
    agent = Agent(name="a", model=model, tools=[add])
    config = RunConfig(auto_previous_response_id=True)
    result = await Runner.run(agent, "go", run_config=config)
    assert result.final_output == "done"
    first, second, third = (r.body for r in responses_server.requests)
    assert "previous_response_id" not in first and first["input"] == [
        {"content": "go", "role": "user"}
    ]
    assert second["previous_response_id"] == "resp_1"
    assert second["input"] == [{"call_id": "c1", "output": "2", "type": "function_call_output"}]
    assert third["previous_response_id"] == "resp_2"
    assert third["input"] == [{"call_id": "c2", "output": "3", "type": "function_call_output"}]
    assert len(result.to_input_list()) == 6  # the local history stays whole


@pytest.mark.parametrize("status", [400, 404])
async def test_refused_previous_response_id_falls_back_to_the_full_history(
    responses_server, model, status
):
    """A server that keeps no responses refuses the id: the run goes on with full bodies."""
    responses_server.enqueue([items.function_call("add", {"a": 1, "b": 1}, call_id="c1")])
    responses_server.enqueue_error(status, "Previous response with id 'resp_x' not found.")
    responses_server.enqueue([items.function_call("add", {"a": 2, "b": 2}, call_id="c2")])
    responses_server.enqueue([items.message("done")])
    agent = Agent(name="a", model=model, tools=[add])
    result = await Runner.run(agent, "go", auto_previous_response_id=True)
    assert result.final_output == "done"
    bodies = [r.body for r in responses_server.requests]
    assert len(bodies) == 4 and "previous_response_id" in bodies[1]
    assert [i.get("type", "message") for i in bodies[2]["input"]] == [
        "message",
        "function_call",
        "function_call_output",
    ]
    assert "previous_response_id" not in bodies[2] and "previous_response_id" not in bodies[3]
    assert len(bodies[3]["input"]) == 5


async def test_refused_explicit_previous_response_id_is_an_error(responses_server, model):
    """An id the caller chose is not silently dropped: the refusal reaches the caller."""
    from core import ModelProviderError

    responses_server.enqueue_error(400, "Previous response with id 'resp_0' not found.")
    agent = Agent(name="a", model=model)
    with pytest.raises(ModelProviderError, match="Previous response"):
        await Runner.run(agent, "go", previous_response_id="resp_0")
    assert len(responses_server.requests) == 1


async def test_a_call_answered_in_an_earlier_turn_is_not_run_again(responses_server, model):
    """The answered-call set is kept as items are recorded (no rebuild per turn): a model that
    repeats an answered call id gets no second execution."""
    runs: list[int] = []

    @function_tool
    def count(n: int) -> int:
        """Record a call."""
        runs.append(n)
        return n

    responses_server.enqueue([items.function_call("count", {"n": 1}, call_id="c1")])
    responses_server.enqueue(
        [
            items.function_call("count", {"n": 1}, call_id="c1"),
            items.function_call("count", {"n": 2}, call_id="c2"),
        ]
    )
    responses_server.enqueue([items.message("done")])
    agent = Agent(name="a", model=model, tools=[count])
    result = await Runner.run(agent, "go")
    assert result.final_output == "done"
    assert runs == [1, 2]
