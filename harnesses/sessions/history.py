"""The conversation history of a journaled session, rebuilt from its events.

A run's end is a marker (``run_finished``) carrying only the items that run added to the
conversation (its user message and the items it generated, in the Responses API input form
``RunResult.to_input_list()`` gives), never the whole history; notes added between runs
are ``history_append`` events. The history a resume sends is the concatenation of those
deltas, in journal order. Journals written before this (schema 1 sessions) have
``history`` events holding the whole history; the latest one is taken as a base.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["HISTORY_KINDS", "rebuild_history"]

HISTORY_KINDS = ("history", "history_append", "run_finished")
"""The event kinds :func:`rebuild_history` reads (pass them to ``SessionJournal.events``)."""


def rebuild_history(
    events: Iterable[tuple[str, Mapping[str, Any]]],
    base: Iterable[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The conversation history after ``events``.

    Args:
        events: ``(kind, payload)`` in journal order; kinds other than
            :data:`HISTORY_KINDS` are ignored.
        base: the history before ``events`` (not modified).

    Returns:
        The input items (dicts), oldest first. Items that are not dicts (a damaged or
        hand-edited journal) are skipped.
    """
    history: list[dict[str, Any]] = list(base)
    for kind, payload in events:
        if kind not in HISTORY_KINDS:
            continue
        items = payload.get("items")
        if not isinstance(items, list):
            continue
        fresh = [item for item in items if isinstance(item, dict)]
        if kind == "history":
            history = fresh  # a schema 1 journal: the whole history at that point
        else:
            history.extend(fresh)
    return history
