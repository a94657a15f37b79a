"""Where a replay's tool results differ from the recording: turn, call id and a short diff."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Mismatch", "compare_results", "mask_volatile", "normalise_result"]

_DIFF_LINES = 12
_VOLATILE_KEYS = frozenset({"id"})

# What differs from run to run in a tool's output for no reason of the session's: a test
# runner's timings (`20 passed in 0.03s`, `Ran 5 tests in 0.001s`, `Time: 1.2 s`, `took
# 12ms`), clock times and ISO timestamps, Unix epoch seconds, process ids, temporary paths
# and object addresses. Each is replaced by a placeholder before a second comparison; a
# result equal only after it is "equal apart from timings", never a failure.
_VOLATILE: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?"),
        "<timestamp>",
    ),
    (re.compile(r"\b\d{1,2}:\d\d:\d\d(?:[.,]\d+)?\b"), "<time>"),
    (
        re.compile(
            r"(?<![\w.])\d+(?:[.,]\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|min|mins|minutes?)"
            r"(?![\w])"
        ),
        "<duration>",
    ),
    (re.compile(r"\b1[5-9]\d{8}(?:\.\d+)?\b"), "<epoch>"),
    (re.compile(r"(?i)\b(pid|process)([\s:=#]*)\d+"), r"\1\2<pid>"),
    # path characters only: a greedy "anything but a delimiter" also swallowed what follows
    # a path (`/tmp/p/out=FAIL` vs `=PASS` compared equal; red team)
    (re.compile(r"(?:/private)?(?:/var)?/tmp/[\w.\-/+@%~]+"), "<tmp>"),
    (re.compile(r"\b0x[0-9a-fA-F]{6,16}\b"), "<address>"),
)


def mask_volatile(text: str) -> str:
    """``text`` with its run-to-run noise replaced by placeholders.

    Durations (``0.03s``, ``1.2 s``, ``12ms``, ``3 seconds``), clock times (``15:46:05``),
    ISO 8601 timestamps, epoch seconds (2017-2033), process ids after ``pid``/``process``,
    paths under ``/tmp`` (and ``/var/tmp``) and hexadecimal object addresses become
    ``<duration>``, ``<time>``, ``<timestamp>``, ``<epoch>``, ``<pid>``, ``<tmp>``,
    ``<address>``.

    Args:
        text: a tool result's text.

    Returns:
        The masked text (unchanged when there is nothing volatile).
    """
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One tool result that differs.

    Attributes:
        turn: the model turn (from 1) whose call it answers (0: unknown).
        call_id: the tool call's ``call_id``.
        what: ``"differs"``, ``"missing"`` (recorded, not replayed), ``"extra"`` (replayed,
            not recorded) or ``"volatile"`` (equal apart from timings: see
            :func:`mask_volatile`; not a failure).
        diff: a short unified diff of the two results (recorded ``-``, replayed ``+``), at
            most 12 lines.
    """

    turn: int
    call_id: str
    what: str
    diff: str

    @property
    def real(self) -> bool:
        """Whether this is a real difference (``"volatile"`` ones are not)."""
        return self.what != "volatile"

    def describe(self) -> str:
        """One line and the diff, as ``tandem replay`` prints it."""
        head = f"turn {self.turn}, call {self.call_id}: "
        head += {
            "differs": "the tool's result differs from the recording",
            "missing": "recorded, but the replay made no such call",
            "extra": "the replay made this call, the recording has none",
            "volatile": "equal apart from timings (durations, timestamps, PIDs, temp paths)",
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
        One :class:`Mismatch` per differing, missing or extra call (empty: identical); a
        call whose results are equal once :func:`mask_volatile` has masked every string
        is a ``"volatile"`` one (:attr:`Mismatch.real` is false).
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
            diff = _short_diff(want, mine[call_id])
            same = _masked(mine[call_id]) == _masked(want)
            found.append(Mismatch(turn, call_id, "volatile" if same else "differs", diff))
    found.extend(Mismatch(0, c, "extra", "") for c in order if c not in seen)
    return found


def _masked(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    if isinstance(value, str):
        return mask_volatile(value)
    return value


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
