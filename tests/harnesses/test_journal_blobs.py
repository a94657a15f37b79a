"""The journal stores each item once (issue 15, Build item 3): events, run ends and run-state
snapshots share one scrubbed copy per session; refs survive any secret; a schema 1 journal
opens and reads as before; the history is rebuilt from run-end markers."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from core.redaction import forget_secrets, redact, register_secret
from harnesses.sessions import REDACTED, SessionJournal
from harnesses.sessions._blobs import _digest
from harnesses.sessions.history import HISTORY_KINDS, rebuild_history


@pytest.fixture
def journal(tmp_path: Path):
    j = SessionJournal(tmp_path / "j" / "sessions.sqlite3")
    yield j
    j.close()


def _output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def _blobs(journal: SessionJournal) -> list[str]:
    with sqlite3.connect(journal.path) as db:
        return [row[0] for row in db.execute("SELECT json FROM blobs")]


def test_an_item_journaled_three_ways_is_stored_once(journal, tmp_path: Path) -> None:
    sid = journal.create_session(tmp_path, "t")
    big = _output("c1", "x" * 200_000)
    journal.append(sid, "tool_output", {"item": big})
    journal.append(sid, "run_finished", {"final_output": "ok", "items": [big, {"role": "user"}]})
    state = {
        "$schemaVersion": "1.0",
        "original_input": [big],
        "generated_items": [{"type": "tool_call_output_item", "raw_item": big}],
        "model_responses": [],
    }
    journal.save_run_state(sid, json.dumps(state))
    journal.save_run_state(sid, state)  # again, as a dict: nothing new is written
    stored = _blobs(journal)
    assert sum(len(b) for b in stored) < 1.1 * len(json.dumps(big))
    assert sum(1 for b in stored if "x" * 1000 in b) == 1
    events = journal.events(sid)
    assert events[0].payload == {"item": big}
    assert events[1].payload["items"] == [big, {"role": "user"}]
    assert json.loads(journal.load_run_state(sid) or "") == state
    size = journal.path.stat().st_size + Path(f"{journal.path}-wal").stat().st_size
    assert size < 3 * len(json.dumps(big))  # the file, not only the table


def test_new_items_of_a_later_snapshot_are_the_only_ones_written(journal, tmp_path) -> None:
    sid = journal.create_session(tmp_path, "t")
    items = [_output(f"c{n}", f"result {n} " * 50) for n in range(20)]
    journal.save_run_state(sid, {"original_input": items[:10], "generated_items": []})
    before = len(_blobs(journal))
    journal.save_run_state(sid, {"original_input": items[:12], "generated_items": []})
    assert len(_blobs(journal)) == before + 2
    assert json.loads(journal.load_run_state(sid) or "")["original_input"] == items[:12]
    journal.save_run_state(sid, None)
    assert journal.load_run_state(sid) is None


def test_a_ref_survives_a_registered_secret_that_occurs_in_it(journal, tmp_path) -> None:
    item = {"type": "message", "role": "assistant", "content": "zzz"}
    ref = _digest(json.dumps(redact(item), ensure_ascii=False))
    secret = ref[3:11]  # 8 hex characters of the item's own hash, absent from the item
    assert secret not in json.dumps(item)
    try:
        register_secret(secret, source="test-blobs")
        sid = journal.create_session(tmp_path, "t")
        journal.append(sid, "message_output_created", {"item": item})
        assert journal.events(sid)[0].payload == {"item": item}
    finally:
        forget_secrets("test-blobs")


def test_a_secret_registered_later_is_scrubbed_from_a_repeated_item(journal, tmp_path) -> None:
    secret = "late-registered-value-7f3a9c"
    item = _output("c1", f"the value is {secret}")
    sid = journal.create_session(tmp_path, "t")
    journal.append(sid, "tool_output", {"item": item})
    try:
        register_secret(secret, source="test-blobs-late")
        journal.append(sid, "tool_output", {"item": item})  # the cache must not skip scrubbing
        second = journal.events(sid)[1].payload["item"]
        assert secret not in json.dumps(second) and REDACTED in second["output"]
    finally:
        forget_secrets("test-blobs-late")


def test_payloads_without_items_and_odd_items_round_trip(journal, tmp_path) -> None:
    sid = journal.create_session(tmp_path, "t")
    odd = [
        {"text": "hello"},
        {"item": "a string, not a dict"},
        {"items": ["x", 3, None, {"role": "user", "content": "hi"}]},
        {"item": {"nested": {"item": {"deep": True}}}, "parent": "call_1"},
    ]
    for payload in odd:
        journal.append(sid, "k", payload)
    assert [e.payload for e in journal.events(sid)] == odd


def test_events_by_kind_and_latest_page(journal, tmp_path) -> None:
    sid = journal.create_session(tmp_path, "t")
    for n in range(30):
        journal.append(sid, "tool_output" if n % 3 else "run_finished", {"n": n})
    assert [e.payload["n"] for e in journal.events(sid, last=4)] == [26, 27, 28, 29]
    ends = journal.events(sid, kinds=["run_finished"], last=2)
    assert [e.payload["n"] for e in ends] == [24, 27]
    assert journal.events(sid, kinds=[]) == []
    assert [e.seq for e in journal.events(sid, after_seq=28)] == [29, 30]


def test_a_schema_1_journal_opens_and_reads_as_before(tmp_path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(
            """
            CREATE TABLE sessions (id TEXT PRIMARY KEY, repo TEXT NOT NULL, title TEXT NOT NULL,
                created_at REAL NOT NULL, updated_at REAL NOT NULL, status TEXT NOT NULL,
                run_state_json TEXT);
            CREATE TABLE events (session_id TEXT NOT NULL REFERENCES sessions (id)
                ON DELETE CASCADE, seq INTEGER NOT NULL, ts REAL NOT NULL, kind TEXT NOT NULL,
                payload_json TEXT NOT NULL, PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
            PRAGMA user_version=1;
            """
        )
        db.execute(
            "INSERT INTO sessions VALUES ('s1', '/r', 'old', 1, 1, 'completed', '{\"a\":1}')"
        )
        history = {"items": [{"role": "user", "content": "old question"}]}
        db.execute("INSERT INTO events VALUES ('s1', 1, 1, 'history', ?)", (json.dumps(history),))
    with SessionJournal(path) as journal:
        assert journal._db.execute("PRAGMA user_version").fetchone()[0] == 2
        assert journal.events("s1")[0].payload == history
        assert journal.load_run_state("s1") == '{"a":1}'
        journal.append("s1", "run_finished", {"items": [{"role": "user", "content": "new"}]})
        pairs = [(e.kind, e.payload) for e in journal.events("s1", kinds=HISTORY_KINDS)]
        assert [i["content"] for i in rebuild_history(pairs)] == ["old question", "new"]


def test_rebuild_history_takes_deltas_in_order_and_skips_damage() -> None:
    user = {"role": "user", "content": "q"}
    reply = {"type": "message", "role": "assistant", "content": []}
    note = {"role": "user", "content": "note"}
    events = [
        ("user_message", {"text": "q"}),
        ("run_finished", {"final_output": "a", "items": [user, reply]}),
        ("history_append", {"items": [note, "junk", 7]}),
        ("run_finished", {"items": "not a list"}),
        ("tool_output", {"items": [user]}),
    ]
    base = [{"role": "user", "content": "before"}]
    assert rebuild_history(events, base) == [*base, user, reply, note]
    assert base == [{"role": "user", "content": "before"}]  # not modified
    assert rebuild_history([("history", {"items": [note]}), *events[1:2]]) == [note, user, reply]
