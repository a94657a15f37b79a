"""SessionJournal: schema and WAL, ordering, redaction, async use, and SIGKILL crash safety."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from harnesses.sessions import (
    REDACTED,
    JournalError,
    SessionJournal,
    default_journal_path,
    redact,
    redact_text,
)

KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUv123456"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def journal(tmp_path: Path):
    j = SessionJournal(tmp_path / "j" / "sessions.sqlite3")
    yield j
    j.close()


def test_opens_in_wal_mode_with_normal_sync(journal: SessionJournal) -> None:
    with sqlite3.connect(journal.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "events"} <= tables
    assert journal._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert oct(journal.path.stat().st_mode & 0o777) == oct(0o600)


def test_default_path_is_in_the_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_journal_path() == tmp_path / "data" / "tandem" / "sessions.sqlite3"
    with SessionJournal() as j:
        assert j.path == default_journal_path()
        assert j.path.exists()


def test_sessions_events_and_status(journal: SessionJournal, tmp_path: Path) -> None:
    repo_a, repo_b = tmp_path / "a", tmp_path / "b"
    repo_a.mkdir()
    repo_b.mkdir()
    s1 = journal.create_session(repo_a, "fix the test")
    s2 = journal.create_session(repo_b, "other")
    assert s1 != s2
    assert journal.append(s1, "user_message", {"text": "hello"}) == 1
    assert journal.append(s1, "tool_call", {"name": "shell", "args": ["ls", "-la"]}) == 2
    assert journal.append(s2, "user_message", {"text": "x"}) == 1

    events = journal.events(s1)
    assert [(e.seq, e.kind) for e in events] == [(1, "user_message"), (2, "tool_call")]
    assert events[1].payload == {"name": "shell", "args": ["ls", "-la"]}
    assert events[0].ts <= events[1].ts
    assert [e.seq for e in journal.events(s1, after_seq=1)] == [2]

    journal.set_status(s2, "completed")
    records = journal.sessions()
    assert {r.id for r in records} == {s1, s2}
    assert records[0].id == s2  # most recently updated first
    (rec_a,) = journal.sessions(repo=str(repo_a) + "/")
    assert rec_a.id == s1 and rec_a.repo == str(repo_a.resolve())
    assert rec_a.event_count == 2 and rec_a.status == "active" and not rec_a.has_run_state
    assert journal.session(s2).status == "completed"


def test_unknown_session_and_bad_input(journal: SessionJournal, tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="no session"):
        journal.append("nope", "x", {})
    with pytest.raises(JournalError, match="no session"):
        journal.events("nope")
    with pytest.raises(JournalError, match="no session"):
        journal.set_status("nope", "completed")
    with pytest.raises(JournalError, match="no session"):
        journal.load_run_state("nope")
    sid = journal.create_session(tmp_path, "t")
    with pytest.raises(JournalError, match="kind"):
        journal.append(sid, "", {})
    with pytest.raises(TypeError):
        journal.append(sid, "x", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(JournalError, match="status"):
        journal.set_status(sid, "Not Valid!")
    assert journal.events(sid) == []


def test_run_state_round_trip(journal: SessionJournal, tmp_path: Path) -> None:
    sid = journal.create_session(tmp_path, "t")
    assert journal.load_run_state(sid) is None
    state = {"$schemaVersion": "1.0", "items": [{"type": "x", "text": f"key {KEY}"}], "n": 3}
    journal.save_run_state(sid, json.dumps(state))
    back = json.loads(journal.load_run_state(sid) or "")
    assert back["n"] == 3 and back["$schemaVersion"] == "1.0"
    assert KEY not in json.dumps(back)
    assert journal.session(sid).has_run_state
    journal.save_run_state(sid, None)
    assert journal.load_run_state(sid) is None
    with pytest.raises(JournalError, match="not JSON"):
        journal.save_run_state(sid, "{broken")


def test_redaction_of_keys_and_strings() -> None:
    @dataclass
    class Call:
        command: str
        token: str

    payload = {
        "api_key": "abc",
        "headers": {"Authorization": "Bearer xyz", "Accept": "json"},
        "OPENAI_API_KEY": "whatever",
        "access_token": "t0k",
        "client_secret": {"nested": "value"},
        "usage": {"input_tokens": 12, "output_tokens": 7, "total_tokens": 19},
        "max_tokens": 100,
        "password": None,
        "text": f"use {KEY} please",
        "cmd": "OPENAI_API_KEY=sk-short GITHUB_TOKEN='ghp abc' make",
        "args": '{"api_key": "plain", "x": 1}',
        "header_line": "Authorization: Bearer abcdefghijkl",
        "list": [KEY, ("t", Path("/tmp/x"))],
        "call": Call("ls", "secret-value"),
        "blob": b"\x00\x01",
    }
    out = redact(payload)
    assert out["api_key"] == REDACTED
    assert out["headers"] == {"Authorization": REDACTED, "Accept": "json"}
    assert out["OPENAI_API_KEY"] == REDACTED
    assert out["access_token"] == REDACTED
    assert out["client_secret"] == REDACTED
    assert out["usage"] == {"input_tokens": 12, "output_tokens": 7, "total_tokens": 19}
    assert out["max_tokens"] == 100
    assert out["password"] is None
    assert out["text"] == f"use {REDACTED} please"
    assert out["cmd"] == f"OPENAI_API_KEY={REDACTED} GITHUB_TOKEN='{REDACTED}' make"
    assert out["args"] == f'{{"api_key": "{REDACTED}", "x": 1}}'
    assert out["header_line"] == f"Authorization: Bearer {REDACTED}"
    assert out["list"] == [REDACTED, ["t", "/tmp/x"]]
    assert out["call"] == {"command": "ls", "token": REDACTED}
    assert out["blob"] == "<2 bytes>"
    json.dumps(out)
    assert redact_text("my key is hunter2hunter2", ["hunter2hunter2"]) == f"my key is {REDACTED}"
    assert redact_text("short ab", ["ab"]) == "short ab"  # too short to scrub blindly
    assert redact_text("sk-short") == "sk-short"  # 5 characters after sk-: not a key shape
    assert redact_text("sk-notlongenough") == REDACTED  # issue 11: short gateway keys too


def test_journal_never_stores_secrets(tmp_path: Path) -> None:
    with SessionJournal(tmp_path / "j.sqlite3", extra_secrets=["custom-secret-42"]) as j:
        sid = j.create_session(tmp_path, f"title with {KEY}")
        j.append(sid, "tool_call", {"api_key": KEY, "text": "x custom-secret-42 y", "k": KEY})
        j.save_run_state(sid, json.dumps({"a": KEY}))
        assert j.events(sid)[0].payload == {
            "api_key": REDACTED,
            "text": f"x {REDACTED} y",
            "k": REDACTED,
        }
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("j.sqlite3"))
    assert KEY.encode() not in raw
    assert b"custom-secret-42" not in raw


def test_redaction_is_the_core_module() -> None:
    import core.redaction

    assert redact is core.redaction.redact
    assert redact_text is core.redaction.redact_text
    assert REDACTED == core.redaction.REDACTED


def test_queued_state_saves_keep_order_and_scrub(tmp_path: Path) -> None:
    with SessionJournal(tmp_path / "q.sqlite3") as j:
        sid = j.create_session(tmp_path, "t")
        j.append_nowait(sid, "e", {"n": 1})
        j.save_state_nowait(sid, json.dumps({"text": f"api_key = \"{KEY}\""}), "awaiting_approval")
        j.append_nowait(sid, "e", {"n": 2})
        j.flush()
        assert [e.payload["n"] for e in j.events(sid)] == [1, 2]
        assert j.session(sid).status == "awaiting_approval"
        assert KEY not in (j.load_run_state(sid) or "")


def test_concurrent_threads_get_distinct_sequence(journal: SessionJournal, tmp_path: Path) -> None:
    sid = journal.create_session(tmp_path, "t")
    seqs: list[int] = []

    def work(n: int) -> None:
        for i in range(25):
            seqs.append(journal.append(sid, "e", {"t": n, "i": i}))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seqs) == list(range(1, 101))
    assert [e.seq for e in journal.events(sid)] == list(range(1, 101))


async def test_async_api_keeps_order_and_does_not_block_the_loop(tmp_path: Path) -> None:
    journal = SessionJournal(tmp_path / "a.sqlite3")
    try:
        sid = await journal.acreate_session(tmp_path, "async")
        main_thread = threading.get_ident()
        writer_threads: set[int] = set()
        original = journal.append

        def spy(*args, **kwargs):
            writer_threads.add(threading.get_ident())
            return original(*args, **kwargs)

        journal.append = spy  # type: ignore[method-assign]
        futures = [journal.append_nowait(sid, "tick", {"i": i}) for i in range(20)]
        seqs = await asyncio.gather(*(journal.aappend(sid, "tock", {"i": i}) for i in range(5)))
        assert [f.result() for f in futures] == list(range(1, 21))
        assert seqs == [21, 22, 23, 24, 25]
        assert main_thread not in writer_threads and len(writer_threads) == 1
        events = await journal.aevents(sid)
        assert [e.payload["i"] for e in events[:20]] == list(range(20))
        await journal.aset_status(sid, "awaiting_approval")
        await journal.asave_run_state(sid, '{"x": 1}')
        assert await journal.aload_run_state(sid) == '{"x": 1}'
        (record,) = await journal.asessions(tmp_path)
        assert record.status == "awaiting_approval" and record.event_count == 25
    finally:
        await journal.aclose()
    with pytest.raises(JournalError, match="closed"):
        await journal.aappend(sid, "late", {})
    with pytest.raises(JournalError, match="closed"):
        journal.append(sid, "late", {})


def test_not_a_database_raises(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(JournalError):
        SessionJournal(bad)
    assert bad.read_bytes().startswith(b"this is not sqlite")


_CHILD = r"""
import sys
from harnesses.sessions import SessionJournal
journal = SessionJournal(sys.argv[1])
sid = sys.argv[2]
i = 0
while True:
    seq = journal.append(sid, "tick", {"i": i, "pad": "x" * 200})
    sys.stdout.write(f"{seq}\n")
    sys.stdout.flush()
    i += 1
"""


def test_sigkill_mid_run_loses_no_committed_event(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite3"
    with SessionJournal(path) as j:
        sid = j.create_session(tmp_path, "crash")
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), sid],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    acknowledged: list[int] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            acknowledged.append(int(line))
            if len(acknowledged) >= 200:
                break
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert acknowledged == list(range(1, 201))

    with SessionJournal(path) as j:
        assert j._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        events = j.events(sid)
        seqs = [e.seq for e in events]
        assert seqs[: len(acknowledged)] == acknowledged  # every acknowledged event is there
        assert seqs == list(range(1, len(seqs) + 1))  # and nothing torn or missing
        assert all(e.payload["i"] == e.seq - 1 for e in events)
        assert j.append(sid, "after", {}) == len(seqs) + 1


def test_flush_waits_for_queued_appends(tmp_path):
    journal = SessionJournal(tmp_path / "j.sqlite3")
    sid = journal.create_session(tmp_path, "flush")
    for n in range(50):
        journal.append_nowait(sid, "tick", {"n": n})
    journal.flush()
    assert [e.payload["n"] for e in journal.events(sid)] == list(range(50))
    journal.close()
