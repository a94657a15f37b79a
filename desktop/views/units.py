"""Durations and sizes as the views print them."""

from __future__ import annotations

__all__ = ["human_ms"]


def human_ms(ms: int | None) -> str:
    """A duration in ms for display: ``"850 ms"``, ``"3.2 s"``, ``"2 min 5 s"``; ``""`` for None."""
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms // 60_000} min {ms % 60_000 // 1000} s"
