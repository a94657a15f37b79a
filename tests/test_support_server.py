"""Tests for the local Responses API server, driven by the real ``openai`` client."""

from __future__ import annotations

import asyncio
import http.client
import json
import subprocess
import sys
import threading
from typing import Any

import openai
import pytest
from openai.types.responses import (
    ResponseApplyPatchToolCall,
    ResponseCompletedEvent,
    ResponseCustomToolCall,
    ResponseErrorEvent,
    ResponseFailedEvent,
    ResponseFunctionShellToolCall,
    ResponseFunctionToolCall,
    ResponseIncompleteEvent,
    ResponseOutputMessage,
    ResponseReasoningItem,
)

from tests.support import items
from tests.support.fixtures import openai_client, responses_server  # noqa: F401
from tests.support.responses_server import ResponsesServer, ScriptedResponse

Client = openai.AsyncOpenAI
PATCH = {"type": "create_file", "path": "a.txt", "diff": "+hello\n"}


async def _collect(stream: Any) -> tuple[list[Any], BaseException | None]:
    """All events of a ``stream=True`` iteration, and the exception that ended it (if any)."""
    events: list[Any] = []
    try:
        async for event in stream:
            events.append(event)
    except (openai.APIError, RuntimeError) as exc:
        return events, exc
    return events, None


