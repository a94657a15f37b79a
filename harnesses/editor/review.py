"""The review queue: proposals waiting for the user's per-hunk decision (ask mode)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from core.tools.editor import ApplyPatchOperation

from .hunks import Hunk

__all__ = [
    "HunkDecision",
    "Proposal",
    "ReviewEvent",
    "ReviewListener",
    "ReviewOutcome",
    "ReviewQueue",
]

_log = logging.getLogger("harnesses")


@dataclass(frozen=True, slots=True)
class Proposal:
    """One apply_patch operation waiting for review.

    Attributes:
        id: unique id (hex string).
        operation: the operation as the model sent it.
        path: workspace-relative POSIX path of the target.
        move_to: workspace-relative rename target, or ``None``.
        old_text: the file content at proposal time; ``None`` when the file is created.
        new_text: the proposed content; ``None`` when the file is deleted.
        hunks: the hunks from ``old_text`` ("" if ``None``) to ``new_text`` ("" if ``None``).
        created_at: wall-clock time of the proposal (seconds since the epoch).
        base_fingerprint: sha256 hex of the file bytes at proposal time, ``None`` if absent.
        notes: how the diff matched when not exactly, e.g. ``"matched after normalising
            quotes on 2 lines (line 14)"`` (:meth:`core.tools.v4a_apply.PatchResult.notes`).
    """

    id: str
    operation: ApplyPatchOperation
    path: str
    move_to: str | None
    old_text: str | None
    new_text: str | None
    hunks: tuple[Hunk, ...]
    created_at: float
    base_fingerprint: str | None
    notes: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """The operation type: ``create_file`` | ``update_file`` | ``delete_file``."""
        return self.operation.type


@dataclass(frozen=True, slots=True)
class HunkDecision:
    """The user's decision on one hunk.

    Attributes:
        accepted: whether the hunk lands.
        edited_text: replacement for the hunk's proposed side (exact text, line terminators
            included; replaces ``Hunk.new_text``), or ``None`` to apply it as proposed.
    """

    accepted: bool
    edited_text: str | None = None


@dataclass(frozen=True, slots=True)
class ReviewOutcome:
    """The user's answer to a :class:`Proposal`.

    Hunks with no entry in ``decisions`` are rejected (only what the user accepted lands).

    Attributes:
        decisions: hunk id → decision.
        edited_text: the whole file as edited by the user; when set it is written as is and
            ``decisions`` is ignored.
        comment: free text passed back to the model.
        rejected: reject the whole proposal (nothing is written).
        message: the rejection reason shown to the model when ``rejected``.
    """

    decisions: Mapping[int, HunkDecision] = field(default_factory=dict)
    edited_text: str | None = None
    comment: str | None = None
    rejected: bool = False
    message: str | None = None

    @classmethod
    def accept_all(cls, proposal: Proposal, *, comment: str | None = None) -> ReviewOutcome:
        """Accept every hunk of ``proposal`` as proposed."""
        return cls(
            decisions={h.id: HunkDecision(True) for h in proposal.hunks},
            comment=comment,
        )

    @classmethod
    def reject_all(cls, message: str | None = None) -> ReviewOutcome:
        """Reject the whole proposal with an optional reason for the model."""
        return cls(rejected=True, message=message)

    @classmethod
    def per_hunk(
        cls,
        decisions: Mapping[int, bool | str | HunkDecision],
        *,
        comment: str | None = None,
    ) -> ReviewOutcome:
        """Build from ``{hunk_id: True | False | "edited text" | HunkDecision}``."""
        built: dict[int, HunkDecision] = {}
        for hunk_id, value in decisions.items():
            if isinstance(value, HunkDecision):
                built[hunk_id] = value
            elif isinstance(value, str):
                built[hunk_id] = HunkDecision(True, value)
            else:
                built[hunk_id] = HunkDecision(bool(value))
        return cls(decisions=built, comment=comment)

    @classmethod
    def edited(cls, text: str, *, comment: str | None = None) -> ReviewOutcome:
        """Write ``text`` (the user's edit of the whole proposed file) instead of the proposal."""
        return cls(edited_text=text, comment=comment)


@dataclass(frozen=True, slots=True)
class ReviewEvent:
    """What listeners of a :class:`ReviewQueue` receive.

    Attributes:
        type: ``submitted`` (new proposal), ``resolved`` (user answered) or ``withdrawn``
            (the waiting task was cancelled before an answer).
        proposal: the proposal concerned.
        outcome: the answer for ``resolved``, else ``None``.
    """

    type: Literal["submitted", "resolved", "withdrawn"]
    proposal: Proposal
    outcome: ReviewOutcome | None = None


ReviewListener = Callable[[ReviewEvent], None]


class ReviewQueue:
    """Proposals waiting for a decision, in submission order.

    Use it from the event loop's thread; :meth:`resolve` may also be called from another
    thread (it hops onto the proposal's loop). Listeners are plain callables invoked
    synchronously on the loop thread; an exception in a listener is logged and ignored.
    """

    def __init__(self) -> None:
        self._pending: dict[str, tuple[Proposal, asyncio.Future[ReviewOutcome]]] = {}
        self._listeners: list[ReviewListener] = []

    def add_listener(self, listener: ReviewListener) -> Callable[[], None]:
        """Subscribe ``listener``; returns a function that unsubscribes it."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def submit(self, proposal: Proposal) -> asyncio.Future[ReviewOutcome]:
        """Queue ``proposal`` and return a future for the user's outcome.

        Cancelling the future (e.g. cancelling the task awaiting it) withdraws the proposal.

        Raises:
            ValueError: a proposal with the same id is already pending.
            RuntimeError: called without a running event loop.
        """
        if proposal.id in self._pending:
            raise ValueError(f"proposal {proposal.id} is already pending")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ReviewOutcome] = loop.create_future()
        self._pending[proposal.id] = (proposal, future)
        future.add_done_callback(lambda fut: self._on_done(proposal, fut))
        self._emit(ReviewEvent("submitted", proposal))
        return future

    def pending(self) -> list[Proposal]:
        """Proposals still waiting, oldest first."""
        return [proposal for proposal, _ in self._pending.values()]

    def get(self, proposal_id: str) -> Proposal | None:
        """The pending proposal with this id, if any."""
        entry = self._pending.get(proposal_id)
        return entry[0] if entry else None

    def resolve(self, proposal_id: str, outcome: ReviewOutcome) -> None:
        """Answer a pending proposal.

        Raises:
            KeyError: no pending proposal has this id (already resolved or withdrawn).
        """
        entry = self._pending.get(proposal_id)
        if entry is None:
            raise KeyError(proposal_id)
        future = entry[1]
        loop = future.get_loop()
        if _on_loop_thread(loop):
            self._set(proposal_id, future, outcome)
        else:
            loop.call_soon_threadsafe(self._set, proposal_id, future, outcome)

    def withdraw(self, proposal_id: str) -> bool:
        """Withdraw a pending proposal (its waiter gets ``CancelledError``); ``False`` if unknown."""
        entry = self._pending.pop(proposal_id, None)
        if entry is None:
            return False
        entry[1].cancel()
        self._emit(ReviewEvent("withdrawn", entry[0]))
        return True

    def _set(
        self, proposal_id: str, future: asyncio.Future[ReviewOutcome], outcome: ReviewOutcome
    ) -> None:
        entry = self._pending.get(proposal_id)
        if entry is None or entry[1] is not future or future.done():
            return  # withdrawn meanwhile
        del self._pending[proposal_id]
        future.set_result(outcome)
        self._emit(ReviewEvent("resolved", entry[0], outcome))

    def _on_done(self, proposal: Proposal, future: asyncio.Future[ReviewOutcome]) -> None:
        entry = self._pending.get(proposal.id)
        if entry is None or entry[1] is not future:
            return
        del self._pending[proposal.id]
        self._emit(ReviewEvent("withdrawn", proposal))

    def _emit(self, event: ReviewEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                _log.exception("review queue listener failed")


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return not loop.is_running()
