"""The journal of a ``tandem run`` session: the same events the window journals
(desktop/controller.py, desktop/event_relay.py), so the window lists and opens CLI runs and
``tandem sessions resume`` continues them (issue 16, Build item 2).

Events: ``user_message`` ``{"text"}``; each run item under its stream event name
``{"item": wire dict}``; ``approval`` ``{"call_id", "decision", "message"}``; ``proposal``
and ``proposal_closed`` (desktop/review_journal.py records); ``run_finished``
``{"final_output", "items"}``, ``run_failed`` ``{"error"}``, ``run_cancelled`` ``{}``; ``mode``
``{"mode"}`` (the session's approval mode, :mod:`harnesses.sessions.resume`) and ``owner`` (the
process driving the session). The run state is saved while approvals wait (status
``awaiting_approval``); the end is ``completed``, ``stopped``, ``failed`` or ``cancelled``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from harnesses.sessions import SessionJournal, default_journal_path
from harnesses.sessions.history import rebuild_history

__all__ = ["RunJournal"]

logger = logging.getLogger("desktop")


class RunJournal:
    """One session of the journal, written from the event loop without waiting.

    Args:
        path: the journal database (default: the platform data dir, as the window's).

    Raises:
        harnesses.sessions.JournalError: the database cannot be opened.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.journal = SessionJournal(path or default_journal_path())
        self.session_id = ""

    def start(self, repo: Path, title: str) -> str:
        """Create a new session named after the task; returns its id."""
        self.session_id = self.journal.create_session(repo, " ".join(title.split())[:80])
        self._claim()
        return self.session_id

    def _claim(self) -> None:
        """This process drives the session now (issue 16: an ``owner`` event, so a live run
        is listed ``running`` and a killed one ``interrupted``)."""
        try:
            self.journal.claim_session(self.session_id)
        except Exception:
            logger.exception("journal: the session could not be claimed")

    def reopen(self, session_id: str) -> tuple[list[dict[str, Any]], str | None]:
        """Continue ``session_id``: returns its conversation history and its saved run state
        (JSON text while approvals waited, else ``None``).

        Raises:
            harnesses.sessions.JournalError: no such session.
        """
        self.journal.session(session_id)  # raises for an unknown id
        self.session_id = session_id
        self._claim()
        events = [(e.kind, e.payload) for e in self.journal.events(session_id)]
        return rebuild_history(events), self.journal.load_run_state(session_id)

    def append(self, kind: str, payload: dict[str, Any]) -> None:
        """Queue one event (an error is logged: the journal never stops a run)."""
        if not self.session_id:
            return
        try:
            self.journal.append_nowait(self.session_id, kind, payload)
        except Exception:
            logger.exception("journal append failed")

    def state(self, state: Any, status: str) -> None:
        """Save the paused run's state (``None``: clear it) and the session's status."""
        if not self.session_id:
            return
        text = json.dumps(state.to_json(), ensure_ascii=False) if state is not None else None
        try:
            self.journal.save_state_nowait(self.session_id, text, status)
        except Exception:
            logger.exception("journal run-state save failed")

    def close(self) -> None:
        """Write what is queued and close the database."""
        try:
            self.journal.flush()
        finally:
            self.journal.close()
