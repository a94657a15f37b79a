"""DiffView's state after *Apply reviewed*: the applied file stays, read-only (issue 16)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .model import FileDiff, HunkDecision, line_counts

if TYPE_CHECKING:
    from .view import DiffView

    _Base = DiffView
else:
    _Base = object

__all__ = ["DiffViewApplied"]


class DiffViewApplied(_Base):
    """Mixin of :class:`~desktop.views.diff.view.DiffView`: files kept after *Apply reviewed*.

    Users of Cursor, Cline or Codex expect to still see what landed: the file stays in the
    list, marked applied (its +/- counts are the accepted hunks' lines), its hunks headed
    "✓ applied" or "not applied", and no decision can be taken on it any more.
    """

    def mark_applied(self, path: str) -> bool:
        """Keep ``path`` in the list after *Apply reviewed*, read-only and marked applied
        (issue 16: what just landed stays visible, as in Cursor, Cline or Codex), with the
        +/- counts of the accepted hunks (edits counted as edited). It stays until the next
        :meth:`set_files` that does not pass it back (:meth:`applied_files`).

        Returns:
            ``True`` when the file is kept; ``False`` (nothing changes) for an unknown path,
            a file without a proposal, or a review that accepted no hunk (nothing landed).
        """
        file = self._files.get(path)
        if file is None or file.proposal_id is None:
            return False
        decisions = self._review.decisions(path)
        if not any(decisions.get(h.id, HunkDecision()).accepted for h in file.hunks):
            return False
        added = removed = 0
        for hunk in file.hunks:
            decision = decisions.get(hunk.id, HunkDecision())
            if decision.accepted:
                text = decision.edited_text
                a, r = (
                    (hunk.added, hunk.removed) if text is None else line_counts(hunk.old_text, text)
                )
                added, removed = added + a, removed + r
        applied = dataclasses.replace(file, proposal_id=None)  # nothing left to apply
        self._files[path] = applied
        self._applied[path] = (added, removed)
        self._counts_cache.pop(path, None)
        if path == self._path:
            self.show_file(path)
        else:
            self._file_list.viewport().update()
        return True

    def applied_files(self) -> list[FileDiff]:
        """The files kept after *Apply reviewed* (:meth:`mark_applied`), in list order."""
        return [f for p, f in self._files.items() if p in self._applied]

    def is_applied(self, path: str) -> bool:
        """Whether ``path`` is shown as applied (read-only, its landed +/- counts)."""
        return path in self._applied

    def _locked(self) -> bool:
        """No decisions on the shown file: the view is read-only or the file was applied."""
        return self._read_only or (self._path is not None and self._path in self._applied)
