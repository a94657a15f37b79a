"""Where a replay's tool results differ from the recording: turn, call id and a short diff."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Mismatch", "compare_results", "normalise_result"]

_DIFF_LINES = 12
_VOLATILE_KEYS = frozenset({"id"})


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One tool result that differs.

    Attributes:
        turn: the model turn (from 1) whose call it answers (0: unknown).
        call_id: the tool call's ``call_id``.
        what: ``"differs"``, ``"missing"`` (recorded, not replayed) or ``"extra"`` (replayed,
            not recorded).
        diff: a short unified diff of the two results (recorded ``-``, replayed ``+``), at
            most 12 lines.
    """

    turn: int
    call_id: str
    what: str
    diff: str

    def describe(self) -> str:
        """One line and the diff, as ``tandem replay`` prints it."""
        head = f"turn {self.turn}, call {self.call_id}: "
        head += {
            "differs": "the tool's result differs from the recording",
            "missing": "recorded, but the replay made no such call",
            "extra": "the replay made this call, the recording has none",
        }.get(self.what, self.what)
        return head + ("\n" + self.diff if self.diff else "")


def normalise_result(item: Mapping[str, Any], replacements: Iterable[tuple[str, str]] = ()) -> Any:
    """A tool output item without what may differ between runs for no reason: item ``id``\\ s,
    and the replay's folder (``replacements``: ``(replay path, recorded path)`` pairs)."""
    pairs = [(a, b) for a, b in replacements if a and a != b]

    def clean(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: clean(v) for k, v in value.items() if k not in _VOLATILE_KEYS}
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, str):
            for old, new in pairs:
                value = value.replace(old, new)
        return value

    return clean(item)


def compare_results(
    recorded: Iterable[Mapping[str, Any]],
    replayed: Iterable[Mapping[str, Any]],
    *,
    replacements: Iterable[tuple[str, str]] = (),
) -> list[Mismatch]:
    """The differences between recorded and replayed tool results, in recording order.

    Args:
        recorded: an export's ``tool_results`` (``{"turn", "call_id", "item"}``).
        replayed: the replay's tool output items (with ``call_id``), in the order produced.
        replacements: ``(replay path, recorded path)`` pairs applied to the replayed text.

    Returns:
        One :class:`Mismatch` per differing, missing or extra call (empty: identical).
    """
    pairs = list(replacements)
    mine: dict[str, Any] = {}
    order: list[str] = []
    for item in replayed:
        call_id = str(item.get("call_id", ""))
        if call_id not in mine:
            order.append(call_id)
        mine[call_id] = normalise_result(item, pairs)
    found: list[Mismatch] = []
    seen: set[str] = set()
    for entry in recorded:
        call_id = str(entry.get("call_id", ""))
        turn = int(entry.get("turn", 0) or 0)
        seen.add(call_id)
        want = normalise_result(entry.get("item") or {})
        if call_id not in mine:
            found.append(Mismatch(turn, call_id, "missing", ""))
        elif mine[call_id] != want:
            found.append(Mismatch(turn, call_id, "differs", _short_diff(want, mine[call_id])))
    found.extend(Mismatch(0, c, "extra", "") for c in order if c not in seen)
    return found


def _short_diff(recorded: Any, replayed: Any) -> str:
    lines = difflib.unified_diff(
        _lines(recorded), _lines(replayed), "recorded", "replayed", n=1, lineterm=""
    )
    out = list(lines)
    if len(out) > _DIFF_LINES:
        out = [*out[:_DIFF_LINES], f"... ({len(out) - _DIFF_LINES} more lines)"]
    return "\n".join(out)


def _lines(value: Any) -> list[str]:
    """A result as lines: text fields unescaped (a command's output reads as output)."""
    text = json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True)
    return [line.replace("\\n", "\n") for line in text.splitlines()]
