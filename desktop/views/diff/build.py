"""Building file diffs in near-linear time, whole or as a stream of hunk chunks (no Qt).

The line diff is git's (``harnesses.vcs.line_diff.grouped_opcodes``: ``git diff --no-index``
through the hardened git door), the same engine ``compute_hunks`` uses for the review queue's
``Proposal.hunks``, so the view's hunk ids and ranges are the ones review decisions are keyed
by (issue 15, Build item 1). A proposal's hunks are converted, not diffed again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from .model import (
    DEFAULT_CONTEXT,
    DiffHunk,
    FileDiff,
    FileStatus,
    HunkLines,
    split_lines,
)

__all__ = [
    "CHUNK_HUNKS",
    "EditorHunk",
    "HunkLayout",
    "build_file_diff",
    "converts_at_once",
    "file_sections",
    "file_status",
    "hunk_chunks",
    "hunk_layout",
    "section_header",
    "side_lines",
]

CHUNK_HUNKS = 100
"""Hunks per streamed chunk: a chunk's rows are added to the view in a few milliseconds."""

# Section headings shown after "@@ ... @@", as git's default and python diff drivers find them.
_SECTION_DEFAULT = re.compile(r"^[A-Za-z_$]")
_SECTION_PYTHON = re.compile(r"^[ \t]*((class|(async[ \t]+)?def)[ \t])")
_KIND_CHARS = {"-": "-", "+": "+"}  # a display line's prefix; any other is context (" ")
_CHAR_OF_KIND = {"delete": "-", "add": "+"}


class EditorHunk(Protocol):
    """The shape of ``harnesses.editor.hunks.Hunk`` (a review proposal's hunks)."""

    id: int
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: tuple[str, ...]
    old_text: str
    new_text: str


@dataclass(frozen=True, slots=True)
class HunkLayout:
    """What the view needs to lay out one hunk without walking its lines again.

    Attributes:
        split_rows: display rows side by side (header included).
        unified_rows: display rows unified (header included).
        longest: the longest line (chars).
        added: added lines.
        removed: deleted lines.
    """

    split_rows: int
    unified_rows: int
    longest: int
    added: int = 0
    removed: int = 0


def file_status(old: str | None, new: str | None) -> FileStatus:
    """``created`` / ``deleted`` / ``unchanged`` / ``modified`` for two sides of a file.

    Raises:
        ValueError: both sides are ``None``.
    """
    if old is None and new is None:
        raise ValueError("a file diff needs an old or a new text")
    if old is None:
        return "created"
    if new is None:
        return "deleted"
    return "unchanged" if old == new else "modified"


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


class _Sections:
    """The heading above each hunk, found by scanning the old lines only as far as the hunks
    go (in file order), so the first chunk does not wait for a scan of the whole file."""

    __slots__ = ("_current", "_lines", "_next", "_pattern")

    def __init__(self, path: str, lines: Sequence[str]) -> None:
        self._pattern = _SECTION_PYTHON if path.endswith((".py", ".pyi")) else _SECTION_DEFAULT
        self._lines = lines
        self._next = 0  # lines before it are scanned
        self._current = ""  # the last heading before ``_next``

    def before(self, index: int) -> str:
        """The nearest heading strictly before old line ``index`` (0-based), or ``""``."""
        if index < self._next:  # out of order (never for built hunks): scan again
            self._next, self._current = 0, ""
        match = self._pattern.match
        lines = self._lines
        current = self._current
        for at in range(self._next, min(index, len(lines))):
            if match(lines[at]):
                current = lines[at]
        self._next = max(self._next, min(index, len(lines)))
        self._current = current
        return _strip_eol(current).strip()


