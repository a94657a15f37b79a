"""The diff view's input, navigation and background lexing: keys, wheel, hunk moves, syntax."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Slot
from PySide6.QtGui import QKeyEvent, QWheelEvent
from PySide6.QtWidgets import QAbstractItemView

from .model import DiffRow
from .palette import LEX_SLICE_MS as _LEX_SLICE_MS

__all__ = ["DiffViewInput"]


class DiffViewInput:
    """Mixin of :class:`~desktop.views.diff.view.DiffView`: keys (``j``/``k``/``a``/``r``/
    ``e``/``c``/``u``, ``Ctrl+Enter``), horizontal wheel and scroll, and syntax lexing in
    :data:`~desktop.views.diff.palette.LEX_SLICE_MS` slices (visible lines first)."""

    _delegate: Any
    _model: Any
    _list: Any
    _hscroll: Any
    _lex_timer: Any
    _lex_whole: bool

    def _update_hscroll(self) -> None:
        delegate = self._delegate
        visible = delegate.text_width(self._list.viewport().width())
        content = (self._longest + 2) * delegate.char_width
        self._hscroll.setRange(0, max(0, content - visible))
        self._hscroll.setPageStep(max(1, visible))
        self._hscroll.setSingleStep(4 * delegate.char_width)
        self._hscroll.setVisible(content > visible)

    def _on_hscroll(self, value: int) -> None:
        self._delegate.x_offset = value
        self._list.viewport().update()

    def _lex_soon(self) -> None:
        if not self._lex_timer.isActive():
            self._lex_timer.start()

    def _lex_step(self) -> None:
        """One slice of syntax lexing: visible lines first, then the whole texts in order.

        The slice is :data:`~desktop.views.diff.palette.LEX_SLICE_MS` for both sides together
        (``SyntaxLines.lex_lines`` reads the clock inside a block too); the rows are
        repainted once all the visible lines have their colours, not after every slice."""
        delegate = self._delegate
        started = time.perf_counter()
        rows = self._visible_rows()
        old_nos = [r.left.old_no for r in rows if r.left is not None and r.left.old_no]
        new_nos = [r.right.new_no for r in rows if r.right is not None and r.right.new_no]
        lexed = delegate.new_syntax.lex_lines(new_nos, _LEX_SLICE_MS / 2)
        left_ms = _LEX_SLICE_MS - (time.perf_counter() - started) * 1000
        if left_ms > 0 or not lexed:
            lexed += delegate.old_syntax.lex_lines(old_nos, max(left_ms, 0.0))
        if lexed:
            if not (delegate.new_syntax.missing(new_nos) or delegate.old_syntax.missing(old_nos)):
                self._list.viewport().update()  # the page is coloured: one repaint
            return
        if not self._lex_whole:  # a long side: lexed only where shown (FULL_LEX_LINES)
            self._lex_timer.stop()
            return
        syntax, side = (
            (delegate.new_syntax, "new")
            if not delegate.new_syntax.done
            else (delegate.old_syntax, "old")
        )
        before = syntax.lexed_lines
        syntax.advance(_LEX_SLICE_MS)
        if self._visible_lines_in(side, before, syntax.lexed_lines):
            self._list.viewport().update()
        if delegate.new_syntax.done and delegate.old_syntax.done:
            self._lex_timer.stop()

    def _visible_rows(self) -> list[DiffRow]:
        viewport = self._list.viewport()
        top = self._list.indexAt(QPoint(1, 1)).row()
        if top < 0:
            return []
        bottom = self._list.indexAt(QPoint(1, viewport.height() - 1)).row()
        if bottom < 0:
            bottom = self._model.rowCount() - 1
        return self._model.rows(top, bottom)

    def _visible_lines_in(self, side: str, first: int, last: int) -> bool:
        """Whether a visible row shows a ``side`` line numbered in ``(first, last]``."""
        for row in self._visible_rows():
            line = row.left if side == "old" else row.right
            number = None if line is None else (line.old_no if side == "old" else line.new_no)
            if number is not None and first < number <= last:
                return True
        return False

    def _handle_key(self, event: QKeyEvent) -> bool:
        modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        key = event.key()
        if (
            key in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and modifiers == Qt.KeyboardModifier.ControlModifier
        ):
            self.apply_reviewed()
            return True
        if key in (Qt.Key.Key_Home, Qt.Key.Key_End) and modifiers in (
            Qt.KeyboardModifier.NoModifier,
            Qt.KeyboardModifier.ControlModifier,
        ):  # Home/End, Ctrl+Home/Ctrl+End: the first or the last hunk
            self.last_hunk() if key == Qt.Key.Key_End else self.first_hunk()
            return True
        if modifiers == Qt.KeyboardModifier.ShiftModifier and key in (
            Qt.Key.Key_A,
            Qt.Key.Key_R,
        ):  # the file's Accept all / Reject all
            self.accept_all() if key == Qt.Key.Key_A else self.reject_all()
            return True
        if modifiers != Qt.KeyboardModifier.NoModifier:
            return False
        actions: dict[int, Callable[[], None]] = {
            Qt.Key.Key_J: self.next_hunk,
            Qt.Key.Key_K: self.previous_hunk,
            Qt.Key.Key_U: lambda: self.set_unified(not self._unified),
            Qt.Key.Key_A: self.accept_current,
            Qt.Key.Key_R: self.reject_current,
            Qt.Key.Key_E: self.edit_current,
            Qt.Key.Key_C: self.comment_current,
        }
        action = actions.get(key)
        if action is None:
            return False
        action()
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if getattr(self, "_list", None) is None or getattr(self, "_comment_edit", None) is None:
            return super().eventFilter(watched, event)  # events arriving while __init__ builds
        kind = event.type()
        if kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if watched in (self._list, self._file_list):
                return self._handle_key(event) or super().eventFilter(watched, event)
            if watched in (self._editor, self._comment_edit):
                return self._handle_panel_key(watched, event) or super().eventFilter(watched, event)
        elif watched is self._list.viewport():
            if kind == QEvent.Type.Paint:
                self._delegate.begin_paint()  # a fresh budget for making text layouts
            elif kind == QEvent.Type.Resize:
                self._check_width()  # issue 16: unified below split_min_columns a side
                self._update_hscroll()
            elif kind == QEvent.Type.Wheel and isinstance(event, QWheelEvent):
                dx = event.angleDelta().x()
                if dx == 0 and event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                    dx = event.angleDelta().y()
                if dx:
                    self._hscroll.setValue(self._hscroll.value() - dx // 2)
                    return True
        return super().eventFilter(watched, event)

    def _handle_panel_key(self, watched: QObject, event: QKeyEvent) -> bool:
        """Esc closes the inline editor/comment field; Ctrl+Enter saves the edit."""
        if event.key() == Qt.Key.Key_Escape:
            self._close_panels()
            return True
        ctrl = event.modifiers() & Qt.KeyboardModifier.ControlModifier
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if watched is self._editor and enter and ctrl:
            self._save_edit()
            return True
        return False

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not self._handle_key(event):
            super().keyPressEvent(event)

    # navigation ------------------------------------------------------------------------------

    @Slot()
    def next_hunk(self) -> None:
        """Make the next hunk current and scroll to it."""
        if 0 <= self._current < len(self._headers) - 1:
            self._set_current(self._current + 1)
        elif self._current >= 0:
            self._scroll_to_hunk(self._current)

    @Slot()
    def first_hunk(self) -> None:
        """Make the first hunk current and scroll to it (Home, Ctrl+Home)."""
        if self._headers:
            self._set_current(0)

    @Slot()
    def last_hunk(self) -> None:
        """Make the last hunk shown so far current and scroll to it (End, Ctrl+End)."""
        if self._headers:
            self._set_current(len(self._headers) - 1)

    @Slot()
    def previous_hunk(self) -> None:
        """Make the previous hunk current and scroll to it."""
        if self._current > 0:
            self._set_current(self._current - 1)
        elif self._current == 0:
            self._scroll_to_hunk(0)

    def _set_current(self, index: int, *, scroll: bool = True) -> None:
        self._current = index
        self._delegate.current = index
        if scroll:
            self._scroll_to_hunk(index)
        self._list.viewport().update()
        self._refresh()
        if self._path is not None:
            self.currentHunkChanged.emit(self._path, self._hunk_id())

    def _scroll_to_hunk(self, index: int) -> None:
        if 0 <= index < len(self._headers):
            target = self._model.index(self._headers[index], 0)
            self._list.scrollTo(target, QAbstractItemView.ScrollHint.PositionAtTop)
