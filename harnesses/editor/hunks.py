"""Line hunks between two texts: computing, rebuilding from accepted hunks, and relocating."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harnesses.vcs.line_diff import DEFAULT_CONTEXT, Opcode, grouped_opcodes, line_opcodes

__all__ = [
    "DEFAULT_CONTEXT",
    "Hunk",
    "HunkRelocationError",
    "Opcode",
    "compute_hunks",
    "grouped_opcodes",
    "line_opcodes",
    "rebuild",
    "relocate",
    "split_lines",
    "unified_diff",
]


class HunkRelocationError(ValueError):
    """A hunk's old side could not be found (or not unambiguously) in the current text."""


@dataclass(frozen=True, slots=True)
class Hunk:
    """One group of changes with its context, between an old and a new text.

    Line numbers are 1-based as in a unified diff header; a side with zero lines reports the
    line *before* which it sits (``diff -u`` convention: ``@@ -0,0 +1,2 @@`` for a new file).

    Attributes:
        id: 1-based position of the hunk in its proposal.
        old_start: first old line of the hunk (1-based).
        old_lines: number of old lines covered (context + removed).
        new_start: first new line of the hunk (1-based).
        new_lines: number of new lines covered (context + added).
        lines: display lines ``" ctx"``, ``"-old"``, ``"+new"`` without line terminators.
        old_text: the exact old text covered (with line terminators).
        new_text: the exact proposed text covered (with line terminators).
    """

    id: int
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: tuple[str, ...]
    old_text: str
    new_text: str

    @property
    def header(self) -> str:
        """The unified-diff header, e.g. ``"@@ -3,7 +3,8 @@"``."""
        return f"@@ -{self.old_start},{self.old_lines} +{self.new_start},{self.new_lines} @@"

    @property
    def added(self) -> int:
        """Number of ``+`` lines."""
        return sum(1 for line in self.lines if line.startswith("+"))

    @property
    def removed(self) -> int:
        """Number of ``-`` lines."""
        return sum(1 for line in self.lines if line.startswith("-"))


def split_lines(text: str) -> list[str]:
    """Split ``text`` into lines keeping their terminators (``\\n``, ``\\r\\n``, ``\\r``)."""
    lines = text.splitlines(keepends=True)
    # str.splitlines also splits on \v, \f, \x1c.. \u2028; re-join those so only real
    # line terminators separate lines.
    out: list[str] = []
    for piece in lines:
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += piece
        else:
            out.append(piece)
    return out


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def compute_hunks(old: str, new: str, *, context: int = DEFAULT_CONTEXT) -> list[Hunk]:
    """Group the line changes from ``old`` to ``new`` into hunks (:func:`grouped_opcodes`).

    Args:
        old: the current text ("" for a file being created).
        new: the proposed text ("" for a file being deleted).
        context: unchanged lines kept around each change.

    Returns:
        Hunks in file order with ids 1..n; empty when the texts are equal. Old ranges of
        distinct hunks never overlap.
    """
    a, b = split_lines(old), split_lines(new)
    hunks: list[Hunk] = []
    for group in grouped_opcodes(a, b, context):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        display: list[str] = []
        for tag, gi1, gi2, gj1, gj2 in group:
            if tag == "equal":
                display.extend(" " + _strip_eol(x) for x in a[gi1:gi2])
                continue
            display.extend("-" + _strip_eol(x) for x in a[gi1:gi2])
            display.extend("+" + _strip_eol(x) for x in b[gj1:gj2])
        hunks.append(
            Hunk(
                id=len(hunks) + 1,
                old_start=i1 + 1 if i2 > i1 else i1,
                old_lines=i2 - i1,
                new_start=j1 + 1 if j2 > j1 else j1,
                new_lines=j2 - j1,
                lines=tuple(display),
                old_text="".join(a[i1:i2]),
                new_text="".join(b[j1:j2]),
            )
        )
    return hunks


def _old_index(hunk: Hunk) -> int:
    """0-based index of the first old line the hunk covers."""
    return hunk.old_start - 1 if hunk.old_lines else hunk.old_start


def rebuild(old: str, hunks: Sequence[Hunk], replacements: Mapping[int, str]) -> str:
    """Rebuild a text from ``old`` with only some hunks applied.

    Args:
        old: the text the hunks were computed against.
        hunks: every hunk of the proposal, in order.
        replacements: hunk id → text to put in place of that hunk's old side (its
            ``new_text``, or a user-edited version). Hunks not listed keep their old side.

    Returns:
        The resulting text.
    """
    a = split_lines(old)
    out: list[str] = []
    pos = 0
    for hunk in hunks:
        start = _old_index(hunk)
        out.extend(a[pos:start])
        if hunk.id in replacements:
            out.append(replacements[hunk.id])
        else:
            out.extend(a[start : start + hunk.old_lines])
        pos = start + hunk.old_lines
    out.extend(a[pos:])
    return "".join(out)


def relocate(current: str, hunks: Sequence[Hunk]) -> str:
    """Apply ``hunks`` (old side → new side) to ``current`` by exact context matching.

    Used by the stale-write guard: the hunks were computed against an older version of the
    file; each hunk's old side (context and removed lines) must occur in ``current`` after
    the previous hunk. Among several occurrences the one nearest to the expected position
    (original line shifted by the offset of the previous hunk) wins, as ``patch(1)`` does.

    Args:
        current: the text now on disk.
        hunks: hunks from the original text to the desired text, in order.

    Returns:
        ``current`` with every hunk applied.

    Raises:
        HunkRelocationError: a hunk's old side is not found, or a pure insertion has no
            context to anchor it to a changed file.
    """
    cur = split_lines(current)
    out: list[str] = []
    pos = 0
    offset = 0
    for hunk in hunks:
        old = split_lines(hunk.old_text)
        expected = _old_index(hunk) + offset
        if not old:
            if cur:
                raise HunkRelocationError(f"hunk {hunk.id} has no context to anchor it")
            start = 0
        else:
            candidates = [
                i for i in range(pos, len(cur) - len(old) + 1) if cur[i : i + len(old)] == old
            ]
            if not candidates:
                raise HunkRelocationError(
                    f"hunk {hunk.id} ({hunk.header}) no longer matches the file"
                )
            start = min(candidates, key=lambda i: (abs(i - expected), i))
        out.extend(cur[pos:start])
        out.append(hunk.new_text)
        pos = start + len(old)
        offset = start - _old_index(hunk)
    out.extend(cur[pos:])
    return "".join(out)


def unified_diff(old: str, new: str, path: str, *, context: int = DEFAULT_CONTEXT) -> str:
    """A ``diff -u`` style text from ``old`` to ``new`` labelled ``a/path`` / ``b/path``."""
    lines = difflib.unified_diff(
        [_strip_eol(x) + "\n" for x in split_lines(old)],
        [_strip_eol(x) + "\n" for x in split_lines(new)],
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        n=context,
    )
    return "".join(lines)


# -- the line diff engine: git's diff (Myers, indent heuristic) on a token file per side ----------------------
