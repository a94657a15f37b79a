"""The row painter of the diff view: hunk headers with their buttons, line pairs, single lines."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontInfo,
    QFontMetrics,
    QFontMetricsF,
    QHelpEvent,
    QMouseEvent,
    QPainter,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem, QToolTip

from desktop.views.diff_highlight import (
    LineSpans,
    Span,
    SyntaxLines,
    token_style,
    token_type,
    word_diff,
)

from .model import DiffHunk, DiffLine, DiffRow, HunkDecision
from .palette import (
    ACTIONS,
    BUTTONS,
    FILLER_HATCH,
    MAX_CHARS,
    QCOLOURS,
    STYLE,
    TAB,
    row_colours,
)
from .textcache import TextCache, draw_runs

if TYPE_CHECKING:
    from .view import DiffView

__all__ = ["RowPainter"]

_HEADER_PIXMAPS = 64
"""Hunk header pixmaps kept (a page shows a few dozen at most); emptied past this."""


class RowPainter(QStyledItemDelegate):
    """Paints diff rows (hunk headers with their buttons, line pairs or single lines).

    The delegate of the view's row list; rows come from ``owner._model.row(i)`` (a
    :class:`~desktop.views.diff.rows.RowsModel`). A line's syntax runs are cached per line
    text; a line painted again is one ``QTextLayout.draw`` from
    :class:`~desktop.views.diff.textcache.TextCache` (a hunk header one ``drawPixmap``), the
    first time a ``drawText`` per run (see :meth:`begin_paint`). The word-level highlight of
    a changed pair is ``diff_highlight.word_diff`` (bounded per line).

    Args:
        owner: the :class:`~desktop.views.diff.view.DiffView` it paints for.
    """

    def __init__(self, owner: DiffView) -> None:
        super().__init__(owner)
        self.owner = owner
        self.font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.font.setPointSizeF(max(9.0, self.font.pointSizeF()))
        self.italic = QFont(self.font)
        self.italic.setItalic(True)
        self.fm = QFontMetrics(self.font)
        self.fmf = QFontMetricsF(self.font)
        self._pitch = (QFontInfo(self.font).fixedPitch(), self.fmf.horizontalAdvance("0"))
        self.ui_font = QFont(owner.font())
        self.ui_font.setPointSizeF(max(8.0, self.ui_font.pointSizeF() - 1))
        self.ui_fm = QFontMetrics(self.ui_font)
        self.row_height = self.fm.height() + 6
        self.char_width = self.fm.horizontalAdvance("0")
        self.gutter_digits = 3
        self.x_offset = 0
        self.unified = False
        self.read_only = False
        #: issue 16: the shown file was applied; headers say which hunks landed
        self.applied = False
        self.current = -1
        self.hunks: list[DiffHunk] = []
        self.old_syntax = SyntaxLines(None, [])
        self.new_syntax = SyntaxLines(None, [])
        self.decision: Callable[[int], HunkDecision | None] = lambda _index: None
        self._styles: list[tuple[QColor, bool]] = [(QCOLOURS["text"], False)]
        self._style_ids: dict[int, int] = {}
        self.lex_soon: Callable[[], None] = lambda: None
        self._run_cache: dict[
            tuple[str, LineSpans], tuple[str, tuple[tuple[float, str, int], ...]]
        ] = {}
        #: laid-out lines and static texts (numbers, signs): glyphs shaped once, not per paint
        self.text = TextCache(self.font, self._styles)
        self._headers: dict[tuple[Any, ...], QPixmap] = {}  # hunk headers drawn, by state
        self._headers_seen: set[tuple[Any, ...]] = set()  # painted once, not cached yet
        #: time a paint may spend making new line layouts (ms); past it, lines are drawn
        #: run by run and their layouts made by a later paint (0: never make layouts)
        self.layout_budget_ms = 3.0
        #: make layouts (header pixmaps) the first time a line is painted, not the second
        self.layouts_at_once = False

    def set_font(self, font: QFont) -> None:
        """Paint code in ``font`` (row height and character width follow); every cached
        layout is dropped. The owner re-lays its rows out (``DiffView.set_code_font``)."""
        self.font = QFont(font)
        self.italic = QFont(self.font)
        self.italic.setItalic(True)
        self.fm = QFontMetrics(self.font)
        self.fmf = QFontMetricsF(self.font)
        self._pitch = (QFontInfo(self.font).fixedPitch(), self.fmf.horizontalAdvance("0"))
        self.row_height = self.fm.height() + 6
        self.char_width = self.fm.horizontalAdvance("0")
        self.restyle()

    def restyle(self) -> None:
        """The theme or token styles changed (``palette.QCOLOURS``, ``palette.STYLE``): drop
        the token styles, the runs and every cached layout, so the next paint reads them anew."""
        self._styles = [(QCOLOURS["text"], False)]
        self._style_ids = {}
        self._run_cache.clear()
        self._headers.clear()
        self._headers_seen.clear()
        self.text.reset(self.font, self._styles)

    # geometry ------------------------------------------------------------------------------

    def gutter_width(self) -> int:
        return self.gutter_digits * self.char_width + 16

    def text_width(self, width: int) -> int:
        """Width of one text column (px) for a row ``width`` px wide."""
        sign = 2 * self.char_width
        if self.unified:
            return width - 2 * self.gutter_width() - sign
        return width // 2 - self.gutter_width() - sign

    def buttons(self, rect: QRect) -> list[tuple[str, QRect, str, str]]:
        """The header buttons of a row: (action, rect, label, tooltip), right to left."""
        if self.read_only:
            return []
        out = []
        right = rect.right() - 6
        height = rect.height() - 4
        for action, label, tip in reversed(ACTIONS):
            width = self.ui_fm.horizontalAdvance(label) + 18
            out.append((action, QRect(right - width, rect.top() + 2, width, height), label, tip))
            right -= width + 6
        return out

    def sizeHint(self, option: QStyleOptionViewItem, index: Any) -> QSize:
        return QSize(max(1, self.owner._list.viewport().width()), self.row_height)

    # events --------------------------------------------------------------------------------

    def editorEvent(self, event: QEvent, model: Any, option: Any, index: Any) -> bool:
        if event.type() != QEvent.Type.MouseButtonRelease or not index.isValid():
            return False
        mouse = event if isinstance(event, QMouseEvent) else None
        row = self.owner._model.row(index.row())
        if mouse is None or mouse.button() != Qt.MouseButton.LeftButton or not row.header:
            return False
        for action, rect, _label, _tip in self.buttons(self.row_rect(option.rect)):
            if rect.contains(mouse.position().toPoint()):
                self.owner._header_action(row.hunk, action)
                return True
        return False

    def helpEvent(self, event: QHelpEvent, view: Any, option: Any, index: Any) -> bool:
        if index.isValid() and self.owner._model.row(index.row()).header:
            for _action, rect, _label, tip in self.buttons(self.row_rect(option.rect)):
                if rect.contains(event.pos()):
                    QToolTip.showText(event.globalPos(), tip, view)
                    return True
        QToolTip.hideText()
        return True

    # painting ------------------------------------------------------------------------------

    def row_rect(self, item_rect: QRect) -> QRect:
        """An item's rect widened to the viewport (rows always span the whole width)."""
        rect = QRect(item_rect)
        rect.setWidth(self.owner._list.viewport().width())
        return rect

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Any) -> None:
        rect = self.row_rect(option.rect)
        row = self.owner._model.row(index.row())
        painter.save()
        painter.setFont(self.font)
        if row.header:
            self._paint_header(painter, rect, row.hunk)
        else:
            decision = self.decision(row.hunk)
            if decision is not None and decision.rejected:
                painter.setOpacity(0.45)
            if self.unified:
                self._paint_unified(painter, rect, row)
            else:
                self._paint_split(painter, rect, row)
            painter.setOpacity(1.0)
        if row.hunk == self.current:
            painter.fillRect(rect.left(), rect.top(), 3, rect.height(), QCOLOURS["accent"])
        painter.restore()

    def _paint_header(self, p: QPainter, rect: QRect, hunk_index: int) -> None:
        """A hunk header, from a pixmap cached per width, text and decision state."""
        hunk = self.hunks[hunk_index]
        decision = self.decision(hunk_index)
        edited = decision is not None and decision.edited_text is not None
        state = None if decision is None else (decision.verdict, edited, decision.comment)
        ratio = p.device().devicePixelRatioF()
        key = (
            rect.width(),
            rect.height(),
            ratio,
            hunk.header,
            hunk.section,
            hunk_index == self.current,
            state,
            self.applied,
            self.read_only,
        )
        pixmap = self._headers.get(key)
        if pixmap is None:
            later = key not in self._headers_seen and not self.layouts_at_once
            if later or self.text.spent * 1000 > self.layout_budget_ms:
                self._headers_seen.add(key)  # drawn once; a second paint caches it
                self._draw_header(p, rect, hunk_index)
                return
            started = time.perf_counter()
            pixmap = QPixmap(QSize(round(rect.width() * ratio), round(rect.height() * ratio)))
            pixmap.setDevicePixelRatio(ratio)
            inner = QPainter(pixmap)
            inner.setFont(self.font)
            self._draw_header(inner, QRect(0, 0, rect.width(), rect.height()), hunk_index)
            inner.end()
            if len(self._headers) >= _HEADER_PIXMAPS:
                self._headers.clear()
                self._headers_seen.clear()
            self._headers[key] = pixmap
            self.text.spent += time.perf_counter() - started
        p.drawPixmap(rect.topLeft(), pixmap)

    def _draw_header(self, p: QPainter, rect: QRect, hunk_index: int) -> None:
        hunk = self.hunks[hunk_index]
        current = hunk_index == self.current
        p.fillRect(rect, QCOLOURS["hunk_current"] if current else QCOLOURS["hunk"])
        p.setPen(QPen(QCOLOURS["border_strong"] if current else QCOLOURS["border"]))
        p.drawLine(rect.left(), rect.top(), rect.right(), rect.top())
        p.drawLine(rect.left(), rect.bottom(), rect.right(), rect.bottom())
        buttons = self.buttons(rect)
        text_right = (buttons[-1][1].left() if buttons else rect.right()) - 12
        decision = self.decision(hunk_index)
        badges: list[tuple[str, QColor]] = []
        if decision is not None and self.applied:
            landed = decision.accepted
            badges.append(
                ("\u2713 applied", QCOLOURS["add_sign"])
                if landed
                else ("not applied", QCOLOURS["muted"])
            )
            if landed and decision.edited_text is not None:
                badges.append(("edited", QCOLOURS["accent"]))
        if decision is not None and not self.read_only:
            if decision.edited_text is not None:
                badges.append(("edited", QCOLOURS["accent"]))
            if decision.comment:
                badges.append((f"“{decision.comment}”", QCOLOURS["neutral"]))
        x = text_right
        p.setFont(self.ui_font)
        for label, colour in badges:
            shown = self.ui_fm.elidedText(label, Qt.TextElideMode.ElideRight, 260)
            width = self.ui_fm.horizontalAdvance(shown) + 12
            if x - width < rect.left() + 220:
                break
            x -= width
            box = QRect(x, rect.top() + 3, width, rect.height() - 6)
            fill = QColor(colour)
            fill.setAlpha(40)
            p.setPen(QPen(colour))
            p.setBrush(fill)
            p.drawRoundedRect(box, 4, 4)
            p.drawText(box, Qt.AlignmentFlag.AlignCenter, shown)
            p.setBrush(Qt.BrushStyle.NoBrush)
            x -= 6
        p.setFont(self.font)
        p.setPen(QPen(QCOLOURS["hunk_text_current"] if current else QCOLOURS["hunk_text"]))
        title = f"{hunk.header}  {hunk.section}".rstrip()
        area = QRect(rect.left() + 12, rect.top(), x - rect.left() - 12, rect.height())
        title = self.fm.elidedText(title, Qt.TextElideMode.ElideRight, area.width())
        p.drawText(area, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, title)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.setFont(self.ui_font)
        for action, box, label, _tip in buttons:
            on = decision is not None and (
                (action == "accept" and decision.accepted)
                or (action == "reject" and decision.rejected)
            )
            text, border, on_bg, on_text = BUTTONS[action]
            p.setPen(QPen(QColor(on_bg if on else border)))
            p.setBrush(QColor(on_bg) if on else QCOLOURS["button"])
            p.drawRoundedRect(box.adjusted(0, 0, -1, -1), 5, 5)
            p.setPen(QPen(QColor(on_text if on else text)))
            p.drawText(box, Qt.AlignmentFlag.AlignCenter, ("✓ " if on else "") + label)
        p.setBrush(Qt.BrushStyle.NoBrush)

    def _paint_split(self, p: QPainter, rect: QRect, row: DiffRow) -> None:
        half = rect.width() // 2
        left_rect = QRect(rect.left(), rect.top(), half, rect.height())
        right_rect = QRect(rect.left() + half, rect.top(), rect.width() - half, rect.height())
        left, right = row.left, row.right
        words_old: Sequence[Span] = ()
        words_new: Sequence[Span] = ()
        if left is not None and right is not None and left.kind == "delete" and right.kind == "add":
            words_old, words_new = word_diff(left.text, right.text)
        self._paint_side(p, left_rect, left, "old", words_old)
        self._paint_side(p, right_rect, right, "new", words_new)
        p.setPen(QPen(QCOLOURS["border"]))
        p.drawLine(right_rect.left(), rect.top(), right_rect.left(), rect.bottom())

    def _paint_side(
        self, p: QPainter, rect: QRect, line: DiffLine | None, side: str, words: Sequence[Span]
    ) -> None:
        gutter = self.gutter_width()
        if line is None:
            p.fillRect(rect, QCOLOURS["filler"])
            p.fillRect(rect, FILLER_HATCH)
            return
        kind = line.kind
        bg, gutter_bg = row_colours(kind)
        p.fillRect(rect, bg)
        p.fillRect(QRect(rect.left(), rect.top(), gutter, rect.height()), gutter_bg)
        number = line.old_no if side == "old" else line.new_no
        number_rect = QRect(rect.left(), rect.top(), gutter - 8, rect.height())
        self._paint_number(p, number_rect, number, kind)
        self._paint_sign(p, rect.left() + gutter, rect, kind)
        x = rect.left() + gutter + 2 * self.char_width
        self._paint_code(
            p, QRect(x, rect.top(), rect.right() - x, rect.height()), line, side, words
        )

    def _paint_unified(self, p: QPainter, rect: QRect, row: DiffRow) -> None:
        line = row.left if row.left is not None else row.right
        if line is None:
            return
        gutter = self.gutter_width()
        kind = line.kind
        bg, gutter_bg = row_colours(kind)
        p.fillRect(rect, bg)
        p.fillRect(QRect(rect.left(), rect.top(), 2 * gutter, rect.height()), gutter_bg)
        top, height = rect.top(), rect.height()
        self._paint_number(p, QRect(rect.left(), top, gutter - 8, height), line.old_no, kind)
        new_rect = QRect(rect.left() + gutter, top, gutter - 8, height)
        self._paint_number(p, new_rect, line.new_no, kind)
        self._paint_sign(p, rect.left() + 2 * gutter, rect, kind)
        words: Sequence[Span] = ()
        if row.partner is not None:
            if kind == "delete":
                words = word_diff(line.text, row.partner.text)[0]
            else:
                words = word_diff(row.partner.text, line.text)[1]
        x = rect.left() + 2 * gutter + 2 * self.char_width
        side = "old" if kind == "delete" else "new"
        self._paint_code(p, QRect(x, top, rect.right() - x, height), line, side, words)

    def _paint_number(
        self, p: QPainter, rect: QRect, number: int | None, kind: str = "context"
    ) -> None:
        if number is None:
            return
        p.setPen(QCOLOURS["lineno"] if kind == "context" else QCOLOURS["lineno_changed"])
        text = str(number)  # right-aligned; digits of a fixed-pitch font are char_width wide
        baseline = rect.top() + (rect.height() - self.fm.height()) // 2 + self.fm.ascent()
        p.drawText(QPoint(rect.left() + rect.width() - len(text) * self.char_width, baseline), text)

    def _paint_sign(self, p: QPainter, x: int, rect: QRect, kind: str) -> None:
        if kind == "context":
            return
        p.setPen(QCOLOURS["del_sign"] if kind == "delete" else QCOLOURS["add_sign"])
        static, width = self.text.static("\u2212" if kind == "delete" else "+")
        top = rect.top() + (rect.height() - self.fm.height()) // 2
        p.drawStaticText(x + (2 * self.char_width - width) // 2, top, static)

    def _style_id(self, token_id: int) -> int:
        """Index in ``self._styles`` of ``(colour, italic)`` for a token (0: plain text)."""
        found = self._style_ids.get(token_id)
        if found is None:
            colour, _bold, italic = token_style(STYLE, token_type(token_id))
            style = (QColor(colour) if colour else QCOLOURS["text"], italic)
            if style not in self._styles:
                self._styles.append(style)
            found = self._style_ids[token_id] = self._styles.index(style)
        return found

    def _runs(self, line: DiffLine, side: str) -> tuple[str, tuple[tuple[float, str, int], ...]]:
        """The shown text of a line and its runs ``(x px, text, style id)``.

        Runs of one style are merged and whitespace joins the run before it, so a line costs
        a few ``drawText`` calls; results are cached per line text and spans (as tuples of
        plain values, which the garbage collector does not track).
        """
        number = line.old_no if side == "old" else line.new_no
        syntax = self.old_syntax if side == "old" else self.new_syntax
        found_spans = syntax.spans(number, line.text, lex=False) if number else ()
        if found_spans is None:  # not lexed yet: plain now, coloured after a lex step
            self.lex_soon()
        spans: LineSpans = found_spans or ()
        key = (line.text, spans)
        found = self._run_cache.get(key)
        if found is not None:
            return found
        text = line.text if len(line.text) <= MAX_CHARS else line.text[:MAX_CHARS] + " …"
        pieces: list[list[int]] = []  # [start, end, style id]
        pos = 0
        for index in range(0, len(spans), 3):
            start, end = spans[index], min(spans[index + 1], len(text))
            if start >= len(text):
                break
            style = self._style_id(spans[index + 2])
            for a, b, style_id in ((pos, start, 0), (start, end, style)):
                if a >= b:
                    continue
                if pieces and (pieces[-1][2] == style_id or text[a:b].isspace()):
                    pieces[-1][1] = b
                else:
                    pieces.append([a, b, style_id])
            pos = end
        if pos < len(text):
            if pieces and (pieces[-1][2] == 0 or text[pos:].isspace()):
                pieces[-1][1] = len(text)
            else:
                pieces.append([pos, len(text), 0])
        runs = []
        x = 0.0
        fixed, advance = self._pitch
        for start, end, style_id in pieces:
            piece = text[start:end].replace("\t", TAB)
            runs.append((x, piece, style_id))
            # where a laid-out line puts the next run (fractional px): drawn run by run, the
            # line has the same pixels as its cached layout
            x += (
                len(piece) * advance
                if fixed and piece.isascii()
                else self.fmf.horizontalAdvance(piece)
            )
        if len(self._run_cache) > 4_000:
            self._run_cache.clear()
        result = (text, tuple(runs))
        self._run_cache[key] = result
        return result

    def begin_paint(self) -> None:
        """A paint of the rows starts. A line (or hunk header) is drawn directly the first
        time it is painted; painted again, its layout (pixmap) is made and cached, for
        :attr:`layout_budget_ms` of this paint at most (later paints make the rest). So a
        page painted once (scrolling through) costs what it did without the cache, and a page
        painted again and again (a build streaming in, lexing) costs a call per line."""
        self.text.spent = 0.0

    def _paint_code(
        self, p: QPainter, area: QRect, line: DiffLine, side: str, words: Sequence[Span]
    ) -> None:
        """One line's code: its cached layout (``TextCache.line``), drawn at the horizontal
        offset and clipped to ``area``; changed words get a stronger background first."""
        text, runs = self._runs(line, side)
        making = self.text.spent * 1000 < self.layout_budget_ms
        cached = self.text.line(text, runs, words, make=making, at_once=self.layouts_at_once)
        origin = area.left() - self.x_offset
        colour = QCOLOURS["del_word"] if line.kind == "delete" else QCOLOURS["add_word"]
        if cached is None:  # painted for the first time, or no time left to make its layout
            fonts = (self.font, self.italic)
            draw_runs(p, area, origin, fonts, self._styles, text, runs, words, colour)
            return
        p.setClipRect(area)
        if cached.words:
            top, height = area.top() + 1, area.height() - 2
            for x1, x2 in cached.words:
                p.fillRect(origin + x1, top, max(2, x2 - x1), height, colour)
        top = area.top() + (area.height() - self.fm.height()) // 2
        p.setPen(self._styles[0][0])  # plain text's colour (the layout has no format there)
        cached.layout.draw(p, QPointF(origin, top))
        p.setClipping(False)
