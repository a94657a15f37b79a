"""``tandem sessions list|show ID``: the journaled sessions of the window and of
``tandem run`` (issue 16, Build item 2); ``resume`` runs through :func:`desktop.headless.run_headless`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from harnesses.sessions import JournalError, SessionJournal, default_journal_path

from ..transcript_text import item_lines

__all__ = ["list_sessions", "show_session"]


def list_sessions(
    repo: Path | None, *, journal_path: Path | None = None, out: TextIO = sys.stdout
) -> int:
    """Print one line a session, newest first: ``ID  updated  status  [N events]  title``
    (the repository too when ``repo`` is ``None``: every repository). Returns 0."""
    with SessionJournal(journal_path or default_journal_path()) as journal:
        records = journal.sessions(repo.resolve() if repo is not None else None)
    if not records:
        print("no sessions" + (f" in {repo}" if repo is not None else ""), file=out)
    for record in records:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.updated_at))
        where = f"  {record.repo}" if repo is None else ""
        print(
            f"{record.id}  {when}  {record.status}  [{record.event_count} events]  "
            f"{record.title}{where}",
            file=out,
        )
    return 0


def show_session(
    session_id: str, *, journal_path: Path | None = None, out: TextIO = sys.stdout
) -> int:
    """Print a session's transcript (the lines of ``tandem run``); 1 for an unknown id."""
    with SessionJournal(journal_path or default_journal_path()) as journal:
        try:
            record = journal.session(session_id)
        except JournalError as exc:
            print(f"tandem sessions: {exc}", file=sys.stderr)
            return 1
        events = journal.events(session_id)
    print(f"session {record.id} in {record.repo} ({record.status}): {record.title}", file=out)
    for event in events:
        payload = event.payload
        if event.kind == "user_message":
            print(f"\n> {payload.get('text', '')}", file=out)
        elif event.kind == "approval":
            print(f"  [approval] {payload.get('decision')} {payload.get('call_id')}", file=out)
        elif event.kind in ("run_failed", "run_cancelled"):
            print(f"[{event.kind}] {payload.get('error', '')}".rstrip(), file=out)
        elif isinstance(payload.get("item"), dict):
            for line in item_lines(event.kind, payload["item"], None):
                print(line.rstrip(), file=out)
    return 0
