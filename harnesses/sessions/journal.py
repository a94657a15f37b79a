"""``SessionJournal``: sessions and their events in one SQLite file (WAL), secrets scrubbed."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import platformdirs

from core.redaction import REDACTED, redact, redact_text

from ._blobs import BlobWriter, expand

__all__ = [
    "REDACTED",
    "JournalError",
    "JournalEvent",
    "SessionJournal",
    "SessionRecord",
    "default_journal_path",
    "redact",
    "redact_text",
]

_log = logging.getLogger("harnesses")
_T = TypeVar("_T")

SCHEMA_VERSION = 2
"""``PRAGMA user_version`` of journals this module writes.

Schema 2 stores each conversation item once per session (the ``blobs`` table, see
:mod:`harnesses.sessions._blobs`): an event's ``item`` and ``items`` and a run state's
``original_input``, ``generated_items`` (and their ``raw_item``) and ``model_responses`` (and
the items of their ``output``) are
refs, listed in the row's ``refs``/``run_state_refs`` column. Schema 1 journals (no blobs)
are upgraded in place when opened; their rows read as before."""

EVENT_REF_PATHS = ("item", "items/*")
"""Where an event payload's items sit (stored once per session, by content)."""

RUN_STATE_REF_PATHS = (
    "original_input/*",
    "generated_items/*",
    "generated_items/*/raw_item",
    "model_responses/*",
    "model_responses/*/output/*",
)
"""Where a serialised ``RunState`` (``RunState.to_json()``) holds its items: a snapshot
writes only the items earlier snapshots and events have not stored yet."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    repo TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    status TEXT NOT NULL,
    run_state_json TEXT
);
CREATE INDEX IF NOT EXISTS sessions_by_repo ON sessions (repo, updated_at);
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    ts REAL NOT NULL,
    kind TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    refs TEXT,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blobs (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    json TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS blobs_by_hash ON blobs (session_id, hash);
"""
_ADDED_COLUMNS = (("events", "refs", "TEXT"), ("sessions", "run_state_refs", "TEXT"))
_STATUS = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


