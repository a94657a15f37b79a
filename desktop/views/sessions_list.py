"""SessionsList: the sessions of a repository (title, time, status), newest first."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from resources import read_text

__all__ = ["SessionSummary", "SessionsList", "format_session_time"]

_ROLE = Qt.ItemDataRole.UserRole
#: Status -> (glyph, colour, words).
_STATUS = {
    "running": ("●", "#79c0ff", "running"),
    "waiting-approval": ("◆", "#e3b341", "waiting for you"),
    "done": ("✓", "#7ee787", "done"),
    "failed": ("✗", "#ff7b72", "failed"),
    "interrupted": ("◐", "#d29922", "interrupted"),
    "stopped": ("■", "#8b949e", "stopped"),
}
_STATUS_ALIASES = {
    "waiting": "waiting-approval",
    "waiting_approval": "waiting-approval",
    "awaiting_approval": "waiting-approval",
}
_UNKNOWN = ("○", "#8b949e", "")


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of the list.

    Attributes:
        id: the session's id (what :attr:`SessionsList.sessionSelected` carries).
        title: a one-line title (usually the first task).
        updated_at: last activity, epoch seconds.
        status: ``running``, ``waiting-approval`` (shown "waiting for you"), ``done``,
            ``failed``, ``interrupted`` (its process is gone, issue 16) or ``stopped``.
    """

    id: str
    title: str
    updated_at: float
    status: str


def format_session_time(updated_at: float, now: float) -> str:
    """A short, local-time label for ``updated_at`` seen at ``now`` (both epoch seconds).

    ``just now`` (< 1 min), ``5 min ago`` (< 1 h), ``14:05`` (today), ``Yesterday``, the
    weekday within a week, else ``12 Mar`` (``12 Mar 2024`` in another year).
    """
    age = now - updated_at
    if 0 <= age < 60:
        return "just now"
    if 0 <= age < 3600:
        return f"{int(age // 60)} min ago"
    then = datetime.fromtimestamp(updated_at)
    today = datetime.fromtimestamp(now).date()
    days = (today - then.date()).days
    if days == 0:
        return then.strftime("%H:%M")
    if days == 1:
        return "Yesterday"
    if 1 < days < 7:
        return then.strftime("%A")
    if then.year == today.year:
        return f"{then.day} {then.strftime('%b')}"
    return f"{then.day} {then.strftime('%b %Y')}"


