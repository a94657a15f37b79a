"""Compatibility shim: the diff data model now lives in :mod:`desktop.views.diff.model` (and
the builder in :mod:`desktop.views.diff.build`); existing imports keep working."""

from __future__ import annotations

from desktop.views.diff.build import build_file_diff
from desktop.views.diff.model import (
    DEFAULT_CONTEXT,
    DiffHunk,
    DiffLine,
    DiffRow,
    FileDiff,
    FileStatus,
    HunkDecision,
    LineKind,
    ReviewState,
    Verdict,
    build_rows,
    edit_hunk,
    editor_text_to_hunk_text,
    hunk_text_to_editor_text,
    line_counts,
    pair_lines,
    split_lines,
)

__all__ = [
    "DEFAULT_CONTEXT",
    "DiffHunk",
    "DiffLine",
    "DiffRow",
    "FileDiff",
    "FileStatus",
    "HunkDecision",
    "LineKind",
    "ReviewState",
    "Verdict",
    "build_file_diff",
    "build_rows",
    "edit_hunk",
    "editor_text_to_hunk_text",
    "hunk_text_to_editor_text",
    "line_counts",
    "pair_lines",
    "split_lines",
]
