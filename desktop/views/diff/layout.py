"""The diff view's widgets: toolbar, file list, row list, inline panels and apply bar."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QScrollBar,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QStyle,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..rich_text import ElidedLabel
from .files import FilePainter
from .labels import ShrinkingLine, SteadyLabel
from .palette import COLOURS as _C

__all__ = ["STYLESHEET", "DiffViewLayout"]


class DiffViewLayout:
    """Mixin of :class:`~desktop.views.diff.view.DiffView`: builds its widgets (object names
    are what tests and style sheets find them by)."""

    _delegate: Any
    _model: Any

    def _build(self) -> None:
        self._file_list = _named(QListWidget(), "fileList")
        self._file_list.setItemDelegate(FilePainter(self))  # type: ignore[arg-type]
        self._file_list.currentItemChanged.connect(self._on_file_selected)
        self._file_header = _named(QLabel("Changed files"), "fileHeaderLabel")
        left = _vbox(_frame("fileHeader", _hbox(self._file_header)), self._file_list)

        # issue 16: a long path is elided in its middle, never widening the pane
        self._title = _named(
            ElidedLabel(mode=Qt.TextElideMode.ElideMiddle, natural_width=True), "diffTitle"
        )
        # issue 15: counts that grow as hunks stream in never re-lay out the toolbar
        self._counts = SteadyLabel()
        self._hunk_label = _named(SteadyLabel(), "hunkLabel")
        self._hunk_label.setToolTip(
            "Keys: J / K next / previous hunk, A accept, R reject, E edit, C comment,\n"
            "Shift+A / Shift+R accept / reject all pending, U unified / side by side,\n"
            "Home / End first / last hunk, Ctrl+Enter apply reviewed"
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

        self._list = _rows_view(self._delegate.row_height)
        self._list.setModel(self._model)
        self._list.setItemDelegate(self._delegate)
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
        # issue 16: the panels never widen the diff's pane (Edit opens without moving panes)
        self._edit_label.setWordWrap(True)
        self._edit_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._editor = _named(QPlainTextEdit(), "hunkEditor")
        self._editor.setFont(self._delegate.font)
        self._editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self._editor.setFixedHeight(8 * self._delegate.row_height)
        self._editor.setMinimumWidth(0)
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
        self._comment_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._comment_edit = _named(QLineEdit(), "hunkComment")
        self._comment_edit.setPlaceholderText("Note for the agent about this hunk")
        self._comment_edit.returnPressed.connect(self._save_comment)
        self._comment_panel = _frame(
            "hunkCommentPanel", _hbox(self._comment_label, self._comment_edit)
        )

        self._progress = _named(ShrinkingLine(), "reviewProgress")
        self._message = _named(QLineEdit(), "applyMessage")
        self._message.setPlaceholderText("Message to the agent (optional)")
        self._apply_btn = _named(QPushButton("Apply reviewed"), "applyButton")
        self._apply_btn.setToolTip(
            "Apply the accepted hunks (with your edits) and send the comments (Ctrl+Enter).\n"
            "Pending hunks are reported as pending and not applied."
        )
        self._apply_btn.clicked.connect(self.apply_reviewed)
        self._accept_all_btn = _named(QPushButton("Accept all"), "acceptAllButton")
        self._accept_all_btn.setToolTip(
            "Accept every hunk of this file still pending (Shift+A); your decisions stay"
        )
        self._accept_all_btn.clicked.connect(self.accept_all)
        self._reject_all_btn = _named(QPushButton("Reject all"), "rejectAllButton")
        self._reject_all_btn.setToolTip(
            "Reject every hunk of this file still pending (Shift+R); your decisions stay"
        )
        self._reject_all_btn.clicked.connect(self.reject_all)
        self._apply_bar = _frame(
            "applyBar",
            _hbox(
                self._progress,
                self._message,
                self._reject_all_btn,
                self._accept_all_btn,
                self._apply_btn,
            ),
        )
        # narrow enough that the bulk buttons beside it leave the file list its width
        self._message.setMinimumWidth(96)
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
        splitter.setSizes([200, 950])  # issue 16: the rows get the room (names stay whole)
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


STYLESHEET = """
DiffView { background: #15171c; color: #c9d1d9; }
QFrame#diffToolbar, QFrame#applyBar, QFrame#fileHeader {
    background: #1b1e24; border: none; border-bottom: 1px solid #2d323b; }
QFrame#applyBar { border-bottom: none; border-top: 1px solid #2d323b; }
QFrame#hunkEditPanel, QFrame#hunkCommentPanel {
    background: #1b1e24; border: none; border-top: 1px solid #353b45; }
QListWidget#fileList { border: none; background: #1b1e24; outline: none; }
QTableView#diffRows { border: none; background: #15171c; outline: none; }
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
QPushButton:disabled { color: #484f58; background: #1b1e24; border-color: #2d323b; }
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

_W = TypeVar("_W", bound=QWidget)


def _named(widget: _W, name: str) -> _W:
    """``widget`` with its object name set (tests and style sheets find widgets by name)."""
    widget.setObjectName(name)
    return widget


def _rows_view(row_height: int) -> QTableView:
    """The diff's row list: a one-column table with fixed-height rows and no headers or grid.

    Not a ``QListView``: its item layout asks the model for ``index(row)`` of every row
    (``QAbstractListModel.index`` calls the Python ``rowCount``) on each insert, reset or
    resize, so 33,000 rows streamed in 21 chunks made 744,000 Python calls and GUI stalls of
    70 ms and more; a table's fixed-size header keeps the rows in C++ (about 1,000 calls, a few ms
    a chunk; issue 15)."""
    table = _named(QTableView(), "diffRows")
    table.setShowGrid(False)
    table.setWordWrap(False)
    table.setTabKeyNavigation(False)
    table.setCornerButtonEnabled(False)
    columns, rows = table.horizontalHeader(), table.verticalHeader()
    columns.hide()
    columns.setStretchLastSection(True)
    rows.hide()
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setMinimumSectionSize(1)
    rows.setDefaultSectionSize(row_height)
    return table


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
