"""Test helper: build a V4A hunk body that turns one list of lines into another.

The generator knows the V4A search rules (spec §5.4) well enough to guarantee that the diff it
writes applies to exactly the intended place: every hunk's context window is checked to be the
first exact match from the cursor and is widened back towards the cursor when it is not.
"""

from __future__ import annotations

import difflib
import random
from dataclasses import dataclass

__all__ = ["make_v4a_diff"]


@dataclass(slots=True)
class _Hunk:
    start: int  # first old line of the changed region
    end: int  # one past the last old line of the changed region
    ops: list[tuple[str, int, int, int, int]]  # difflib opcodes covering [start, end)


def make_v4a_diff(
    old: list[str],
    new: list[str],
    rng: random.Random,
    *,
    allow_eof: bool = True,
    allow_anchors: bool = True,
    codex: bool = False,
) -> str:
    """A V4A hunk body with ``apply_diff("\\n".join(old), diff) == "\\n".join(new)``.

    Args:
        old: input lines (``text.split("\\n")``, so a final ``""`` stands for a trailing newline);
            no line may contain ``\\n`` or ``\\r``.
        new: wanted lines, same convention.
        rng: source of the random choices (context sizes, hunk merging, ``@@`` anchors, EOF
            markers, empty-vs-space context lines, ``+``/``-`` order).
        allow_eof: may end a hunk that reaches the end of the file with ``*** End of File``.
        allow_anchors: may put ``@@ <line>`` anchors before hunks.
        codex: write for the Codex CLI semantics (``semantics="codex"``), where a hunk without
            context lines goes to the end of the file: give every pure insertion a context line.

    Raises:
        ValueError: with ``codex``, a pure insertion that has no line to use as context.

    Returns:
        The diff text, ``\\n``-separated, ending with ``\\n`` (``""`` when nothing changes).
    """
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not changes:
        return ""
    hunks = [_Hunk(changes[0][1], changes[0][2], [changes[0]])]
    for op in changes[1:]:
        previous = hunks[-1]
        gap = op[1] - previous.end
        if gap == 0 or rng.random() < 0.3:  # merge: the gap becomes context inside the hunk
            if gap:
                previous.ops.append(("equal", previous.end, op[1], 0, 0))
            previous.ops.append(op)
            previous.end = op[2]
        else:
            hunks.append(_Hunk(op[1], op[2], [op]))

    out: list[str] = []
    cursor = 0
    # openai-agents 0.24: an EOF hunk sees a final "" (trailing newline) as no line at all.
    eof_length = len(old) - 1 if old and old[-1] == "" else len(old)
    for number, hunk in enumerate(hunks):
        limit = hunks[number + 1].start if number + 1 < len(hunks) else len(old)
        # Trailing context may use at most half of the gap to the next hunk (the next hunk's
        # leading context must start at or after this hunk's window end, i.e. the new cursor).
        room = (limit - hunk.end) if number + 1 == len(hunks) else (limit - hunk.end) // 2
        trailing = min(rng.randint(0, 3), room)
        leading = min(rng.randint(0, 3), hunk.start - cursor)
        pure_insertion = all(op[1] == op[2] for op in hunk.ops if op[0] != "equal")
        if codex and pure_insertion and not leading and not trailing:
            if hunk.start - cursor > 0:
                leading = 1
            elif room > 0:
                trailing = 1
            elif hunk.start != eof_length:
                raise ValueError("a pure insertion with no line around it to use as context")
        window_end = hunk.end + trailing
        eof = allow_eof and window_end == eof_length and rng.random() < 0.5

        headers: list[str] = []
        anchor_cursor = cursor
        if allow_anchors and rng.random() < 0.4 and hunk.start - leading > cursor:
            anchors = _pick_anchors(old, cursor, hunk.start - leading, rng)
            moved = _emulate_anchors(old, anchors, cursor)
            if moved is not None and moved <= hunk.start - leading:
                headers = [f"@@ {anchor}" for anchor in anchors]
                anchor_cursor = moved
        if not headers:
            # only the first hunk may omit "@@" (allowed while the cursor is 0)
            headers = ["@@"] if (number > 0 or rng.random() < 0.7) else []

        window_start = hunk.start - leading
        body = _hunk_lines(old, new, hunk, window_start, window_end, rng)
        context = [line for kind, line in body if kind != "+"]
        if eof and not context and window_start != eof_length:
            eof = False  # an empty EOF section inserts at the very end, not at window_start
        if not eof:
            # Widen the leading context until the intended window is the first exact match.
            while _first_match(old, context, anchor_cursor) != window_start:
                window_start -= 1
                if window_start < anchor_cursor:
                    raise AssertionError("generator bug: window start before the cursor")
                body.insert(0, (" ", old[window_start]))
                context.insert(0, old[window_start])
        if not context and not eof and window_start != anchor_cursor:
            raise AssertionError("generator bug: empty context away from the cursor")
        out.extend(headers)
        out.extend(_render(kind, line, rng) for kind, line in body)
        if eof:
            out.append("*** End of File")
        cursor = window_end if (context or eof) else anchor_cursor
        if eof:
            cursor = eof_length
    return "\n".join(out) + "\n"


def _hunk_lines(
    old: list[str],
    new: list[str],
    hunk: _Hunk,
    window_start: int,
    window_end: int,
    rng: random.Random,
) -> list[tuple[str, str]]:
    body: list[tuple[str, str]] = [(" ", line) for line in old[window_start : hunk.start]]
    for tag, i1, i2, j1, j2 in hunk.ops:
        if tag == "equal":
            body.extend((" ", line) for line in old[i1:i2])
            continue
        removed = [("-", line) for line in old[i1:i2]]
        added = [("+", line) for line in new[j1:j2]]
        if rng.random() < 0.2:  # '+' and '-' runs may interleave (each keeping its own order)
            body.extend(_interleave(removed, added, rng))
        else:
            body.extend(removed + added)
    body.extend((" ", line) for line in old[hunk.end : window_end])
    return body


def _interleave(
    first: list[tuple[str, str]], second: list[tuple[str, str]], rng: random.Random
) -> list[tuple[str, str]]:
    merged: list[tuple[str, str]] = []
    i = j = 0
    while i < len(first) or j < len(second):
        if j == len(second) or (i < len(first) and rng.random() < 0.5):
            merged.append(first[i])
            i += 1
        else:
            merged.append(second[j])
            j += 1
    return merged


def _render(kind: str, line: str, rng: random.Random) -> str:
    if kind == " " and line == "" and rng.random() < 0.5:
        return ""  # an empty diff line is an empty context line
    return kind + line


def _pick_anchors(old: list[str], cursor: int, stop: int, rng: random.Random) -> list[str]:
    candidates = [line for line in old[cursor:stop] if line.strip()]
    if not candidates:
        return []
    if len(candidates) >= 2 and rng.random() < 0.3:
        first, second = sorted(rng.sample(range(len(candidates)), 2))
        return [candidates[first], candidates[second]]
    return [rng.choice(candidates)]


def _emulate_anchors(old: list[str], anchors: list[str], cursor: int) -> int | None:
    """The cursor after the anchors, or ``None`` when they would not all match exactly."""
    if not anchors:
        return None
    for position, anchor in enumerate(anchors):
        if position == 0 and anchor in old[:cursor]:
            continue
        try:
            cursor = old.index(anchor, cursor) + 1
        except ValueError:
            return None
    return cursor


def _first_match(old: list[str], context: list[str], cursor: int) -> int:
    if not context:
        return cursor
    size = len(context)
    for start in range(cursor, len(old) - size + 1):
        if old[start : start + size] == context:
            return start
    return -1