class _Delegate(QStyledItemDelegate):
    """Two lines per session: status glyph + title, then status words + time (dim)."""

    def __init__(self, owner: SessionsList) -> None:
        super().__init__(owner)
        self.owner = owner

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        return QSize(160, 2 * QFontMetrics(option.font).height() + 16)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        session: SessionSummary = index.data(_ROLE)
        rect: QRect = option.rect.adjusted(4, 2, -4, -2)
        state = option.state
        selected = bool(state & QStyle.StateFlag.State_Selected)
        hovered = bool(state & QStyle.StateFlag.State_MouseOver)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if selected or hovered:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor("#232a36" if selected else "#1d2027"))
            painter.drawRoundedRect(rect, 6, 6)
            if selected:
                painter.setBrush(QColor("#539bf5"))
                painter.drawRoundedRect(
                    QRect(rect.left(), rect.top() + 6, 3, rect.height() - 12), 1, 1
                )
        glyph, colour, words = _STATUS.get(session.status, _UNKNOWN)
        font = QFont(option.font)
        metrics = QFontMetrics(font)
        line = metrics.height()
        top = rect.top() + 6
        left = rect.left() + 12
        painter.setFont(font)
        painter.setPen(QColor(colour))
        painter.drawText(QRect(left, top, 14, line), Qt.AlignmentFlag.AlignCenter, glyph)
        title_font = QFont(font)
        title_font.setWeight(QFont.Weight.DemiBold if selected else QFont.Weight.Normal)
        painter.setFont(title_font)
        painter.setPen(QColor("#f0f6fc" if selected else "#c9d1d9"))
        width = rect.right() - left - 22
        title = QFontMetrics(title_font).elidedText(
            session.title or "Untitled session", Qt.TextElideMode.ElideRight, width
        )
        painter.drawText(QRect(left + 20, top, width, line), Qt.AlignmentFlag.AlignVCenter, title)
        small = QFont(font)
        small.setPointSizeF(max(7.0, font.pointSizeF() - 1))
        painter.setFont(small)
        when = format_session_time(session.updated_at, self.owner.now())
        second = QRect(left + 20, top + line + 1, width, line)
        painter.setPen(QColor("#8b949e"))
        painter.drawText(second, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, when)
        if words:
            painter.setPen(QColor(colour if session.status != "done" else "#8b949e"))
            painter.drawText(second, Qt.AlignmentFlag.AlignVCenter, words)
        painter.restore()

    def createEditor(
        self,
        parent: QWidget,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> QWidget:
        editor = QLineEdit(parent)
        editor.setObjectName("sessionTitleEditor")
        editor.setMaxLength(120)
        return editor

    def setEditorData(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex) -> None:
        session: SessionSummary = index.data(_ROLE)
        if isinstance(editor, QLineEdit):
            editor.setText(session.title)
            editor.selectAll()

    def setModelData(
        self,
        editor: QWidget,
        model: QAbstractItemModel,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        session: SessionSummary = index.data(_ROLE)
        title = " ".join(editor.text().split()) if isinstance(editor, QLineEdit) else ""
        if title and title != session.title:
            self.owner.rename(session.id, title)


class SessionsList(QFrame):
    """The sessions of the open repository, newest first, with a "New session" button.

    :meth:`set_sessions` and :meth:`select` never emit :attr:`sessionSelected`; only the user
    choosing a row (click or keyboard) does. Relative times refresh every minute.

    Args:
        parent: the Qt parent.
        now: the clock (epoch seconds), injectable for tests.
    """

    #: The user chose session ``id``.
    sessionSelected = Signal(str)
    #: The user asked for a new session.
    newSessionRequested = Signal()
    #: The user renamed session ``id`` to ``title`` (F2, double-click or *Rename…*).
    sessionRenamed = Signal(str, str)

    def __init__(
        self, parent: QWidget | None = None, *, now: Callable[[], float] = time.time
    ) -> None:
        super().__init__(parent)
        self.setStyleSheet(read_text("styles", "dark.qss"))
        self.now = now
        self._quiet = False
        header = QLabel("SESSIONS")
        header.setObjectName("sessionsHeader")
        self.new_button = QToolButton()
        self.new_button.setObjectName("newSession")
        self.new_button.setText("+ New")
        self.new_button.setToolTip("Start a new session (Ctrl+N)")
        self.new_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.new_button.clicked.connect(self.newSessionRequested)
        self.view = QListWidget()
        self.view.setObjectName("sessionsView")
        self.view.setItemDelegate(_Delegate(self))
        self.view.setMouseTracking(True)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setUniformItemSizes(True)
        self.view.currentItemChanged.connect(self._on_current)
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
        )
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._context_menu)
        self.empty = QLabel("No sessions yet.\nDescribe a task to start one.")
        self.empty.setObjectName("emptyHint")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)

        top = QHBoxLayout()
        top.setContentsMargins(12, 8, 8, 4)
        top.addWidget(header)
        top.addStretch(1)
        top.addWidget(self.new_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.empty, 1)
        self.view.hide()
        self._tick = QTimer(self, interval=60_000)
        self._tick.timeout.connect(self.view.viewport().update)
        self._tick.start()

    @Slot(list)
    def set_sessions(self, sessions: Sequence[SessionSummary]) -> None:
        """Show ``sessions`` (sorted newest first); the selected session stays selected."""
        current = self.current_id()
        ordered = sorted(sessions, key=lambda s: s.updated_at, reverse=True)
        self._quiet = True
        try:
            self.view.clear()
            for session in ordered:
                status = _STATUS_ALIASES.get(session.status, session.status)
                if status != session.status:
                    session = SessionSummary(session.id, session.title, session.updated_at, status)
                item = QListWidgetItem()
                item.setData(_ROLE, session)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                words = _STATUS.get(session.status, _UNKNOWN)[2]
                item.setToolTip(f"{session.title}\n{words}" if words else session.title)
                self.view.addItem(item)
            if current is not None:
                self.select(current)
        finally:
            self._quiet = False
        self.view.setVisible(bool(ordered))
        self.empty.setVisible(not ordered)

    @Slot(str)
    def select(self, session_id: str) -> None:
        """Highlight ``session_id`` (no signal); an unknown id clears the selection."""
        quiet, self._quiet = self._quiet, True
        try:
            for row in range(self.view.count()):
                item = self.view.item(row)
                if item.data(_ROLE).id == session_id:
                    self.view.setCurrentItem(item)
                    self.view.scrollToItem(item)
                    return
            self.view.setCurrentRow(-1)
            self.view.clearSelection()
        finally:
            self._quiet = quiet

    def current_id(self) -> str | None:
        """The selected session's id, or ``None``."""
        item = self.view.currentItem()
        return item.data(_ROLE).id if item is not None else None

    def sessions(self) -> list[SessionSummary]:
        """The sessions shown, top to bottom."""
        return [self.view.item(row).data(_ROLE) for row in range(self.view.count())]

    def rename(self, session_id: str, title: str) -> None:
        """Show ``title`` for ``session_id`` at once and emit :attr:`sessionRenamed` (the
        app stores it in the journal)."""
        for row in range(self.view.count()):
            item = self.view.item(row)
            old: SessionSummary = item.data(_ROLE)
            if old.id == session_id:
                item.setData(_ROLE, SessionSummary(old.id, title, old.updated_at, old.status))
                item.setToolTip(title)
        self.sessionRenamed.emit(session_id, title)

    def edit_title(self, session_id: str) -> None:
        """Open the title editor on ``session_id``'s row (no-op for an unknown id)."""
        for row in range(self.view.count()):
            item = self.view.item(row)
            if item.data(_ROLE).id == session_id:
                self.view.editItem(item)
                return

    def _context_menu(self, pos: QPoint) -> None:
        item = self.view.itemAt(pos)
        if item is None:
            return
        session_id = item.data(_ROLE).id
        menu = QMenu(self)
        menu.addAction("Rename…", lambda: self.edit_title(session_id))
        menu.popup(self.view.viewport().mapToGlobal(pos))

    def _on_current(self, item: QListWidgetItem | None, _previous: object) -> None:
        if item is not None and not self._quiet:
            self.sessionSelected.emit(item.data(_ROLE).id)
