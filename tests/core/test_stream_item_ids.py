"""Output items without ids get one id for their whole life (issue 16, core/models/stream_ids)."""

from __future__ import annotations

from typing import Any

from core import Agent, Runner
from core.models.stream_ids import GENERATED_ID_MARK, ItemIds
from tests.support import items


def _id_less(text: str) -> dict[str, Any]:
    item = items.message(text)
    del item["id"]
    return item


async def _stream(agent: Agent[Any]) -> tuple[list[Any], Any]:
    result = Runner.run_streamed(agent, "go")
    events = [e async for e in result.stream_events()]
    return events, result


async def test_streamed_deltas_and_the_finished_message_share_one_id(responses_server, model):
    responses_server.enqueue([_id_less("first answer"), _id_less("second answer")])
    events, result = await _stream(Agent(name="a", model=model))
    deltas = [
        e.data
        for e in events
        if e.type == "raw_response_event" and e.data.type == "response.output_text.delta"
    ]
    created = [
        e.item.raw_item
        for e in events
        if e.type == "run_item_stream_event" and e.name == "message_output_created"
    ]
    assert len(created) == 2
    first, second = (m["id"] for m in created)
    assert first and second and first != second and GENERATED_ID_MARK in first
    # the deltas of each item carry that item's id (the server sent "item_0"/"item_1")
    by_index = {d.output_index: set() for d in deltas}
    for d in deltas:
        by_index[d.output_index].add(d.item_id)
    assert by_index == {0: {first}, 1: {second}}
    # the made-up ids are Tandem's own: the history the next request sends goes without them
    history = [i for i in result.to_input_list() if i.get("type") == "message"]
    assert [i["content"][0]["text"] for i in history[-2:]] == ["first answer", "second answer"]
    assert all("id" not in i for i in history[-2:])


async def test_made_up_ids_never_reach_the_server_and_server_ids_do(responses_server, model):
    from core import function_tool

    @function_tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    call = items.function_call("lookup", {"key": "a"})
    del call["id"]
    responses_server.enqueue([_id_less("thinking aloud"), call])
    responses_server.enqueue([items.message("done", id="msg_server_2")])
    responses_server.enqueue([items.message("again")])
    agent = Agent(name="a", model=model, tools=[lookup])
    first = await Runner.run(agent, "go")
    made_up = [i.raw_item.get("id") for i in first.new_items[:2]]
    assert all(GENERATED_ID_MARK in str(i) for i in made_up)  # the items keep their ids
    await Runner.run(agent, [*first.to_input_list(), {"role": "user", "content": "more"}])
    sent = [r.body["input"] for r in responses_server.responses_requests[1:]]
    for body in sent:
        assert GENERATED_ID_MARK not in str(body)
    assert any(i.get("id") == "msg_server_2" for i in sent[-1])
    calls = [i for i in sent[0] if i.get("type") == "function_call"]
    assert calls and calls[0]["call_id"] == call["call_id"]


async def test_ids_the_server_sends_are_kept(responses_server, model):
    responses_server.enqueue([items.message("hi", id="msg_server_1")])
    events, _result = await _stream(Agent(name="a", model=model))
    raw = [e.data for e in events if e.type == "raw_response_event"]
    assert {d.item_id for d in raw if d.type == "response.output_text.delta"} == {"msg_server_1"}
    created = [e.item.raw_item["id"] for e in events if e.type == "run_item_stream_event"]
    assert created == ["msg_server_1"]


async def test_a_non_streamed_answer_gets_ids_too(responses_server, model):
    responses_server.enqueue([_id_less("one"), _id_less("two")])
    result = await Runner.run(Agent(name="a", model=model), "go")
    ids = [i.raw_item.get("id") for i in result.new_items]
    assert len(ids) == 2 and all(ids) and ids[0] != ids[1]


def test_a_delta_before_its_item_names_it_and_a_retry_starts_over() -> None:
    ids = ItemIds()
    delta = {"type": "response.output_text.delta", "output_index": 0, "item_id": "tmp_0"}
    ids.event(delta)
    done = {"type": "response.output_item.done", "output_index": 0, "item": {"type": "message"}}
    ids.event(done)
    assert done["item"]["id"] == "tmp_0"
    blank = {"type": "response.output_text.delta", "output_index": 0, "item_id": ""}
    ids.event(blank)
    assert blank["item_id"] == "tmp_0"
    ids.event({"type": "response.created"})  # a retried stream: a new response
    again = {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message"}}
    ids.event(again)
    assert again["item"]["id"].startswith("msg" + GENERATED_ID_MARK)
    assert ids.items([{"type": "message"}])[0]["id"] == again["item"]["id"]
    untouched = {"type": "response.completed", "response": {}}
    ids.event(untouched)
    assert untouched == {"type": "response.completed", "response": {}}
