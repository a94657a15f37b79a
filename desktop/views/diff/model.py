"""The diff review data model: files, hunks, lines, per-hunk decisions and display rows (no Qt).

The hunks themselves are built by :mod:`desktop.views.diff.build` (git's line diff, shared with
the editor harness); this module holds what the view shows and what the user decides.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from itertools import zip_longest
from typing import Literal

from .lines import DiffLine, HunkLines, LineKind

__all__ = [
    "DEFAULT_CONTEXT",
    "DiffHunk",
    "DiffLine",
    "DiffRow",
    "FileDiff",
    "FileStatus",
    "HunkDecision",
    "HunkLines",
    "LineKind",
    "ReviewState",
    "Verdict",
    "build_rows",
    "edit_hunk",
    "editor_text_to_hunk_text",
    "hunk_text_to_editor_text",
    "line_counts",
    "pair_lines",
    "split_lines",
]

DEFAULT_CONTEXT = 3
"""Unchanged lines kept around each change (lines), as in ``diff -u``."""

FileStatus = Literal["created", "modified", "deleted", "unchanged"]


@dataclass(frozen=True, slots=True)
class DiffHunk:
    """One group of changes with its context (``diff -u`` conventions).

    Line numbers are 1-based; a side with zero lines reports the line *before* which it sits
    (``@@ -0,0 +1,2 @@`` for a created file).

    Attributes:
        id: 1-based position of the hunk in its file.
        old_start: first old line covered.
        old_lines: old lines covered (context + deleted).
        new_start: first new line covered.
        new_lines: new lines covered (context + added).
        lines: the displayed lines in order: a :class:`~desktop.views.diff.lines.HunkLines`
            for built hunks (compact: no object per line), or any sequence of lines.
        old_text: the exact old text covered, line terminators included.
        new_text: the exact proposed text covered, line terminators included.
        section: the heading (nearest ``def``/``class``/top-level line above), or ``""``.
    """

    id: int
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: Sequence[DiffLine]
    old_text: str = ""
    new_text: str = ""
    section: str = ""

    @property
    def header(self) -> str:
        """The unified-diff header, e.g. ``"@@ -3,7 +3,8 @@"``."""
        return f"@@ -{self.old_start},{self.old_lines} +{self.new_start},{self.new_lines} @@"

    @property
    def added(self) -> int:
        """Number of added lines."""
        if isinstance(self.lines, HunkLines):
            return self.lines.added
        return sum(1 for line in self.lines if line.kind == "add")

    @property
    def removed(self) -> int:
        """Number of deleted lines."""
        if isinstance(self.lines, HunkLines):
            return self.lines.removed
        return sum(1 for line in self.lines if line.kind == "delete")


@dataclass(frozen=True, slots=True)
class FileDiff:
    """The changes to one file.

    Attributes:
        path: workspace-relative POSIX path.
        old_text: the current content, ``None`` when the file is created.
        new_text: the proposed content, ``None`` when the file is deleted.
        hunks: the hunks in file order (ids 1..n).
        proposal_id: the review proposal this diff belongs to; ``None`` for read-only diffs
            (checkpoints, history).
        status: ``created`` | ``modified`` | ``deleted`` | ``unchanged``.
    """

    path: str
    old_text: str | None
    new_text: str | None
    hunks: list[DiffHunk]
    proposal_id: str | None = None
    status: FileStatus = "modified"

    @property
    def added(self) -> int:
        """Added lines over all hunks."""
        return sum(h.added for h in self.hunks)

    @property
    def removed(self) -> int:
        """Deleted lines over all hunks."""
        return sum(h.removed for h in self.hunks)

    def hunk(self, hunk_id: int) -> DiffHunk | None:
        """The hunk with id ``hunk_id``, or ``None``."""
        return next((h for h in self.hunks if h.id == hunk_id), None)


class Verdict(StrEnum):
    """The review state of one hunk."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


