"""Composer: the multi-line task input with Send (Ctrl+Enter) and Stop (Esc)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.tools.shell_patch import looks_like_envelope, parse_shell_patch
from resources import read_text

__all__ = ["Composer", "is_patch_text"]

_IDLE_PLACEHOLDER = "Describe a task for the agent…"
_RUNNING_PLACEHOLDER = "The agent is working… type your next message"


def is_patch_text(text: str) -> bool:
    """Whether composer text is a patch to apply, not a prompt: a ``*** Begin Patch`` envelope
    ending in ``*** End Patch``, bare or in a Markdown fence, or an ``apply_patch <<'EOF'``
    heredoc (:func:`core.tools.shell_patch.parse_shell_patch`)."""
    body = text.strip()
    if body.startswith("```") and body.endswith("```"):
        body = body.partition("\n")[2].rpartition("```")[0].strip()
    if looks_like_envelope(body) and body.rstrip().endswith("*** End Patch"):
        return True
    return parse_shell_patch(text) is not None


class _Edit(QPlainTextEdit):
    """The text field: Ctrl+Enter submits, Esc stops; grows from 2 to ``max_lines`` lines."""

    submit = Signal()
    escape = Signal()

    def __init__(self, min_lines: int = 2, max_lines: int = 10) -> None:
        super().__init__()
        self.setObjectName("composerEdit")
        self.setTabChangesFocus(True)
        self._min_lines = min_lines
        self._max_lines = max_lines
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().documentLayout().documentSizeChanged.connect(lambda _size: self._fit())
        self._fit()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.submit.emit()
            event.accept()
        elif event.key() == Qt.Key.Key_Escape:
            self.escape.emit()
            event.accept()
        else:
            super().keyPressEvent(event)

    def _fit(self) -> None:
        lines = 0
        block = self.document().begin()
        while block.isValid():  # visual lines, wrapped ones included
            layout = block.layout()
            lines += max(1, layout.lineCount() if layout is not None else 1)
            block = block.next()
        lines = min(max(lines, self._min_lines), self._max_lines)
        margins = self.contentsMargins()
        height = (
            lines * self.fontMetrics().lineSpacing()
            + int(2 * self.document().documentMargin())
            + margins.top()
            + margins.bottom()
            + 4
        )
        if height != self.height():
            self.setFixedHeight(height)


class Composer(QFrame):
    """Where the user types a task: Ctrl+Enter (or Send) submits, Esc (or Stop) stops the run.

    While a run is going (:meth:`set_running`), Send becomes Stop and Ctrl+Enter does
    nothing (the draft is kept); Esc emits :attr:`stopRequested` only while running. Empty
    or whitespace-only text is never submitted; submitted text is cleared from the field.

    Args:
        parent: the Qt parent.
    """

    #: The user sent ``text`` (stripped of surrounding whitespace).
    submitted = Signal(str)
    #: The user asked to stop the current run (Esc or the Stop button).
    stopRequested = Signal()
    #: The user sent a ``*** Begin Patch`` envelope (bare, fenced or as ``apply_patch <<'EOF'``):
    #: it is applied through review instead of being sent as a prompt (issue 13).
    patchSubmitted = Signal(str)
    #: ``/compact`` was sent: compact the session's context now (issue 14).
    compactRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setStyleSheet(read_text("styles", "dark.qss"))
        self._running = False
        self.edit = _Edit()
        self.edit.setPlaceholderText(_IDLE_PLACEHOLDER)
        self.edit.setToolTip("Describe the task. Ctrl+Enter sends; Enter starts a new line.")

        self.send_button = QToolButton()
        self.send_button.setObjectName("sendButton")
        self.send_button.setText("Send")
        self.send_button.setToolTip("Send the task to the agent (Ctrl+Enter)")
        self.stop_button = QToolButton()
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setText("■ Stop")
        self.stop_button.setToolTip("Stop the agent's run (Esc)")
        self.stop_button.hide()
        for button in (self.send_button, self.stop_button):
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setFixedWidth(84)
        self.hint = QLabel()
        self.hint.setObjectName("composerHint")

        buttons = QVBoxLayout()
        buttons.setSpacing(4)
        buttons.addStretch(1)
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        row = QHBoxLayout()
        row.setSpacing(8)
        row.addWidget(self.edit, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 6)
        layout.setSpacing(4)
        layout.addLayout(row)
        layout.addWidget(self.hint)

        self.edit.submit.connect(self.submit)
        self.edit.escape.connect(self._escape)
        self.edit.textChanged.connect(self._update)
        self.send_button.clicked.connect(self.submit)
        self.stop_button.clicked.connect(self.stopRequested)
        self._update()

    # -- slots -----------------------------------------------------------------------------

    @Slot(bool)
    def set_running(self, running: bool) -> None:
        """Show Stop instead of Send while a run is going (``True``), Send otherwise."""
        self._running = running
        self.send_button.setVisible(not running)
        self.stop_button.setVisible(running)
        self.edit.setPlaceholderText(_RUNNING_PLACEHOLDER if running else _IDLE_PLACEHOLDER)
        self._update()

    @Slot()
    def submit(self) -> None:
        """Emit :attr:`submitted` with the draft and clear it (no-op if empty or running)."""
        text = self.edit.toPlainText().strip()
        if self._running or not text:
            return
        self.edit.clear()
        if text == "/compact":
            self.compactRequested.emit()
            return
        if is_patch_text(text):
            self.patchSubmitted.emit(text)
            return
        self.submitted.emit(text)

    @Slot(str)
    def set_text(self, text: str) -> None:
        """Replace the draft with ``text`` (e.g. to restore a task) and focus the field."""
        self.edit.setPlainText(text)
        self.edit.moveCursor(self.edit.textCursor().MoveOperation.End)
        self.edit.setFocus()

    def text(self) -> str:
        """The current draft."""
        return self.edit.toPlainText()

    def is_running(self) -> bool:
        """Whether the composer is in its running state (Stop shown)."""
        return self._running

    # -- internals -------------------------------------------------------------------------

    def _escape(self) -> None:
        if self._running:
            self.stopRequested.emit()

    def _update(self) -> None:
        has_text = bool(self.edit.toPlainText().strip())
        self.send_button.setEnabled(has_text and not self._running)
        if self._running:
            self.hint.setText("Esc stops the run · your draft is kept")
        else:
            self.hint.setText("Ctrl+Enter to send · Enter for a new line")
