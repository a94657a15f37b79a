"""``ContextPolicy``: how a run manages its context window (issue 14), set on ``RunConfig``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ModelProviderError, UserError
from .state import ContextEvent, ContextState

__all__ = ["ContextPolicy", "ContextWindowExceeded", "StrategyChoice"]

#: ``auto``: server-side compaction on api.openai.com, else ``responses.compact`` when the
#: server has it, else a local summary turn; or one of them forced.
StrategyChoice = Literal["auto", "server", "compact_endpoint", "local"]


class ContextWindowExceeded(ModelProviderError):
    """The history does not fit the context window even after trimming and compaction.

    Attributes:
        needed: estimated tokens of the smallest request Tandem could build.
        window: the context window (tokens).
    """

    def __init__(self, message: str, needed: int, window: int) -> None:
        super().__init__(message, 400)
        self.needed = needed
        self.window = window


@dataclass(slots=True)
class ContextPolicy:
    """Settings of context management; ``RunConfig(context_policy=None)`` turns it off (the
    reference SDK's behaviour).

    Attributes:
        window: the context window in tokens (``None``: looked up by model name, see
            :func:`~core.context_window.windows.context_window_for`).
        window_overrides: per model name or base URL (the ``context_windows`` setting).
        base_url: the Responses API base URL (for the overrides and ``auto``).
        threshold: fraction of the window at which automatic compaction starts (0.85).
        auto_compact: compact automatically at the threshold (off: only on demand or on a
            ``context_length_exceeded`` error).
        strategy: see :data:`StrategyChoice`.
        keep_items: the last items of the history kept verbatim by a local compaction.
        keep_recent_outputs: the latest tool outputs never trimmed.
        trim_bytes: bytes (head plus tail) a trimmed tool output keeps.
        target_after: fraction of the window a local compaction's transcript may use.
        user_message_share: fraction of the window the kept user messages may use.
        count_with_server: ask ``responses.input_tokens`` near the threshold where supported.
        listener: called with each :data:`~core.context_window.state.ContextEvent`.
        state: the session's compaction state to continue from (mutated in place).

    Raises:
        UserError: a threshold outside (0, 1], a non-positive window or negative counts.
    """

    window: int | None = None
    window_overrides: dict[str, int] = field(default_factory=dict)
    base_url: str | None = None
    threshold: float = 0.85
    auto_compact: bool = True
    strategy: StrategyChoice = "auto"
    keep_items: int = 6
    keep_recent_outputs: int = 3
    trim_bytes: int = 2048
    target_after: float = 0.4
    user_message_share: float = 0.15
    count_with_server: bool = True
    listener: Callable[[ContextEvent], None] | None = None
    state: ContextState | None = None

    @classmethod
    def from_settings(cls, settings: Any, **changes: Any) -> ContextPolicy:
        """The policy for Tandem's :class:`~core.settings.Settings` (``context_threshold``,
        ``context_strategy``, ``auto_compact``, ``context_windows``, ``base_url``), with
        ``changes`` (e.g. ``listener``, ``state``) on top."""
        values: dict[str, Any] = {
            "threshold": settings.context_threshold,
            "strategy": settings.context_strategy,
            "auto_compact": settings.auto_compact,
            "window_overrides": dict(settings.context_windows),
            "base_url": settings.base_url,
        }
        values.update(changes)
        return cls(**values)

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise UserError(f"context threshold must be in (0, 1], got {self.threshold}")
        if self.window is not None and self.window <= 0:
            raise UserError(f"context window must be positive, got {self.window}")
        if self.keep_items < 1 or self.keep_recent_outputs < 0 or self.trim_bytes < 256:
            raise UserError("keep_items >= 1, keep_recent_outputs >= 0, trim_bytes >= 256")
        if self.strategy not in ("auto", "server", "compact_endpoint", "local"):
            raise UserError(f"unknown compaction strategy {self.strategy!r}")