@dataclass(frozen=True, slots=True)
class HunkDecision:
    """The user's decision on one hunk.

    Attributes:
        verdict: pending, accepted or rejected.
        edited_text: replacement for the hunk's proposed side (exact text, line terminators
            included; replaces ``DiffHunk.new_text``), or ``None`` to apply it as proposed.
        comment: the user's note on this hunk for the agent, or ``None``.
    """

    verdict: Verdict = Verdict.PENDING
    edited_text: str | None = None
    comment: str | None = None

    @property
    def accepted(self) -> bool:
        """Whether the hunk is accepted."""
        return self.verdict is Verdict.ACCEPTED

    @property
    def rejected(self) -> bool:
        """Whether the hunk is rejected."""
        return self.verdict is Verdict.REJECTED

    @property
    def pending(self) -> bool:
        """Whether the hunk has not been decided yet."""
        return self.verdict is Verdict.PENDING


_PENDING = HunkDecision()  # frozen: one shared by every undecided hunk


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One row of the rendered diff: a hunk header, or a line (pair).

    Side by side, a row holds the old line on the left and the new line on the right (a
    context line on both sides; a deleted line paired with the added line replacing it).
    Unified, a row holds one line: context on both sides, deleted left only, added right
    only, and ``partner`` is the line it pairs with for the word-level diff.

    Attributes:
        hunk: index of the hunk in the file's hunk list.
        header: whether the row is the hunk's header.
        left: the old-side line, or ``None``.
        right: the new-side line, or ``None``.
        partner: unified mode only: the paired deleted/added line, or ``None``.
    """

    hunk: int
    header: bool = False
    left: DiffLine | None = None
    right: DiffLine | None = None
    partner: DiffLine | None = None


class ReviewState:
    """Decisions per file and hunk: every hunk starts pending.

    Args:
        files: the files under review.
    """

    def __init__(self, files: Iterable[FileDiff] = ()) -> None:
        self._decisions: dict[str, dict[int, HunkDecision]] = {}
        self.reset(files)

    def reset(self, files: Iterable[FileDiff]) -> None:
        """Forget all decisions and start every hunk of ``files`` pending."""
        self._decisions = {f.path: dict.fromkeys((h.id for h in f.hunks), _PENDING) for f in files}

    def decisions(self, path: str) -> dict[int, HunkDecision]:
        """A copy of hunk id → decision for ``path`` (empty for an unknown path)."""
        return dict(self._decisions.get(path, {}))

    def get(self, path: str, hunk_id: int) -> HunkDecision:
        """The decision on one hunk.

        Raises:
            KeyError: unknown path or hunk id.
        """
        return self._decisions[path][hunk_id]

    def set_verdict(self, path: str, hunk_id: int, verdict: Verdict) -> HunkDecision:
        """Accept, reject or reset one hunk (its edit and comment are kept).

        Raises:
            KeyError: unknown path or hunk id.
        """
        return self._set(path, hunk_id, replace(self.get(path, hunk_id), verdict=verdict))

    def set_edit(self, path: str, hunk_id: int, edited_text: str | None) -> HunkDecision:
        """Set (or with ``None`` drop) the user's version of a hunk; an edit accepts the hunk.

        Raises:
            KeyError: unknown path or hunk id.
        """
        current = self.get(path, hunk_id)
        verdict = Verdict.ACCEPTED if edited_text is not None else current.verdict
        return self._set(path, hunk_id, replace(current, verdict=verdict, edited_text=edited_text))

    def set_comment(self, path: str, hunk_id: int, comment: str | None) -> HunkDecision:
        """Set (or with ``None``/``""`` clear) the comment on one hunk.

        Raises:
            KeyError: unknown path or hunk id.
        """
        return self._set(path, hunk_id, replace(self.get(path, hunk_id), comment=comment or None))

    def decide_pending(self, path: str, verdict: Verdict) -> dict[int, HunkDecision]:
        """Give every pending hunk of ``path`` ``verdict`` (the file's *Accept all* /
        *Reject all*); decided hunks keep their decision, every hunk its comment.

        Returns:
            hunk id -> new decision, of the hunks it changed (empty for an unknown path).
        """
        known = self._decisions.get(path, {})
        plain = HunkDecision(verdict)  # frozen: one shared by every hunk with no comment
        changed = {
            hunk_id: plain if decision is _PENDING else replace(decision, verdict=verdict)
            for hunk_id, decision in known.items()
            if decision.pending
        }
        known.update(changed)
        return changed

    def add_hunks(self, path: str, hunk_ids: Iterable[int]) -> None:
        """Start hunks that streamed in for ``path`` pending (known ids keep their decision)."""
        known = self._decisions.setdefault(path, {})
        for hunk_id in hunk_ids:
            known.setdefault(hunk_id, _PENDING)

    def restore(self, path: str, decisions: dict[int, HunkDecision]) -> None:
        """Put back earlier decisions for ``path`` (ids it does not have are ignored)."""
        known = self._decisions.get(path, {})
        for hunk_id, decision in decisions.items():
            if hunk_id in known:
                known[hunk_id] = decision

    def _set(self, path: str, hunk_id: int, decision: HunkDecision) -> HunkDecision:
        self._decisions[path][hunk_id] = decision
        return decision

    def reviewed(self, path: str) -> int:
        """Number of hunks of ``path`` accepted or rejected."""
        accepted, rejected = self.tally(path)
        return accepted + rejected

    def tally(self, path: str) -> tuple[int, int]:
        """``(accepted, rejected)`` hunks of ``path`` (``(0, 0)`` for an unknown path)."""
        verdicts = Counter(d.verdict for d in self._decisions.get(path, {}).values())
        return verdicts[Verdict.ACCEPTED], verdicts[Verdict.REJECTED]


_OTHER_BREAKS = "\v\f\x1c\x1d\x1e\x85\u2028\u2029"
"""What ``str.splitlines`` splits at besides ``\\n``, ``\\r\\n`` and ``\\r`` (looked for with
``in``, a fast search: a regex character class took 30 ms on a 2.5 MB text, ``in`` 0.3 ms)."""


def split_lines(text: str) -> list[str]:
    """Split ``text`` into lines keeping their terminators (``\\n``, ``\\r\\n``, ``\\r`` only).

    The rule of ``harnesses.editor.hunks.split_lines`` (a test holds them equal), written here
    so that the build process (:mod:`.worker`) imports no harness: ``str.splitlines`` (one
    short C call; a regex findall held the GIL for tens of ms on a 2 MB text), with the
    pieces it also splits at (``\\v``, ``\\f``, ``\\x1c``..., ``\\u2028``) joined again.
    """
    pieces = text.splitlines(keepends=True)
    if not any(char in text for char in _OTHER_BREAKS):  # the usual text: no Python loop
        return pieces
    out: list[str] = []
    for piece in pieces:
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += piece
        else:
            out.append(piece)
    return out


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def edit_hunk(hunk: DiffHunk, edited_text: str) -> DiffHunk:
    """The hunk as displayed after the user replaced its proposed side with ``edited_text``.

    The hunk's old side is re-diffed against ``edited_text`` as one group (all lines kept);
    new-side line numbers count from ``hunk.new_start``.

    Args:
        hunk: the hunk as proposed.
        edited_text: the user's version of the proposed side, line terminators included.

    Returns:
        A hunk with the same id, old range and old text, and the edited new side.
    """
    a, b = split_lines(hunk.old_text), split_lines(edited_text)
    first_old = hunk.old_start if hunk.old_lines else hunk.old_start + 1
    first_new = hunk.new_start if hunk.new_lines else hunk.new_start + 1
    lines: list[DiffLine] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines.extend(
                DiffLine("context", first_old + i1 + k, first_new + j1 + k, _strip_eol(a[i1 + k]))
                for k in range(i2 - i1)
            )
            continue
        lines.extend(
            DiffLine("delete", first_old + i, None, _strip_eol(a[i])) for i in range(i1, i2)
        )
        lines.extend(DiffLine("add", None, first_new + j, _strip_eol(b[j])) for j in range(j1, j2))
    return replace(
        hunk,
        new_start=first_new if b else first_new - 1,
        new_lines=len(b),
        lines=lines,
        new_text=edited_text,
    )


def hunk_text_to_editor_text(text: str) -> str:
    """The text to put in a plain-text editor for ``text``: ``\\n`` line ends, no final one."""
    lines = [_strip_eol(line) for line in split_lines(text)]
    return "\n".join(lines)


def editor_text_to_hunk_text(editor_text: str, original: str) -> str:
    """Turn an editor's text back into exact hunk text in the style of ``original``.

    The line terminator of ``original`` (its first one, ``\\n`` if none) is used for every
    line; the last line gets one when ``original`` ended with one (or was empty). An empty
    editor gives ``""`` (the hunk's lines are removed).

    Args:
        editor_text: the editor's content (``\\n`` separated).
        original: the hunk's proposed side before editing (``DiffHunk.new_text``).

    Returns:
        The edited text, line terminators included.
    """
    if not editor_text:
        return ""
    first = split_lines(original)
    eol = "\n"
    if first:
        ending = first[0][len(_strip_eol(first[0])) :]
        eol = ending or "\n"
    final = not original or original.endswith(("\n", "\r"))
    body = eol.join(editor_text.split("\n"))
    return body + eol if final else body


def pair_lines(lines: Sequence[DiffLine]) -> list[tuple[DiffLine | None, DiffLine | None]]:
    """Pair a hunk's lines for side-by-side display.

    A context line is paired with itself; a run of deleted lines followed by a run of added
    lines is paired index by index (the i-th deleted with the i-th added line), the longer
    run padded with ``None`` on the other side.

    Args:
        lines: a hunk's lines in order.

    Returns:
        (old-side line, new-side line) pairs in display order.
    """
    pairs: list[tuple[DiffLine | None, DiffLine | None]] = []
    deleted: list[DiffLine] = []
    added: list[DiffLine] = []

    def flush() -> None:
        pairs.extend(zip_longest(deleted, added))
        deleted.clear()
        added.clear()

    for line in lines:
        if line.kind == "context":
            flush()
            pairs.append((line, line))
        elif line.kind == "delete":
            if added:
                flush()
            deleted.append(line)
        else:
            added.append(line)
    flush()
    return pairs


def build_rows(hunks: Sequence[DiffHunk], *, unified: bool) -> tuple[list[DiffRow], list[int]]:
    """Lay out hunks as display rows.

    Args:
        hunks: the hunks to show, in order.
        unified: one line per row (old and new interleaved) instead of side by side.

    Returns:
        ``(rows, header_rows)``: every row, and the row index of each hunk's header.
    """
    rows: list[DiffRow] = []
    headers: list[int] = []
    for index, hunk in enumerate(hunks):
        headers.append(len(rows))
        rows.append(DiffRow(index, header=True))
        lines = list(hunk.lines)  # one set of line values: partners are found by identity
        pairs = pair_lines(lines)
        if not unified:
            rows.extend(DiffRow(index, left=old, right=new) for old, new in pairs)
            continue
        partner: dict[int, DiffLine] = {}
        for old, new in pairs:
            if old is not None and new is not None and old is not new:
                partner[id(old)] = new
                partner[id(new)] = old
        for line in lines:
            if line.kind == "context":
                rows.append(DiffRow(index, left=line, right=line))
            elif line.kind == "delete":
                rows.append(DiffRow(index, left=line, partner=partner.get(id(line))))
            else:
                rows.append(DiffRow(index, right=line, partner=partner.get(id(line))))
    return rows, headers


def line_counts(old: str, new: str) -> tuple[int, int]:
    """Lines added and removed between two texts (``difflib`` opcodes, no junk heuristic)."""
    a_lines, b_lines = old.splitlines(), new.splitlines()
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, a_lines, b_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed
