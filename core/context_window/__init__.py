"""Context-window management (issue 14): accounting, trimming, compaction, recovery.

Modules: :mod:`.windows` (the table), :mod:`.estimate` (token estimates), :mod:`.trim`
(head-and-tail trimming), :mod:`.local` (the hand-off summary turn), :mod:`.remote`
(``responses.compact`` and ``responses.input_tokens``), :mod:`.state` (records that map the
full history to the request history), :mod:`.policy` (settings) and :mod:`.manager` (the run
loop's hook).
"""

from __future__ import annotations

from .estimate import TokenEstimator
from .manager import ContextManager, is_context_overflow
from .policy import ContextPolicy, ContextWindowExceeded, StrategyChoice
from .state import (
    CompactionEvent,
    CompactionRecord,
    ContextEvent,
    ContextReport,
    ContextState,
    ContextUsageEvent,
)
from .windows import CONTEXT_WINDOWS, DEFAULT_CONTEXT_WINDOW, context_window_for

__all__ = [
    "CONTEXT_WINDOWS",
    "DEFAULT_CONTEXT_WINDOW",
    "CompactionEvent",
    "CompactionRecord",
    "ContextEvent",
    "ContextManager",
    "ContextPolicy",
    "ContextReport",
    "ContextState",
    "ContextUsageEvent",
    "ContextWindowExceeded",
    "StrategyChoice",
    "TokenEstimator",
    "context_window_for",
    "is_context_overflow",
]