class JournalError(Exception):
    """A journal operation failed: unknown session, closed journal, unreadable database."""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One session's row (without its run state, which can be large).

    Attributes:
        id: the session id (32 hex characters).
        repo: the repository folder, as a resolved absolute path string.
        title: human title (scrubbed of secrets).
        created_at: creation time, seconds since the epoch.
        updated_at: time of the last event, status or run-state change, epoch seconds.
        status: e.g. ``"active"``, ``"awaiting_approval"``, ``"completed"``, ``"failed"``,
            ``"cancelled"``.
        event_count: how many events are journaled.
        has_run_state: whether a serialised ``RunState`` is stored (pending approvals).
    """

    id: str
    repo: str
    title: str
    created_at: float
    updated_at: float
    status: str
    event_count: int
    has_run_state: bool


@dataclass(frozen=True, slots=True)
class JournalEvent:
    """One journaled event.

    Attributes:
        session_id: its session.
        seq: 1, 2, 3… within the session, in the order the events were appended.
        ts: when it was appended, seconds since the epoch.
        kind: the event kind given by the caller (e.g. ``"user_message"``, ``"tool_call"``).
        payload: the scrubbed JSON payload.
    """

    session_id: str
    seq: int
    ts: float
    kind: str
    payload: dict[str, Any]


def default_journal_path() -> Path:
    """``<platform data dir>/tandem/sessions.sqlite3`` (honours ``$XDG_DATA_HOME``)."""
    return Path(platformdirs.user_data_dir("tandem", appauthor=False)) / "sessions.sqlite3"


# -- redaction ------------------------------------------------------------------------------
# The redaction itself lives in core.redaction (one door for the journal, logs and output);
# REDACTED, redact and redact_text stay importable from here for existing callers.


# -- the journal ----------------------------------------------------------------------------


class SessionJournal:
    """Sessions and their events in one SQLite database in WAL mode (PRODUCT.md "Sessions").

    Every :meth:`append` is its own committed transaction, so killing the process at any
    moment loses no event whose ``append`` returned; with ``synchronous=NORMAL`` in WAL mode
    a power cut may lose the last few, never corrupt the file. Payloads, titles and run states
    are scrubbed of secrets (:func:`redact`) before they are written.

    Two ways to call it:

    * the plain methods (``append``, ``events``…) block on SQLite; use them from worker
      threads, scripts and tests;
    * the ``a``-prefixed coroutines (``aappend``, ``aevents``…) and :meth:`append_nowait`
      run the same work on one dedicated writer thread, in submission order, so the event
      loop (and the Qt GUI running on it) never waits on the disk.

    All calls share one connection under a lock; the journal is safe to use from several
    threads. Close it with :meth:`close`/:meth:`aclose` (or ``with``/``async with``).

    Args:
        path: the database file (its folder is created, mode 0700); default
            :func:`default_journal_path`.
        extra_secrets: literal secret values (such as the configured API key) to remove
            from everything written, wherever they appear.

    Raises:
        JournalError: the file is not a SQLite database, or WAL mode cannot be enabled.
    """

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, extra_secrets: Iterable[str] = ()
    ) -> None:
        self.path = Path(path) if path is not None else default_journal_path()
        self._secrets = tuple(s for s in extra_secrets if s)
        self._lock = threading.Lock()
        self._closed = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=10.0
            )
        except (OSError, sqlite3.Error) as exc:
            raise JournalError(f"cannot open session journal {self.path}: {exc}") from exc
        try:
            mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise JournalError(f"session journal {self.path}: WAL mode refused ({mode})")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version in (0, 1):
                _upgrade(self._db)
            elif version != SCHEMA_VERSION:
                raise JournalError(
                    f"session journal {self.path} has schema {version}; this Tandem reads "
                    f"schema {SCHEMA_VERSION}"
                )
        except sqlite3.Error as exc:
            self._db.close()
            raise JournalError(f"session journal {self.path} is unreadable: {exc}") from exc
        except JournalError:
            self._db.close()
            raise
        with contextlib.suppress(OSError):
            os.chmod(self.path, 0o600)
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tandem-journal")
        self._blobs = BlobWriter(self._secrets)

    def __repr__(self) -> str:
        return f"SessionJournal({str(self.path)!r})"

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Finish queued writes, then close the database (idempotent)."""
        if self._closed:
            return
        self._writer.shutdown(wait=True)
        with self._lock:
            self._closed = True
            self._db.close()

    async def aclose(self) -> None:
        """:meth:`close` without blocking the event loop."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> SessionJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> SessionJournal:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- blocking API -----------------------------------------------------------------------

    def create_session(self, repo: str | os.PathLike[str], title: str) -> str:
        """Start a session (status ``"active"``) and return its id (32 hex characters).

        Args:
            repo: the repository folder (stored resolved, absolute).
            title: human title; scrubbed of secrets.
        """
        session_id = uuid.uuid4().hex
        now = time.time()
        repo_key = _repo_key(repo)
        clean = redact_text(str(title), self._secrets)
        with self._locked() as db:
            db.execute(
                "INSERT INTO sessions (id, repo, title, created_at, updated_at, status) "
                "VALUES (?, ?, ?, ?, ?, 'active')",
                (session_id, repo_key, clean, now, now),
            )
        return session_id

    def append(self, session_id: str, kind: str, payload: Mapping[str, Any]) -> int:
        """Append one event and commit it before returning.

        Args:
            session_id: an existing session.
            kind: the event kind, a non-empty string.
            payload: a mapping of JSON-compatible values (see :func:`redact` for how other
                values are converted); secrets are scrubbed before writing.

        Returns:
            The event's ``seq`` (1 for the first event of the session).

        Raises:
            JournalError: unknown session, empty kind, or a database failure.
            TypeError: ``payload`` is not a mapping.
        """
        if not isinstance(payload, Mapping):
            raise TypeError(f"payload must be a mapping, not {type(payload).__name__}")
        if not isinstance(kind, str) or not kind.strip():
            raise JournalError("event kind must be a non-empty string")
        now = time.time()
        with self._locked() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                self._require(db, session_id)
                text, refs = self._blobs.scrub_and_split(
                    db, session_id, payload, EVENT_REF_PATHS, by_key=True
                )
                seq = db.execute(
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE session_id = ?",
                    (session_id,),
                ).fetchone()[0]
                db.execute(
                    "INSERT INTO events (session_id, seq, ts, kind, payload_json, refs) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (session_id, seq, now, kind, text, refs),
                )
                db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))
                db.execute("COMMIT")
            except BaseException:
                self._blobs.rolled_back()
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
            self._blobs.committed()
        return int(seq)

    def events(
        self,
        session_id: str,
        *,
        after_seq: int = 0,
        kinds: Iterable[str] | None = None,
        last: int | None = None,
    ) -> list[JournalEvent]:
        """The session's events with ``seq > after_seq``, in order, items filled in.

        Args:
            session_id: the session.
            after_seq: only events after this ``seq``.
            kinds: only events of these kinds (``None``: all).
            last: only the latest this many of those (``None``: all), e.g. the page a
                reopened session shows first.

        Raises:
            JournalError: unknown session.
        """
        query = (
            "SELECT seq, ts, kind, payload_json, refs FROM events WHERE session_id = ? AND seq > ?"
        )
        args: list[Any] = [session_id, after_seq]
        if kinds is not None:
            wanted = list(dict.fromkeys(kinds))
            if not wanted:
                return []
            query += f" AND kind IN ({','.join('?' * len(wanted))})"
            args.extend(wanted)
        if last is not None:
            query = f"SELECT * FROM ({query} ORDER BY seq DESC LIMIT ?) ORDER BY seq"
            args.append(max(0, int(last)))
        else:
            query += " ORDER BY seq"
        with self._locked() as db:
            self._require(db, session_id)
            rows = db.execute(query, args).fetchall()
            payloads = expand(db, session_id, [(json.loads(r[3]), r[4]) for r in rows])
        return [
            JournalEvent(session_id, seq, ts, kind, payload)
            for (seq, ts, kind, _p, _r), payload in zip(rows, payloads, strict=True)
        ]

    def sessions(self, repo: str | os.PathLike[str] | None = None) -> list[SessionRecord]:
        """All sessions (or those of ``repo``), most recently updated first."""
        query = (
            "SELECT s.id, s.repo, s.title, s.created_at, s.updated_at, s.status, "
            "(SELECT COUNT(*) FROM events e WHERE e.session_id = s.id), "
            "s.run_state_json IS NOT NULL FROM sessions s"
        )
        args: tuple[Any, ...] = ()
        if repo is not None:
            query += " WHERE s.repo = ?"
            args = (_repo_key(repo),)
        query += " ORDER BY s.updated_at DESC, s.created_at DESC"
        with self._locked() as db:
            rows = db.execute(query, args).fetchall()
        return [
            SessionRecord(r[0], r[1], r[2], r[3], r[4], r[5], int(r[6]), bool(r[7])) for r in rows
        ]

    def session(self, session_id: str) -> SessionRecord:
        """One session's record.

        Raises:
            JournalError: unknown session.
        """
        with self._locked() as db:
            r = db.execute(
                "SELECT s.id, s.repo, s.title, s.created_at, s.updated_at, s.status, "
                "(SELECT COUNT(*) FROM events e WHERE e.session_id = s.id), "
                "s.run_state_json IS NOT NULL FROM sessions s WHERE s.id = ?",
                (session_id,),
            ).fetchone()
        if r is None:
            raise JournalError(f"no session {session_id!r} in {self.path}")
        return SessionRecord(r[0], r[1], r[2], r[3], r[4], r[5], int(r[6]), bool(r[7]))

    def save_run_state(self, session_id: str, state_json: str | Mapping[str, Any] | None) -> None:
        """Store the serialised ``RunState`` (``RunState.to_string()`` text, its
        ``to_json()`` dict or a :class:`core.run_state_snapshot.SnapshotMemo` snapshot), or
        clear it with ``None``. String values inside are scrubbed of secret patterns (keys are
        kept so the state still loads). The snapshot is incremental: its items
        (:data:`RUN_STATE_REF_PATHS`) that the session already stored (earlier snapshots,
        events) are not written or scrubbed again. Pass the dict, not the text: the text is
        parsed whole here, while a memo snapshot's items are known by identity (frozen items
        of earlier snapshots cost a lookup; new ones are hashed from the JSON text they carry,
        and scrubbed unless an event already stored them). The stored rows, and what
        :meth:`load_run_state` returns, are the same for the three forms.

        Raises:
            JournalError: unknown session, or ``state_json`` is not valid JSON.
        """
        if state_json is None:
            with self._locked() as db:
                cursor = db.execute(
                    "UPDATE sessions SET run_state_json = NULL, run_state_refs = NULL, "
                    "updated_at = ? WHERE id = ?",
                    (time.time(), session_id),
                )
                if cursor.rowcount == 0:
                    raise JournalError(f"no session {session_id!r} in {self.path}")
            return
        data: Any = state_json
        if not isinstance(state_json, Mapping):
            try:
                data = json.loads(state_json)
            except (TypeError, ValueError) as exc:
                raise JournalError(f"run state of session {session_id} is not JSON: {exc}") from exc
        with self._locked() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                self._require(db, session_id)
                text, refs = self._blobs.scrub_and_split(
                    db, session_id, data, RUN_STATE_REF_PATHS, by_key=False
                )
                db.execute(
                    "UPDATE sessions SET run_state_json = ?, run_state_refs = ?, updated_at = ? "
                    "WHERE id = ?",
                    (text, refs, time.time(), session_id),
                )
                db.execute("COMMIT")
            except BaseException:
                self._blobs.rolled_back()
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
            self._blobs.committed()

    def load_run_state(self, session_id: str) -> str | None:
        """The stored run state JSON, or ``None``.

        Raises:
            JournalError: unknown session.
        """
        with self._locked() as db:
            row = db.execute(
                "SELECT run_state_json, run_state_refs FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                raise JournalError(f"no session {session_id!r} in {self.path}")
            if row[0] is None or row[1] is None:
                return row[0] if row[0] is None else str(row[0])
            (state,) = expand(db, session_id, [(json.loads(row[0]), row[1])])
        return json.dumps(state, ensure_ascii=False)

    def set_status(self, session_id: str, status: str) -> None:
        """Set the session's status: a short lowercase word such as ``"active"``,
        ``"awaiting_approval"``, ``"completed"``, ``"failed"`` or ``"cancelled"``.

        Raises:
            JournalError: unknown session, or a status that is not ``[a-z][a-z0-9_-]{0,31}``.
        """
        if not isinstance(status, str) or not _STATUS.match(status):
            raise JournalError(f"bad session status {status!r}")
        self._update(session_id, "status", status)

    def rename_session(self, session_id: str, title: str) -> str:
        """Give the session a new title (issue 16: sessions are named from their first task
        and renamed in the sessions list); returns the stored (scrubbed, one-line) title.

        Raises:
            JournalError: unknown session, or a title that is empty once stripped.
        """
        clean = " ".join(redact_text(str(title), self._secrets).split())
        if not clean:
            raise JournalError("a session title cannot be empty")
        self._update(session_id, "title", clean)
        return clean

    def delete_session(self, session_id: str) -> None:
        """Remove the session, its events, blobs and run state (issue 16: a CLI run that a
        usage error stopped before the model leaves no session behind).

        Raises:
            JournalError: unknown session.
        """
        with self._locked() as db:
            self._require(db, session_id)
            db.execute("BEGIN IMMEDIATE")
            try:
                for table, column in (("events", "session_id"), ("blobs", "session_id")):
                    db.execute(f"DELETE FROM {table} WHERE {column} = ?", (session_id,))
                db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
                db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise

    def claim_session(self, session_id: str) -> None:
        """Journal that this process now drives the session (an ``owner`` event: pid and
        the process's start time), so :meth:`owner_alive` can tell a running session from
        one whose process is gone (issue 16: "interrupted").

        Raises:
            JournalError: unknown session.
        """
        self.append(session_id, "owner", {"pid": os.getpid(), "start": _process_start(os.getpid())})

    def owner_alive(self, session_id: str) -> bool:
        """Whether the process of the session's latest ``owner`` event still runs (same pid,
        same start time); ``False`` when no process ever claimed it.

        Raises:
            JournalError: unknown session.
        """
        owners = self.events(session_id, kinds=["owner"], last=1)
        if not owners:
            return False
        payload = owners[0].payload
        try:
            pid = int(payload.get("pid", 0))
        except (TypeError, ValueError):
            return False
        if pid <= 0:
            return False
        start = _process_start(pid)
        if start is None and not os.path.exists("/proc/self/stat"):  # no /proc: is it there?
            try:
                os.kill(pid, 0)
            except OSError:
                return False
            return True
        return start == payload.get("start")

    # -- non-blocking API -------------------------------------------------------------------

    def append_nowait(self, session_id: str, kind: str, payload: Mapping[str, Any]) -> Future[int]:
        """Queue :meth:`append` on the writer thread and return at once (for Qt slots).

        Events queued this way are written in call order. The returned future holds the
        ``seq`` or the error; an error is also logged (without the payload).
        """
        future = self._submit(self.append, session_id, kind, payload)
        future.add_done_callback(_log_failure)
        return future

    def save_state_nowait(
        self, session_id: str, state_json: str | Mapping[str, Any] | None, status: str
    ) -> Future[None]:
        """Queue :meth:`save_run_state` then :meth:`set_status` on the writer thread and
        return at once, so scrubbing a large run state never runs on the GUI thread. A dict
        is read when the write runs: pass one nothing changes afterwards (a
        :class:`core.run_state_snapshot.SnapshotMemo` snapshot: fresh containers, frozen
        items).

        Written in call order with :meth:`append_nowait`; :meth:`flush` waits for it. An
        error is logged (without the state).
        """

        def work() -> None:
            self.save_run_state(session_id, state_json)
            self.set_status(session_id, status)

        future = self._submit(work)
        future.add_done_callback(_log_failure)
        return future

    def set_status_nowait(self, session_id: str, status: str) -> Future[None]:
        """Queue :meth:`set_status` on the writer thread (in order with the other queued
        writes) and return at once; an error is logged."""
        future = self._submit(self.set_status, session_id, status)
        future.add_done_callback(_log_failure)
        return future

    def flush(self, timeout: float | None = 10.0) -> None:
        """Wait until every write queued with :meth:`append_nowait` is committed.

        Raises:
            TimeoutError: the writer thread did not catch up within ``timeout`` seconds.
        """
        self._submit(lambda: None).result(timeout)

    async def acreate_session(self, repo: str | os.PathLike[str], title: str) -> str:
        """:meth:`create_session` on the writer thread."""
        return await self._run(self.create_session, repo, title)

    async def aappend(self, session_id: str, kind: str, payload: Mapping[str, Any]) -> int:
        """:meth:`append` on the writer thread (in order with other queued writes)."""
        return await self._run(self.append, session_id, kind, payload)

    async def aevents(self, session_id: str, *, after_seq: int = 0) -> list[JournalEvent]:
        """:meth:`events` on the writer thread (sees every write queued before it)."""
        return await self._run(functools.partial(self.events, after_seq=after_seq), session_id)

    async def asessions(self, repo: str | os.PathLike[str] | None = None) -> list[SessionRecord]:
        """:meth:`sessions` on the writer thread."""
        return await self._run(self.sessions, repo)

    async def asave_run_state(
        self, session_id: str, state_json: str | Mapping[str, Any] | None
    ) -> None:
        """:meth:`save_run_state` on the writer thread."""
        await self._run(self.save_run_state, session_id, state_json)

    async def aload_run_state(self, session_id: str) -> str | None:
        """:meth:`load_run_state` on the writer thread."""
        return await self._run(self.load_run_state, session_id)

    async def aset_status(self, session_id: str, status: str) -> None:
        """:meth:`set_status` on the writer thread."""
        await self._run(self.set_status, session_id, status)

    # -- internals --------------------------------------------------------------------------

    def _submit(self, fn: Callable[..., _T], *args: Any) -> Future[_T]:
        if self._closed:
            raise JournalError(f"session journal {self.path} is closed")
        try:
            return self._writer.submit(fn, *args)
        except RuntimeError as exc:  # shut down between the check and the submit
            raise JournalError(f"session journal {self.path} is closed") from exc

    async def _run(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.wrap_future(self._submit(fn, *args))

    def _locked(self) -> _Locked:
        return _Locked(self)

    def _require(self, db: sqlite3.Connection, session_id: str) -> None:
        if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
            raise JournalError(f"no session {session_id!r} in {self.path}")

    def _update(self, session_id: str, column: str, value: Any) -> None:
        with self._locked() as db:
            cursor = db.execute(
                f"UPDATE sessions SET {column} = ?, updated_at = ? WHERE id = ?",
                (value, time.time(), session_id),
            )
            if cursor.rowcount == 0:
                raise JournalError(f"no session {session_id!r} in {self.path}")


class _Locked:
    """``with journal._locked() as db``: the connection under the lock, errors wrapped."""

    __slots__ = ("_journal",)

    def __init__(self, journal: SessionJournal) -> None:
        self._journal = journal

    def __enter__(self) -> sqlite3.Connection:
        self._journal._lock.acquire()
        if self._journal._closed:
            self._journal._lock.release()
            raise JournalError(f"session journal {self._journal.path} is closed")
        return self._journal._db

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self._journal._lock.release()
        if isinstance(exc, sqlite3.Error):
            raise JournalError(f"session journal {self._journal.path}: {exc}") from exc


def _upgrade(db: sqlite3.Connection) -> None:
    """Create schema 2, or upgrade a schema 1 journal to it (columns added, rows kept)."""
    db.executescript(_SCHEMA)
    for table, column, kind in _ADDED_COLUMNS:
        names = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if column not in names:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def _repo_key(repo: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(repo))


def _log_failure(future: Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        _log.error("journal append failed: %s", future.exception())


def _process_start(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/PID/stat`` field
    22), ``None`` without ``/proc`` or for a process that is gone (or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    if len(fields) < 20 or fields[0] == "Z":  # fields[0] is the state, [19] the start time
        return None
    try:
        return int(fields[19])
    except ValueError:
        return None
