"""What compaction did to a session: records that map the full history to the request history.

The full history (every original item, what the journal keeps and the transcript shows) is
never changed. A :class:`CompactionRecord` says "the first ``covers`` items of the full history
are sent as ``prefix``"; :attr:`ContextState.trim_upto` says "tool outputs before this index are
sent trimmed". So the request history is always ``prefix + full[covers:]`` (trimmed where
marked), a view that survives a restart, a ``RunState`` round trip and an undo.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .trim import trim_item

__all__ = [
    "CompactionEvent",
    "CompactionRecord",
    "ContextEvent",
    "ContextReport",
    "ContextState",
    "ContextUsageEvent",
    "Strategy",
]

#: How a compaction was made: ``local`` (a hand-off summary turn), ``server`` (the Responses
#: API ``context_management`` compaction item), ``compact_endpoint`` (``responses.compact``).
Strategy = Literal["local", "server", "compact_endpoint"]


@dataclass(slots=True)
class CompactionRecord:
    """One compaction.

    Attributes:
        strategy: see :data:`Strategy`.
        reason: ``"threshold"`` | ``"manual"`` | ``"context_length_exceeded"``.
        covers: how many leading items of the full history ``prefix`` stands for.
        prefix: the wire items sent instead of them (kept user messages, then the summary
            message or the server's ``compaction`` item).
        summary: the hand-off summary text (``""`` for an opaque server compaction item).
        items_summarised: items folded into this compaction that the previous one had not.
        tokens_before / tokens_after: estimated request tokens just before and after.
        created_at: Unix time (seconds).
    """

    strategy: str
    reason: str
    covers: int
    prefix: list[dict[str, Any]]
    summary: str = ""
    items_summarised: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    created_at: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CompactionRecord:
        """Inverse of :meth:`to_json` (unknown keys ignored).

        Raises:
            ValueError: ``covers`` is negative or ``prefix`` is not a list of objects.
        """
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        record = cls(**known)
        if record.covers < 0 or not all(isinstance(i, dict) for i in record.prefix):
            raise ValueError("invalid compaction record")
        return record


@dataclass(slots=True)
class ContextState:
    """The compaction state of a session (serialised with ``RunState`` and the journal).

    Attributes:
        compactions: every compaction, oldest first; the last one is in force.
        trim_upto: tool outputs at full-history index below this are sent trimmed.
        trim_bytes: bytes kept (head plus tail) of a trimmed output.
        undone: compactions taken back by :meth:`undo` (kept for the record).
    """

    compactions: list[CompactionRecord] = field(default_factory=list)
    trim_upto: int = 0
    trim_bytes: int = 2048
    undone: list[CompactionRecord] = field(default_factory=list)

    @property
    def current(self) -> CompactionRecord | None:
        """The compaction in force, if any."""
        return self.compactions[-1] if self.compactions else None

    @property
    def covers(self) -> int:
        """Leading full-history items replaced by the current prefix (0: none)."""
        current = self.current
        return current.covers if current else 0

    def request_items(self, full: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The request history for ``full``: ``prefix + full[covers:]``, trimmed where marked.

        Raises:
            ValueError: the state covers more items than ``full`` has (not this session's).
        """
        current = self.current
        covers = self.covers
        if covers > len(full):
            raise ValueError(f"compaction covers {covers} items but the history has {len(full)}")
        items = list(current.prefix) if current else []
        for index in range(covers, len(full)):
            items.append(self.item_at(full, index))
        return items

    def item_at(self, full: list[dict[str, Any]], index: int) -> dict[str, Any]:
        """``full[index]`` as sent (trimmed when before :attr:`trim_upto`)."""
        item = full[index]
        if index < self.trim_upto:
            return trim_item(item, self.trim_bytes) or item
        return item

    def undo(self) -> CompactionRecord | None:
        """Take back the compaction in force (the previous one, or none, applies again).

        Returns:
            The record undone, or ``None`` when there was none.
        """
        if not self.compactions:
            return None
        record = self.compactions.pop()
        self.undone.append(record)
        return record

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "compactions": [r.to_json() for r in self.compactions],
            "trim_upto": self.trim_upto,
            "trim_bytes": self.trim_bytes,
            "undone": [r.to_json() for r in self.undone],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> ContextState:
        """Inverse of :meth:`to_json`; ``None`` or ``{}`` gives an empty state.

        Raises:
            ValueError: a malformed record.
        """
        data = data or {}
        return cls(
            compactions=[CompactionRecord.from_json(r) for r in data.get("compactions", [])],
            trim_upto=max(0, int(data.get("trim_upto", 0))),
            trim_bytes=max(256, int(data.get("trim_bytes", 2048))),
            undone=[CompactionRecord.from_json(r) for r in data.get("undone", [])],
        )

    def copy(self) -> ContextState:
        """An independent copy."""
        return ContextState.from_json(self.to_json())


@dataclass(frozen=True, slots=True)
class ContextReport:
    """Where a session stands in its context window.

    Attributes:
        window: the model's context window (tokens).
        threshold: tokens at which automatic compaction starts.
        used: tokens of the latest request (reported ``usage.input_tokens`` after a response,
            else the estimate before one).
        measured: whether ``used`` comes from the server (``usage`` or ``input_tokens``).
        cached: ``usage.input_tokens_details.cached_tokens`` of the latest response.
        method: ``"usage"``, ``"input_tokens"``, ``"tiktoken"`` or ``"bytes/4"``.
        breakdown: estimated tokens by part: instructions, tools, summary, messages,
            tool outputs, other.
        compactions: compactions in force so far.
    """

    window: int
    threshold: int
    used: int
    measured: bool = False
    cached: int = 0
    method: str = "bytes/4"
    breakdown: dict[str, int] = field(default_factory=dict)
    compactions: int = 0

    @property
    def percent_left(self) -> int:
        """Whole percent of the window still free (0..100)."""
        if self.window <= 0:
            return 0
        return max(0, min(100, round(100 * (1 - self.used / self.window))))

    def line(self) -> str:
        """``"context: 62% left (48,512 / 128,000 tokens)"``."""
        return f"context: {self.percent_left}% left ({self.used:,} / {self.window:,} tokens)"


@dataclass(frozen=True, slots=True)
class ContextUsageEvent:
    """The accounting changed (before a request: an estimate; after: the measured usage)."""

    report: ContextReport
    type: Literal["context_usage"] = "context_usage"


@dataclass(frozen=True, slots=True)
class CompactionEvent:
    """A compaction was made (or, with ``undone``, taken back)."""

    record: CompactionRecord
    report: ContextReport
    undone: bool = False
    type: Literal["compaction"] = "compaction"


ContextEvent = ContextUsageEvent | CompactionEvent
