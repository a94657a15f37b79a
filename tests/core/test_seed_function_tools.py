"""Seed blocks 4-9 (function tools) run with only the imports changed, against the local server."""

from __future__ import annotations

import json

import pytest

from core import Runner
from tests.support import items
from tests.support.seed import core_source, printed_output_after, run_block


@pytest.fixture
def default_model_env(responses_server, monkeypatch):
    """Agents without a model use the default provider: point it at the local server."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", responses_server.base_url)
    return responses_server


def _outputs(server, request_index):
    return {
        i["call_id"]: i["output"]
        for i in server.requests[request_index].body["input"]
        if i.get("type") == "function_call_output"
    }


def _parse_printed(text: str) -> list[tuple[str, str, dict]]:
    """(name, description, schema) triples from block 4's printed output."""
    decoder = json.JSONDecoder()
    tools, rest = [], text.strip()
    while rest:
        name, description, rest = rest.split("\n", 2)
        schema, end = decoder.raw_decode(rest)
        tools.append((name.strip(), description.strip(), schema))
        rest = rest[end:].strip()
    return tools


def test_imports_are_the_only_change():
    for block in range(4, 10):
        source = core_source(block)
        assert "agents" not in source.replace("Agent", "")


async def test_block4_prints_the_seed_output(default_model_env):
    scope, printed = await run_block(4)
    assert _parse_printed(printed) == _parse_printed(printed_output_after(4))
    # the example's agent runs against the server; the wire carries the strict form
    server = default_model_env
    server.enqueue(
        [items.function_call("fetch_data", {"path": "a.txt", "directory": None}, call_id="c1")]
    )
    server.enqueue([items.message("read it")])
    result = await Runner.run(scope["agent"], "read a.txt")
    assert result.final_output == "read it"
    assert _outputs(server, 1) == {"c1": "<file contents>"}
    wire = {t["name"]: t for t in server.requests[0].body["tools"]}
    assert wire["fetch_data"]["parameters"]["required"] == ["path", "directory"]
    assert wire["fetch_data"]["parameters"]["additionalProperties"] is False
    assert (
        wire["fetch_weather"]["parameters"]["properties"]["location"]["additionalProperties"]
        is False
    )


async def test_block5_hand_built_function_tool(default_model_env):
    from core import Agent

    scope, _ = await run_block(5)
    server = default_model_env
    server.enqueue(
        [items.function_call("process_user", {"username": "ann", "age": 41}, call_id="c1")]
    )
    server.enqueue([items.message("processed")])
    result = await Runner.run(Agent(name="a", tools=[scope["tool"]]), "go")
    assert result.final_output == "processed"
    assert _outputs(server, 1) == {"c1": "done"}
    assert server.requests[0].body["tools"][0]["parameters"]["additionalProperties"] is False


async def test_block6_field_constraints_in_schema_and_validation(default_model_env):
    from core import Agent

    scope, _ = await run_block(6)
    for name in ("score_a", "score_b"):
        prop = scope[name].params_json_schema["properties"]["score"]
        assert (prop["minimum"], prop["maximum"], prop["description"]) == (
            0,
            100,
            "Score from 0 to 100",
        )
    server = default_model_env
    server.enqueue(
        [
            items.function_call("score_a", {"score": 101}, call_id="bad"),
            items.function_call("score_b", {"score": 55}, call_id="good"),
        ]
    )
    server.enqueue([items.message("ok")])
    await Runner.run(Agent(name="a", tools=[scope["score_a"], scope["score_b"]]), "score")
    outputs = _outputs(server, 1)
    assert outputs["good"] == "Score recorded: 55"
    assert (
        outputs["bad"]
        == "An error occurred while running the tool. Please try again. Error: Invalid JSON input for tool score_a"
    )


async def test_block7_timeout_message_reaches_the_model(default_model_env):
    scope, _ = await run_block(7)
    server = default_model_env
    server.enqueue([items.function_call("slow_lookup", {"query": "x"}, call_id="c1")])
    server.enqueue([items.message("it timed out")])
    result = await Runner.run(scope["agent"], "look x up")
    assert result.final_output == "it timed out"
    assert _outputs(server, 1) == {"c1": "Tool 'slow_lookup' timed out after 2 seconds."}


async def test_block8_raise_exception_prints_tool_name_and_seconds(default_model_env):
    default_model_env.enqueue([items.function_call("slow_tool", "{}", call_id="c1")])
    _, printed = await run_block(8)
    assert printed == "slow_tool timed out in 1.5 seconds\n"
    assert len(default_model_env.requests) == 1


async def test_block9_custom_failure_error_function(default_model_env):
    from core import Agent

    scope, _ = await run_block(9)
    server = default_model_env
    server.enqueue(
        [
            items.function_call("get_user_profile", {"user_id": "user_999"}, call_id="bad"),
            items.function_call("get_user_profile", {"user_id": "user_123"}, call_id="good"),
        ]
    )
    server.enqueue([items.message("done")])
    await Runner.run(Agent(name="a", tools=[scope["get_user_profile"]]), "profiles")
    assert _outputs(server, 1) == {
        "bad": "An internal server error occurred. Please try again later.",
        "good": "User profile for user_123 successfully retrieved.",
    }
