"""Request bodies built from per-item cached JSON (issue 15, item 4).

The body must equal, byte for byte, the compact serialisation of the whole request today's
runner sent (``input`` last), and the real ``openai`` client must send exactly those bytes.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from core import Agent, ModelSettings, OpenAIResponsesModel, Runner
from core.models.history import InputHistory, dumps_item, join_body
from core.models.interface import ModelRequest
from core.models.openai_responses import build_request_body, build_request_head
from tests.support import items


def _compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


_ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": 'héllo \u2603 "quoted" \\ back\nslash'},
    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a":1}'},
    {"type": "function_call_output", "call_id": "c1", "output": "x" * 5000},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
]


@pytest.mark.parametrize("count", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("head", [{}, {"model": "m"}, {"model": "m", "tools": [], "n": None}])
def test_join_body_equals_one_serialisation(count, head):
    chosen = _ITEMS[:count]
    body = join_body(_compact(head), b"input", [dumps_item(i) for i in chosen])
    assert body == _compact({**head, "input": chosen})
    assert json.loads(body) == {**head, "input": chosen}


def test_each_item_is_serialised_once_and_kept():
    item = {"type": "function_call_output", "call_id": "c1", "output": "before"}
    history = InputHistory([item])
    cached = history.encoded[0]
    item["output"] = "after"  # a later change is not seen: the bytes were made once
    history.append({"role": "user", "content": "next"})
    assert history.encoded[0] is cached
    assert json.loads(history.to_json_bytes())[0]["output"] == "before"
    assert history.byte_size() == len(history.to_json_bytes())


def test_view_shares_the_cached_bytes():
    history = InputHistory(_ITEMS)
    tail = history.view(2)
    assert len(tail) == 2 and tail.items == _ITEMS[2:]
    assert all(a is b for a, b in zip(tail.encoded, history.encoded[2:], strict=True))
    assert json.loads(tail.to_json_bytes()) == _ITEMS[2:]
    assert len(history.view(len(history))) == 0


def test_adopt_takes_items_with_their_bytes():
    full = InputHistory(_ITEMS)
    request = InputHistory([{"role": "user", "content": "summary"}])
    request.adopt(full, 2)
    assert request.items[1:] == _ITEMS[2:]
    assert request.encoded[1] is full.encoded[2] and request.encoded[2] is full.encoded[3]
    assert json.loads(request.to_json_bytes())[1:] == _ITEMS[2:]


def test_replace_serialises_only_the_new_items():
    history = InputHistory(_ITEMS)
    kept = [history.encoded[0], history.encoded[3]]
    summary = {"role": "user", "content": "summary of two items"}
    history.replace(1, 3, [summary])
    assert history.items == [_ITEMS[0], summary, _ITEMS[3]]
    assert history.encoded[0] is kept[0] and history.encoded[2] is kept[1]
    assert json.loads(history.to_json_bytes()) == [_ITEMS[0], summary, _ITEMS[3]]
    history.replace(0, 1)  # drop
    assert history.items == [summary, _ITEMS[3]]


def test_an_unencodable_item_is_refused_and_nothing_is_lost():
    history = InputHistory(_ITEMS[:2])
    with pytest.raises(TypeError):
        history.append({"role": "user", "content": object()})
    with pytest.raises(TypeError):
        history.replace(0, 1, [{"bad": {1, 2}}])
    assert history.items == _ITEMS[:2] and len(history.encoded) == 2
    assert json.loads(history.to_json_bytes()) == _ITEMS[:2]


def _request(**settings: Any) -> ModelRequest:
    return ModelRequest(
        model="m",
        instructions="be brief",
        input=InputHistory(_ITEMS),
        tools=[{"type": "function", "name": "f", "parameters": {}, "strict": True}],
        model_settings=ModelSettings(**settings),
        previous_response_id="resp_1",
    )


@pytest.mark.parametrize("stream", [False, True])
def test_body_bytes_equal_the_whole_request_serialised_once(stream):
    request = _request(temperature=0.5, tool_choice="auto", extra_body={"service_tier": "flex"})
    body = build_request_body(request, stream=stream)
    expected = {**build_request_head(request, stream=stream), "input": _ITEMS}
    assert body == _compact(expected)
    assert list(json.loads(body))[-1] == "input"


def test_an_extra_body_input_does_not_repeat_the_key():
    request = _request(extra_body={"input": "ignored"})
    body = build_request_body(request, stream=False)
    assert body.count(b'"input":') == 1
    assert json.loads(body)["input"] == _ITEMS


async def test_the_openai_client_sends_the_cached_bytes_unchanged(responses_server):
    """The real client posts the assembled bytes as they are, streamed and not."""
    client = openai.AsyncOpenAI(base_url=responses_server.base_url, api_key="k", max_retries=0)
    model = OpenAIResponsesModel("test-model", client)
    try:
        for stream in (False, True):
            responses_server.enqueue([items.message("ok")])
            request = _request()
            expected = build_request_body(_request(), stream=stream)
            if stream:
                async for _event in model.stream_response(request):
                    pass
            else:
                await model.get_response(request)
            assert responses_server.requests[-1].raw == expected
    finally:
        await client.close()


async def test_a_long_run_keeps_every_item_once_in_each_body(responses_server, model):
    """Over many turns each body is the whole history in order, every item exactly once."""
    from core import function_tool

    @function_tool
    def echo(n: int) -> str:
        """Echo."""
        return "é" * n

    turns = 12
    for n in range(turns):
        responses_server.enqueue([items.function_call("echo", {"n": n}, call_id=f"c{n}")])
    responses_server.enqueue([items.message("done")])
    agent = Agent(name="a", model=model, tools=[echo])
    result = await Runner.run(agent, "go", max_turns=turns + 1)
    assert result.final_output == "done"
    for index, recorded in enumerate(responses_server.requests):
        body = recorded.body["input"]
        assert len(body) == 1 + 2 * index
        outputs = [i["output"] for i in body if i.get("type") == "function_call_output"]
        assert outputs == ["é" * n for n in range(index)]
        assert recorded.raw == _compact(recorded.body)  # compact, one key each, input last


# -- the body as chunks: sealed blocks, only the newest items copied -------------------------


def _big(n: int, size: int = 300) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": f"c{n}", "output": "é" * size}


def _joined(history: InputHistory, head: bytes = b'{"model":"m"}') -> bytes:
    return join_body(head, b"input", history.encoded)


def test_chunks_are_the_joined_body_while_blocks_are_sealed(monkeypatch):
    monkeypatch.setattr("core.models.history.BLOCK_BYTES", 2_000)
    history = InputHistory()
    assert b"".join(history.body_chunks(b"{}", b"input")) == b'{"input":[]}'
    for n in range(40):
        history.append(_big(n))
        chunks = history.body_chunks(b'{"model":"m"}', b"input")
        assert b"".join(chunks) == _joined(history)
        assert 0 <= history.sealed < len(history)  # the newest item always stays loose
    assert history.sealed > 30  # blocks were sealed as the items came


def test_a_sealed_block_is_reused_not_copied_again(monkeypatch):
    """Each item's bytes are copied into a block once: later bodies carry the same block
    objects, and the copied tail stays under one block's worth of items."""
    monkeypatch.setattr("core.models.history.BLOCK_BYTES", 2_000)
    history = InputHistory(_big(n) for n in range(10))
    first = history.body_chunks(b"{}", b"input")
    blocks = first[1:-1]
    assert blocks  # 10 x ~620 bytes: sealed
    for n in range(10, 30):
        history.append(_big(n))
        chunks = history.body_chunks(b"{}", b"input")
        assert all(a is b for a, b in zip(chunks[1:], blocks, strict=False))
        assert len(chunks[-1]) < 2_000 + 2 * len(history.encoded[-1])
        assert b"".join(chunks) == _joined(history, b"{}")


