"""The file list's painter: status badge, name, folder, edit-aware +/- counts and progress."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from .palette import COLOURS, QCOLOURS

if TYPE_CHECKING:
    from .view import DiffView

__all__ = ["FILE_BG", "FilePainter"]

FILE_BG = {"list": QCOLOURS["surface"], "hover": QColor("#21252c"), "selected": QColor("#233042")}


class FilePainter(QStyledItemDelegate):
    """Paints one file of the file list: status badge, name, folder, +/- counts, progress.

    Args:
        owner: the :class:`~desktop.views.diff.view.DiffView` (its ``counts(path)`` and file
            progress are shown).
    """

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
        p.fillRect(rect, FILE_BG[background])
        if selected:
            p.fillRect(rect.left(), rect.top(), 3, rect.height(), QCOLOURS["accent"])
        fm = option.fontMetrics
        line_h = fm.height()
        top = QRect(rect.left() + 10, rect.top() + 5, rect.width() - 20, line_h)
        bottom = top.translated(0, line_h + 2)
        letter, colour = self._BADGE.get(file.status, ("·", COLOURS["muted"]))
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
        counts_w = plus_w + 6 + minus_w
        folder, _, name = file.path.rpartition("/")
        name_left = badge.right() + 6
        # issue 16: the whole name; when it does not fit beside the counts, the counts go
        # to the second line (the name is elided only when the whole row cannot hold it)
        counts_on_top = bfm.horizontalAdvance(name) <= top.right() - counts_w - 6 - name_left
        counts_line = top if counts_on_top else bottom
        minus_x = counts_line.right() - minus_w
        plus_x = minus_x - 6 - plus_w
        p.setPen(QPen(QCOLOURS["del_sign"]))
        p.drawText(QRect(minus_x, counts_line.top(), minus_w, line_h), 0, counts_minus)
        p.setPen(QPen(QCOLOURS["add_sign"]))
        p.drawText(QRect(plus_x, counts_line.top(), plus_w, line_h), 0, counts_plus)
        name_right = plus_x - 6 if counts_on_top else top.right()
        name_rect = QRect(name_left, top.top(), name_right - name_left, line_h)
        p.setFont(bold)
        p.setPen(QPen(QCOLOURS["bright"] if selected else QCOLOURS["text"]))
        p.drawText(
            name_rect, 0, bfm.elidedText(name, Qt.TextElideMode.ElideMiddle, name_rect.width())
        )
        p.setFont(option.font)
        p.setPen(QPen(QCOLOURS["muted"]))
        detail = self.owner._file_progress(file)
        detail_w = fm.horizontalAdvance(detail)
        detail_right = bottom.right() if counts_on_top else plus_x - 8
        p.drawText(QRect(detail_right - detail_w, bottom.top(), detail_w, line_h), 0, detail)
        folder_rect = QRect(
            name_left, bottom.top(), detail_right - detail_w - 8 - name_left, line_h
        )
        p.drawText(  # the folder elided in its middle: both ends say where the file is
            folder_rect,
            0,
            fm.elidedText(folder or ".", Qt.TextElideMode.ElideMiddle, folder_rect.width()),
        )
        p.setPen(QPen(QCOLOURS["border"]))
        p.drawLine(rect.left(), rect.bottom(), rect.right(), rect.bottom())
        p.restore()
