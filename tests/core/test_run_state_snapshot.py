"""Approval-pause snapshots (issue 15, Build item 3): ``SnapshotMemo.snapshot(state)`` is
``state.to_json()`` (the same JSON text), each item frozen once and handed back as the same
object by later snapshots, even of a deep copy; a changed item is frozen again."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from core.agent import Agent
from core.context import RunContextWrapper
from core.items import (
    MessageOutputItem,
    ModelResponse,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
)
from core.run_state import RunState
from core.run_state_snapshot import FrozenJson, SnapshotMemo

AGENT: Agent[Any] = Agent(name="main")


class _Opaque:
    def __str__(self) -> str:
        return "opaque tool result"


def _call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "run", "arguments": "{}"}


def _out(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def _state(history: list[dict[str, Any]], *, output: Any = "done") -> RunState:
    call, message = (
        _call("c1"),
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}],
        },
    )
    pending = _call("c2")
    context: RunContextWrapper[Any] = RunContextWrapper(context={"ticket": 7})
    context._nested_runs = {"n1": {"$schemaVersion": "1.0", "original_input": "hi"}}
    return RunState(
        current_agent=AGENT,
        original_input=copy.deepcopy(history),  # as core._loop does with a list input
        context=context,
        generated_items=[
            MessageOutputItem(agent=AGENT, raw_item=message),
            ToolCallItem(agent=AGENT, raw_item=call),
            ToolCallOutputItem(agent=AGENT, raw_item=_out("c1", "done"), output=output),
            ToolApprovalItem(agent=AGENT, raw_item=pending, tool_name="run", arguments="{}"),
        ],
        model_responses=[
            ModelResponse(output=[message, call], usage={"input_tokens": 3}, response_id="r1"),
            ModelResponse(output=[pending], usage=None, response_id="r2", request_id="q"),
        ],
        last_model_output=[pending],
        current_turn=2,
        tool_use_tracker={"main": True},
    )


HISTORY = [
    {"role": "user", "content": "fix the test"},
    _call("c0"),
    _out("c0", "line 1\nline 2 ünïcode"),
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
    {"role": "user", "content": "and again", "n": 1, "f": 1.5, "b": True, "z": None},
]


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def test_a_snapshot_is_to_json_as_json_text() -> None:
    state = _state(HISTORY)
    memo = SnapshotMemo()
    assert _text(memo.snapshot(state)) == _text(state.to_json())
    assert _text(memo.snapshot(state)) == _text(state.to_json())  # and again, from the memo
    text_state = _state([])
    text_state.original_input = "a plain prompt"
    assert _text(memo.snapshot(text_state)) == _text(text_state.to_json())


def test_a_tool_output_json_cannot_hold_is_its_text_as_in_to_json() -> None:
    state = _state(HISTORY, output=_Opaque())
    snap = SnapshotMemo().snapshot(state)
    assert snap["generated_items"][2]["output"] == "opaque tool result"
    assert _text(snap) == _text(state.to_json())
    listed = _state(HISTORY, output=["a", {"b": 1}])
    assert SnapshotMemo().snapshot(listed)["generated_items"][2]["output"] == ["a", {"b": 1}]


def test_items_are_frozen_with_their_json_text() -> None:
    snap = SnapshotMemo().snapshot(_state(HISTORY))
    items = [
        *snap["original_input"],
        *snap["generated_items"],
        *(i["raw_item"] for i in snap["generated_items"]),
        *snap["model_responses"],
        *(o for r in snap["model_responses"] for o in r["output"]),
    ]
    assert all(isinstance(i, FrozenJson) for i in items)
    for item in snap["original_input"]:
        assert item.json_text == _text(dict(item))
    frozen = snap["original_input"][0]
    with pytest.raises(TypeError):
        frozen["role"] = "system"
    with pytest.raises(TypeError):
        frozen.update(role="system")
    with pytest.raises(TypeError):
        del frozen["role"]
    copied = copy.deepcopy(frozen)
    copied["role"] = "system"  # a deep copy is a plain dict
    assert frozen["role"] == "user"
    assert pickle.loads(pickle.dumps(frozen)) == frozen


def test_later_snapshots_hand_back_the_same_frozen_items_even_of_a_deep_copy() -> None:
    memo = SnapshotMemo()
    first = memo.snapshot(_state(HISTORY))
    again = memo.snapshot(_state(HISTORY))  # new dicts (a deep copy), new run items
    for a, b in zip(first["original_input"], again["original_input"], strict=True):
        assert a is b
    # the model response's output items are the run items' raw items: one frozen object
    assert first["model_responses"][0]["output"][1] is first["generated_items"][1]["raw_item"]
    state = _state(HISTORY)
    one, two = memo.snapshot(state), memo.snapshot(state)
    assert all(a is b for a, b in zip(one["generated_items"], two["generated_items"], strict=True))
    assert all(a is b for a, b in zip(one["model_responses"], two["model_responses"], strict=True))


def test_the_next_run_reuses_what_the_last_pause_froze() -> None:
    memo = SnapshotMemo()
    state = _state(HISTORY)
    first = memo.snapshot(state)
    next_input = [*HISTORY, *(i.to_input_item() for i in state.generated_items[:3])]
    later = memo.snapshot(_state([*next_input, {"role": "user", "content": "next"}]))
    frozen_raw = [g["raw_item"] for g in first["generated_items"][:3]]
    assert later["original_input"][len(HISTORY) : len(HISTORY) + 3] == frozen_raw
    assert all(
        a is b for a, b in zip(later["original_input"][len(HISTORY) :], frozen_raw, strict=False)
    )


def test_a_changed_item_is_frozen_again() -> None:
    memo = SnapshotMemo()
    state = _state(HISTORY)
    before = memo.snapshot(state)
    state.original_input[0]["content"] = "another task"  # an in-place change at the top level
    state.generated_items[1].raw_item = _call("c9")  # a field replaced
    after = memo.snapshot(state)
    assert after["original_input"][0] is not before["original_input"][0]
    assert after["original_input"][0].json_text == _text(state.original_input[0])
    assert after["generated_items"][1]["raw_item"]["call_id"] == "c9"
    assert after["original_input"][1] is before["original_input"][1]
    assert _text(after) == _text(state.to_json())


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"v": 1}, {"v": True}),
        ({"v": 1}, {"v": 1.0}),
        ({"v": 0.0}, {"v": -0.0}),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ({"v": ["x"]}, {"v": "x"}),
        ({"v": None}, {"v": "None"}),
    ],
    ids=["int-bool", "int-float", "zero-signs", "key-order", "list-str", "null-str"],
)
def test_values_with_different_json_text_are_never_taken_for_each_other(
    a: dict[str, Any], b: dict[str, Any]
) -> None:
    memo = SnapshotMemo()
    state = _state([a])
    memo.snapshot(state)
    state.original_input = [b]
    (frozen,) = memo.snapshot(state)["original_input"]
    assert frozen.json_text == _text(b) != _text(a)


def test_a_value_json_cannot_hold_is_left_as_it_is() -> None:
    odd = {"role": "user", "content": {1, 2}}
    state = _state([{"role": "user", "content": "ok"}])
    state.original_input = [odd]
    snap = SnapshotMemo().snapshot(state)
    assert snap["original_input"][0] is odd
    with pytest.raises(TypeError):
        state.to_string()  # as before: to_json keeps what it was given


def test_the_memo_keeps_only_what_the_latest_snapshot_used() -> None:
    memo = SnapshotMemo()
    memo.snapshot(_state([{"role": "user", "content": f"m{i}"} for i in range(50)]))
    assert len(memo) >= 50
    memo.snapshot(_state([{"role": "user", "content": "only"}]))
    assert len(memo) < 10


async def test_a_snapshot_loads_back_as_the_state() -> None:
    state = _state(HISTORY)
    snap = SnapshotMemo().snapshot(state)
    restored = await RunState.from_json(AGENT, json.loads(_text(snap)))
    assert _text(restored.to_json()) == _text(state.to_json())
    assert [i.call_id for i in restored.get_interruptions()] == ["c2"]
