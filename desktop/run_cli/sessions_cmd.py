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

__all__ = ["MIN_PREFIX", "SessionIdError", "list_sessions", "resolve_session_id", "show_session"]

MIN_PREFIX = 4
"""Fewest characters of a session id accepted as a prefix (as ``git`` abbreviates hashes)."""


class SessionIdError(Exception):
    """A session id that names no session, or more than one (the message says which)."""


def resolve_session_id(text: str, *, journal_path: Path | None = None) -> str:
    """The full id of the session ``text`` names: the id itself, or a unique prefix of one
    (at least :data:`MIN_PREFIX` characters, as git accepts abbreviated object names).

    Raises:
        SessionIdError: no session has that id or prefix, or several do (ambiguous; the
            message lists them).
    """
    wanted = text.strip()
    with SessionJournal(journal_path or default_journal_path()) as journal:
        try:
            return journal.session(wanted).id
        except JournalError:
            pass
        if len(wanted) < MIN_PREFIX:
            raise SessionIdError(
                f"no session {wanted!r} (give at least {MIN_PREFIX} characters of an id; "
                "`tandem sessions list --all` lists them)"
            ) from None
        hits = [r for r in journal.sessions() if r.id.startswith(wanted)]
    if not hits:
        raise SessionIdError(f"no session {wanted!r} (`tandem sessions list --all` lists them)")
    if len(hits) > 1:
        shown = ", ".join(f"{r.id} ({r.title})" for r in hits[:5])
        more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
        raise SessionIdError(
            f"{wanted!r} is ambiguous: {len(hits)} sessions start with it: {shown}{more}; "
            "give more characters"
        )
    return hits[0].id


def list_sessions(
    repo: Path | None, *, journal_path: Path | None = None, out: TextIO | None = None
) -> int:
    """Print one line a session, newest first: ``ID  updated  status  [N events]  title``
    (the repository too when ``repo`` is ``None``: every repository). The status is the
    journaled one (``completed``, ``stopped``, ``failed``, ``cancelled``,
    ``awaiting_approval``), an ``active`` one shown as ``running`` or ``interrupted``
    (whether a live process still drives it). Returns 0."""
    with SessionJournal(journal_path or default_journal_path()) as journal:
        records = journal.sessions(repo.resolve() if repo is not None else None)
        states = {r.id: _state(journal, r.id, r.status) for r in records}
    if not records:
        print("no sessions" + (f" in {repo}" if repo is not None else ""), file=out)
    for record in records:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.updated_at))
        where = f"  {record.repo}" if repo is None else ""
        print(
            f"{record.id}  {when}  {states[record.id]}  [{record.event_count} events]  "
            f"{record.title}{where}",
            file=out,
        )
    return 0


def _state(journal: SessionJournal, session_id: str, status: str) -> str:
    """The journaled status, except ``active``: ``running`` while a live process drives the
    session, else ``interrupted`` (its process is gone: a crash, a kill; issue 16)."""
    if status != "active":
        return status
    return "running" if journal.owner_alive(session_id) else "interrupted"


def show_session(
    session_id: str, *, journal_path: Path | None = None, out: TextIO | None = None
) -> int:
    """Print a session's transcript (the lines of ``tandem run``); ``session_id`` may be a
    unique prefix (:func:`resolve_session_id`). Returns 0, or 2 (usage, as every
    ``tandem sessions`` action) for an unknown or ambiguous id."""
    out = out or sys.stdout
    try:
        session_id = resolve_session_id(session_id, journal_path=journal_path)
    except SessionIdError as exc:
        print(f"tandem sessions: {exc}", file=sys.stderr)
        return 2
    with SessionJournal(journal_path or default_journal_path()) as journal:
        record = journal.session(session_id)
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