# -- non-streaming ---------------------------------------------------------------------------
async def test_non_streaming_parses_every_item_type(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    fc = items.function_call("get_weather", {"city": "Paris"}, call_id="call_w")
    responses_server.enqueue(
        [
            items.reasoning("thinking"),
            items.message("Hello there"),
            fc,
            items.shell_call(["echo hi", "ls"], timeout_ms=1000, max_output_length=100),
            items.apply_patch_call(PATCH),
            items.custom_tool_call("apply_patch", "*** Begin Patch\n*** End Patch\n"),
        ],
        usage=items.usage(30, 7, cached_tokens=4),
        id="resp_fixed",
    )
    resp = await openai_client.responses.create(model="gpt-test", input="hi")
    assert resp.id == "resp_fixed"
    assert resp.status == "completed"
    assert resp.model == "gpt-test"
    assert [type(o) for o in resp.output] == [
        ResponseReasoningItem,
        ResponseOutputMessage,
        ResponseFunctionToolCall,
        ResponseFunctionShellToolCall,
        ResponseApplyPatchToolCall,
        ResponseCustomToolCall,
    ]
    assert resp.output_text == "Hello there"
    call = resp.output[2]
    assert isinstance(call, ResponseFunctionToolCall)
    assert (call.name, call.call_id, json.loads(call.arguments)) == (
        "get_weather",
        "call_w",
        {"city": "Paris"},
    )
    shell = resp.output[3]
    assert isinstance(shell, ResponseFunctionShellToolCall)
    assert shell.action.commands == ["echo hi", "ls"]
    assert shell.action.timeout_ms == 1000
    patch = resp.output[4]
    assert isinstance(patch, ResponseApplyPatchToolCall)
    assert patch.operation.type == "create_file"
    assert patch.operation.path == "a.txt"
    assert resp.usage is not None
    assert (resp.usage.input_tokens, resp.usage.output_tokens, resp.usage.total_tokens) == (
        30,
        7,
        37,
    )
    assert resp.usage.input_tokens_details.cached_tokens == 4


async def test_default_usage_is_small_and_nonzero(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    responses_server.enqueue([items.message("x")])
    resp = await openai_client.responses.create(model="m", input="hi")
    assert resp.usage is not None
    assert 0 < resp.usage.input_tokens < 100
    assert 0 < resp.usage.output_tokens < 100
    assert resp.usage.total_tokens == resp.usage.input_tokens + resp.usage.output_tokens


def test_sync_client_in_sync_test(responses_server: ResponsesServer) -> None:  # noqa: F811
    responses_server.enqueue([items.message("sync ok")])
    with openai.OpenAI(base_url=responses_server.base_url, api_key="k", max_retries=0) as client:
        assert client.responses.create(model="m", input="hi").output_text == "sync ok"


# -- streaming -------------------------------------------------------------------------------
async def test_stream_event_sequence(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    msg = items.message("The quick brown fox")
    fc = items.function_call("lookup", '{"q":"fox"}')
    sh = items.shell_call("echo hi")
    responses_server.enqueue([msg, fc, sh], id="resp_s")
    stream = await openai_client.responses.create(model="m", input="hi", stream=True)
    events, exc = await _collect(stream)
    assert exc is None
    types = [e.type for e in events]
    n_text = types.count("response.output_text.delta")
    n_args = types.count("response.function_call_arguments.delta")
    assert n_text > 1 and n_args > 1
    assert types == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * n_text,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        *["response.function_call_arguments.delta"] * n_args,
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    args = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert (text, args) == ("The quick brown fox", '{"q":"fox"}')
    added = [e for e in events if e.type == "response.output_item.added"]
    assert added[0].item.status == "in_progress" and added[0].item.content == []
    assert added[1].item.arguments == ""
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert isinstance(done[0], ResponseOutputMessage) and done[0].status == "completed"
    assert isinstance(done[1], ResponseFunctionToolCall) and done[1].call_id == fc["call_id"]
    assert isinstance(done[2], ResponseFunctionShellToolCall)
    assert [e.output_index for e in events if e.type == "response.output_item.done"] == [0, 1, 2]
    final = events[-1]
    assert isinstance(final, ResponseCompletedEvent)
    assert final.response.id == "resp_s" and events[0].response.id == "resp_s"
    assert [o.id for o in final.response.output] == [msg["id"], fc["id"], sh["id"]]
    assert final.response.usage is not None and final.response.usage.total_tokens > 0


async def test_stream_custom_tool_call_input_events(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    ctc = items.custom_tool_call("apply_patch", "*** Begin Patch\n*** End Patch\n")
    responses_server.enqueue([ctc, items.apply_patch_call(PATCH)])
    stream = await openai_client.responses.create(model="m", input="hi", stream=True)
    events, exc = await _collect(stream)
    assert exc is None
    deltas = [e.delta for e in events if e.type == "response.custom_tool_call_input.delta"]
    assert "".join(deltas) == ctc["input"]
    done = [e for e in events if e.type == "response.custom_tool_call_input.done"]
    assert done[0].input == ctc["input"]
    kinds = [e.type for e in events if e.type.startswith("response.output_item")]
    assert kinds == ["response.output_item.added", "response.output_item.done"] * 2


async def test_stream_helper_accumulates_final_response(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    tool = {
        "type": "function",
        "name": "add",
        "description": "Add two ints.",
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
    }
    responses_server.enqueue(
        [
            items.reasoning("plan"),
            items.message("Adding."),
            items.function_call("add", {"a": 2, "b": 3}),
            items.apply_patch_call(PATCH),
        ]
    )
    snapshots = []
    async with openai_client.responses.stream(model="m", input="hi", tools=[tool]) as stream:  # type: ignore[list-item]
        async for event in stream:
            if event.type == "response.output_text.delta":
                snapshots.append(event.snapshot)
        final = await stream.get_final_response()
    assert snapshots[-1] == "Adding." and len(snapshots) > 1
    assert final.output_text == "Adding."
    call = final.output[2]
    assert call.type == "function_call"
    assert call.parsed_arguments == {"a": 2, "b": 3}
    assert final.output[3].type == "apply_patch_call"
    assert responses_server.requests[0].body["stream"] is True
    assert responses_server.requests[0].body["tools"][0]["name"] == "add"


# -- scripting and recording -----------------------------------------------------------------
async def test_requests_are_recorded(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    responses_server.enqueue([items.message("one")])
    responses_server.enqueue([items.message("two")])
    first = await openai_client.responses.create(
        model="m1", input="first", instructions="Be brief."
    )
    second = await openai_client.responses.create(model="m2", input="second", stream=True)
    _, exc = await _collect(second)
    assert exc is None and first.output_text == "one"
    reqs = responses_server.requests
    assert [(r.method, r.path) for r in reqs] == [("POST", "/v1/responses")] * 2
    assert reqs[0].body["model"] == "m1" and reqs[0].body["instructions"] == "Be brief."
    assert reqs[0].body["input"] == "first"
    assert reqs[1].body["stream"] is True and "stream" not in reqs[0].body
    assert reqs[0].headers["authorization"] == "Bearer test-key"
    assert reqs[0].headers["content-type"] == "application/json"
    assert all(r.handling_s > 0 for r in reqs)
    assert responses_server.handling_time_s == pytest.approx(sum(r.handling_s for r in reqs))
    assert responses_server.pending == 0 and responses_server.errors == []


async def test_queue_is_fifo_and_precedes_responder(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    seen: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> ScriptedResponse:
        seen.append(body)
        return ScriptedResponse(output=[items.message(f"dynamic {body['input']}")])

    responses_server.responder = responder
    responses_server.enqueue([items.message("queued A")])
    responses_server.enqueue([items.message("queued B")])
    texts = [
        (await openai_client.responses.create(model="m", input=f"t{i}")).output_text
        for i in range(4)
    ]
    assert texts == ["queued A", "queued B", "dynamic t2", "dynamic t3"]
    assert [b["input"] for b in seen] == ["t2", "t3"]


async def test_concurrent_requests_are_served_in_parallel_threads(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    responses_server.enqueue([items.message("a")], delay_s=0.1)
    responses_server.enqueue([items.message("b")], delay_s=0.1)
    results = await asyncio.gather(
        openai_client.responses.create(model="m", input="1"),
        openai_client.responses.create(model="m", input="2", stream=True),
    )
    assert isinstance(results[0], openai.types.responses.Response)
    events, exc = await _collect(results[1])
    assert exc is None and events[-1].type == "response.completed"
    texts = {results[0].output_text, events[-1].response.output_text}
    assert texts == {"a", "b"}


async def test_nothing_scripted_is_a_clear_500(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    with pytest.raises(openai.InternalServerError, match="scripted no response") as info:
        await openai_client.responses.create(model="m", input="hi")
    assert info.value.code == "no_scripted_response"
    responses_server.responder = lambda body: None
    with pytest.raises(openai.InternalServerError, match="scripted no response"):
        await openai_client.responses.create(model="m", input="hi", stream=True)
    assert len(responses_server.requests) == 2


async def test_responder_exception_surfaces(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    def broken(body: dict[str, Any]) -> None:
        raise KeyError("boom")

    responses_server.responder = broken
    with pytest.raises(openai.InternalServerError, match="responder raised"):
        await openai_client.responses.create(model="m", input="hi")
    assert isinstance(responses_server.errors[0], KeyError)


# -- faults ----------------------------------------------------------------------------------
async def test_enqueued_http_errors_are_served_once(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    responses_server.enqueue_error(500, "kaboom")
    responses_server.enqueue_error(429, "slow down", headers={"retry-after": "7"})
    responses_server.enqueue([items.message("recovered")])
    with pytest.raises(openai.InternalServerError, match="kaboom"):
        await openai_client.responses.create(model="m", input="hi")
    with pytest.raises(openai.RateLimitError, match="slow down") as info:
        await openai_client.responses.create(model="m", input="hi", stream=True)
    assert info.value.response.headers["retry-after"] == "7"
    resp = await openai_client.responses.create(model="m", input="hi")
    assert resp.output_text == "recovered"


@pytest.mark.parametrize("cut", [0, 3, 9])
async def test_cut_stream_never_completes(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
    cut: int,
) -> None:
    responses_server.enqueue(
        [items.message("partial answer"), items.message("more")], cut_after_events=cut
    )
    responses_server.enqueue([items.message("next turn")])
    stream = await openai_client.responses.create(model="m", input="hi", stream=True)
    events, exc = await _collect(stream)
    assert len(events) == cut
    assert "response.completed" not in [e.type for e in events]
    assert isinstance(exc, openai.APIConnectionError)
    # the server keeps serving after a dropped connection
    assert (await openai_client.responses.create(model="m", input="hi")).output_text == "next turn"


async def test_cut_non_streaming_drops_connection(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    responses_server.enqueue([items.message("never")], cut_after_events=0)
    with pytest.raises(openai.APIConnectionError):
        await openai_client.responses.create(model="m", input="hi")


async def test_delay_is_counted_in_handling_time(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    responses_server.enqueue([items.message("late")], delay_s=0.2)
    resp = await openai_client.responses.create(model="m", input="hi")
    assert resp.output_text == "late"
    assert responses_server.requests[0].handling_s >= 0.2
    assert responses_server.handling_time_s >= 0.2


async def test_terminal_failed_and_incomplete_events(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    responses_server.enqueue(
        [items.message("half")], terminal="failed", error_code="rate_limit", error_message="nope"
    )
    responses_server.enqueue([items.message("cut short")], terminal="incomplete")
    stream = await openai_client.responses.create(model="m", input="hi", stream=True)
    events, exc = await _collect(stream)
    assert exc is None
    last = events[-1]
    assert isinstance(last, ResponseFailedEvent)
    assert last.response.status == "failed"
    assert last.response.error is not None and last.response.error.message == "nope"
    assert "response.completed" not in [e.type for e in events]
    stream = await openai_client.responses.create(model="m", input="hi", stream=True)
    events, exc = await _collect(stream)
    last = events[-1]
    assert isinstance(last, ResponseIncompleteEvent)
    assert last.response.incomplete_details is not None
    assert last.response.incomplete_details.reason == "max_output_tokens"


async def test_terminal_error_event_and_no_terminal(
    responses_server: ResponsesServer,  # noqa: F811
    openai_client: Client,  # noqa: F811
) -> None:
    responses_server.enqueue([items.message("x")], terminal="error", error_message="overloaded")
    responses_server.enqueue([items.message("y")], terminal=None)
    responses_server.enqueue([], terminal="error", error_message="overloaded again")
    responses_server.enqueue([items.message("z")], terminal="failed")
    events, exc = await _collect(
        await openai_client.responses.create(model="m", input="hi", stream=True)
    )
    assert exc is None
    assert isinstance(events[-1], ResponseErrorEvent) and events[-1].message == "overloaded"
    events, exc = await _collect(
        await openai_client.responses.create(model="m", input="hi", stream=True)
    )
    assert exc is None and events[-1].type == "response.output_item.done"
    with pytest.raises(openai.InternalServerError, match="overloaded again"):
        await openai_client.responses.create(model="m", input="hi")
    failed = await openai_client.responses.create(model="m", input="hi")
    assert failed.status == "failed" and failed.error is not None


def test_scripted_response_validation() -> None:
    with pytest.raises(ValueError, match="terminal"):
        ScriptedResponse(terminal="done")
    with pytest.raises(ValueError, match="cut_after_events"):
        ScriptedResponse(cut_after_events=-1)
    with pytest.raises(TypeError):
        ResponsesServer().enqueue([], bogus=1)


# -- other clients, endpoints and lifecycle --------------------------------------------------
_SUBPROCESS_CLIENT = r"""
import json, sys, urllib.request
req = urllib.request.Request(
    sys.argv[1] + "/responses",
    data=json.dumps({"model": "gpt-5.5", "stream": True, "input": []}).encode(),
    headers={"content-type": "application/json", "accept": "text/event-stream",
             "authorization": "Bearer local-key", "originator": "codex_exec"},
)
with urllib.request.urlopen(req) as r:
    print(r.headers["content-type"])
    for line in r.read().decode().splitlines():
        if line.startswith("data: "):
            print(json.loads(line[6:])["type"])
"""


def test_subprocess_reads_sse(responses_server: ResponsesServer) -> None:  # noqa: F811
    call = items.function_call("exec_command", {"cmd": "echo hi"})
    responses_server.enqueue([call], id="resp_cli")
    out = subprocess.run(
        [sys.executable, "-c", _SUBPROCESS_CLIENT, responses_server.base_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert out[0] == "text/event-stream"
    assert out[1] == "response.created" and out[-1] == "response.completed"
    assert "response.output_item.done" in out
    rec = responses_server.requests[0]
    assert rec.headers["originator"] == "codex_exec" and rec.body["model"] == "gpt-5.5"


def _http(port: int, method: str, path: str, headers: dict[str, str] | None = None) -> Any:
    """One plain HTTP request; returns ``(status, parsed JSON body)``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=b"{}" if method == "POST" else None, headers=headers or {})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_models_endpoint_websocket_refusal_and_404(
    responses_server: ResponsesServer,  # noqa: F811
) -> None:
    port = responses_server.port
    status, body = _http(port, "GET", "/v1/models")
    assert status == 200 and body["data"][0]["id"] == "test-model"
    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13"}
    status, body = _http(port, "GET", "/v1/responses", upgrade)
    assert status == 426 and "WebSocket" in body["error"]["message"]
    status, body = _http(port, "POST", "/v1/chat/completions")
    assert status == 404
    paths = [r.path for r in responses_server.requests]
    assert paths == ["/v1/models", "/v1/responses", "/v1/chat/completions"]


def test_stop_drops_idle_keepalive_connections_and_joins_threads() -> None:
    server = ResponsesServer().start()
    server.enqueue([items.message("hi")])
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/v1/responses", body=b'{"model": "m", "input": "x"}')
    response = conn.getresponse()
    assert json.loads(response.read())["output"][0]["content"][0]["text"] == "hi"
    assert response.getheader("connection") != "close"  # the connection stays open
    server.stop()
    server.stop()  # idempotent
    conn.close()
    leaked = [t.name for t in threading.enumerate() if t.name.startswith("ResponsesServer")]
    assert leaked == []
    with pytest.raises(ConnectionRefusedError):  # nothing listens any more
        _http(server.port, "GET", "/v1/models")


def test_context_manager_and_base_url() -> None:
    with ResponsesServer() as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert server.port > 0
    with pytest.raises(RuntimeError):
        _ = ResponsesServer().base_url


def test_item_builders() -> None:
    fc = items.function_call("f", {"a": [1, 2]}, namespace="ns")
    assert fc["arguments"] == '{"a":[1,2]}' and fc["namespace"] == "ns"
    assert "namespace" not in items.function_call("f", "{}")
    assert items.function_call("f", "raw", call_id="c1")["call_id"] == "c1"
    sh = items.shell_call("ls")
    assert sh["action"] == {"commands": ["ls"], "timeout_ms": None, "max_output_length": None}
    ids = {items.message("m")["id"] for _ in range(50)}
    assert len(ids) == 50
    assert items.apply_patch_call(PATCH, call_id="c2")["operation"] == PATCH
    assert items.reasoning("r")["summary"] == [{"type": "summary_text", "text": "r"}]
    assert items.usage(3, 4)["total_tokens"] == 7
