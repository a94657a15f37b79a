"""Approval-pause snapshots in the journal (issue 15, Build item 3): a ``SnapshotMemo`` dict is
stored byte for byte as the state's text or ``to_json()`` dict was; frozen items seen before
cost a lookup, not a hash or a scrub; every string is still scrubbed, and again when the
registered secrets change; a restored state resumes."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from core.agent import Agent
from core.context import RunContextWrapper
from core.items import ModelResponse, ToolApprovalItem, ToolCallItem, ToolCallOutputItem
from core.redaction import register_secret
from core.run_state import RunState
from core.run_state_snapshot import SnapshotMemo
from harnesses.sessions import SessionJournal, _blobs

AGENT: Agent[Any] = Agent(name="main")
SECRET = "sk-proj-" + "Q7x" * 12


def _run(n: int) -> list[dict[str, Any]]:
    call = {"type": "function_call", "call_id": f"c{n}", "name": "run", "arguments": "{}"}
    text = f"run {n} output\n" * 200 + f"token={SECRET}\n"
    return [
        {"role": "user", "content": f"task {n}"},
        call,
        {"type": "function_call_output", "call_id": f"c{n}", "output": text},
    ]


def _paused(history: list[dict[str, Any]], added: list[dict[str, Any]]) -> RunState:
    """A run paused for approval after ``added[1:]``, as ``core._loop`` builds it."""
    pending = {"type": "function_call", "call_id": "p", "name": "shell", "arguments": "{}"}
    call, out = added[1], added[2]
    return RunState(
        current_agent=AGENT,
        original_input=copy.deepcopy([*history, added[0]]),
        context=RunContextWrapper(context=None),
        generated_items=[
            ToolCallItem(agent=AGENT, raw_item=call),
            ToolCallOutputItem(agent=AGENT, raw_item=out, output=out["output"]),
            ToolApprovalItem(agent=AGENT, raw_item=pending, tool_name="shell", arguments="{}"),
        ],
        model_responses=[ModelResponse(output=[call, pending], usage=None, response_id="r")],
        last_model_output=[pending],
        current_turn=1,
    )


def _rows(journal: SessionJournal) -> tuple[Any, ...]:
    with sqlite3.connect(journal.path) as db:
        state = db.execute("SELECT run_state_json, run_state_refs FROM sessions").fetchone()
        blobs = sorted(db.execute("SELECT hash, json FROM blobs").fetchall())
    return state, blobs


@pytest.fixture
def journals(tmp_path: Path):
    opened = {
        w: SessionJournal(tmp_path / w / "sessions.sqlite3") for w in ("text", "dict", "memo")
    }
    yield opened
    for journal in opened.values():
        journal.close()


def test_a_memo_snapshot_is_stored_byte_for_byte_as_the_text_was(journals, tmp_path) -> None:
    sids = {w: j.create_session(tmp_path, "t") for w, j in journals.items()}
    memo = SnapshotMemo()
    history: list[dict[str, Any]] = []
    for n in range(1, 5):
        added = _run(n)
        for w, journal in journals.items():
            journal.append(sids[w], "tool_output", {"item": added[2]})
        state = _paused(history, added)
        forms = {"text": state.to_string(), "dict": state.to_json(), "memo": memo.snapshot(state)}
        for w, journal in journals.items():
            journal.save_run_state(sids[w], forms[w])
        loaded = {w: j.load_run_state(sids[w]) for w, j in journals.items()}
        assert loaded["memo"] == loaded["text"] == loaded["dict"]
        assert _rows(journals["memo"]) == _rows(journals["text"]) == _rows(journals["dict"])
        assert SECRET not in (loaded["memo"] or "")
        history.extend(added)


async def test_a_restored_snapshot_resumes_as_the_paused_state(journals, tmp_path) -> None:
    journal = journals["memo"]
    sid = journal.create_session(tmp_path, "t")
    state = _paused([], _run(1))
    journal.save_run_state(sid, SnapshotMemo().snapshot(state))
    restored = await RunState.from_string(AGENT, journal.load_run_state(sid) or "")
    assert [i.call_id for i in restored.get_interruptions()] == ["p"]
    assert len(restored.generated_items) == 3
    assert restored.generated_items[1].raw_item["output"].startswith("run 1 output")


def test_frozen_items_seen_before_cost_no_hash_and_no_scrub(
    journals, tmp_path, monkeypatch
) -> None:
    journal = journals["memo"]
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    history = [*_run(1), *_run(2)]
    journal.save_run_state(sid, memo.snapshot(_paused(history, _run(3))))
    digests: list[str] = []
    real = _blobs._digest

    def counting(text: str) -> str:
        digests.append(text)
        return real(text)

    monkeypatch.setattr(_blobs, "_digest", counting)
    state = _paused(history, _run(3))  # the next pause: new dicts, new run items
    journal.save_run_state(sid, memo.snapshot(state))
    # only the new run items' and model responses' wrappers are hashed (once each), no wire
    # item (frozen before)
    wire = {json.dumps(i, ensure_ascii=False) for i in [*history, *_run(3)]}
    assert digests and not wire & set(digests)
    wrappers = [json.loads(d) for d in digests]
    assert all(w.get("type", "").endswith("_item") or "response_id" in w for w in wrappers)
    digests.clear()
    journal.save_run_state(sid, memo.snapshot(state))  # the same state paused again
    assert digests == []
    journal.save_run_state(sid, state.to_json())  # a plain dict: every input item hashed again
    assert {json.dumps(i, ensure_ascii=False) for i in [*history, _run(3)[0]]} <= set(digests)


def test_a_secret_registered_after_a_frozen_item_was_stored_is_scrubbed(journals, tmp_path):
    journal = journals["memo"]
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    late = "late-secret-" + "z" * 20
    history = [{"role": "user", "content": f"remember {late}"}]
    journal.save_run_state(sid, memo.snapshot(_paused(history, _run(1))))
    assert late in (journal.load_run_state(sid) or "")
    register_secret(late, source="test:late")
    journal.save_run_state(sid, memo.snapshot(_paused(history, _run(1))))
    stored = journal.load_run_state(sid) or ""
    assert late not in stored
    assert "remember [REDACTED]" in stored


def test_another_journal_scrubs_a_frozen_item_with_its_own_secrets(tmp_path) -> None:
    own = "journal-b-key-" + "k" * 16
    memo = SnapshotMemo()
    snap = memo.snapshot(_paused([{"role": "user", "content": f"use {own}"}], _run(1)))
    with SessionJournal(tmp_path / "a.sqlite3") as a:
        a.save_run_state(a.create_session(tmp_path, "a"), snap)
    with SessionJournal(tmp_path / "b.sqlite3", extra_secrets=[own]) as b:
        sid = b.create_session(tmp_path, "b")
        b.save_run_state(sid, snap)
        assert own not in (b.load_run_state(sid) or "")


def test_a_rolled_back_save_notes_nothing_on_the_frozen_items(journals, tmp_path) -> None:
    journal = journals["memo"]
    sid = journal.create_session(tmp_path, "t")
    snap = SnapshotMemo().snapshot(_paused([], _run(1)))
    with sqlite3.connect(journal.path) as db:  # the blobs table refuses every write
        db.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON blobs BEGIN SELECT RAISE(ABORT, 'no'); END"
        )
    with pytest.raises(Exception, match="no"):
        journal.save_run_state(sid, snap)
    assert all(not item.memo for item in snap["original_input"])
    with sqlite3.connect(journal.path) as db:
        db.execute("DROP TRIGGER refuse")
    journal.save_run_state(sid, snap)  # the items are written now, not taken as stored
    assert "run 1 output" in (journal.load_run_state(sid) or "")


@pytest.mark.parametrize("form", ["memo", "dict"])
def test_an_item_held_twice_in_one_state_is_scrubbed_once(journals, tmp_path, monkeypatch, form):
    journal = journals[form]
    sid = journal.create_session(tmp_path, "t")
    state = _paused([], _run(1))  # the call is a run item's raw item and a response's output
    seen: list[Any] = []
    real = _blobs.redact

    def counting(value: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(value)
        return real(value, *args, **kwargs)

    monkeypatch.setattr(_blobs, "redact", counting)
    journal.save_run_state(
        sid, SnapshotMemo().snapshot(state) if form == "memo" else state.to_json()
    )
    calls = [v for v in seen if isinstance(v, dict) and v.get("call_id") == "p"]
    assert len(calls) == 1
    loaded = json.loads(journal.load_run_state(sid) or "")
    assert loaded["model_responses"][0]["output"][1]["call_id"] == "p"
    assert loaded["generated_items"][2]["raw_item"]["call_id"] == "p"
