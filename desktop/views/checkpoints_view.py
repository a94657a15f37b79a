"""CheckpointsView: the session's checkpoints, diff between two, restore and undo restore."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStackedLayout,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

__all__ = ["CheckpointInfo", "CheckpointsView"]

_ID_ROLE = Qt.ItemDataRole.UserRole
_COLUMNS = ("Time", "Turn", "Label", "Files")
_STYLE = """
CheckpointsView { background: #15171c; }
QLabel { color: #c9d1d9; background: transparent; }
QLabel#checkpointsHint, QLabel#checkpointsEmpty { color: #8b949e; }
QTreeWidget { background: #0f1115; color: #c9d1d9; border: 1px solid #2d323b;
              border-radius: 4px; alternate-background-color: #14171c; outline: none; }
QTreeWidget::item { padding: 3px 2px; }
QTreeWidget::item:selected { background: #1f3a5f; color: #f0f6fc; }
QHeaderView::section { background: #1b1e24; color: #8b949e; border: none;
                       border-bottom: 1px solid #2d323b; padding: 4px 6px; }
QPushButton { color: #c9d1d9; background: #262a32; border: 1px solid #353b45;
              border-radius: 4px; padding: 4px 12px; }
QPushButton:hover { background: #30353f; }
QPushButton:disabled { color: #6e7681; background: #1f2228; border-color: #2d323b; }
QPushButton#restoreButton { color: #ffd8a8; background: #3d2e12; border-color: #6b5617; }
QPushButton#restoreButton:hover { background: #4a3816; }
QPushButton#restoreButton:disabled { color: #6e7681; background: #1f2228; border-color: #2d323b; }
QScrollBar:vertical { background: #15171c; width: 10px; margin: 0; border: none; }
QScrollBar::handle:vertical { background: #3a404b; border-radius: 4px; min-height: 24px; }
QScrollBar::add-line, QScrollBar::sub-line { height: 0; width: 0; }
"""


@dataclass(frozen=True, slots=True)
class CheckpointInfo:
    """What the view shows of one checkpoint.

    Attributes:
        id: the checkpoint id the signals carry.
        created_at: creation time, seconds since the epoch.
        turn: the agent turn it precedes, or ``None``.
        label: human label (e.g. ``"before turn 3"``, ``"before restore"``).
        files_touched: how many files differ from the previous checkpoint.
    """

    id: str
    created_at: float
    turn: int | None
    label: str
    files_touched: int

    @classmethod
    def from_checkpoint(cls, checkpoint: Any) -> CheckpointInfo:
        """Build from an object shaped like ``harnesses.checkpoints.Checkpoint`` (``id``,
        ``created_at``, ``turn``, ``label``, ``files_touched`` as a sequence of paths)."""
        touched = checkpoint.files_touched
        count = touched if isinstance(touched, int) else len(touched)
        return cls(checkpoint.id, checkpoint.created_at, checkpoint.turn, checkpoint.label, count)


def _when(epoch_s: float, now: float) -> str:
    local = time.localtime(epoch_s)
    if time.strftime("%Y-%m-%d", local) == time.strftime("%Y-%m-%d", time.localtime(now)):
        return time.strftime("%H:%M:%S", local)
    return time.strftime("%Y-%m-%d %H:%M", local)


class CheckpointsView(QWidget):
    """The list of checkpoints (newest first) with Diff, Restore and Undo restore.

    Select one checkpoint to diff it against the working tree or restore it; select two
    (Ctrl+click) to diff between them; selecting a third drops the oldest selection.
    Double-click or Enter on a row diffs it against the working tree. The view never
    touches the store: it only emits requests; the controller answers with
    :meth:`set_checkpoints` and :meth:`set_undo_available`.

    Signals:
        diffRequested(str a, str b): ``a`` the older checkpoint id, ``b`` the newer one, or
            ``""`` to compare ``a`` with the current working tree.
        restoreRequested(str id): restore the working tree to this checkpoint.
        undoRestoreRequested(): undo the last restore.

    Args:
        checkpoints: the initial list (any order).
        parent: the parent widget.
    """

    diffRequested = Signal(str, str)
    restoreRequested = Signal(str)
    undoRestoreRequested = Signal()

    def __init__(
        self, checkpoints: list[CheckpointInfo] | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("checkpointsView")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet(_STYLE)
        self._infos: dict[str, CheckpointInfo] = {}
        self._selection_order: list[str] = []

        self.tree = QTreeWidget()
        self.tree.setObjectName("checkpointsTree")
        self.tree.setColumnCount(len(_COLUMNS))
        self.tree.setHeaderLabels(list(_COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.headerItem().setTextAlignment(
            3, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        )
        self.tree.itemSelectionChanged.connect(self._on_selection)
        self.tree.itemActivated.connect(self._on_activated)

        self.empty_label = QLabel(
            "No checkpoints yet.\nOne is taken before each turn that can change files."
        )
        self.empty_label.setObjectName("checkpointsEmpty")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._stack = QStackedLayout()
        self._stack.addWidget(self.empty_label)
        self._stack.addWidget(self.tree)

        self.hint_label = QLabel()
        self.hint_label.setObjectName("checkpointsHint")
        self.diff_button = QPushButton("Diff with working tree")
        self.diff_button.setObjectName("diffButton")
        self.restore_button = QPushButton("Restore")
        self.restore_button.setObjectName("restoreButton")
        self.restore_button.setToolTip(
            "Put the working tree back as it was at this checkpoint "
            "(the current state is checkpointed first, so this can be undone)"
        )
        self.undo_button = QPushButton("Undo restore")
        self.undo_button.setObjectName("undoRestoreButton")
        self.undo_button.setToolTip("Return the working tree to how it was before the restore")
        self.undo_button.setEnabled(False)
        for button in (self.diff_button, self.restore_button, self.undo_button):
            button.setAutoDefault(False)
        self.diff_button.clicked.connect(self._request_diff)
        self.restore_button.clicked.connect(self._request_restore)
        self.undo_button.clicked.connect(self.undoRestoreRequested)

        buttons = QHBoxLayout()
        buttons.addWidget(self.diff_button)
        buttons.addWidget(self.restore_button)
        buttons.addStretch(1)
        buttons.addWidget(self.undo_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(6)
        layout.addLayout(self._stack, 1)
        layout.addWidget(self.hint_label)
        layout.addLayout(buttons)

        self.set_checkpoints(checkpoints or [])

    # -- queries ---------------------------------------------------------------------------

    def selected_ids(self) -> list[str]:
        """The selected checkpoint ids, oldest checkpoint first (at most two)."""
        return sorted(self._selection_order, key=lambda i: self._infos[i].created_at)

    # -- slots -----------------------------------------------------------------------------

    @Slot(list)
    def set_checkpoints(self, checkpoints: list[CheckpointInfo]) -> None:
        """Show ``checkpoints`` (newest first), keeping the selection of ids still present."""
        keep = [i for i in self._selection_order if any(c.id == i for c in checkpoints)]
        self._infos = {c.id: c for c in checkpoints}
        now = time.time()
        self.tree.blockSignals(True)
        try:
            self.tree.clear()
            ordered = sorted(checkpoints, key=lambda c: c.created_at, reverse=True)
            items: dict[str, QTreeWidgetItem] = {}
            for info in ordered:
                files = f"{info.files_touched} file" + ("" if info.files_touched == 1 else "s")
                item = QTreeWidgetItem(
                    [
                        _when(info.created_at, now),
                        "—" if info.turn is None else str(info.turn),
                        info.label,
                        files,
                    ]
                )
                item.setData(0, _ID_ROLE, info.id)
                item.setToolTip(
                    0, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.created_at))
                )
                item.setToolTip(2, f"{info.label}\n{info.id}")
                item.setTextAlignment(1, Qt.AlignmentFlag.AlignCenter)
                item.setTextAlignment(
                    3, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
                self.tree.addTopLevelItem(item)
                items[info.id] = item
            for checkpoint_id in keep:
                items[checkpoint_id].setSelected(True)
        finally:
            self.tree.blockSignals(False)
        self._selection_order = keep
        self._stack.setCurrentWidget(self.tree if checkpoints else self.empty_label)
        self._update_buttons()

    @Slot(bool)
    def set_undo_available(self, available: bool) -> None:
        """Enable *Undo restore* (after a restore, until the controller says otherwise)."""
        self.undo_button.setEnabled(available)

    @Slot(list)
    def select(self, ids: list[str]) -> None:
        """Select up to two checkpoints by id (unknown ids are skipped)."""
        wanted = [i for i in ids if i in self._infos][-2:]
        self.tree.blockSignals(True)
        try:
            self.tree.clearSelection()
            for item in self._items():
                if item.data(0, _ID_ROLE) in wanted:
                    item.setSelected(True)
        finally:
            self.tree.blockSignals(False)
        self._selection_order = wanted
        self._update_buttons()

    # -- internals -------------------------------------------------------------------------

    def _on_selection(self) -> None:
        selected = [item.data(0, _ID_ROLE) for item in self.tree.selectedItems()]
        order = [i for i in self._selection_order if i in selected]
        order += [i for i in selected if i not in order]
        if len(order) > 2:
            dropped, order = order[:-2], order[-2:]
            model = self.tree.selectionModel()
            self.tree.blockSignals(True)
            try:
                for item in self._items():
                    if item.data(0, _ID_ROLE) in dropped:
                        model.select(
                            self.tree.indexFromItem(item),
                            QItemSelectionModel.SelectionFlag.Deselect
                            | QItemSelectionModel.SelectionFlag.Rows,
                        )
            finally:
                self.tree.blockSignals(False)
        self._selection_order = order
        self._update_buttons()

    def _items(self) -> list[QTreeWidgetItem]:
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [item for item in items if item is not None]

    def _on_activated(self, item: QTreeWidgetItem, _column: int) -> None:
        self.diffRequested.emit(item.data(0, _ID_ROLE), "")

    def _request_diff(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self.diffRequested.emit(ids[0], "")
        elif len(ids) == 2:
            self.diffRequested.emit(ids[0], ids[1])

    def _request_restore(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 1:
            self.restoreRequested.emit(ids[0])

    def _update_buttons(self) -> None:
        count = len(self._selection_order)
        self.diff_button.setEnabled(count in (1, 2))
        self.diff_button.setText(
            "Diff between selected" if count == 2 else "Diff with working tree"
        )
        self.restore_button.setEnabled(count == 1)
        if not self._infos:
            self.hint_label.setText("")
        elif count == 0:
            self.hint_label.setText("Select a checkpoint; Ctrl+click a second to compare them.")
        elif count == 1:
            self.hint_label.setText("Ctrl+click a second checkpoint to diff between the two.")
        else:
            older, newer = (self._infos[i] for i in self.selected_ids())
            self.hint_label.setText(f"Comparing “{older.label}” → “{newer.label}”.")
