"""CompactionCard: one compaction in the conversation, its figures, its summary and *Undo*."""

from __future__ import annotations

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.context_window import CompactionRecord

__all__ = ["CompactionCard"]

_STRATEGY = {
    "local": "hand-off summary written by the model",
    "server": "server-side compaction (context_management)",
    "compact_endpoint": "responses.compact",
}
_REASON = {
    "threshold": "the context was nearly full",
    "manual": "you asked for it",
    "context_length_exceeded": "the server said the context was too long",
}


class CompactionCard(QFrame):
    """A compaction card; the summary is folded until *Show summary*.

    Signals:
        undoRequested(): the user pressed *Undo compaction*.
    """

    undoRequested = Signal()

    def __init__(self, record: CompactionRecord, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compactionCard")
        self.record = record
        self.title = QLabel(f"Context compacted: {_STRATEGY.get(record.strategy, record.strategy)}")
        self.title.setObjectName("compactionTitle")
        self.figures = QLabel(
            f"{record.items_summarised} earlier items summarised because "
            f"{_REASON.get(record.reason, record.reason)} · "
            f"{record.tokens_before:,} → {record.tokens_after:,} tokens. "
            "The full transcript is kept."
        )
        self.figures.setWordWrap(True)
        self.summary = QPlainTextEdit(
            record.summary or "(The server's compaction item is opaque: no readable summary.)"
        )
        self.summary.setReadOnly(True)
        self.summary.hide()
        self.toggle = QPushButton("Show summary")
        self.toggle.setCheckable(True)
        self.toggle.toggled.connect(self._toggle)
        self.undo = QPushButton("Undo compaction")
        self.undo.clicked.connect(self.undoRequested)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.toggle)
        buttons.addWidget(self.undo)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.figures)
        layout.addLayout(buttons)
        layout.addWidget(self.summary)

    @Slot(bool)
    def _toggle(self, shown: bool) -> None:
        self.summary.setVisible(shown)
        self.toggle.setText("Hide summary" if shown else "Show summary")

    @Slot(bool)
    def set_undoable(self, undoable: bool) -> None:
        """Enable *Undo compaction* (only the latest, before the next turn)."""
        self.undo.setEnabled(undoable)

    @Slot()
    def set_undone(self) -> None:
        """The compaction was taken back: say so and retire the button."""
        self.title.setText(self.title.text() + " (undone)")
        self.undo.setEnabled(False)
        self.undo.setText("Undone")