def _diffed_hunks(path: str, a: list[str], b: list[str], context: int) -> Iterator[DiffHunk]:
    from harnesses.editor.hunks import grouped_opcodes  # here: the build process imports git's
    # door (and core, 0.5 s) only for a diff it makes itself, not for a proposal's hunks

    sections = _Sections(path, a)
    for number, group in enumerate(grouped_opcodes(a, b, context), start=1):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        kinds: list[str] = []
        texts: list[str] = []
        for tag, gi1, gi2, gj1, gj2 in group:
            if tag == "equal":
                kinds.append(" " * (gi2 - gi1))
                texts.extend(_strip_eol(line) for line in a[gi1:gi2])
                continue
            kinds.append("-" * (gi2 - gi1) + "+" * (gj2 - gj1))
            texts.extend(_strip_eol(line) for line in a[gi1:gi2])
            texts.extend(_strip_eol(line) for line in b[gj1:gj2])
        yield DiffHunk(
            id=number,
            old_start=i1 + 1 if i2 > i1 else i1,
            old_lines=i2 - i1,
            new_start=j1 + 1 if j2 > j1 else j1,
            new_lines=j2 - j1,
            lines=HunkLines("".join(kinds), texts, i1 + 1, j1 + 1),
            old_text="".join(a[i1:i2]),
            new_text="".join(b[j1:j2]),
            section=sections.before(i1),
        )


def _converted_hunks(path: str, a: list[str], hunks: Sequence[EditorHunk]) -> Iterator[DiffHunk]:
    sections = _Sections(path, a)
    for hunk in hunks:
        old_no = hunk.old_start if hunk.old_lines else hunk.old_start + 1
        new_no = hunk.new_start if hunk.new_lines else hunk.new_start + 1
        kinds = "".join([_KIND_CHARS.get(display[:1], " ") for display in hunk.lines])
        lines = HunkLines(kinds, [display[1:] for display in hunk.lines], old_no, new_no)
        first_old = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        yield DiffHunk(
            id=hunk.id,
            old_start=hunk.old_start,
            old_lines=hunk.old_lines,
            new_start=hunk.new_start,
            new_lines=hunk.new_lines,
            lines=lines,
            old_text=hunk.old_text,
            new_text=hunk.new_text,
            section=sections.before(first_old),
        )


def hunk_chunks(
    path: str,
    old: str | None,
    new: str | None,
    *,
    hunks: Sequence[EditorHunk] | None = None,
    context: int = DEFAULT_CONTEXT,
    chunk: int = CHUNK_HUNKS,
    split: tuple[list[str], list[str]] | None = None,
) -> Iterator[list[DiffHunk]]:
    """The hunks of one file, in file order, ``chunk`` at a time (for a worker thread).

    Args:
        path: workspace-relative POSIX path (picks the section-heading rule).
        old: the current content, ``None`` when the file is created.
        new: the proposed content, ``None`` when the file is deleted.
        hunks: the proposal's hunks (``harnesses.editor.hunks.compute_hunks`` output) to
            convert; ``None`` diffs ``old`` against ``new`` with git's line diff.
        context: unchanged lines around each change (lines, >= 0) when diffing.
        chunk: hunks per yielded list (>= 1).
        split: ``(split_lines(old), split_lines(new))`` when the caller has them already.

    Yields:
        Lists of at most ``chunk`` hunks, ids 1..n over the whole file.

    Raises:
        ValueError: ``context`` is negative, ``chunk`` < 1, or both sides are ``None``.
    """
    if context < 0:
        raise ValueError(f"context must be >= 0, got {context}")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    file_status(old, new)
    a, b = split if split is not None else (split_lines(old or ""), None)
    source = (
        _diffed_hunks(path, a, b if b is not None else split_lines(new or ""), context)
        if hunks is None
        else _converted_hunks(path, a, hunks)
    )
    batch: list[DiffHunk] = []
    for hunk in source:
        batch.append(hunk)
        if len(batch) >= chunk:
            yield batch
            batch = []
    if batch:
        yield batch


