"""The row list model of the diff view: virtual rows, laid out per hunk on demand."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from .build import HunkLayout, hunk_layout
from .model import DiffHunk, DiffRow, build_rows

__all__ = ["RowsModel"]

_CACHED_HUNKS = 512
"""Hunks whose rows are kept built (the visible ones and their neighbours)."""


class RowsModel(QAbstractListModel):
    """The display rows of the shown file, without building them all.

    Each hunk's row count (side by side and unified) comes from its :class:`HunkLayout`, so
    the row count, a unified/side-by-side toggle and an edited hunk cost O(hunks); the rows of
    one hunk are built (``model.build_rows``) when a row of it is asked for and cached. Hunks
    that stream in are appended with ``beginInsertRows`` (O(new hunks)).

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.hunks: list[DiffHunk] = []
        self.unified = False
        self._layouts: list[HunkLayout] = []
        self._starts: list[int] = []  # row of each hunk's header
        self._total = 0
        self._cache: dict[int, list[DiffRow]] = {}

    # building --------------------------------------------------------------------------------

    def _count(self, layout: HunkLayout) -> int:
        return layout.unified_rows if self.unified else layout.split_rows

    def _restart(self) -> None:
        counts = [self._count(layout) for layout in self._layouts]
        self._starts = [0, *accumulate(counts)][:-1] if counts else []
        self._total = sum(counts)
        self._cache.clear()

    def set_hunks(
        self,
        hunks: Sequence[DiffHunk],
        layouts: Sequence[HunkLayout] | None = None,
        *,
        unified: bool | None = None,
    ) -> None:
        """Show ``hunks`` (their layouts computed when not given); resets the model.

        The :attr:`hunks` list is refilled in place: whoever holds it (the row painter) sees
        the new hunks, and keeps no closed diff alive.
        """
        self.beginResetModel()
        self.hunks[:] = list(hunks)
        self._layouts = list(layouts) if layouts is not None else [hunk_layout(h) for h in hunks]
        if unified is not None:
            self.unified = unified
        self._restart()
        self.endResetModel()

    def append(self, hunks: Sequence[DiffHunk], layouts: Sequence[HunkLayout]) -> None:
        """Add hunks that streamed in after the ones shown."""
        if not hunks:
            return
        counts = [self._count(layout) for layout in layouts]
        added = sum(counts)
        self.beginInsertRows(QModelIndex(), self._total, self._total + added - 1)
        start = self._total
        for count in counts:
            self._starts.append(start)
            start += count
        self.hunks.extend(hunks)
        self._layouts.extend(layouts)
        self._total = start
        self.endInsertRows()

    def set_unified(self, unified: bool) -> None:
        """Lay the rows out unified or side by side (O(hunks))."""
        if unified != self.unified:
            self.beginResetModel()
            self.unified = unified
            self._restart()
            self.endResetModel()

    def replace_hunk(self, index: int, hunk: DiffHunk) -> None:
        """Show ``hunk`` (an edited version) in place of hunk ``index``."""
        self.beginResetModel()
        self.hunks[index] = hunk
        self._layouts[index] = hunk_layout(hunk)
        self._restart()
        self.endResetModel()

    # reading ---------------------------------------------------------------------------------

    @property
    def headers(self) -> list[int]:
        """The row of each hunk's header."""
        return self._starts

    @property
    def longest(self) -> int:
        """The longest line over the shown hunks (chars)."""
        return max((layout.longest for layout in self._layouts), default=0)

    def row(self, number: int) -> DiffRow:
        """Display row ``number`` (0-based).

        Raises:
            IndexError: no such row.
        """
        if not 0 <= number < self._total:
            raise IndexError(number)
        hunk = bisect.bisect_right(self._starts, number) - 1
        rows = self._cache.get(hunk)
        if rows is None:
            if len(self._cache) >= _CACHED_HUNKS:
                self._cache.clear()
            built, _headers = build_rows([self.hunks[hunk]], unified=self.unified)
            rows = self._cache[hunk] = [_reindexed(r, hunk) for r in built]
        return rows[number - self._starts[hunk]]

    def rows(self, first: int = 0, last: int | None = None) -> list[DiffRow]:
        """Rows ``first``..``last`` inclusive (default: all)."""
        end = self._total - 1 if last is None else min(last, self._total - 1)
        return [self.row(i) for i in range(max(0, first), end + 1)]

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        """Qt: the number of rows (0 under a valid parent: a flat list)."""
        return 0 if parent.isValid() else self._total

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        """Qt: the row's text for ``DisplayRole`` (painting is the delegate's job)."""
        if role != Qt.ItemDataRole.DisplayRole or not index.isValid():
            return None
        row = self.row(index.row())
        if row.header:
            return f"hunk {row.hunk + 1}"
        line = row.left or row.right
        return line.text if line else ""


def _reindexed(row: DiffRow, hunk: int) -> DiffRow:
    """``row`` (built for a one-hunk list) with its hunk index in the whole file."""
    return DiffRow(hunk, row.header, row.left, row.right, row.partner)
