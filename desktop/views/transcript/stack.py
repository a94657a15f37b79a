"""TranscriptStack: a scroll area's content that places and shows only the entries in view."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QLayout, QScrollArea, QWidget

__all__ = ["TranscriptStack"]

#: Entries measured per idle tick after a width change (the rest keep their old height).
_STALE_BATCH = 40


def _measure(widget: QWidget, width: int) -> int:
    """The height (px) ``widget`` needs at ``width`` px, from its layout's height-for-width."""
    layout = widget.layout()
    if layout is None:
        return max(0, widget.sizeHint().height())
    height = layout.totalHeightForWidth(width) if layout.hasHeightForWidth() else -1
    if height < 0:
        height = layout.totalSizeHint().height()
    return max(0, height)


def _min_width(widget: QWidget) -> int:
    layout = widget.layout()
    return (layout.totalMinimumSize() if layout is not None else widget.minimumSizeHint()).width()


class TranscriptStack(QWidget):
    """The transcript's entries in one column, laid out and shown only where they are seen.

    A ``QVBoxLayout`` of every entry lays all of them out again on each append (the cost
    grew with the transcript: 158 ms at 1,000 entries, issue 15). Here each entry's height
    is measured from its own layout's height-for-width (``QLayout.totalHeightForWidth``,
    which works on hidden widgets) and kept with the entry tops (px, prefix sums); only the
    entries within half a viewport of the visible part get a geometry and are shown, the
    others stay hidden (never painted nor laid out). An append measures one entry; a change
    re-measures the entries that changed (their layout asked for it, or :meth:`touch`) at
    the next event-loop turn, and an entry coming into view is measured again before it is
    shown. A width change re-measures the entries in view at once and the others in
    batches of ``_STALE_BATCH`` per idle turn. When heights above the view change, the
    first entry in view stays put unless the view is at the end.

    The stack is the ``QScrollArea``'s widget (not resized by the area); it follows the
    viewport's width itself and is at least as tall as the viewport.

    Args:
        scroll: the scroll area showing the stack (its viewport gives the width, its
            vertical bar the position).
        margins: left, top, right, bottom space around the column (px).
        spacing: space between entries (px).
    """

    def __init__(
        self,
        scroll: QScrollArea,
        *,
        margins: tuple[int, int, int, int] = (14, 12, 14, 12),
        spacing: int = 10,
    ) -> None:
        super().__init__()
        self._scroll = scroll
        self._margins = margins
        self._spacing = spacing
        self._entries: list[QWidget] = []
        self._index: dict[int, int] = {}  # id(entry) -> position
        self._heights: list[int] = []
        self._tops: list[int] = []  # y of each entry in the stack (px)
        self._widths: list[int] = []  # the width each height was measured at (px)
        self._shown: set[int] = set()
        self._dirty: set[int] = set()
        self._min_width = 0
        self._busy = False
        self._relayout = QTimer(self, singleShot=True, interval=0)
        self._relayout.timeout.connect(self.relayout)
        self._stale_timer = QTimer(self, singleShot=True, interval=0)
        self._stale_timer.timeout.connect(self._measure_stale)
        scroll.setWidgetResizable(False)
        scroll.setWidget(self)
        scroll.viewport().installEventFilter(self)
        scroll.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self._fit_width()

    # -- entries ---------------------------------------------------------------------------

    def append(self, widget: QWidget) -> None:
        """Add ``widget`` under the last entry, measured now and shown if it is in view."""
        widget.setParent(self)
        layout = widget.layout()
        if layout is not None:  # the stack sizes entries; their layouts never clamp them
            layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        widget.hide()
        widget.installEventFilter(self)
        width = self.column_width()
        height = _measure(widget, width)
        top = self._margins[1]
        if self._entries:
            top = self._tops[-1] + self._heights[-1] + self._spacing
        self._index[id(widget)] = len(self._entries)
        self._entries.append(widget)
        self._heights.append(height)
        self._tops.append(top)
        self._widths.append(width)
        self._min_width = max(self._min_width, _min_width(widget))
        self._fit_height()
        self._update_window()

    def entries(self) -> list[QWidget]:
        """The entries, oldest first."""
        return list(self._entries)

    def count(self) -> int:
        """How many entries there are."""
        return len(self._entries)

    def clear(self) -> None:
        """Remove and delete every entry."""
        self._relayout.stop()
        self._stale_timer.stop()
        for widget in self._entries:
            widget.removeEventFilter(self)
            widget.hide()
            widget.deleteLater()
        for store in (self._entries, self._heights, self._tops, self._widths):
            store.clear()
        self._index.clear()
        self._shown.clear()
        self._dirty.clear()
        self._fit_height()

    def touch(self, widget: QWidget) -> None:
        """``widget`` (an entry, or a widget inside one) changed: re-measure its entry at the
        next event-loop turn (shown or not)."""
        position = self._position_of(widget)
        if position is not None:
            self._dirty.add(position)
            if not self._relayout.isActive():
                self._relayout.start()

    def top_of(self, widget: QWidget) -> int | None:
        """The y (px, in the stack) of ``widget``'s entry, or ``None`` if it is not in one."""
        position = self._position_of(widget)
        return None if position is None else self._tops[position]

    def shown_count(self) -> int:
        """How many entries are shown (in view or within half a viewport of it)."""
        return len(self._shown)

    def minimum_column_width(self) -> int:
        """The widest entry's minimum width (px) among those measured."""
        return self._min_width

    def margins(self) -> tuple[int, int, int, int]:
        """The space around the column (px): left, top, right, bottom."""
        return self._margins

    def column_width(self) -> int:
        """The entries' width (px): the viewport's, less the margins."""
        left, _top, right, _bottom = self._margins
        return max(1, self._scroll.viewport().width() - left - right)

    # -- layout ----------------------------------------------------------------------------

    def relayout(self) -> None:
        """Re-measure the entries that changed and place the ones in view (normally run at
        the next event-loop turn after a change)."""
        self._relayout.stop()
        if self._dirty:
            dirty, self._dirty = self._dirty, set()
            positions = sorted(i for i in dirty if i < len(self._entries))
            self._remeasure(positions, self.column_width())
        self._update_window()

    def reveal(self, widget: QWidget) -> int | None:
        """Lay out ``widget``'s entry now and show it; return ``widget``'s y (px, in the
        stack), or ``None`` if it is not in an entry."""
        position = self._position_of(widget)
        if position is None:
            return None
        self._dirty.add(position)
        self.relayout()
        entry = self._entries[position]
        self._place(position, self.column_width())
        layout = entry.layout()
        if layout is not None:
            layout.activate()
        return self._tops[position] + widget.mapTo(entry, widget.rect().topLeft()).y()

    def _remeasure(self, positions: list[int], width: int) -> None:
        """Measure ``positions`` (ascending) at ``width`` and shift the tops after them,
        keeping the first entry in view in place when the view is not at the end."""
        if not positions:
            return
        bar = self._scroll.verticalScrollBar()
        at_end = bar.value() >= bar.maximum()
        anchor = self._first_in_view(bar.value())
        offset = bar.value() - self._tops[anchor] if anchor is not None else 0
        changed = False
        for i in positions:
            entry = self._entries[i]
            height = _measure(entry, width)
            self._widths[i] = width
            self._min_width = max(self._min_width, _min_width(entry))
            if height != self._heights[i]:
                self._heights[i] = height
                changed = True
        if not changed:
            return
        start = positions[0]
        top = self._tops[start]
        for i in range(start, len(self._entries)):
            self._tops[i] = top
            top += self._heights[i] + self._spacing
        self._fit_height()
        if anchor is not None and not at_end and anchor > start:
            self._set_value(self._tops[anchor] + offset)

    def _update_window(self) -> None:
        """Show and place the entries in view (measuring stale ones), hide the others."""
        if self._busy:
            return
        self._busy = True
        try:
            width = self.column_width()
            for _ in range(4):  # stale entries coming into view may move the view: settle
                first, last = self._window()
                stale = [
                    i
                    for i in range(first, last)
                    if self._widths[i] != width or i not in self._shown
                ]
                if not stale:
                    break
                self._remeasure(stale, width)
                for i in stale:
                    self._shown.add(i)  # measured for showing (placed below)
            first, last = self._window()
            wanted = set(range(first, last))
            for i in self._shown - wanted:
                if i < len(self._entries):
                    self._entries[i].hide()
            for i in sorted(wanted):
                self._place(i, width)
            self._shown = wanted
        finally:
            self._busy = False

    def _place(self, i: int, width: int) -> None:
        entry = self._entries[i]
        left = self._margins[0]
        geometry = entry.geometry()
        if (
            geometry.x() != left
            or geometry.y() != self._tops[i]
            or geometry.width() != width
            or geometry.height() != self._heights[i]
        ):
            entry.setGeometry(left, self._tops[i], width, self._heights[i])
        if entry.isHidden():
            entry.show()
        self._shown.add(i)

    def _window(self) -> tuple[int, int]:
        """The positions ``[first, last)`` within half a viewport of the visible part."""
        if not self._entries:
            return 0, 0
        view = self._scroll.viewport().height()
        value = self._scroll.verticalScrollBar().value()
        low, high = value - view // 2, value + view + view // 2
        first = max(0, bisect_right(self._tops, low) - 1)
        last = bisect_left(self._tops, high)
        return first, max(first, min(len(self._entries), last))

    def _first_in_view(self, value: int) -> int | None:
        if not self._entries:
            return None
        return max(0, bisect_right(self._tops, value) - 1)

    def _fit_height(self) -> None:
        bottom = self._margins[3]
        height = self._margins[1] + bottom
        if self._entries:
            height = self._tops[-1] + self._heights[-1] + bottom
        height = max(height, self._scroll.viewport().height())  # the background fills it
        if height != self.height():
            self.resize(self._scroll.viewport().width(), height)

    def _fit_width(self) -> None:
        width = self._scroll.viewport().width()
        if width != self.width():
            self.resize(width, max(self.height(), 1))

    def _set_value(self, value: int) -> None:
        bar = self._scroll.verticalScrollBar()
        bar.setValue(max(0, min(bar.maximum(), value)))

    def _measure_stale(self) -> None:
        width = self.column_width()
        stale = [i for i, w in enumerate(self._widths) if w != width][:_STALE_BATCH]
        if stale:
            self._remeasure(stale, width)
            self._update_window()
            self._stale_timer.start()

    def _position_of(self, widget: QWidget | None) -> int | None:
        while widget is not None and widget.parentWidget() is not self:
            widget = widget.parentWidget()
        return None if widget is None else self._index.get(id(widget))

    # -- events ----------------------------------------------------------------------------

    def _on_scrolled(self, _value: int) -> None:
        self._update_window()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        scroll = self.__dict__.get("_scroll")
        if scroll is None:  # being destroyed
            return False
        if watched is scroll.viewport():
            if kind == QEvent.Type.Resize:
                self._fit_width()
                self._fit_height()
                self._update_window()  # entries in view: measured at the new width now
                self._stale_timer.start()  # the others: in batches
        elif kind == QEvent.Type.LayoutRequest and isinstance(watched, QWidget):
            position = self._index.get(id(watched))
            if position is not None:  # an entry's content changed its size
                self._dirty.add(position)
                if not self._relayout.isActive():
                    self._relayout.start()
        return False
