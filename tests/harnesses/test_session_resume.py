"""harnesses.sessions.resume: a session's journaled mode, and dropping a session that never
reached the model (issue 16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnesses.sessions import JournalError, SessionJournal
from harnesses.sessions.resume import discard_if_unused, journaled_mode


def test_the_last_mode_event_wins_then_the_recording_base(tmp_path: Path) -> None:
    with SessionJournal(tmp_path / "j.sqlite3") as journal:
        sid = journal.create_session(tmp_path, "t")
        assert journaled_mode(journal, sid) is None  # the journal does not say
        journal.append(sid, "recording_base", {"mode": "read-only"})
        assert journaled_mode(journal, sid) == "read-only"  # sessions from before mode events
        journal.append(sid, "mode", {"mode": "ask"})
        journal.append(sid, "mode", {"mode": "full"})
        assert journaled_mode(journal, sid) == "full"
        journal.append(sid, "mode", {"mode": "yolo"})
        assert journaled_mode(journal, sid) is None  # not a mode: the caller keeps its own
        with pytest.raises(JournalError):
            journaled_mode(journal, "0" * 32)


def test_a_session_with_only_its_task_is_discarded_one_with_work_is_kept(tmp_path: Path) -> None:
    with SessionJournal(tmp_path / "j.sqlite3") as journal:
        bare = journal.create_session(tmp_path, "no key")
        journal.claim_session(bare)
        for kind, payload in (
            ("user_message", {"text": "no key"}),
            ("mode", {"mode": "ask"}),
            ("run_failed", {"error": "UserError: No OpenAI API key"}),
        ):
            journal.append(bare, kind, payload)
        journal.save_run_state(bare, None)
        worked = journal.create_session(tmp_path, "ran")
        journal.append(worked, "user_message", {"text": "ran"})
        journal.append(worked, "model_response", {"output": []})
        assert discard_if_unused(journal, bare) is True
        assert discard_if_unused(journal, worked) is False
        assert [r.id for r in journal.sessions(tmp_path)] == [worked]
        with pytest.raises(JournalError):
            journal.events(bare)
        assert discard_if_unused(journal, bare) is False  # already gone
        with pytest.raises(JournalError):
            journal.delete_session(bare)
