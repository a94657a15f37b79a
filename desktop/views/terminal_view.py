"""TerminalView: one block per shell command, with live ANSI output, kill, copy and search."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, cast

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QResizeEvent,
    QShortcut,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.views.ansi import Style, palette_rgb
from desktop.views.terminal_model import (
    CommandBlock,
    Line,
    TerminalModel,
    omitted_marker,
)

from .rich_text import ElidedLabel
from .units import human_ms

__all__ = ["TerminalView"]

_log = logging.getLogger("desktop")

# Theme: a dark terminal (xterm-style 16-colour palette, as in common editor terminals).
_ANSI16 = (
    "#3b3f45",
    "#e5534b",
    "#57ab5a",
    "#c69026",
    "#539bf5",
    "#b083f0",
    "#39c5cf",
    "#c9d1d9",
    "#6e7681",
    "#ff7b72",
    "#7ee787",
    "#e3b341",
    "#79c0ff",
    "#d2a8ff",
    "#56d4dd",
    "#f0f6fc",
)
_FG = "#c9d1d9"
_BG = "#0f1115"
# stderr is told apart, not alarming: many tools (unittest, git, pip) report progress and
# success there; failures are shown by the exit status
_STDERR_FG = "#d9cbb0"
_STDERR_BG = "#1a1814"
_MATCH_BG = "#6b5617"
_CURRENT_BG = "#f0a020"
_STYLE = """
TerminalView, #terminalBlocks { background: #15171c; }
_BlockWidget { background: #1b1e24; border: 1px solid #2d323b; border-radius: 6px; }
_BlockWidget[status="running"] { border-color: #2f5a8a; }
_BlockWidget[status="failed"] { border-color: #6e2c2c; }
QLabel { color: #c9d1d9; background: transparent; border: none; }
QLabel#cwd, QLabel#footer { color: #8b949e; }
QLabel#prompt { color: #57ab5a; }
QPlainTextEdit { background: #0f1115; color: #c9d1d9; border: none; border-radius: 4px; }
QToolButton { color: #c9d1d9; background: #262a32; border: 1px solid #353b45;
              border-radius: 4px; padding: 1px 8px; }
QToolButton:hover { background: #30353f; }
QToolButton#killButton { color: #ffb4ad; background: #3b1d1d; border-color: #6e2c2c; }
QToolButton:disabled { color: #6e7681; }
_FindBar { background: #1b1e24; border-bottom: 1px solid #2d323b; }
QScrollBar:vertical { background: #15171c; width: 10px; margin: 0; border: none; }
QScrollBar::handle:vertical { background: #3a404b; border-radius: 4px; min-height: 24px; }
QScrollBar::add-line, QScrollBar::sub-line { height: 0; width: 0; }
QScrollBar::add-page, QScrollBar::sub-page { background: none; }
QLineEdit { background: #0f1115; color: #c9d1d9; border: 1px solid #353b45;
            border-radius: 4px; padding: 2px 6px; }
"""
_BADGES = {
    "sandboxed": ("#1c3a26", "#7ee787"),
    "not sandboxed": ("#3d2e12", "#e3b341"),
    "codex": ("#2d2350", "#c4a7ff"),
    "agent": ("#1c2b3d", "#79c0ff"),
    "user": ("#2b2f36", "#c9d1d9"),
}


def _color(value: int | tuple[int, int, int]) -> QColor:
    if isinstance(value, tuple):
        return QColor(*value)
    if value < 16:
        return QColor(_ANSI16[value])
    return QColor(*palette_rgb(value))


def _badge(text: str, kind: str, tooltip: str = "") -> QLabel:
    bg, fg = _BADGES[kind]
    label = QLabel(text)
    label.setObjectName(f"badge-{kind.replace(' ', '-')}")
    label.setStyleSheet(
        f"QLabel {{ background: {bg}; color: {fg}; border-radius: 8px; padding: 1px 8px; }}"
    )
    label.setToolTip(tooltip)
    return label


def _button(text: str) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    return button


def _human_chars(count: int) -> str:
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if count >= size:
            return f"{count / size:.1f} {unit}chars"
    return f"{count} chars"


class _Formats:
    """QTextCharFormat per (style, stream), cached."""

    def __init__(self) -> None:
        self._cache: dict[tuple[Style, str], QTextCharFormat] = {}
        self.marker = QTextCharFormat()
        self.marker.setForeground(QColor("#8b949e"))
        self.marker.setFontItalic(True)
        self.marker.setBackground(QColor("#1b1e24"))

    def get(self, style: Style, stream: str) -> QTextCharFormat:
        key = (style, stream)
        fmt = self._cache.get(key)
        if fmt is None:
            fmt = self._cache[key] = self._make(style, stream)
        return fmt

    def _make(self, style: Style, stream: str) -> QTextCharFormat:
        stderr = stream == "stderr"
        fg = _color(style.fg) if style.fg is not None else QColor(_STDERR_FG if stderr else _FG)
        bg = _color(style.bg) if style.bg is not None else None
        if style.bold and isinstance(style.fg, int) and style.fg < 8:
            fg = QColor(_ANSI16[style.fg + 8])  # bold + basic colour shows bright, as xterm
        if style.inverse:
            fg, bg = (bg or QColor(_BG)), fg
        if style.dim:
            fg.setAlphaF(0.6)
        fmt = QTextCharFormat()
        fmt.setForeground(QBrush(fg))
        if bg is not None:
            fmt.setBackground(QBrush(bg))
        elif stderr:
            fmt.setBackground(QBrush(QColor(_STDERR_BG)))
        if style.bold:
            fmt.setFontWeight(QFont.Weight.Bold)
        fmt.setFontItalic(style.italic)
        fmt.setFontUnderline(style.underline)
        fmt.setFontStrikeOut(style.strike)
        return fmt


class _StickyScroll(QObject):
    """Keeps a scroll bar at its end while the user has not scrolled away from it."""

    def __init__(self, area: QPlainTextEdit | QScrollArea) -> None:
        super().__init__(area)
        self._bar = area.verticalScrollBar()
        self.stuck = True
        self.paused = False
        self._bar.valueChanged.connect(self._on_value)
        self._bar.rangeChanged.connect(self._on_range)

    def _on_value(self, value: int) -> None:
        if not self.paused:
            self.stuck = value >= self._bar.maximum() - 2

    def _on_range(self, _low: int, high: int) -> None:
        if self.stuck and not self.paused:
            self._bar.setValue(high)

    def settle(self) -> None:
        """Scroll to the end if stuck (after a programmatic change)."""
        self.paused = False
        if self.stuck:
            self._bar.setValue(self._bar.maximum())


class _BlockWidget(QFrame):
    """One command: header, output, footer. Renders its model block incrementally."""

    def __init__(self, view: TerminalView, block: CommandBlock, formats: _Formats) -> None:
        super().__init__()
        self.block_id = block.block_id
        self._formats = formats
        self._view = view
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        bold = QFont(mono)
        bold.setBold(True)

        prompt = QLabel("$")
        prompt.setObjectName("prompt")
        prompt.setFont(bold)
        self.command_label = QLabel(block.command)
        self.command_label.setObjectName("command")
        self.command_label.setFont(bold)
        self.command_label.setWordWrap(True)
        self.command_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top = QHBoxLayout()
        top.addWidget(prompt, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.command_label, 1)

        cwd = ElidedLabel(block.cwd, mode=Qt.TextElideMode.ElideMiddle, natural_width=True)
        cwd.setObjectName("cwd")
        cwd.setFont(mono)
        meta = QHBoxLayout()
        meta.addWidget(cwd)
        for badge in self._badges(block):
            meta.addWidget(badge)
        meta.addStretch(1)
        self.copy_command_button = _button("Copy command")
        self.copy_output_button = _button("Copy output")
        self.kill_button = _button("Kill")
        self.kill_button.setObjectName("killButton")
        self.kill_button.setToolTip("Stop this command (SIGTERM, then SIGKILL)")
        for button in (self.copy_command_button, self.copy_output_button, self.kill_button):
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            meta.addWidget(button)
        self.copy_command_button.clicked.connect(lambda: view.copy_command(self.block_id))
        self.copy_output_button.clicked.connect(lambda: view.copy_output(self.block_id))
        self.kill_button.clicked.connect(self._kill)

        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setUndoRedoEnabled(False)
        self.output.setFont(mono)
        self.output.setFrameShape(QFrame.Shape.NoFrame)
        self.output.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.output.setWordWrapMode(QTextOption.WrapMode.WrapAnywhere)
        self.output.document().setDocumentMargin(6)
        self.output.hide()
        self._sticky = _StickyScroll(self.output)

        self.footer = QLabel()
        self.footer.setObjectName("footer")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(5)
        layout.addLayout(top)
        layout.addLayout(meta)
        layout.addWidget(self.output)
        layout.addWidget(self.footer)

        self._head_rendered = 0
        self._marker = False
        self._tail_first = 0
        self._tail_next = 0
        self._version = -1
        self.render_block(block)

    @staticmethod
    def _badges(block: CommandBlock) -> list[QLabel]:
        badges = []
        note = block.sandbox_note or ""
        if block.sandboxed is True:
            badges.append(_badge("sandboxed", "sandboxed", note))
        elif block.sandboxed is False:
            text = f"not sandboxed: {note}" if note else "not sandboxed"
            badges.append(_badge(text, "not sandboxed", note))
        elif note:
            badges.append(_badge(note, "user", note))
        kind = block.source if block.source in ("codex", "agent", "user") else "user"
        label = {"codex": "Codex", "agent": "agent", "user": "you"}.get(block.source, block.source)
        badges.append(_badge(label, kind, f"command run by {label}"))
        return badges

    def _kill(self) -> None:
        self.kill_button.setEnabled(False)
        self.kill_button.setText("Killing…")
        self._view.killRequested.emit(self.block_id)

    # -- rendering -------------------------------------------------------------------------

    def render_block(self, block: CommandBlock) -> None:
        """Bring the document and footer up to date with ``block`` (only what changed)."""
        if block.version == self._version:
            return
        self._version = block.version
        doc = self.output.document()
        self._sticky.paused = True
        cursor = QTextCursor(doc)
        cursor.beginEditBlock()
        # The last text block always holds the partial line: clear it, add new head lines,
        # drop what the model dropped (marker after the head), add new tail lines, then
        # the partial line again.
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.movePosition(QTextCursor.MoveOperation.StartOfBlock, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        if len(block.head) > self._head_rendered:
            self._insert(cursor, block.head[self._head_rendered :], end_with_newline=True)
            self._head_rendered = len(block.head)
        if block.omitted_lines and (block.first_tail_serial > self._tail_first or not self._marker):
            self._drop_omitted(doc, cursor, block)
            cursor.movePosition(QTextCursor.MoveOperation.End)
        start = max(self._tail_next, block.first_tail_serial)
        if block.next_serial > start:
            tail = block.tail
            offset = start - block.first_tail_serial
            self._insert(cursor, [tail[i] for i in range(offset, len(tail))], end_with_newline=True)
            if self._tail_next == self._tail_first:
                self._tail_first = start
            self._tail_next = block.next_serial
        self._insert(cursor, [block.partial_line()], end_with_newline=False)
        cursor.endEditBlock()
        has_output = doc.characterCount() > 1
        self.output.setVisible(has_output)
        if has_output:
            self._fit_height(doc)
        self._sticky.settle()
        self._update_footer(block)

    def _drop_omitted(self, doc: QTextDocument, cursor: QTextCursor, block: CommandBlock) -> None:
        """Remove rendered tail lines the model dropped and show/update the marker line."""
        marker_at = self._head_rendered
        if not self._marker:
            cursor.setPosition(doc.findBlockByNumber(marker_at).position())
            cursor.insertText(omitted_marker(block.omitted_lines) + "\n", self._formats.marker)
            self._marker = True
        else:
            line = doc.findBlockByNumber(marker_at)
            cursor.setPosition(line.position())
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
            cursor.insertText(omitted_marker(block.omitted_lines), self._formats.marker)
        drop = min(block.first_tail_serial, self._tail_next) - self._tail_first
        if drop > 0:
            first = doc.findBlockByNumber(marker_at + 1)
            after = doc.findBlockByNumber(marker_at + 1 + drop)
            cursor.setPosition(first.position())
            cursor.setPosition(after.position(), QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
        self._tail_first = block.first_tail_serial
        self._tail_next = max(self._tail_next, self._tail_first)

    def _insert(self, cursor: QTextCursor, lines: list[Line], *, end_with_newline: bool) -> None:
        """Insert ``lines``, joining text of one format into a single insertText call."""
        formats = self._formats
        pending: list[str] = []
        key: tuple[Style, str] | None = None
        for line in lines:
            for text, style, stream in line:
                if (style, stream) != key:
                    if pending and key is not None:
                        cursor.insertText("".join(pending), formats.get(*key))
                    pending = []
                    key = (style, stream)
                pending.append(text)
            if end_with_newline:
                if key is None:
                    key = (Style(), "stdout")
                pending.append("\n")
        if pending and key is not None:
            cursor.insertText("".join(pending), formats.get(*key))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width() and not self.output.isHidden():
            self._fit_height(self.output.document())  # lines wrap differently now

    def _fit_height(self, doc: QTextDocument) -> None:
        lines = self._visual_lines(doc, self._view.max_visible_lines)
        metrics = self.output.fontMetrics()
        height = lines * metrics.lineSpacing() + int(2 * doc.documentMargin()) + 4
        if self.output.height() != height:
            self.output.setFixedHeight(height)

    def _visual_lines(self, doc: QTextDocument, cap: int) -> int:
        """Lines on screen once long lines wrap (monospace, wrap anywhere), counted up to
        ``cap``; computed from the text, since the plain-text layout works lazily."""
        margin = int(2 * doc.documentMargin()) + self.output.frameWidth() * 2 + 4
        usable = self.output.viewport().width() or self.output.width()
        char = max(1, self.output.fontMetrics().horizontalAdvance("M"))
        columns = max(1, (usable - margin) // char)
        total = 0
        block = doc.begin()
        while block.isValid() and total < cap:
            chars = block.length() - 1  # without the line separator
            total += max(1, -(-chars // columns))  # ceil(chars / columns)
            block = block.next()
        return min(total, cap)

    def _update_footer(self, block: CommandBlock) -> None:
        size = _human_chars(block.received_chars) + " of output" if block.received_chars else ""
        omitted = f"{block.omitted_lines:,} lines omitted" if block.omitted_lines else ""
        if block.running:
            status, color, state = "● running…", "#79c0ff", "running"
        elif block.status == "timeout":
            status = f"⏱ timed out after {human_ms(block.duration_ms)}"
            color, state = "#e3b341", "failed"
        elif block.status == "killed":
            code = f" (exit {block.exit_code})" if block.exit_code is not None else ""
            status = f"■ killed{code} · {human_ms(block.duration_ms)}"
            color, state = "#ff7b72", "failed"
        elif block.exit_code == 0:
            status, color, state = f"✓ exit 0 · {human_ms(block.duration_ms)}", "#7ee787", "ok"
        else:
            status = f"✗ exit {block.exit_code} · {human_ms(block.duration_ms)}"
            color, state = "#ff7b72", "failed"
        extra = " · ".join(part for part in (size, omitted) if part)
        self.footer.setText(
            f'<span style="color:{color}">{status}</span>'
            + (f' <span style="color:#8b949e">· {extra}</span>' if extra else "")
        )
        self.kill_button.setVisible(block.running)
        if self.property("status") != state:
            self.setProperty("status", state)
            self.style().unpolish(self)
            self.style().polish(self)


class _FindEdit(QLineEdit):
    """Enter: next match; Shift+Enter: previous; Escape: close."""

    next = Signal()
    previous = Signal()
    closed = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.previous.emit()
            else:
                self.next.emit()
        elif event.key() == Qt.Key.Key_Escape:
            self.closed.emit()
        else:
            super().keyPressEvent(event)


class _FindBar(QFrame):
    def __init__(self) -> None:
        super().__init__()
        self.edit = _FindEdit()
        self.edit.setPlaceholderText("Find in output")
        self.count = QLabel()
        self.count.setMinimumWidth(70)
        self.prev_button = _button("↑")
        self.next_button = _button("↓")
        self.close_button = _button("✕")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        for widget in (self.edit, self.count, self.prev_button, self.next_button):
            layout.addWidget(widget)
        layout.addWidget(self.close_button)
        self.prev_button.clicked.connect(self.edit.previous)
        self.next_button.clicked.connect(self.edit.next)
        self.close_button.clicked.connect(self.edit.closed)


class TerminalView(QWidget):
    """Shell commands as blocks: header, live coloured output, exit status; kill/copy/search.

    Slots take the executor's notifications (forwarded by the controller); output is parsed
    into ``model`` at once but drawn at most every ``flush_interval_ms`` (ms), in bulk, and
    only the lines the bounded model still holds are drawn, so tens of MB stream without
    stalling the event loop. Each block's output area grows up to ``max_visible_lines`` lines
    and then scrolls, following the end until the user scrolls up.

    Args:
        model: the data source (a fresh :class:`TerminalModel` if omitted).
        parent: the Qt parent.
        flush_interval_ms: coalescing interval for redraws, in ms.
        max_visible_lines: height cap of a block's output area, in lines.
    """

    #: The user asked to kill the running command ``block_id``.
    killRequested = Signal(str)

    def __init__(
        self,
        model: TerminalModel | None = None,
        parent: QWidget | None = None,
        *,
        flush_interval_ms: int = 40,
        max_visible_lines: int = 22,
    ) -> None:
        super().__init__(parent)
        self.model = model if model is not None else TerminalModel()
        self.max_visible_lines = max_visible_lines
        self._formats = _Formats()
        self._widgets: dict[str, _BlockWidget] = {}
        self._dirty: dict[str, None] = {}
        self._timer = QTimer(self, singleShot=True, interval=flush_interval_ms)
        self._timer.timeout.connect(self.flush)
        self.setStyleSheet(_STYLE)

        self._container = QWidget()
        self._container.setObjectName("terminalBlocks")
        self._blocks_layout = QVBoxLayout(self._container)
        self._blocks_layout.setContentsMargins(8, 8, 8, 8)
        self._blocks_layout.setSpacing(8)
        self._blocks_layout.addStretch(1)
        self._scroll = QScrollArea()
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setWidget(self._container)
        self._scroll_sticky = _StickyScroll(self._scroll)

        self.find_bar = _FindBar()
        self.find_bar.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.find_bar)
        layout.addWidget(self._scroll)

        self._matches: list[tuple[_BlockWidget, QTextCursor]] = []
        self._match_index = -1
        self._matches_stale = False
        edit = self.find_bar.edit
        edit.textChanged.connect(lambda _text: self._search())
        edit.next.connect(lambda: self.find_next(1))
        edit.previous.connect(lambda: self.find_next(-1))
        edit.closed.connect(self.hide_find_bar)
        shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Find), self)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.show_find_bar)

        for block in self.model.blocks():
            self._add_widget(block)

    # -- slots -----------------------------------------------------------------------------

    @Slot(str, str, str, object, str)
    def on_command_started(
        self,
        block_id: str,
        command: str,
        cwd: str,
        sandboxed: bool | None,
        source: str,
        sandbox_note: str | None = None,
    ) -> None:
        """A command started: add its block (``source``: ``agent``, ``codex`` or ``user``)."""
        try:
            block = self.model.start_block(
                block_id, command, cwd, sandboxed, cast(Any, source), sandbox_note
            )
        except ValueError:
            _log.debug("terminal: duplicate block id ignored")
            return
        self._add_widget(block)
        self._mark(block_id)

    @Slot(str, str, str)
    def on_output(self, block_id: str, stream: str, text: str) -> None:
        """Output ``text`` (chars, ANSI) arrived on ``stream`` (``stdout``/``stderr``)."""
        if block_id not in self.model:
            _log.debug("terminal: output for an unknown block ignored")
            return
        self.model.append(block_id, "stderr" if stream == "stderr" else "stdout", text)
        self._mark(block_id)

    @Slot(str, object, str, int)
    def on_command_finished(
        self, block_id: str, exit_code: int | None, outcome: str, duration_ms: int
    ) -> None:
        """The command ended: ``outcome`` is ``exit``, ``timeout`` or ``killed``; ms."""
        if block_id not in self.model:
            _log.debug("terminal: finish for an unknown block ignored")
            return
        self.model.finish_block(block_id, exit_code, outcome, duration_ms)
        self._mark(block_id)

    @Slot(object)
    def restore_block(self, record: Mapping[str, Any]) -> None:
        """Show a finished block again from the session journal (issue 16: a reopened
        session shows its terminal blocks): a ``shell_block`` payload as
        ``desktop.views.terminal_model.BlockRecorder.finish`` makes it. A malformed record
        (model-made text is untrusted, the journal may be old) is skipped and logged."""
        try:
            block_id = str(record["block_id"])
            started = record.get("started_at")
            block = self.model.start_block(
                block_id,
                str(record.get("command", "")),
                str(record.get("cwd", "")),
                cast(Any, record.get("sandboxed")),
                cast(Any, str(record.get("source", "agent"))),
                cast(Any, record.get("sandbox_note")),
                started_at=float(started) if isinstance(started, (int, float)) else None,
            )
        except (KeyError, ValueError, TypeError):
            _log.debug("terminal: a journaled block could not be restored")
            return
        output = record.get("output")
        chunks = output if isinstance(output, list) else []
        omitted = record.get("omitted_chars")
        at = record.get("omitted_at")
        for index, chunk in enumerate(chunks):
            if index == at and isinstance(omitted, int) and omitted > 0:
                self.model.append(block_id, "stdout", f"\n… {omitted:,} characters not kept …\n")
            if isinstance(chunk, (list, tuple)) and len(chunk) == 2:
                stream = "stderr" if chunk[0] == "stderr" else "stdout"
                self.model.append(block_id, stream, str(chunk[1]))
        outcome = str(record.get("outcome", "exit"))
        exit_code = record.get("exit_code")
        duration = record.get("duration_ms")
        self.model.finish_block(
            block_id,
            exit_code if isinstance(exit_code, int) else None,
            outcome if outcome in ("exit", "timeout", "killed") else "exit",
            duration if isinstance(duration, int) else None,
        )
        self._add_widget(block)
        self._mark(block_id)

    @Slot()
    def clear_blocks(self) -> None:
        """Drop every finished block (another session is being shown)."""
        self.model.clear()
        self.flush()

    @Slot()
    def flush(self) -> None:
        """Draw everything pending now (normally run by the coalescing timer)."""
        self._timer.stop()
        for block_id in self.model.drain_evicted():
            widget = self._widgets.pop(block_id, None)
            self._dirty.pop(block_id, None)
            if widget is not None:
                self._blocks_layout.removeWidget(widget)
                widget.deleteLater()
                self._matches = [m for m in self._matches if m[0] is not widget]
        dirty, self._dirty = self._dirty, {}
        for block_id in dirty:
            widget = self._widgets.get(block_id)
            if widget is not None:
                widget.render_block(self.model.block(block_id))
        if dirty:
            self._blocks_layout.activate()  # sizes settle now, so following the end is exact
            self._scroll_sticky.settle()
        if dirty and self._matches:
            self._matches_stale = True

    # -- copy, kill, search ----------------------------------------------------------------

    def copy_output(self, block_id: str) -> None:
        """Put the block's kept output (plain text, marker for omitted lines) on the clipboard."""
        QGuiApplication.clipboard().setText(self.model.block(block_id).text())

    def copy_command(self, block_id: str) -> None:
        """Put the block's command line on the clipboard."""
        QGuiApplication.clipboard().setText(self.model.block(block_id).command)

    def block_widget(self, block_id: str) -> _BlockWidget:
        """The widget of ``block_id`` (for tests and the main window's focus handling)."""
        return self._widgets[block_id]

    def output_document(self, block_id: str) -> QTextDocument:
        """The document showing ``block_id``'s output."""
        return self._widgets[block_id].output.document()

    @Slot()
    def show_find_bar(self) -> None:
        """Open the find bar (Ctrl+F) with its text selected."""
        self.find_bar.show()
        self.find_bar.edit.setFocus()
        self.find_bar.edit.selectAll()
        if self.find_bar.edit.text():
            self._search()

    @Slot()
    def hide_find_bar(self) -> None:
        """Close the find bar and remove the highlights."""
        self.find_bar.hide()
        self._set_matches([])

    def match_count(self) -> int:
        """How many matches the current search highlights."""
        return len(self._matches)

    def current_match(self) -> tuple[str, str] | None:
        """(block id, matched text) of the current match, or ``None``."""
        if not 0 <= self._match_index < len(self._matches):
            return None
        widget, cursor = self._matches[self._match_index]
        return widget.block_id, cursor.selectedText()

    def search(self, text: str) -> int:
        """Search the outputs for ``text`` (case-insensitive); returns the number of matches."""
        self.find_bar.edit.setText(text)  # runs _search via textChanged
        self._search()
        return len(self._matches)

    @Slot(int)
    def find_next(self, step: int = 1) -> None:
        """Go to the next (``step`` 1) or previous (``-1``) match and scroll it into view."""
        if self._matches_stale:
            self._search(keep_index=True)
        if not self._matches:
            return
        previous = self._matches[self._match_index][0] if self._match_index >= 0 else None
        self._match_index = (self._match_index + step) % len(self._matches)
        widget, cursor = self._matches[self._match_index]
        for w in {previous, widget} - {None}:
            self._highlight(cast(_BlockWidget, w))
        widget._sticky.stuck = False
        widget.output.setTextCursor(cursor)
        widget.output.ensureCursorVisible()
        rect = widget.output.cursorRect(cursor)
        point = widget.output.viewport().mapTo(self._container, rect.center())
        self._scroll.ensureVisible(point.x(), point.y(), 20, 40)
        self._update_count()

    def _search(self, keep_index: bool = False) -> None:
        query = self.find_bar.edit.text()
        index = self._match_index
        matches: list[tuple[_BlockWidget, QTextCursor]] = []
        if query:
            for widget in self._widgets.values():
                doc = widget.output.document()
                cursor = doc.find(query, 0)
                while not cursor.isNull() and len(matches) < 5000:
                    matches.append((widget, cursor))
                    cursor = doc.find(query, cursor)
        self._matches_stale = False
        self._set_matches(matches, min(index, len(matches) - 1) if keep_index else -1)

    def _set_matches(
        self, matches: list[tuple[_BlockWidget, QTextCursor]], index: int = -1
    ) -> None:
        touched = {m[0] for m in self._matches} | {m[0] for m in matches}
        self._matches = matches
        self._match_index = index
        for widget in touched:
            self._highlight(widget)
        self._update_count()

    def _highlight(self, widget: _BlockWidget) -> None:
        selections = []
        current = self._matches[self._match_index][1] if self._match_index >= 0 else None
        for owner, cursor in self._matches:
            if owner is not widget:
                continue
            selection = QTextEdit.ExtraSelection()
            selection.cursor = cursor
            fmt = QTextCharFormat()
            if current is not None and cursor == current:
                fmt.setBackground(QColor(_CURRENT_BG))
                fmt.setForeground(QColor("#000000"))
            else:
                fmt.setBackground(QColor(_MATCH_BG))
            selection.format = fmt
            selections.append(selection)
        widget.output.setExtraSelections(selections)

    def _update_count(self) -> None:
        count = len(self._matches)
        if not self.find_bar.edit.text():
            text = ""
        elif not count:
            text = "no matches"
        else:
            shown = self._match_index + 1 if self._match_index >= 0 else 0
            text = f"{shown}/{count}{'+' if count >= 5000 else ''}"
        self.find_bar.count.setText(text)

    # -- internals -------------------------------------------------------------------------

    def _add_widget(self, block: CommandBlock) -> None:
        widget = _BlockWidget(self, block, self._formats)
        self._widgets[block.block_id] = widget
        self._blocks_layout.insertWidget(self._blocks_layout.count() - 1, widget)
        widget.show()

    def _mark(self, block_id: str) -> None:
        self._dirty[block_id] = None
        if not self._timer.isActive():
            self._timer.start()
