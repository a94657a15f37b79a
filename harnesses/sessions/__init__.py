"""Session journals: every run event appended to SQLite (WAL) as it happens."""

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
    "REDACTED",
    "JournalError",
    "JournalEvent",
    "SessionJournal",
    "SessionRecord",
    "default_journal_path",
    "redact",
    "redact_text",
]
