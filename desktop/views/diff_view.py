"""DiffView: review file diffs side by side or unified, accepting, rejecting or editing each hunk."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QHelpEvent,
    QIcon,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPen,
    QPixmap,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollBar,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from desktop.views.diff_highlight import (
    DARK_STYLE,
    LineSpans,
    Span,
    SyntaxLines,
    lexer_for_path,
    token_style,
    token_type,
    word_diff,
)
from desktop.views.diff_model import (
    DiffHunk,
    DiffLine,
    DiffRow,
    FileDiff,
    HunkDecision,
    ReviewState,
    Verdict,
    build_rows,
    edit_hunk,
    editor_text_to_hunk_text,
    hunk_text_to_editor_text,
    line_counts,
    split_lines,
)
from resources import read_text

__all__ = ["DiffView"]

_STYLE = DARK_STYLE  # pygments style for token colours (dark background)
_MAX_CHARS = 1000  # longest line drawn (chars); the rest is elided
_TAB = "    "
_LEX_SLICE_MS = 8.0  # syntax lexing per event-loop turn (ms)
_C = {  # the app's dark palette (resources/styles/dark.qss)
    "text": "#c9d1d9",
    "bright": "#f0f6fc",
    "muted": "#8b949e",
    "lineno": "#6e7681",
    "lineno_changed": "#9da7b3",
    "border": "#2d323b",
    "border_strong": "#353b45",
    "canvas": "#15171c",
    "surface": "#1b1e24",
    "context": "#15171c",
    "gutter": "#181a20",
    "filler": "#191b21",
    "filler_hatch": "#22262d",
    "del": "#2c1a1e",
    "del_gutter": "#3d1f24",
    "del_word": "#5e242b",
    "del_sign": "#ff7b72",
    "add": "#14261c",
    "add_gutter": "#1a3524",
    "add_word": "#1c4a2b",
    "add_sign": "#7ee787",
    "hunk": "#171f2a",
    "hunk_current": "#1c2b3d",
    "hunk_text": "#8ba3bf",
    "hunk_text_current": "#a5d6ff",
    "accent": "#539bf5",
    "accept": "#7ee787",
    "reject": "#ff7b72",
    "neutral": "#8b949e",
    "button": "#262a32",
    "button_text": "#c9d1d9",
}
_Q = {name: QColor(value) for name, value in _C.items()}
_BUTTONS = {
    # action: (text, border, background when on, text when on); off buttons are "button"
    "accept": ("#7ee787", "#2e6b3f", "#238636", "#ffffff"),
    "reject": ("#ff7b72", "#6e2c2c", "#b62324", "#ffffff"),
    "edit": ("#c9d1d9", "#353b45", "#30353f", "#f0f6fc"),
    "comment": ("#c9d1d9", "#353b45", "#30353f", "#f0f6fc"),
}
_ACTIONS = (
    ("accept", "Accept", "Accept this hunk (A)"),
    ("reject", "Reject", "Reject this hunk (R)"),
    ("edit", "Edit", "Edit the proposed lines of this hunk (E)"),
    ("comment", "Comment", "Comment on this hunk for the agent (C)"),
)


_FILLER_HATCH = QBrush(_Q["filler_hatch"], Qt.BrushStyle.BDiagPattern)
"""Diagonal lines over the filler of a side that has no line in a row."""


def _row_colours(kind: str) -> tuple[QColor, QColor]:
    """``(code background, gutter background)`` of a line of ``kind``."""
    if kind == "delete":
        return _Q["del"], _Q["del_gutter"]
    if kind == "add":
        return _Q["add"], _Q["add_gutter"]
    return _Q["context"], _Q["gutter"]


class _RowsModel(QAbstractListModel):
    """The display rows of the shown file; painting is the delegate's job."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[DiffRow] = []

    def set_rows(self, rows: list[DiffRow]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        if role != Qt.ItemDataRole.DisplayRole or not index.isValid():
            return None
        row = self.rows[index.row()]
        if row.header:
            return f"hunk {row.hunk + 1}"
        line = row.left or row.right
        return line.text if line else ""


class _RowDelegate(QStyledItemDelegate):
    """Paints diff rows (hunk headers with their buttons, line pairs or single lines)."""

    def __init__(self, owner: DiffView) -> None:
        super().__init__(owner)
        self.owner = owner
        self.font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.font.setPointSizeF(max(9.0, self.font.pointSizeF()))
        self.italic = QFont(self.font)
        self.italic.setItalic(True)
        self.fm = QFontMetrics(self.font)
        self.ui_font = QFont(owner.font())
        self.ui_font.setPointSizeF(max(8.0, self.ui_font.pointSizeF() - 1))
        self.ui_fm = QFontMetrics(self.ui_font)
        self.row_height = self.fm.height() + 6
        self.char_width = self.fm.horizontalAdvance("0")
        self.gutter_digits = 3
        self.x_offset = 0
        self.unified = False
        self.read_only = False
        self.current = -1
        self.hunks: list[DiffHunk] = []
        self.old_syntax = SyntaxLines(None, [])
        self.new_syntax = SyntaxLines(None, [])
        self.decision: Callable[[int], HunkDecision | None] = lambda _index: None
        self._styles: list[tuple[QColor, bool]] = [(_Q["text"], False)]
        self._style_ids: dict[int, int] = {}
        self.lex_soon: Callable[[], None] = lambda: None
        self._run_cache: dict[
            tuple[str, LineSpans], tuple[str, tuple[tuple[int, str, int], ...]]
        ] = {}

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
        for action, label, tip in reversed(_ACTIONS):
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
        row = self.owner._model.rows[index.row()]
        if mouse is None or mouse.button() != Qt.MouseButton.LeftButton or not row.header:
            return False
        for action, rect, _label, _tip in self.buttons(self.row_rect(option.rect)):
            if rect.contains(mouse.position().toPoint()):
                self.owner._header_action(row.hunk, action)
                return True
        return False

    def helpEvent(self, event: QHelpEvent, view: Any, option: Any, index: Any) -> bool:
        if index.isValid() and self.owner._model.rows[index.row()].header:
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
        row = self.owner._model.rows[index.row()]
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
            painter.fillRect(rect.left(), rect.top(), 3, rect.height(), _Q["accent"])
        painter.restore()

    def _paint_header(self, p: QPainter, rect: QRect, hunk_index: int) -> None:
        hunk = self.hunks[hunk_index]
        current = hunk_index == self.current
        p.fillRect(rect, _Q["hunk_current"] if current else _Q["hunk"])
        p.setPen(QPen(_Q["border_strong"] if current else _Q["border"]))
        p.drawLine(rect.left(), rect.top(), rect.right(), rect.top())
        p.drawLine(rect.left(), rect.bottom(), rect.right(), rect.bottom())
        buttons = self.buttons(rect)
        text_right = (buttons[-1][1].left() if buttons else rect.right()) - 12
        decision = self.decision(hunk_index)
        badges: list[tuple[str, QColor]] = []
        if decision is not None and not self.read_only:
            if decision.edited_text is not None:
                badges.append(("edited", _Q["accent"]))
            if decision.comment:
                badges.append((f"“{decision.comment}”", _Q["neutral"]))
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
        p.setPen(QPen(_Q["hunk_text_current"] if current else _Q["hunk_text"]))
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
            text, border, on_bg, on_text = _BUTTONS[action]
            p.setPen(QPen(QColor(on_bg if on else border)))
            p.setBrush(QColor(on_bg) if on else _Q["button"])
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
        p.setPen(QPen(_Q["border"]))
        p.drawLine(right_rect.left(), rect.top(), right_rect.left(), rect.bottom())

    def _paint_side(
        self, p: QPainter, rect: QRect, line: DiffLine | None, side: str, words: Sequence[Span]
    ) -> None:
        gutter = self.gutter_width()
        if line is None:
            p.fillRect(rect, _Q["filler"])
            p.fillRect(rect, _FILLER_HATCH)
            return
        kind = line.kind
        bg, gutter_bg = _row_colours(kind)
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
        bg, gutter_bg = _row_colours(kind)
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
        p.setPen(QPen(_Q["lineno"] if kind == "context" else _Q["lineno_changed"]))
        p.drawText(rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, str(number))

    def _paint_sign(self, p: QPainter, x: int, rect: QRect, kind: str) -> None:
        if kind == "context":
            return
        p.setPen(QPen(_Q["del_sign"] if kind == "delete" else _Q["add_sign"]))
        box = QRect(x, rect.top(), 2 * self.char_width, rect.height())
        p.drawText(box, Qt.AlignmentFlag.AlignCenter, "\u2212" if kind == "delete" else "+")

    def _style_id(self, token_id: int) -> int:
        """Index in ``self._styles`` of ``(colour, italic)`` for a token (0: plain text)."""
        found = self._style_ids.get(token_id)
        if found is None:
            colour, _bold, italic = token_style(_STYLE, token_type(token_id))
            style = (QColor(colour) if colour else _Q["text"], italic)
            if style not in self._styles:
                self._styles.append(style)
            found = self._style_ids[token_id] = self._styles.index(style)
        return found

    def _runs(self, line: DiffLine, side: str) -> tuple[str, tuple[tuple[int, str, int], ...]]:
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
        text = line.text if len(line.text) <= _MAX_CHARS else line.text[:_MAX_CHARS] + " …"
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
        x = 0
        for start, end, style_id in pieces:
            piece = text[start:end].replace("\t", _TAB)
            runs.append((x, piece, style_id))
            x += self.fm.horizontalAdvance(piece)
        if len(self._run_cache) > 4_000:
            self._run_cache.clear()
        result = (text, tuple(runs))
        self._run_cache[key] = result
        return result

    def _paint_code(
        self, p: QPainter, area: QRect, line: DiffLine, side: str, words: Sequence[Span]
    ) -> None:
        text, runs = self._runs(line, side)
        fm = self.fm
        origin = area.left() - self.x_offset
        p.save()
        p.setClipRect(area)
        if words:
            colour = _Q["del_word"] if line.kind == "delete" else _Q["add_word"]
            for start, end in words:
                x1 = origin + fm.horizontalAdvance(text[:start].replace("\t", _TAB))
                x2 = origin + fm.horizontalAdvance(text[:end].replace("\t", _TAB))
                p.fillRect(QRect(x1, area.top() + 1, max(2, x2 - x1), area.height() - 2), colour)
        baseline = area.top() + (area.height() - fm.height()) // 2 + fm.ascent()
        left, right = area.left(), area.right()
        italic_on = False
        styles = self._styles
        for x, piece, style_id in runs:
            x += origin
            if x > right:
                break
            if x + len(piece) * self.char_width * 2 < left:
                continue
            colour, italic = styles[style_id]
            if italic != italic_on:
                p.setFont(self.italic if italic else self.font)
                italic_on = italic
            p.setPen(colour)
            p.drawText(QPoint(x, baseline), piece)
        p.restore()


_FILE_BG = {"list": _Q["surface"], "hover": QColor("#21252c"), "selected": QColor("#233042")}


class _FileDelegate(QStyledItemDelegate):
    """Paints one file of the file list: status badge, name, folder, +/- counts, progress."""

    _BADGE = {
        "created": ("A", "#7ee787"),
        "modified": ("M", "#e3b341"),
        "deleted": ("D", "#ff7b72"),
    }

    def __init__(self, owner: DiffView) -> None:
        super().__init__(owner)
        self.owner = owner

    def sizeHint(self, option: QStyleOptionViewItem, index: Any) -> QSize:
        return QSize(200, 2 * option.fontMetrics.height() + 12)

    def paint(self, p: QPainter, option: QStyleOptionViewItem, index: Any) -> None:
        file = self.owner._files.get(index.data(Qt.ItemDataRole.UserRole))
        if file is None:
            return
        rect = QRect(option.rect)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        p.save()
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        background = "selected" if selected else "hover" if hovered else "list"
        p.fillRect(rect, _FILE_BG[background])
        if selected:
            p.fillRect(rect.left(), rect.top(), 3, rect.height(), _Q["accent"])
        fm = option.fontMetrics
        line_h = fm.height()
        top = QRect(rect.left() + 10, rect.top() + 5, rect.width() - 20, line_h)
        bottom = top.translated(0, line_h + 2)
        letter, colour = self._BADGE.get(file.status, ("·", _C["muted"]))
        badge = QRect(top.left(), top.top(), line_h, line_h)
        p.setPen(QPen(QColor(colour)))
        bold = QFont(option.font)
        bold.setBold(True)
        p.setFont(bold)
        p.drawText(badge, Qt.AlignmentFlag.AlignCenter, letter)
        added, removed = self.owner.counts(file.path)
        counts_plus, counts_minus = f"+{added}", f"\u2212{removed}"
        bfm = QFontMetrics(bold)
        minus_w = bfm.horizontalAdvance(counts_minus)
        plus_w = bfm.horizontalAdvance(counts_plus)
        p.setPen(QPen(_Q["del_sign"]))
        p.drawText(QRect(top.right() - minus_w, top.top(), minus_w, line_h), 0, counts_minus)
        p.setPen(QPen(_Q["add_sign"]))
        plus_x = top.right() - minus_w - 6 - plus_w
        p.drawText(QRect(plus_x, top.top(), plus_w, line_h), 0, counts_plus)
        folder, _, name = file.path.rpartition("/")
        name_rect = QRect(badge.right() + 6, top.top(), plus_x - badge.right() - 12, line_h)
        p.setPen(QPen(_Q["bright"] if selected else _Q["text"]))
        p.drawText(
            name_rect, 0, bfm.elidedText(name, Qt.TextElideMode.ElideMiddle, name_rect.width())
        )
        p.setFont(option.font)
        p.setPen(QPen(_Q["muted"]))
        detail = self.owner._file_progress(file)
        detail_w = fm.horizontalAdvance(detail)
        p.drawText(QRect(bottom.right() - detail_w, bottom.top(), detail_w, line_h), 0, detail)
        folder_rect = QRect(
            name_rect.left(), bottom.top(), bottom.right() - detail_w - 8 - name_rect.left(), line_h
        )
        p.drawText(
            folder_rect,
            0,
            fm.elidedText(folder or ".", Qt.TextElideMode.ElideLeft, folder_rect.width()),
        )
        p.setPen(QPen(_Q["border"]))
        p.drawLine(rect.left(), rect.bottom(), rect.right(), rect.bottom())
        p.restore()


_STYLESHEET = """
DiffView { background: #15171c; color: #c9d1d9; }
QFrame#diffToolbar, QFrame#applyBar, QFrame#fileHeader {
    background: #1b1e24; border: none; border-bottom: 1px solid #2d323b; }
QFrame#applyBar { border-bottom: none; border-top: 1px solid #2d323b; }
QFrame#hunkEditPanel, QFrame#hunkCommentPanel {
    background: #1b1e24; border: none; border-top: 1px solid #353b45; }
QListWidget#fileList { border: none; background: #1b1e24; outline: none; }
QListView#diffRows { border: none; background: #15171c; outline: none; }
QLabel#diffTitle { font-weight: 600; color: #f0f6fc; }
QLabel#fileHeaderLabel { color: #8b949e; font-weight: 600; }
QLabel#hunkLabel, QLabel#reviewProgress { color: #8b949e; }
QLabel#diffEmpty { color: #6e7681; background: #15171c; }
QToolButton { color: #c9d1d9; background: transparent; border: 1px solid transparent;
    border-radius: 5px; padding: 3px 9px; }
QToolButton:hover { background: #262a32; border-color: #353b45; }
QToolButton:pressed { background: #1f2329; }
QToolButton:checked { color: #f0f6fc; background: #2b3340; border-color: #3f6fa8; }
QToolButton:disabled { color: #484f58; }
QPushButton { color: #c9d1d9; background: #262a32; border: 1px solid #353b45;
    border-radius: 6px; padding: 5px 14px; }
QPushButton:hover { background: #30353f; border-color: #444b57; }
QPushButton:pressed { background: #1f2329; }
QPushButton#applyButton, QPushButton#saveEditButton { color: #ffffff; background: #238636;
    border-color: #2ea043; font-weight: 600; }
QPushButton#applyButton:hover, QPushButton#saveEditButton:hover { background: #2ea043; }
QPushButton#applyButton:disabled { color: #6e7681; background: #1f2a23; border-color: #2d323b; }
QLineEdit, QPlainTextEdit { background: #0f1115; color: #e6edf3; border: 1px solid #353b45;
    border-radius: 6px; padding: 4px 6px; selection-background-color: #264f78;
    selection-color: #f0f6fc; }
QLineEdit:focus, QPlainTextEdit:focus { border-color: #3f6fa8; }
QScrollBar:horizontal { background: #15171c; }
"""


class DiffView(QWidget):
    """Review file diffs hunk by hunk: a file list on the left, the diff on the right.

    The diff is shown side by side (old | new) or unified, with line numbers, red/green
    backgrounds, the changed words of paired lines highlighted more strongly and syntax colours
    (pygments, lexer guessed from the file name). Rows are painted lazily by a delegate, so a
    10,000-line diff opens at once; syntax lexing runs in slices of the event loop.

    Keys (the diff or file list focused): ``j``/``k`` next/previous hunk, ``a`` accept,
    ``r`` reject (both then move on), ``e`` edit the proposed side, ``c`` comment, ``u`` toggle
    unified view, ``Ctrl+Enter`` apply. Editing and commenting open inline panels (never a
    modal dialog). In read-only mode (checkpoint diffs) only navigation is available.

    Signals:
        applyRequested(proposal_id: str, decisions: dict[int, HunkDecision], comment: str):
            "Apply reviewed" on a file with a proposal; ``decisions`` holds every hunk of that
            file (pending ones as pending), ``comment`` the message to the agent.
        decisionChanged(path: str, hunk_id: int, decision: HunkDecision): a hunk's decision,
            edit or comment changed.
        currentHunkChanged(path: str, hunk_id: int): the current hunk moved (0: none).

    Args:
        files: the file diffs to show (paths unique).
        read_only: show without accept/reject/edit/comment/apply.
        parent: the parent widget.

    Raises:
        ValueError: two files share a path.
    """

    applyRequested = Signal(str, object, str)
    decisionChanged = Signal(str, int, object)
    currentHunkChanged = Signal(str, int)

    def __init__(
        self,
        files: Sequence[FileDiff] = (),
        *,
        read_only: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._files: dict[str, FileDiff] = {}
        self._review = ReviewState()
        self._path: str | None = None
        self._current = -1
        self._headers: list[int] = []
        self._longest = 0
        self._unified = False
        self._read_only = read_only
        self._editing: int | None = None
        self._commenting: int | None = None
        self._model = _RowsModel(self)
        self._delegate = _RowDelegate(self)
        self._delegate.decision = self._decision_at
        self._delegate.lex_soon = self._lex_soon
        self._lex_timer = QTimer(self)
        self._lex_timer.setInterval(0)
        self._lex_timer.timeout.connect(self._lex_step)
        self._build()
        self.setStyleSheet(read_text("styles", "dark.qss") + _STYLESHEET)
        self.set_read_only(read_only)
        self.set_files(files)

    # construction --------------------------------------------------------------------------

    def _build(self) -> None:
        self._file_list = _named(QListWidget(), "fileList")
        self._file_list.setItemDelegate(_FileDelegate(self))
        self._file_list.currentItemChanged.connect(self._on_file_selected)
        self._file_header = _named(QLabel("Changed files"), "fileHeaderLabel")
        left = _vbox(_frame("fileHeader", _hbox(self._file_header)), self._file_list)

        self._title = _named(QLabel(), "diffTitle")
        self._counts = QLabel()
        self._hunk_label = _named(QLabel(), "hunkLabel")
        self._hunk_label.setToolTip(
            "Keys: J / K next / previous hunk, A accept, R reject, E edit, C comment,\n"
            "U unified / side by side, Ctrl+Enter apply reviewed"
        )
        self._prev_btn = _tool(self, "", "Previous hunk (K)", self.previous_hunk)
        self._prev_btn.setIcon(self._tinted_icon(QStyle.StandardPixmap.SP_ArrowUp))
        self._next_btn = _tool(self, "", "Next hunk (J)", self.next_hunk)
        self._next_btn.setIcon(self._tinted_icon(QStyle.StandardPixmap.SP_ArrowDown))
        self._split_btn = _tool(self, "Split", "Side-by-side view (U toggles)", None)
        self._unified_btn = _tool(self, "Unified", "Unified view (U toggles)", None)
        modes = QButtonGroup(self)
        for button in (self._split_btn, self._unified_btn):
            button.setCheckable(True)
            modes.addButton(button)
        self._split_btn.setChecked(True)
        self._unified_btn.toggled.connect(self.set_unified)
        toolbar = _hbox(
            self._title,
            self._counts,
            None,
            self._hunk_label,
            self._prev_btn,
            self._next_btn,
            self._split_btn,
            self._unified_btn,
        )

        self._list = _named(QListView(), "diffRows")
        self._list.setModel(self._model)
        self._list.setItemDelegate(self._delegate)
        self._list.setUniformItemSizes(True)
        self._list.setResizeMode(QListView.ResizeMode.Adjust)
        self._list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self._list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self._list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self._list.verticalScrollBar().setSingleStep(3 * self._delegate.row_height)
        self._list.pressed.connect(self._on_row_pressed)
        self._hscroll = QScrollBar(Qt.Orientation.Horizontal)
        self._hscroll.valueChanged.connect(self._on_hscroll)
        self._empty = QLabel("No changes to review", alignment=Qt.AlignmentFlag.AlignCenter)
        self._empty.setObjectName("diffEmpty")
        self._stack = QStackedWidget()
        self._stack.addWidget(_vbox(self._list, self._hscroll))
        self._stack.addWidget(self._empty)

        self._edit_label = QLabel()
        self._editor = _named(QPlainTextEdit(), "hunkEditor")
        self._editor.setFont(self._delegate.font)
        self._editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._editor.setFixedHeight(8 * self._delegate.row_height)
        save = _named(QPushButton("Save edit"), "saveEditButton")
        save.setToolTip("Keep this version of the hunk (Ctrl+Enter)")
        save.clicked.connect(self._save_edit)
        cancel = QPushButton("Cancel")
        cancel.setToolTip("Discard the changes (Esc)")
        cancel.clicked.connect(self._close_panels)
        self._edit_panel = _frame(
            "hunkEditPanel", _vbox(self._edit_label, self._editor, _hbox(None, cancel, save))
        )

        self._comment_label = QLabel()
        self._comment_edit = _named(QLineEdit(), "hunkComment")
        self._comment_edit.setPlaceholderText("Note for the agent about this hunk")
        self._comment_edit.returnPressed.connect(self._save_comment)
        self._comment_panel = _frame(
            "hunkCommentPanel", _hbox(self._comment_label, self._comment_edit)
        )

        self._progress = _named(QLabel(), "reviewProgress")
        self._message = _named(QLineEdit(), "applyMessage")
        self._message.setPlaceholderText("Message to the agent (optional)")
        self._apply_btn = _named(QPushButton("Apply reviewed"), "applyButton")
        self._apply_btn.setToolTip(
            "Apply the accepted hunks (with your edits) and send the comments (Ctrl+Enter).\n"
            "Pending hunks are reported as pending and not applied."
        )
        self._apply_btn.clicked.connect(self.apply_reviewed)
        self._apply_bar = _frame("applyBar", _hbox(self._progress, self._message, self._apply_btn))
        self._message.setMinimumWidth(160)
        # the progress line may shrink (full text in its tooltip): the window's default split
        # then leaves the conversation its share instead of the diff's minimum width
        self._progress.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self._progress.setMinimumWidth(80)

        right = _vbox(
            _frame("diffToolbar", toolbar),
            self._stack,
            self._edit_panel,
            self._comment_panel,
            self._apply_bar,
        )
        right_layout = right.layout()
        assert isinstance(right_layout, QVBoxLayout)
        right_layout.setStretchFactor(self._stack, 1)  # the panels keep their natural height
        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([250, 950])
        splitter.setHandleWidth(1)
        splitter.setStyleSheet(f"QSplitter::handle {{ background: {_C['border']}; }}")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self._edit_panel.hide()
        self._comment_panel.hide()
        watched_widgets = (
            self._file_list,
            self._list,
            self._list.viewport(),
            self._editor,
            self._comment_edit,
        )
        for watched in watched_widgets:
            watched.installEventFilter(self)

    def _tinted_icon(self, pixmap: QStyle.StandardPixmap) -> QIcon:
        """A standard icon recoloured for the dark palette (text colour; faint when disabled)."""
        source = self.style().standardIcon(pixmap)
        icon = QIcon()
        for mode, colour in ((QIcon.Mode.Normal, _C["text"]), (QIcon.Mode.Disabled, "#484f58")):
            for size in (16, 32):
                image = source.pixmap(size, size).toImage()
                painter = QPainter(image)
                painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
                painter.fillRect(image.rect(), QColor(colour))
                painter.end()
                icon.addPixmap(QPixmap.fromImage(image), mode)
        return icon

    # public API ----------------------------------------------------------------------------

    def set_files(self, files: Sequence[FileDiff]) -> None:
        """Show ``files``; decisions of files whose content is unchanged are kept.

        Raises:
            ValueError: two files share a path.
        """
        paths = [f.path for f in files]
        if len(set(paths)) != len(paths):
            raise ValueError("file diffs must have distinct paths")
        previous, previous_review = self._files, self._review
        self._files = {f.path: f for f in files}
        self._review = ReviewState(files)
        for f in files:
            old = previous.get(f.path)
            if old is not None and (old.proposal_id, old.old_text, old.new_text) == (
                f.proposal_id,
                f.old_text,
                f.new_text,
            ):
                self._review.restore(f.path, previous_review.decisions(f.path))
        self._file_list.blockSignals(True)
        self._file_list.clear()
        for path in paths:
            item = QListWidgetItem(path)
            item.setData(Qt.ItemDataRole.UserRole, path)
            item.setToolTip(path)
            self._file_list.addItem(item)
        self._file_list.blockSignals(False)
        self._file_header.setText(f"Changed files ({len(paths)})")
        keep = self._path if self._path in self._files else (paths[0] if paths else None)
        if keep is None:
            self._show_nothing()
        else:
            self.show_file(keep)

    @Slot(str)
    def show_file(self, path: str) -> None:
        """Show the diff of ``path`` from its first hunk.

        Raises:
            KeyError: ``path`` is not among the files.
        """
        file = self._files[path]
        self._close_panels()
        self._path = path
        row = list(self._files).index(path)
        if self._file_list.currentRow() != row:
            self._file_list.blockSignals(True)
            self._file_list.setCurrentRow(row)
            self._file_list.blockSignals(False)
        lexer = lexer_for_path(path)
        old_lines = _side_lines(file, "old")
        new_lines = _side_lines(file, "new")
        self._delegate.old_syntax = SyntaxLines(lexer, old_lines)
        self._delegate.new_syntax = SyntaxLines(lexer, new_lines)
        self._delegate._run_cache.clear()
        digits = len(str(max(len(old_lines), len(new_lines), 1)))
        self._delegate.gutter_digits = max(3, digits)
        self._current = 0 if file.hunks else -1
        self._rebuild_rows()
        self._hscroll.setValue(0)
        self._list.scrollToTop()
        self._stack.setCurrentIndex(0 if file.hunks else 1)
        self._empty.setText("No differences" if self._files else "No changes to review")
        status = {"created": "  (new file)", "deleted": "  (deleted)"}.get(file.status, "")
        self._title.setText(path + status)
        self._show_counts(file)
        self._refresh()
        if self._lex_timer.isActive() or lexer is not None:
            self._lex_timer.start()
        self.currentHunkChanged.emit(path, self._hunk_id())

    def counts(self, path: str) -> tuple[int, int]:
        """Lines added and removed in ``path``'s diff, with the user's hunk edits counted as
        edited (an edited hunk counts its edited text against the old side); ``(0, 0)`` for
        an unknown path."""
        file = self._files.get(path)
        if file is None:
            return 0, 0
        decisions = self._review.decisions(path)
        added = removed = 0
        for hunk in file.hunks:
            edited = decisions.get(hunk.id, HunkDecision()).edited_text
            if edited is None:
                added, removed = added + hunk.added, removed + hunk.removed
            else:
                a, r = line_counts(hunk.old_text, edited)
                added, removed = added + a, removed + r
        return added, removed

    def _show_counts(self, file: FileDiff) -> None:
        added, removed = self.counts(file.path)
        self._counts.setText(
            f"<span style='color:{_C['add_sign']}'>+{added}</span>&nbsp;"
            f"<span style='color:{_C['del_sign']}'>&minus;{removed}</span>"
        )

    def restore_decisions(self, path: str, decisions: dict[int, HunkDecision]) -> None:
        """Put back decisions made earlier on ``path`` (a review restored from the journal
        after a restart); unknown hunk ids are ignored."""
        if path not in self._files:
            return
        self._review.restore(path, decisions)
        if path == self._path:
            self._rebuild_rows()
            self._show_counts(self._files[path])
            self._refresh()
        self._file_list.viewport().update()

    def current_file(self) -> FileDiff | None:
        """The file shown, or ``None``."""
        return self._files.get(self._path) if self._path is not None else None

    def current_hunk(self) -> DiffHunk | None:
        """The current hunk of the shown file (as proposed, before any edit), or ``None``."""
        file = self.current_file()
        return file.hunks[self._current] if file is not None and self._current >= 0 else None

    def decisions(self, path: str | None = None) -> dict[int, HunkDecision]:
        """Hunk id → decision for ``path`` (default: the shown file)."""
        target = path if path is not None else self._path
        return self._review.decisions(target) if target is not None else {}

    def displayed_rows(self) -> list[DiffRow]:
        """The rows of the shown diff, in display order (headers included)."""
        return list(self._model.rows)

    def is_unified(self) -> bool:
        """Whether the diff is shown unified (else side by side)."""
        return self._unified

    def is_read_only(self) -> bool:
        """Whether accept/reject/edit/comment/apply are hidden."""
        return self._read_only

    @Slot(bool)
    def set_unified(self, unified: bool) -> None:
        """Show the diff unified (``True``) or side by side (``False``)."""
        if unified == self._unified:
            return
        top = self._list.indexAt(QPoint(0, 0))
        top_hunk = self._model.rows[top.row()].hunk if top.isValid() else -1
        self._unified = unified
        for button, checked in ((self._unified_btn, unified), (self._split_btn, not unified)):
            button.blockSignals(True)
            button.setChecked(checked)
            button.blockSignals(False)
        self._rebuild_rows()
        if top_hunk > 0:
            self._scroll_to_hunk(top_hunk)

    @Slot(bool)
    def set_read_only(self, read_only: bool) -> None:
        """Switch read-only mode (no accept/reject/edit/comment/apply) on or off."""
        self._read_only = read_only
        self._delegate.read_only = read_only
        self._close_panels()
        self._apply_bar.setVisible(not read_only)
        self._list.viewport().update()
        self._file_list.viewport().update()

    @Slot()
    def next_hunk(self) -> None:
        """Make the next hunk current and scroll to it."""
        if 0 <= self._current < len(self._headers) - 1:
            self._set_current(self._current + 1)
        elif self._current >= 0:
            self._scroll_to_hunk(self._current)

    @Slot()
    def previous_hunk(self) -> None:
        """Make the previous hunk current and scroll to it."""
        if self._current > 0:
            self._set_current(self._current - 1)
        elif self._current == 0:
            self._scroll_to_hunk(0)

    @Slot()
    def accept_current(self) -> None:
        """Accept the current hunk and move to the next one."""
        self._decide_and_advance(Verdict.ACCEPTED)

    @Slot()
    def reject_current(self) -> None:
        """Reject the current hunk and move to the next one."""
        self._decide_and_advance(Verdict.REJECTED)

    @Slot()
    def edit_current(self) -> None:
        """Open the inline editor on the proposed side of the current hunk."""
        hunk = self.current_hunk()
        if self._read_only or hunk is None or self._path is None:
            return
        self._close_panels()
        decision = self._review.get(self._path, hunk.id)
        text = decision.edited_text if decision.edited_text is not None else hunk.new_text
        self._editing = self._current
        self._edit_label.setText(
            f"Edit the proposed lines of hunk {hunk.id} ({hunk.header}). "
            "Ctrl+Enter saves (and accepts the hunk), Esc cancels."
        )
        self._editor.setPlainText(hunk_text_to_editor_text(text))
        self._edit_panel.show()
        self._keep_current_in_view()
        self._editor.setFocus()

    @Slot()
    def comment_current(self) -> None:
        """Open the inline comment field on the current hunk."""
        hunk = self.current_hunk()
        if self._read_only or hunk is None or self._path is None:
            return
        self._close_panels()
        self._commenting = self._current
        self._comment_label.setText(f"Comment on hunk {hunk.id}:")
        self._comment_edit.setText(self._review.get(self._path, hunk.id).comment or "")
        self._comment_panel.show()
        self._keep_current_in_view()
        self._comment_edit.setFocus()

    @Slot()
    def apply_reviewed(self) -> None:
        """Emit ``applyRequested`` for the shown file (nothing in read-only mode or without a
        proposal)."""
        file = self.current_file()
        if self._read_only or file is None or file.proposal_id is None:
            return
        self.applyRequested.emit(
            file.proposal_id, self._review.decisions(file.path), self._message.text().strip()
        )

    # internals -----------------------------------------------------------------------------

    def _show_nothing(self) -> None:
        self._path = None
        self._current = -1
        self._headers = []
        self._model.set_rows([])
        self._stack.setCurrentIndex(1)
        self._empty.setText("No changes to review")
        self._title.setText("")
        self._counts.setText("")
        self._lex_timer.stop()
        self._refresh()

    def _shown_hunks(self, file: FileDiff) -> list[DiffHunk]:
        shown = []
        for hunk in file.hunks:
            edited = self._review.get(file.path, hunk.id).edited_text
            shown.append(hunk if edited is None else edit_hunk(hunk, edited))
        return shown

    def _rebuild_rows(self) -> None:
        file = self.current_file()
        hunks = self._shown_hunks(file) if file is not None else []
        rows, self._headers = build_rows(hunks, unified=self._unified)
        self._delegate.hunks = hunks
        self._delegate.unified = self._unified
        self._delegate.current = self._current
        self._longest = min(
            _MAX_CHARS + 2, max((len(ln.text) for h in hunks for ln in h.lines), default=0)
        )
        self._model.set_rows(rows)
        self._update_hscroll()

    def _update_hscroll(self) -> None:
        delegate = self._delegate
        visible = delegate.text_width(self._list.viewport().width())
        content = (self._longest + 2) * delegate.char_width
        self._hscroll.setRange(0, max(0, content - visible))
        self._hscroll.setPageStep(max(1, visible))
        self._hscroll.setSingleStep(4 * delegate.char_width)
        self._hscroll.setVisible(content > visible)

    def _hunk_id(self) -> int:
        hunk = self.current_hunk()
        return hunk.id if hunk is not None else 0

    def _decision_at(self, hunk_index: int) -> HunkDecision | None:
        file = self.current_file()
        if file is None or not 0 <= hunk_index < len(file.hunks):
            return None
        return self._review.get(file.path, file.hunks[hunk_index].id)

    def _file_progress(self, file: FileDiff) -> str:
        total = len(file.hunks)
        if self._read_only or file.proposal_id is None:
            return f"{total} hunk{'s' if total != 1 else ''}"
        reviewed = self._review.reviewed(file.path)
        return "✓ reviewed" if total and reviewed == total else f"{reviewed}/{total} reviewed"

    def _set_current(self, index: int, *, scroll: bool = True) -> None:
        self._current = index
        self._delegate.current = index
        if scroll:
            self._scroll_to_hunk(index)
        self._list.viewport().update()
        self._refresh()
        if self._path is not None:
            self.currentHunkChanged.emit(self._path, self._hunk_id())

    def _keep_current_in_view(self) -> None:
        """After a panel opened below the diff (the viewport shrank), show the hunk again."""
        layout = self.layout()
        if layout is not None:
            layout.activate()
        self._scroll_to_hunk(self._current)

    def _scroll_to_hunk(self, index: int) -> None:
        if 0 <= index < len(self._headers):
            target = self._model.index(self._headers[index], 0)
            self._list.scrollTo(target, QAbstractItemView.ScrollHint.PositionAtTop)

    def _decide(self, index: int, verdict: Verdict) -> None:
        file = self.current_file()
        if self._read_only or file is None or not 0 <= index < len(file.hunks):
            return
        hunk_id = file.hunks[index].id
        decision = self._review.set_verdict(file.path, hunk_id, verdict)
        self._list.viewport().update()
        self._refresh()
        self.decisionChanged.emit(file.path, hunk_id, decision)

    def _decide_and_advance(self, verdict: Verdict) -> None:
        if self._read_only or self._current < 0:
            return
        self._decide(self._current, verdict)
        if self._current < len(self._headers) - 1:
            self._set_current(self._current + 1)

    def _header_action(self, index: int, action: str) -> None:
        if index != self._current:
            self._set_current(index, scroll=False)
        decision = self._decision_at(index)
        if decision is None:
            return
        if action == "accept":
            self._decide(index, Verdict.PENDING if decision.accepted else Verdict.ACCEPTED)
        elif action == "reject":
            self._decide(index, Verdict.PENDING if decision.rejected else Verdict.REJECTED)
        elif action == "edit":
            self.edit_current()
        elif action == "comment":
            self.comment_current()

    def _save_edit(self) -> None:
        file = self.current_file()
        if self._editing is None or file is None:
            return
        hunk = file.hunks[self._editing]
        edited = editor_text_to_hunk_text(self._editor.toPlainText(), hunk.new_text)
        self._review.set_edit(file.path, hunk.id, None if edited == hunk.new_text else edited)
        decision = self._review.set_verdict(file.path, hunk.id, Verdict.ACCEPTED)
        self._editing = None
        scroll = self._list.verticalScrollBar().value()
        self._rebuild_rows()
        self._list.verticalScrollBar().setValue(scroll)
        self._close_panels()
        self._show_counts(file)
        self._file_list.viewport().update()
        self._refresh()
        self.decisionChanged.emit(file.path, hunk.id, decision)

    def _save_comment(self) -> None:
        file = self.current_file()
        if self._commenting is None or file is None:
            return
        hunk = file.hunks[self._commenting]
        text = self._comment_edit.text().strip()
        decision = self._review.set_comment(file.path, hunk.id, text or None)
        self._commenting = None
        self._close_panels()
        self._list.viewport().update()
        self.decisionChanged.emit(file.path, hunk.id, decision)

    @Slot()
    def _close_panels(self) -> None:
        had_focus = self._edit_panel.isVisible() or self._comment_panel.isVisible()
        self._editing = self._commenting = None
        self._edit_panel.hide()
        self._comment_panel.hide()
        if had_focus:
            self._list.setFocus()

    def _refresh(self) -> None:
        file = self.current_file()
        total = len(file.hunks) if file is not None else 0
        self._hunk_label.setText(f"Hunk {self._current + 1} of {total}" if total else "")
        self._prev_btn.setEnabled(self._current > 0)
        self._next_btn.setEnabled(0 <= self._current < total - 1)
        decisions = list(self.decisions().values())
        accepted = sum(d.accepted for d in decisions)
        rejected = sum(d.rejected for d in decisions)
        self._progress.setText(
            f"{accepted + rejected}/{total} reviewed · ✓ {accepted} · ✗ {rejected}"
        )
        self._progress.setToolTip(
            f"{accepted + rejected} of {total} hunks reviewed: {accepted} accepted, "
            f"{rejected} rejected"
        )
        self._apply_btn.setEnabled(file is not None and file.proposal_id is not None)
        self._file_list.viewport().update()

    def _on_file_selected(self, item: QListWidgetItem | None, _previous: Any = None) -> None:
        if item is not None:
            self.show_file(item.data(Qt.ItemDataRole.UserRole))

    def _on_row_pressed(self, index: QModelIndex) -> None:
        if index.isValid():
            hunk = self._model.rows[index.row()].hunk
            if hunk != self._current:
                self._set_current(hunk, scroll=False)

    def _on_hscroll(self, value: int) -> None:
        self._delegate.x_offset = value
        self._list.viewport().update()

    def _lex_soon(self) -> None:
        if not self._lex_timer.isActive():
            self._lex_timer.start()

    def _lex_step(self) -> None:
        """One slice of syntax lexing: visible lines first, then the whole texts in order."""
        delegate = self._delegate
        rows = self._visible_rows()
        old_nos = [r.left.old_no for r in rows if r.left is not None and r.left.old_no]
        new_nos = [r.right.new_no for r in rows if r.right is not None and r.right.new_no]
        lexed = delegate.new_syntax.lex_lines(new_nos, _LEX_SLICE_MS / 2)
        lexed += delegate.old_syntax.lex_lines(old_nos, _LEX_SLICE_MS / 2)
        if lexed:
            self._list.viewport().update()
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
            bottom = len(self._model.rows) - 1
        return self._model.rows[top : bottom + 1]

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
            if kind == QEvent.Type.Resize:
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


def _side_lines(file: FileDiff, side: str) -> list[str]:
    """The lines (no terminators) of one side of ``file``; rebuilt from the hunks when the
    text is not given (lines outside the hunks are then empty)."""
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


_W = TypeVar("_W", bound=QWidget)


def _named(widget: _W, name: str) -> _W:
    """``widget`` with its object name set (tests and style sheets find widgets by name)."""
    widget.setObjectName(name)
    return widget


def _hbox(*items: QWidget | None) -> QHBoxLayout:
    layout = QHBoxLayout()
    layout.setContentsMargins(10, 6, 10, 6)
    layout.setSpacing(8)
    for item in items:
        if item is None:
            layout.addStretch(1)
        else:
            layout.addWidget(item)
    return layout


def _vbox(*items: QWidget | QHBoxLayout) -> QWidget:
    widget = QWidget()
    layout = QVBoxLayout(widget)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    for item in items:
        if isinstance(item, QWidget):
            layout.addWidget(item)
        else:
            layout.addLayout(item)
    return widget


def _frame(name: str, layout: QHBoxLayout | QWidget) -> QFrame:
    frame = _named(QFrame(), name)
    if isinstance(layout, QWidget):
        inner = QVBoxLayout(frame)
        inner.setContentsMargins(10, 8, 10, 8)
        inner.addWidget(layout)
    else:
        frame.setLayout(layout)
    return frame


def _tool(owner: QWidget, text: str, tip: str, slot: Callable[[], None] | None) -> QToolButton:
    button = QToolButton(owner)
    button.setText(text)
    button.setToolTip(tip)
    button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    if slot is not None:
        button.clicked.connect(slot)
    return button