def build_file_diff(
    path: str,
    old: str | None,
    new: str | None,
    context: int = DEFAULT_CONTEXT,
    *,
    proposal_id: str | None = None,
) -> FileDiff:
    """Diff two versions of a file into hunks (git's line diff, exact lines), all at once.

    Lines are compared with their terminators, as ``diff -u`` does; hunks are grouped as
    ``diff -u`` groups them, by the engine ``compute_hunks`` uses, so their ids and ranges
    match the review proposal's. Runs git: call it off the GUI thread for big files (the view's
    :meth:`~desktop.views.diff.view.DiffView.stream_file` does).

    Args:
        path: workspace-relative POSIX path.
        old: the current content, ``None`` when the file is being created.
        new: the proposed content, ``None`` when the file is being deleted.
        context: unchanged lines kept around each change (lines, >= 0).
        proposal_id: the review proposal this diff belongs to, or ``None`` (read-only).

    Returns:
        The file diff; ``hunks`` is empty when the texts are equal.

    Raises:
        ValueError: ``context`` is negative, or both ``old`` and ``new`` are ``None``.
    """
    status = file_status(old, new)
    hunks = [h for batch in hunk_chunks(path, old, new, context=context) for h in batch]
    return FileDiff(path, old, new, hunks, proposal_id, status)


def hunk_layout(hunk: DiffHunk) -> HunkLayout:
    """Row counts (side by side and unified) and the longest line of ``hunk``.

    Side by side, a run of deleted lines and the run of added lines after it share
    ``max(deleted, added)`` rows (:func:`~desktop.views.diff.model.pair_lines`).
    """
    lines = hunk.lines
    if isinstance(lines, HunkLines):  # from the kind characters: no line values made
        kinds = lines.kinds
        longest = max(map(len, lines.texts()), default=0)
    else:
        kinds = "".join(_CHAR_OF_KIND.get(line.kind, " ") for line in lines)
        longest = max((len(line.text) for line in lines), default=0)
    split = 1
    deleted = added = 0
    for char in kinds:
        if char == " ":
            split += max(deleted, added) + 1
            deleted = added = 0
        elif char == "-":
            if added:
                split += max(deleted, added)
                deleted = added = 0
            deleted += 1
        else:
            added += 1
    split += max(deleted, added)
    return HunkLayout(split, 1 + len(kinds), longest, kinds.count("+"), kinds.count("-"))


def side_lines(file: FileDiff, side: str) -> list[str]:
    """The lines (no terminators) of one side of ``file`` (``"old"`` or ``"new"``); rebuilt
    from the hunks when the text is not given (lines outside the hunks are then empty)."""
    text = file.old_text if side == "old" else file.new_text
    if text is not None:
        return [line.rstrip("\r\n") for line in split_lines(text)]
    numbered = [
        (line.old_no if side == "old" else line.new_no, line.text)
        for hunk in file.hunks
        for line in hunk.lines
    ]
    lines = [""] * max((n for n, _ in numbered if n), default=0)
    for number, line_text in numbered:
        if number:
            lines[number - 1] = line_text
    return lines


_AT_ONCE_CHARS = 64_000
_AT_ONCE_LINES = 1_000


def converts_at_once(old: str | None, new: str | None, hunks: Sequence[EditorHunk]) -> bool:
    """Whether a proposal is small enough to convert on the GUI thread (a few ms): at most
    64,000 chars over both sides and 1,000 hunk lines; bigger ones stream from a worker."""
    size = len(old or "") + len(new or "")
    return size <= _AT_ONCE_CHARS and sum(len(h.lines) for h in hunks) <= _AT_ONCE_LINES


_GIT_HEADER = "diff --git "


def file_sections(text: str) -> list[str]:
    """Split ``git diff`` output into one text per file, each starting at its ``diff --git``
    line (a few ``str.find`` calls: no per-line work). Text before the first header, or a
    whole ``diff -u`` text without one, is a section of its own; a blank text has none."""
    starts = [0] if text.startswith(_GIT_HEADER) else []
    at = text.find("\n" + _GIT_HEADER)
    while at != -1:
        starts.append(at + 1)
        at = text.find("\n" + _GIT_HEADER, at + 1)
    if not starts or starts[0] != 0:
        if text[: starts[0] if starts else len(text)].strip():
            starts.insert(0, 0)
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=False)]


def section_header(section: str) -> str:
    """The lines of one file's section before its first hunk (``@@``)."""
    if section.startswith("@@"):
        return ""
    end = section.find("\n@@")
    return section if end == -1 else section[: end + 1]
