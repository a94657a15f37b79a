"""Session journals: every run event appended to SQLite (WAL) as it happens."""

from .history import HISTORY_KINDS, rebuild_history
from .journal import (
    REDACTED,
    JournalError,
    JournalEvent,
    SessionJournal,
    SessionRecord,
    default_journal_path,
    redact,
    redact_text,
)

__all__ = [
    "HISTORY_KINDS",
    "REDACTED",
    "JournalError",
    "JournalEvent",
    "SessionJournal",
    "SessionRecord",
    "default_journal_path",
    "redact",
    "rebuild_history",
    "redact_text",
]
