"""The session's context window on the desktop side (issue 14): meter, compactions, undo.

The controller owns one :class:`ContextSession`; it keeps the session's
:class:`~core.context_window.ContextState` across runs and relaunches (journal kinds
``compaction``, ``compaction_undone`` and ``context_state``), feeds the meter and the
compaction cards through its signals, and runs *Compact now* and *Undo compaction*.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from core import RunConfig
from core.context_window import (
    CompactionEvent,
    CompactionRecord,
    ContextPolicy,
    ContextReport,
    ContextState,
    ContextUsageEvent,
)
from core.context_window.manual import compact_history

__all__ = ["ContextSession"]

logger = logging.getLogger("desktop")

Journal = Callable[[str, dict[str, Any]], None]
Notice = Callable[[str, str], None]


class ContextSession(QObject):
    """Context-window state of the current session.

    Args:
        journal: ``(kind, payload)`` appender (the controller's journal).
        notice: ``(text, level)`` for messages the user must see.

    Signals:
        reportChanged(ContextReport): the meter's figures (per request and per response).
        compacted(CompactionRecord): a compaction was made (or replayed from the journal).
        compactionUndone(CompactionRecord): the latest compaction was taken back.
        undoAvailable(bool): whether *Undo compaction* can be used now.
    """

    reportChanged = Signal(object)
    compacted = Signal(object)
    compactionUndone = Signal(object)
    undoAvailable = Signal(bool)

    def __init__(self, journal: Journal, notice: Notice) -> None:
        super().__init__()
        self._journal = journal
        self._notice = notice
        self.state = ContextState()
        self.last_report: ContextReport | None = None
        self.undoable = False
        self.busy = False

    # -- runs ------------------------------------------------------------------------------
    def run_config(self, base: RunConfig) -> RunConfig:
        """``base`` with a context policy bound to this session's state and listener
        (a default policy when ``base`` has none: a window session never dies of its length)."""
        policy = base.context_policy or ContextPolicy()
        bound = dataclasses.replace(policy, state=self.state, listener=self.on_event)
        return dataclasses.replace(base, context_policy=bound)

    def begin_run(self) -> dict[str, Any]:
        """A new turn: the last compaction can no longer be undone. Returns a snapshot."""
        self._set_undoable(False)
        return self.state.to_json()

    def end_run(self, result: Any) -> None:
        """Adopt the run's state (a resumed ``RunState`` brings its own) and journal it."""
        try:
            adopted = result.to_state().context_state
        except Exception:  # a result without state: keep ours
            adopted = None
        if adopted is not None:
            self.state = adopted
        self._journal("context_state", {"state": self.state.to_json()})

    def abort_run(self, snapshot: dict[str, Any]) -> None:
        """The run failed or was stopped: its history is not kept, nor its compactions."""
        self.state = ContextState.from_json(snapshot)
        self._set_undoable(False)

    # -- events from core --------------------------------------------------------------------
    def on_event(self, event: Any) -> None:
        """The ``ContextPolicy.listener``: re-emit as signals; journal compactions."""
        if isinstance(event, ContextUsageEvent):
            self.last_report = event.report
            self.reportChanged.emit(event.report)
        elif isinstance(event, CompactionEvent) and not event.undone:
            self.last_report = event.report
            self._journal("compaction", {"record": event.record.to_json()})
            self.compacted.emit(event.record)
            self.reportChanged.emit(event.report)
            self._set_undoable(True)

    # -- user actions --------------------------------------------------------------------------
    async def compact_now(
        self, agent: Any, history: list[dict[str, Any]], base: RunConfig
    ) -> CompactionRecord | None:
        """*Compact now* / ``/compact``: compact the session's history before the next turn."""
        if not history:
            self._notice("Nothing to compact yet: the session is empty.", "info")
            return None
        self.busy = True
        try:
            record = await compact_history(agent, history, self.run_config(base), self.state)
        except Exception as exc:
            logger.exception("compact now failed")
            self._notice(f"Compaction failed: {type(exc).__name__}: {exc}", "error")
            return None
        finally:
            self.busy = False
        if record is None:
            self._notice("Nothing to compact: the session is still short.", "info")
            return None
        self._journal("context_state", {"state": self.state.to_json()})
        return record

    def undo(self) -> CompactionRecord | None:
        """*Undo compaction*: the next request sends the history as it was before it."""
        if not self.undoable:
            self._notice("Only the latest compaction can be undone, before the next turn.", "info")
            return None
        record = self.state.undo()
        self._set_undoable(False)
        if record is None:
            return None
        self._journal("compaction_undone", {"record": record.to_json()})
        self._journal("context_state", {"state": self.state.to_json()})
        self.compactionUndone.emit(record)
        if self.last_report is not None:
            report = dataclasses.replace(
                self.last_report,
                used=record.tokens_before,
                compactions=len(self.state.compactions),
            )
            self.last_report = report
            self.reportChanged.emit(report)
        return record

    def _set_undoable(self, undoable: bool) -> None:
        self.undoable = undoable
        self.undoAvailable.emit(undoable)

    # -- relaunch ----------------------------------------------------------------------------
    def replay(self, kind: str, payload: dict[str, Any]) -> bool:
        """Apply one journal event; ``False`` when it is not a context event."""
        if kind == "context_state":
            try:
                self.state = ContextState.from_json(payload.get("state"))
            except (ValueError, TypeError) as exc:
                logger.warning("journal context state unreadable (%s); starting uncompacted", exc)
                self.state = ContextState()
            return True
        if kind in ("compaction", "compaction_undone"):
            try:
                record = CompactionRecord.from_json(dict(payload.get("record") or {}))
            except (ValueError, TypeError):
                return True
            (self.compacted if kind == "compaction" else self.compactionUndone).emit(record)
            return True
        return False
