"""The parts of context management (issue 14): windows, estimates, trimming, state, manual."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from bench.long_session import SUMMARY, scripted_session
from core import Agent, OpenAIResponsesModel, RunConfig, UserError
from core.context_window import (
    ContextPolicy,
    ContextState,
    TokenEstimator,
    context_window_for,
    is_context_overflow,
)
from core.context_window.local import (
    SUMMARY_HEADER,
    kept_user_messages,
    render_transcript,
    tail_start,
)
from core.context_window.manual import compact_history
from core.context_window.trim import TRIM_NOTE, trim_item
from core.errors import ModelProviderError
from tests.support import items
from tests.support.responses_server import ResponsesServer


def _call(n: int) -> dict[str, Any]:
    return {"type": "function_call", "call_id": f"c{n}", "name": "run", "arguments": "{}"}


def _out(n: int, size: int = 10) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": f"c{n}", "output": "o" * size}


def test_window_table_and_overrides() -> None:
    assert context_window_for("gpt-5.4") == 400_000
    assert context_window_for("gpt-4o-mini") == 128_000
    assert context_window_for("llama-local") == 128_000
    overrides = {"llama-local": 32_000, "http://127.0.0.1:8080/v1": 8_192}
    assert context_window_for("llama-local", None, overrides) == 32_000
    assert context_window_for("llama-local", "http://127.0.0.1:8080/v1/", overrides) == 8_192


def test_estimator_calibrates_and_clamps() -> None:
    est = TokenEstimator()
    assert est.tokens(1000) == 1000
    est.calibrate(1000, 1300)
    assert est.tokens(1000) == 1300
    est.calibrate(1000, 100_000)  # one odd report cannot blind it
    assert est.ratio == 4.0
    est.calibrate(0, 10)
    assert est.ratio == 4.0


def test_trim_keeps_head_and_tail_and_never_changes_the_original() -> None:
    text = "HEAD" + "m" * 50_000 + "TAIL"
    item = {"type": "function_call_output", "call_id": "c", "output": text}
    trimmed = trim_item(item, 1024)
    assert trimmed is not None and item["output"] == text
    out = trimmed["output"]
    assert out.startswith("HEAD") and out.endswith("TAIL") and "run again to see it" in out
    assert len(out) < 1024 + len(TRIM_NOTE) + 20 and trimmed["call_id"] == "c"
    assert trim_item({"type": "function_call_output", "call_id": "c", "output": "ok"}, 1024) is None
    assert trim_item({"role": "user", "content": text}, 1024) is None
    shell = {
        "type": "shell_call_output",
        "call_id": "s",
        "output": [{"stdout": text, "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}],
    }
    cut = trim_item(shell, 1024)
    assert cut is not None and cut["output"][0]["outcome"] == shell["output"][0]["outcome"]
    assert len(cut["output"][0]["stdout"]) < 2000


def test_tail_never_separates_an_output_from_its_call() -> None:
    full = [{"role": "user", "content": "go"}]
    for n in range(5):
        full += [_call(n), _out(n)]
    start = tail_start(full, 0, 3)  # the last 3 items start on output c3
    assert full[start]["type"] == "function_call" and full[start]["call_id"] == "c3"
    pending = [*full, _call(9)]
    assert tail_start(pending, 0, 1) == len(pending) - 1  # a pending call is kept
    assert tail_start(full, 9, 3) == 9  # never below the floor


def test_kept_user_messages_first_and_latest() -> None:
    full = [{"role": "user", "content": f"m{i}" * 50} for i in range(10)]
    kept = kept_user_messages(full, 10, 400)
    assert kept[0] is full[0] and kept[-1] is full[9] and len(kept) < 10
    summary = {"role": "user", "content": f"{SUMMARY_HEADER}\n\nold"}
    assert kept_user_messages([summary], 1, 10_000) == []


def test_transcript_respects_its_budget() -> None:
    many = [_out(n, 5_000) for n in range(200)]
    text = render_transcript(many, 20_000)
    assert len(text.encode()) <= 21_000 and "items omitted" in text


def test_state_round_trip_undo_and_mismatch() -> None:
    from core.context_window import CompactionRecord

    full = [{"role": "user", "content": "go"}, _call(1), _out(1, 9000), _call(2), _out(2)]
    state = ContextState(trim_upto=3, trim_bytes=1024)
    record = CompactionRecord(
        "local", "manual", covers=1, prefix=[{"role": "user", "content": "S"}]
    )
    state.compactions.append(record)
    view = state.request_items(full)
    assert view[0]["content"] == "S" and len(view) == 5 and len(view[2]["output"]) < 2000
    again = ContextState.from_json(json.loads(json.dumps(state.to_json())))
    assert again.request_items(full) == view
    assert state.undo() is record and state.request_items(full)[0] is full[0]
    with pytest.raises(ValueError):
        again.request_items(full[:0])
    with pytest.raises(ValueError):
        ContextState.from_json(
            {"compactions": [{"strategy": "x", "reason": "r", "covers": -1, "prefix": []}]}
        )


def test_policy_validation() -> None:
    with pytest.raises(UserError):
        ContextPolicy(threshold=1.5)
    with pytest.raises(UserError):
        ContextPolicy(window=0)
    with pytest.raises(UserError):
        ContextPolicy(strategy="magic")  # type: ignore[arg-type]


def test_overflow_detection() -> None:
    assert is_context_overflow(
        ModelProviderError("HTTP 400: This model's maximum context length is 10", 400)
    )
    assert not is_context_overflow(ModelProviderError("HTTP 400: bad tool", 400))
    assert not is_context_overflow(ModelProviderError("HTTP 500: context window", 500))


async def test_compact_now_and_undo_restore_the_previous_request_history(
    responses_server: ResponsesServer,
) -> None:
    responses_server.compact_endpoint = False
    responses_server.responder = scripted_session(0)
    full: list[dict[str, Any]] = [{"role": "user", "content": "first"}]
    for n in range(10):
        full += [_call(n), _out(n, 3000)]
    client = openai.AsyncOpenAI(base_url=responses_server.base_url, api_key="k", max_retries=0)
    agent = Agent(name="a", instructions="Work.", model=OpenAIResponsesModel("m", client))
    state = ContextState()
    config = RunConfig(context_policy=ContextPolicy(window=50_000, strategy="local", state=state))
    record = await compact_history(agent, full, config, state)
    await client.close()
    assert record is not None and record.reason == "manual" and SUMMARY in record.summary
    sent = responses_server.requests[-1].body
    assert "Transcript to summarise" in sent["input"][0]["content"] and sent["tools"] == []
    compacted = state.request_items(full)
    assert len(compacted) < len(full) and compacted[0] == full[0]
    assert record.tokens_after < record.tokens_before
    state.undo()
    assert state.request_items(full) == full


async def test_input_tokens_endpoint_counts_like_the_server(
    responses_server: ResponsesServer,
) -> None:
    from core.context_window.remote import count_input_tokens
    from core.models.history import InputHistory
    from core.models.interface import ModelRequest

    client = openai.AsyncOpenAI(base_url=responses_server.base_url, api_key="k", max_retries=0)
    model = OpenAIResponsesModel("m", client)
    request = ModelRequest(model="m", instructions="hi", input=InputHistory([items.message("x")]))
    counted = await count_input_tokens(model, request)
    responses_server.input_tokens_endpoint = False
    assert await count_input_tokens(model, request) is None
    await client.close()
    assert counted == responses_server.count_tokens(responses_server.requests[0].body)


async def test_server_context_limit_answers_in_the_openai_error_shape(
    responses_server: ResponsesServer,
) -> None:
    responses_server.context_limit = 10
    client = openai.AsyncOpenAI(base_url=responses_server.base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="m", input="x" * 400)
    await client.close()
    assert caught.value.code == "context_length_exceeded" and caught.value.param == "input"
    assert "maximum context length is 10 tokens" in caught.value.message
    assert responses_server.pending == 0 and responses_server.requests[0].input_tokens > 10


def test_server_counts_from_the_latest_compaction_item() -> None:
    big = {"role": "user", "content": "y" * 4000}
    item = {"type": "compaction", "id": "cmp_1", "encrypted_content": "e"}
    whole = ResponsesServer.count_tokens({"input": [big, big]})
    after = ResponsesServer.count_tokens({"input": [big, item, {"role": "user", "content": "z"}]})
    assert whole > 2000 and after < 50