@pytest.mark.parametrize(
    ("start", "stop"), [(0, 0), (0, 3), (2, 5), (10, 12), (19, 20), (-3, -1), (5, 2)]
)
def test_replace_drops_the_blocks_it_touches(monkeypatch, start, stop):
    monkeypatch.setattr("core.models.history.BLOCK_BYTES", 1_500)
    source = [_big(n) for n in range(20)]
    history = InputHistory(source)
    history.body_chunks(b"{}", b"input")
    for n in range(20, 24):  # several blocks
        history.append(_big(n))
        history.body_chunks(b"{}", b"input")
    summary = {"role": "user", "content": "summary"}
    expected = list(history.items)
    expected[start:stop] = [summary]
    history.replace(start, stop, [summary])
    assert history.items == expected
    assert json.loads(b"".join(history.body_chunks(b"{}", b"input")))["input"] == expected
    history.append(_big(99))
    assert b"".join(history.body_chunks(b"{}", b"input")) == _joined(history, b"{}")


def test_views_and_adopted_items_chunk_to_the_same_body(monkeypatch):
    monkeypatch.setattr("core.models.history.BLOCK_BYTES", 1_000)
    full = InputHistory(_big(n) for n in range(12))
    full.body_chunks(b"{}", b"input")
    tail = full.view(5)
    assert b"".join(tail.body_chunks(b"{}", b"input")) == _joined(tail, b"{}")
    request = InputHistory([{"role": "user", "content": "summary"}])
    request.adopt(full, 3)
    assert json.loads(b"".join(request.body_chunks(b"{}", b"input")))["input"] == [
        {"role": "user", "content": "summary"},
        *full.items[3:],
    ]


async def test_a_retried_request_sends_the_same_bytes_with_a_length(responses_server):
    """The chunked body goes out under Content-Length (not chunked encoding), and the client's
    own retry of a 500 sends it again, whole."""
    client = openai.AsyncOpenAI(base_url=responses_server.base_url, api_key="k", max_retries=1)
    model = OpenAIResponsesModel("test-model", client)
    history = InputHistory(_big(n, 4_000) for n in range(400))  # 1.6 MB: sealed blocks
    request = ModelRequest(model="m", instructions="hi", input=history)
    expected = build_request_body(request, stream=False)
    try:
        responses_server.enqueue_error(500, "try again", {"retry-after-ms": "1"})
        responses_server.enqueue([items.message("ok")])
        answer = await model.get_response(request)
    finally:
        await client.close()
    assert answer.output[0]["content"][0]["text"] == "ok"
    assert [r.raw for r in responses_server.requests] == [expected, expected]
    for recorded in responses_server.requests:
        assert recorded.headers["content-length"] == str(len(expected))
        assert "transfer-encoding" not in recorded.headers


def test_the_chunked_body_reads_as_a_file_too():
    """A client that reads instead of iterating gets the same bytes, in pieces, and can
    rewind (the ``openai`` client's retry seeks back to where it started)."""
    from core.models.openai_responses import _ChunkedBody

    body = _ChunkedBody([b'{"a":', b"[1,2]", b"}"])
    assert body.length == 11 and body.seekable() and body.tell() == 0
    assert body.read(4) + body.read(4) + body.read() == b'{"a":[1,2]}'
    assert body.read(3) == b"" and body.tell() == 11
    assert body.seek(0) == 0 and body.read(None) == b'{"a":[1,2]}'
    assert body.seek(-1, 2) == 10 and body.read() == b"}"
