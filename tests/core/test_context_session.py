"""Long sessions against the real local Responses server with a context limit (issue 14)."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from bench.long_session import FIRST_MESSAGE, long_session
from core import Agent, OpenAIResponsesModel, RunConfig, Runner, RunState, function_tool
from core.context_window import (
    CompactionEvent,
    ContextPolicy,
    ContextState,
    ContextUsageEvent,
    ContextWindowExceeded,
)
from core.context_window.local import SUMMARY_HEADER
from tests.support.responses_server import ResponsesServer

LIMIT = 20_000
OUTPUT = 4_000


def _texts(body: dict[str, Any]) -> str:
    return json.dumps(body.get("input"))


async def test_local_strategy_keeps_every_request_under_the_limit(
    responses_server: ResponsesServer,
) -> None:
    responses_server.context_limit = LIMIT
    responses_server.compact_endpoint = False
    figures = await long_session(
        responses_server, turns=150, output_bytes=OUTPUT, limit=LIMIT, strategy="local"
    )
    assert figures.final_output == "done"
    assert figures.turns == 150
    assert figures.rejected == 0
    assert figures.peak_request_tokens <= LIMIT
    assert figures.compactions.get("local", 0) >= 2
    last = _texts(figures.last_body)
    assert FIRST_MESSAGE in last and SUMMARY_HEADER in last and "Next steps" in last
    # no compact endpoint was used, and no request went there after the 404
    compacts = [r for r in responses_server.requests if r.path.endswith("/compact")]
    assert compacts == []
    # the journal side: the run's items are all there, uncompacted
    outputs = [i for i in figures.result.to_input_list() if i.get("type") == "function_call_output"]
    assert len(outputs) == 150 and all(len(o["output"]) == OUTPUT for o in outputs)


async def test_auto_strategy_probes_compact_endpoint_once_then_compacts_locally(
    responses_server: ResponsesServer,
) -> None:
    responses_server.context_limit = LIMIT
    responses_server.compact_endpoint = False
    figures = await long_session(
        responses_server, turns=120, output_bytes=OUTPUT, limit=LIMIT, strategy="auto"
    )
    assert figures.final_output == "done" and figures.rejected == 0
    probes = [r for r in responses_server.requests if r.path.endswith("/responses/compact")]
    assert len(probes) == 1
    assert figures.compactions.get("local", 0) >= 1


async def test_server_strategy_sends_context_management_and_keeps_the_item(
    responses_server: ResponsesServer,
) -> None:
    responses_server.context_limit = LIMIT
    figures = await long_session(
        responses_server,
        turns=150,
        output_bytes=OUTPUT,
        limit=LIMIT,
        strategy="server",
        keep_bodies=True,
    )
    assert figures.final_output == "done" and figures.rejected == 0
    assert figures.peak_request_tokens <= LIMIT
    assert all(
        b["context_management"] == [{"type": "compaction", "compact_threshold": int(LIMIT * 0.85)}]
        for b in figures.bodies
    )
    assert figures.compactions.get("server", 0) >= 1
    later = [b for b in figures.bodies if any(i.get("type") == "compaction" for i in b["input"])]
    assert later, "no request carried the server's compaction item"
    assert FIRST_MESSAGE in _texts(figures.last_body)


async def test_compact_endpoint_strategy(responses_server: ResponsesServer) -> None:
    responses_server.context_limit = LIMIT
    figures = await long_session(
        responses_server, turns=120, output_bytes=OUTPUT, limit=LIMIT, strategy="compact_endpoint"
    )
    assert figures.final_output == "done" and figures.rejected == 0
    assert figures.compactions.get("compact_endpoint", 0) >= 1
    compacts = [r for r in responses_server.requests if r.path.endswith("/responses/compact")]
    assert compacts and all(r.body["model"] == "bench-model" for r in compacts)
    last = figures.last_body["input"]
    assert any(i.get("type") == "compaction" for i in last)
    assert FIRST_MESSAGE in json.dumps(last)


async def test_limit_lowered_under_a_running_session_is_recovered(
    responses_server: ResponsesServer,
) -> None:
    responses_server.compact_endpoint = False
    responses_server.count_usage = True

    def lower(turn: int) -> None:
        if turn == 30:  # the model's next request will not fit any more
            responses_server.context_limit = 15_000

    events: list[Any] = []
    figures = await long_session(
        responses_server,
        turns=40,
        output_bytes=OUTPUT,
        limit=40_000,  # what the client believes
        strategy="local",
        on_turn=lower,
        listener=events.append,
    )
    assert figures.final_output == "done"
    rejected = [r for r in responses_server.requests if r.input_tokens and r.input_tokens > 15_000]
    assert len(rejected) >= 1  # the server did answer context_length_exceeded ...
    reasons = [e.record.reason for e in events if isinstance(e, CompactionEvent)]
    assert "context_length_exceeded" in reasons  # ... and a compaction answered it
    assert any(isinstance(e, ContextUsageEvent) and e.report.window == 15_000 for e in events)


async def test_history_that_cannot_fit_says_so_with_figures(
    responses_server: ResponsesServer,
) -> None:
    responses_server.compact_endpoint = False
    client = openai.AsyncOpenAI(base_url=responses_server.base_url, api_key="k", max_retries=0)
    agent = Agent(name="a", model=OpenAIResponsesModel("m", client))
    policy = ContextPolicy(window=1_000, strategy="local")
    with pytest.raises(ContextWindowExceeded) as caught:
        await Runner.run(agent, "x" * 20_000, run_config=RunConfig(context_policy=policy))
    await client.close()
    assert caught.value.window == 1_000 and caught.value.needed > 1_000
    assert "1,000" in str(caught.value) and "messages" in str(caught.value)
    # nothing that could not fit was sent; the server's input_tokens count was asked
    assert [r.path for r in responses_server.requests] == ["/v1/responses/input_tokens"]


async def test_run_state_round_trips_with_its_compaction_state(
    responses_server: ResponsesServer,
) -> None:
    responses_server.context_limit = LIMIT
    responses_server.compact_endpoint = False
    figures = await long_session(
        responses_server, turns=80, output_bytes=OUTPUT, limit=LIMIT, strategy="local"
    )
    state = figures.result.to_state()
    assert state.context_state is not None and state.context_state.compactions
    restored = await RunState.from_string(state.current_agent, state.to_string())
    assert restored.context_state is not None
    assert restored.context_state.to_json() == state.context_state.to_json()
    full = figures.result.to_input_list()
    assert restored.context_state.request_items(full) == state.context_state.request_items(full)


async def test_a_new_run_continues_from_the_compacted_history(
    responses_server: ResponsesServer,
) -> None:
    """What a relaunched window does: the full history plus the saved state."""
    responses_server.context_limit = LIMIT
    responses_server.compact_endpoint = False
    figures = await long_session(
        responses_server, turns=80, output_bytes=OUTPUT, limit=LIMIT, strategy="local"
    )
    saved = json.dumps(figures.result.to_state().context_state.to_json())
    full = figures.result.to_input_list()
    state = ContextState.from_json(json.loads(saved))
    covers = state.covers
    assert covers > 0

    @function_tool
    def run(n: int) -> str:
        """Unused."""
        return str(n)

    responses_server.responder = None
    responses_server.enqueue(
        output=[
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "continued", "annotations": []}],
            }
        ]
    )
    client = openai.AsyncOpenAI(base_url=responses_server.base_url, api_key="k", max_retries=0)
    agent = Agent(name="long", model=OpenAIResponsesModel("bench-model", client), tools=[run])
    policy = ContextPolicy(window=LIMIT, strategy="local", state=state)
    result = await Runner.run(
        agent,
        [*full, {"role": "user", "content": "and now?"}],
        run_config=RunConfig(context_policy=policy),
    )
    await client.close()
    assert result.final_output == "continued"
    body = responses_server.requests[-1].body
    assert len(body["input"]) == len(state.current.prefix) + len(full) + 1 - covers
    assert SUMMARY_HEADER in _texts(body) and body["input"][-1]["content"] == "and now?"
