"""The diff view's counts and progress: +/- lines, the file list's progress, the apply bar."""

from __future__ import annotations

from typing import Any

from .model import FileDiff, HunkDecision, line_counts
from .palette import COLOURS as _C

__all__ = ["DiffViewStatus"]


class DiffViewStatus:
    """Mixin of :class:`~desktop.views.diff.view.DiffView`: edit-aware line counts, the
    per-file progress line (building, failed, reviewed, applied) and the toolbar and apply
    bar's labels."""

    _files: dict[str, FileDiff]
    _path: str | None
    _review: Any
    _stream: Any
    _applied: dict[str, tuple[int, int]]
    _counts_cache: dict[str, tuple[int, int]]
    _errors: dict[str, str]
    _current: int
    _read_only: bool
    _counts: Any
    _hunk_label: Any
    _prev_btn: Any
    _next_btn: Any
    _progress: Any
    _apply_btn: Any
    _accept_all_btn: Any
    _reject_all_btn: Any
    _file_list: Any

    def counts(self, path: str) -> tuple[int, int]:
        """Lines added and removed in ``path``'s diff, with the user's hunk edits counted as
        edited (an edited hunk counts its edited text against the old side); ``(0, 0)`` for
        an unknown path."""
        file = self._files.get(path)
        if file is None:
            return 0, 0
        if path in self._applied:  # what landed, not what was proposed
            return self._applied[path]
        found = self._counts_cache.get(path)
        if found is not None:
            return found
        decisions = self._review.decisions(path)
        added = removed = 0
        for hunk, layout in zip(file.hunks, self._file_layouts(file), strict=True):
            edited = decisions.get(hunk.id, HunkDecision()).edited_text
            if edited is None:
                added, removed = added + layout.added, removed + layout.removed
            else:
                a, r = line_counts(hunk.old_text, edited)
                added, removed = added + a, removed + r
        self._counts_cache[path] = (added, removed)
        return added, removed

    def _show_counts(self, file: FileDiff) -> None:
        added, removed = self.counts(file.path)
        self._counts.setText(
            f"<span style='color:{_C['add_sign']}'>+{added}</span>&nbsp;"
            f"<span style='color:{_C['del_sign']}'>&minus;{removed}</span>"
        )

    def _empty_text(self, path: str) -> str:
        if path in self._errors:
            return f"Could not build the diff of {path}: {self._errors[path]}"
        if self._stream.building(path):
            return "Building the diff…"
        return "No differences" if self._files else "No changes to review"

    def _file_progress(self, file: FileDiff) -> str:
        total = len(file.hunks)
        if file.path in self._errors:  # the build failed: the hunks that came are kept
            return f"build failed after {total} hunk{'s' if total != 1 else ''}"
        if self._stream.building(file.path):
            return f"building… {total} hunk{'s' if total != 1 else ''}"
        if file.path in self._applied:
            landed = sum(d.accepted for d in self._review.decisions(file.path).values())
            return f"\u2713 applied {landed} of {total}"
        if self._read_only or file.proposal_id is None:
            return f"{total} hunk{'s' if total != 1 else ''}"
        reviewed = self._review.reviewed(file.path)
        return "✓ reviewed" if total and reviewed == total else f"{reviewed}/{total} reviewed"

    def _refresh(self) -> None:
        file = self.current_file()
        total = len(file.hunks) if file is not None else 0
        self._hunk_label.setText(f"Hunk {self._current + 1} of {total}" if total else "")
        self._prev_btn.setEnabled(self._current > 0)
        self._next_btn.setEnabled(0 <= self._current < total - 1)
        accepted, rejected = self._review.tally(self._path) if self._path else (0, 0)
        self._progress.setText(
            f"Applied {accepted} of {total} hunks · ✗ {total - accepted} not applied"
            if self._path in self._applied
            else f"{accepted + rejected}/{total} reviewed · ✓ {accepted} · ✗ {rejected}"
        )
        self._progress.setToolTip(
            f"{accepted + rejected} of {total} hunks reviewed: {accepted} accepted, "
            f"{rejected} rejected"
        )
        failed = self._errors.get(self._path) if self._path is not None else None
        if failed is not None:  # fails closed: a partly built proposal is not applied
            self._progress.setText(f"Could not build the whole diff: {failed}")
            self._progress.setToolTip(
                f"Could not build the whole diff: {failed}\nNothing of it can be applied; "
                "Reject all, then Apply reviewed, sends the agent a rejection."
            )
        built = (
            file is not None
            and file.proposal_id is not None
            and not self._stream.building(file.path)
        )
        ready = built and failed is None
        pending = built and accepted + rejected < total
        # a failed build's proposal can only be rejected (what it did not show is unknown)
        self._apply_btn.setEnabled(ready or (built and not accepted and rejected > 0))
        self._accept_all_btn.setEnabled(ready and pending)
        self._reject_all_btn.setEnabled(pending)
        self._update_file_row(self._path)

    def _update_file_row(self, path: str | None) -> None:
        """Repaint the file list's row of ``path`` only (its counts and progress changed)."""
        if path is None or path not in self._files:
            return
        item = self._file_list.item(list(self._files).index(path))
        if item is not None:
            self._file_list.viewport().update(self._file_list.visualItemRect(item))
