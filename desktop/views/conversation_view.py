"""ConversationView: the transcript of a session (messages, reasoning, tool cards, notices)."""

from __future__ import annotations

import logging
import time

from PySide6.QtCore import QSize, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QKeyEvent,
    QPalette,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextFrameFormat,
    QTextOption,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from resources import read_text

__all__ = ["ConversationView"]

_log = logging.getLogger("desktop")

#: Icon glyph and label per tool kind (unknown kinds fall back to ``("•", kind)``).
_KINDS = {
    "shell": ("$", "Shell"),
    "local_shell": ("$", "Shell"),
    "apply_patch": ("±", "Edit"),
    "computer": ("◉", "Browser"),
    "codex": ("◆", "Codex"),
    "function": ("ƒ", "Function"),
    "hosted": ("☁", "Hosted tool"),
    "mcp": ("⚙", "MCP"),
    "agent": ("◆", "Agent"),
}
#: The text of a card's link per kind: which view the window opens for it.
_LINKS = {
    "shell": "Terminal",
    "local_shell": "Terminal",
    "apply_patch": "Diff",
    "computer": "Browser",
    "codex": "Details",
}
_ARROW = "\u203a"
_STATUS = {
    "running": "● running",
    "completed": "✓ done",
    "failed": "✗ failed",
    "rejected": "⊘ rejected",
    "waiting-approval": "◆ waiting for approval",
}
_MONO_KINDS = {"shell", "local_shell", "apply_patch", "codex"}
_CODE_BG = "#0f1115"
_INLINE_CODE_BG = "#262a32"
_LINK = "#79c0ff"


def _mono() -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setPointSizeF(max(9.0, font.pointSizeF() - 0.5))
    return font


def _human_ms(ms: int | None) -> str:
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms // 60_000} min {ms % 60_000 // 1000} s"


def render_markdown(doc: QTextDocument, text: str) -> None:
    """Fill ``doc`` with ``text`` (GitHub-flavoured Markdown), styled for the dark theme.

    Fenced and indented code blocks become boxed, monospace and wrapping (long lines wrap
    rather than widen the transcript); inline code gets a monospace font and a background.
    """
    doc.setMarkdown(text, QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
    mono = _mono()
    inline = QTextCharFormat()
    inline.setFont(mono)
    inline.setBackground(QColor(_INLINE_CODE_BG))
    inline.setForeground(QColor("#e6edf3"))
    cursor = QTextCursor(doc)
    runs: list[tuple[int, int]] = []
    block = doc.begin()
    while block.isValid():
        fmt = block.blockFormat()
        if fmt.hasProperty(QTextFormat.Property.BlockCodeFence) or fmt.nonBreakableLines():
            fmt.setNonBreakableLines(False)
            cursor.setPosition(block.position())
            cursor.setBlockFormat(fmt)
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
            chars = QTextCharFormat()
            chars.setFont(mono)
            chars.setForeground(QColor("#d6dde6"))
            cursor.mergeCharFormat(chars)
            end = block.position() + block.length() - 1
            if runs and runs[-1][1] + 1 == block.position():
                runs[-1] = (runs[-1][0], end)
            else:
                runs.append((block.position(), end))
        else:
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                if frag.charFormat().fontFixedPitch():
                    cursor.setPosition(frag.position())
                    cursor.setPosition(
                        frag.position() + frag.length(), QTextCursor.MoveMode.KeepAnchor
                    )
                    cursor.mergeCharFormat(inline)
                it += 1
        block = block.next()
    box = QTextFrameFormat()
    box.setBackground(QColor(_CODE_BG))
    box.setBorder(1)
    box.setBorderBrush(QColor("#2d323b"))
    box.setPadding(6)
    box.setMargin(2)
    box.setTopMargin(4)
    box.setBottomMargin(4)
    squash = QTextBlockFormat()  # the empty blocks a frame needs around it take no space
    squash.setLineHeight(0, QTextBlockFormat.LineHeightTypes.FixedHeight.value)
    for start, end in reversed(runs):  # from the end, so earlier positions stay valid
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        frame = cursor.insertFrame(box)
        for position in (frame.firstPosition() - 1, frame.lastPosition() + 1):
            around = doc.findBlock(position)
            if around.isValid() and not around.text():
                cursor.setPosition(around.position())
                cursor.setBlockFormat(squash)


def _show(widget: QWidget, visible: bool) -> None:
    """Change visibility only when it changes (each change re-lays out the ancestors)."""
    if widget.isHidden() == visible:
        widget.setVisible(visible)


class _TextBlock(QTextBrowser):
    """Read-only rich text that grows to fit its document (selectable, links emitted)."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("transcriptText")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(True)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.viewport().setAutoFillBackground(False)
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Link, QColor(_LINK))
        self.setPalette(palette)
        self.document().setDocumentMargin(2)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.setFixedHeight(self.fontMetrics().lineSpacing() + 6)

    def _fit(self, size: object) -> None:
        height = int(self.document().size().height()) + 2
        if height != self.height():
            self.setFixedHeight(height)

    def minimumSizeHint(self) -> QSize:
        return QSize(60, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        return QSize(200, self.height())


class _UserMessage(QFrame):
    def __init__(self, text: str) -> None:
        super().__init__()
        speaker = QLabel("You")
        speaker.setObjectName("speaker")
        speaker.setContentsMargins(2, 0, 0, 0)  # align with the text's document margin
        self.body = _TextBlock()
        self.body.setPlainText(text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.setSpacing(2)
        layout.addWidget(speaker)
        layout.addWidget(self.body)


class _AssistantMessage(QFrame):
    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        self.finished = False
        self.body = _TextBlock()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.body)

    def render_text(self) -> None:
        render_markdown(self.body.document(), self.text)


class _Reasoning(QFrame):
    """Reasoning: a one-line toggle, the text (dim) shown only when expanded."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.toggle = QToolButton()
        self.toggle.setObjectName("reasoningToggle")
        self.toggle.setCursor(Qt.CursorShape.PointingHandCursor)
        self.toggle.setToolTip("Show or hide the model's reasoning")
        self.body = _TextBlock()
        self.body.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 0, 4, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.body)
        self.toggle.clicked.connect(lambda: self.set_expanded(not self.body.isVisible()))
        self.set_text(text)

    def set_text(self, text: str) -> None:
        self.text = text
        render_markdown(self.body.document(), text)
        self._update_toggle()

    def set_expanded(self, expanded: bool) -> None:
        self.body.setVisible(expanded)
        self._update_toggle()

    def _update_toggle(self) -> None:
        arrow = "▾" if self.body.isVisible() else "▸"
        words = len(self.text.split())
        self.toggle.setText(f"{arrow} Reasoning · {words} word{'s' if words != 1 else ''}")


class _ElidedLabel(QLabel):
    """A one-line label that elides its text to the width it gets (full text in tooltip)."""

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.full_text = ""
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        self.full_text = text
        self.setToolTip(text if len(text) > 40 else "")
        self._elide()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        line = self.full_text.replace("\n", " ⏎ ")
        width = max(10, self.width())
        self.setText(QFontMetrics(self.font()).elidedText(line, Qt.TextElideMode.ElideRight, width))


class _ToolCard(QFrame):
    """One tool call: kind icon, title, status pill, duration, detail/summary, view link."""

    def __init__(self, view: ConversationView, call_id: str, kind: str) -> None:
        super().__init__()
        self.call_id = call_id
        self.kind = kind
        glyph, label = _KINDS.get(kind, ("•", kind or "tool"))
        self.icon = QLabel(glyph)
        self.icon.setObjectName("cardIcon")
        self.icon.setProperty("kind", kind)
        self.icon.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.kind_label = QLabel(label)
        self.kind_label.setObjectName("cardKind")
        self.title = _ElidedLabel()
        self.title.setObjectName("cardTitle")
        if kind in _MONO_KINDS:
            self.title.setFont(_mono())
        self.status = QLabel()
        self.status.setObjectName("cardStatus")
        self.status.setFixedHeight(22)
        self.link = QToolButton()
        self.link.setObjectName("cardLink")
        self.link.setText(f"{_LINKS.get(kind, '')} {_ARROW}")
        self.link.setVisible(kind in _LINKS)
        self.link.setCursor(Qt.CursorShape.PointingHandCursor)
        self.link.setToolTip(f"Show this call in the {_LINKS.get(kind, '')} view")
        self.link.clicked.connect(lambda: view.toolCardActivated.emit(call_id, kind))
        self.detail = _ElidedLabel()
        self.detail.setObjectName("cardDetail")
        self.summary = QLabel()
        self.summary.setObjectName("cardSummary")
        self.summary.setWordWrap(True)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        top = QHBoxLayout()
        top.setSpacing(8)
        top.addWidget(self.icon)
        top.addWidget(self.kind_label)
        top.addWidget(self.title, 1)
        top.addWidget(self.status)
        top.addWidget(self.link)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 7, 10, 7)
        layout.setSpacing(3)
        layout.addLayout(top)
        text_box = QVBoxLayout()
        text_box.setContentsMargins(30, 0, 0, 0)
        text_box.setSpacing(1)
        text_box.addWidget(self.detail)
        text_box.addWidget(self.summary)
        layout.addLayout(text_box)
        self.status_name = ""
        self.duration_ms: int | None = None

    def set_content(self, title: str, detail: str) -> None:
        self.title.set_full_text(title)
        self.detail.set_full_text(detail)
        _show(self.detail, bool(detail))

    def set_status(self, status: str, duration_ms: int | None, summary: str) -> None:
        self.status_name = status
        self.duration_ms = duration_ms
        text = _STATUS.get(status, status)
        if duration_ms is not None:
            text += f" · {_human_ms(duration_ms)}"
        self.status.setText(text)
        self.summary.setText(summary)
        _show(self.summary, bool(summary))
        for widget in (self, self.status):
            widget.setProperty("status", status)
            widget.style().unpolish(widget)
            widget.style().polish(widget)


class _Notice(QFrame):
    _ICONS = {"info": "i", "warning": "!", "error": "✕"}

    def __init__(self, text: str, level: str) -> None:
        super().__init__()
        level = level if level in self._ICONS else "info"
        self.setProperty("level", level)
        icon = QLabel(self._ICONS[level])
        icon.setObjectName("noticeIcon")
        self.label = QLabel(text)
        self.label.setWordWrap(True)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 5, 10, 5)
        layout.setSpacing(8)
        layout.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.label, 1)


class ConversationView(QWidget):
    """The centre transcript: user and assistant messages, reasoning, tool cards, notices.

    One lightweight widget per entry in a scroll area; streamed assistant text is buffered
    and only the message that changed is re-rendered, at most every ``flush_interval_ms``
    (ms; the interval stretches to twice the last render time for very long messages), so
    the rest of the transcript is never laid out again. The view follows the end while the
    user has not scrolled up; a "Jump to latest" button appears otherwise.

    Args:
        parent: the Qt parent.
        flush_interval_ms: coalescing interval for streamed Markdown, in ms.
    """

    #: A tool card's link was clicked: (call id, kind); the window shows the call's view.
    toolCardActivated = Signal(str, str)

    def __init__(self, parent: QWidget | None = None, *, flush_interval_ms: int = 40) -> None:
        super().__init__(parent)
        self.setStyleSheet(read_text("styles", "dark.qss"))
        self._interval = flush_interval_ms
        self._timer = QTimer(self, singleShot=True, interval=flush_interval_ms)
        self._timer.timeout.connect(self.flush)
        # Showing or resizing an entry lays out every entry; while slots run, the layout is
        # off and one pass at the next event-loop turn places everything added meanwhile.
        self._relayout = QTimer(self, singleShot=True, interval=0)
        self._relayout.timeout.connect(self._release_layout)
        self._messages: dict[str, _AssistantMessage] = {}
        self._reasoning: dict[str, _Reasoning] = {}
        self._cards: dict[str, _ToolCard] = {}
        self._dirty: dict[str, None] = {}
        self._entries: list[QWidget] = []
        self.render_count = 0  # Markdown renders of streamed messages (for tests and bench)

        self._container = QWidget()
        self._container.setObjectName("conversationEntries")
        self._layout = QVBoxLayout(self._container)
        self._layout.setContentsMargins(14, 12, 14, 12)
        self._layout.setSpacing(10)
        self._empty = QLabel(
            "Describe a task below to start. The agent's messages, commands\n"
            "and edits appear here as it works."
        )
        self._empty.setObjectName("emptyHint")
        self._empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._layout.addWidget(self._empty)
        self._layout.addStretch(1)
        self._scroll = QScrollArea()
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._scroll.setWidget(self._container)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._scroll)

        self.jump_button = QToolButton(self)
        self.jump_button.setObjectName("jumpToLatest")
        self.jump_button.setText("↓ Jump to latest")
        self.jump_button.setToolTip("Scroll to the newest message and follow it (End)")
        self.jump_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.jump_button.hide()
        self.jump_button.clicked.connect(self.scroll_to_end)
        bar = self._scroll.verticalScrollBar()
        self._following = True
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range)

    # -- slots -----------------------------------------------------------------------------

    @Slot(str)
    def add_user_message(self, text: str) -> None:
        """Append the user's message ``text`` (shown as plain text)."""
        self._append(_UserMessage(text))

    @Slot(str, str)
    def append_assistant_delta(self, item_id: str, delta: str) -> None:
        """Stream ``delta`` (chars) into assistant message ``item_id`` (created on first use)."""
        message = self._message(item_id)
        if message.finished:
            _log.debug("conversation: delta after finish ignored")
            return
        message.text += delta
        self._dirty[item_id] = None
        if not self._timer.isActive():
            self._timer.start()

    @Slot(str, str)
    def finish_assistant_message(self, item_id: str, text: str) -> None:
        """Message ``item_id`` is complete with ``text`` (Markdown): render it now."""
        message = self._message(item_id)
        message.text = text or message.text  # an empty final text keeps what streamed
        message.finished = True
        self._dirty.pop(item_id, None)
        message.render_text()

    @Slot(str, str)
    def add_reasoning(self, item_id: str, text: str) -> None:
        """Show reasoning ``text`` collapsed (or replace the text of reasoning ``item_id``)."""
        existing = self._reasoning.get(item_id)
        if existing is not None:
            existing.set_text(text)
            return
        entry = self._reasoning[item_id] = _Reasoning(text)
        self._append(entry)

    @Slot(str, str, str, str)
    def add_tool_card(self, call_id: str, kind: str, title: str, detail: str) -> None:
        """Add a running card for tool call ``call_id`` of ``kind`` (``shell``, ``apply_patch``…).

        Args:
            call_id: the call's id, used by :meth:`update_tool_card` and the activation signal.
            kind: ``function``, ``shell``, ``apply_patch``, ``computer``, ``codex``, ``hosted``…
            title: one line, e.g. the command line or ``apply_patch src/a.py``.
            detail: a second, dim line (e.g. the working directory), may be empty.
        """
        card = self._cards.get(call_id)
        if card is None:
            card = self._cards[call_id] = _ToolCard(self, call_id, kind)
            card.set_status("running", None, "")
            self._append(card)
        card.set_content(title, detail)

    @Slot(str, str, object, str)
    def update_tool_card(
        self, call_id: str, status: str, duration_ms: int | None, summary: str
    ) -> None:
        """Set card ``call_id``'s status and result line.

        Args:
            call_id: a card added by :meth:`add_tool_card` (unknown ids are ignored).
            status: ``running``, ``completed``, ``failed``, ``rejected`` or ``waiting-approval``.
            duration_ms: how long the call took (ms), or ``None`` while unknown.
            summary: a short result line (e.g. ``exit 1 · 3 failed``), may be empty.
        """
        card = self._cards.get(call_id)
        if card is None:
            _log.debug("conversation: update for an unknown tool card ignored")
            return
        card.set_status(status, duration_ms, summary)

    @Slot(str, str)
    def add_notice(self, text: str, level: str = "info") -> None:
        """Add a banner line; ``level`` is ``info``, ``warning`` or ``error``."""
        self._append(_Notice(text, level))

    @Slot()
    def clear(self) -> None:
        """Remove every entry (a new or another session)."""
        self._timer.stop()
        for widget in self._entries:
            self._layout.removeWidget(widget)
            widget.deleteLater()
        self._entries.clear()
        self._messages.clear()
        self._reasoning.clear()
        self._cards.clear()
        self._dirty.clear()
        self._empty.show()
        self._following = True
        self.jump_button.hide()

    @Slot()
    def flush(self) -> None:
        """Render the streamed messages that changed now (normally run by the timer)."""
        self._timer.stop()
        dirty, self._dirty = self._dirty, {}
        started = time.perf_counter()
        for item_id in dirty:
            message = self._messages.get(item_id)
            if message is not None:
                message.render_text()
                self.render_count += 1
        spent_ms = int((time.perf_counter() - started) * 1000)
        self._timer.setInterval(max(self._interval, 2 * spent_ms))

    @Slot()
    def scroll_to_end(self) -> None:
        """Scroll to the newest entry and follow new ones again."""
        self._following = True
        self.jump_button.hide()
        self._layout.activate()
        bar = self._scroll.verticalScrollBar()
        bar.setValue(bar.maximum())

    # -- queries ---------------------------------------------------------------------------

    def entry_count(self) -> int:
        """How many entries (messages, reasoning, cards, notices) the transcript shows."""
        return len(self._entries)

    def is_following(self) -> bool:
        """Whether the view scrolls to new content (the user has not scrolled up)."""
        return self._following

    def message_text(self, item_id: str) -> str:
        """The plain text currently displayed for assistant message ``item_id``."""
        return self._messages[item_id].body.toPlainText()

    def tool_card(self, call_id: str) -> _ToolCard:
        """The card of ``call_id`` (for tests and the window's focus handling)."""
        return self._cards[call_id]

    def reasoning_entry(self, item_id: str) -> _Reasoning:
        """The reasoning entry ``item_id``."""
        return self._reasoning[item_id]

    def entries(self) -> list[QWidget]:
        """The entry widgets, oldest first."""
        return list(self._entries)

    # -- internals -------------------------------------------------------------------------

    def _message(self, item_id: str) -> _AssistantMessage:
        message = self._messages.get(item_id)
        if message is None:
            message = self._messages[item_id] = _AssistantMessage()
            self._append(message)
        return message

    def _hold_layout(self) -> None:
        if not self._relayout.isActive():
            self._layout.setEnabled(False)
            self._relayout.start()

    def _release_layout(self) -> None:
        self._layout.setEnabled(True)
        self._layout.activate()

    def settle(self) -> None:
        """Lay out now what the slots changed (normally done at the next event-loop turn)."""
        self._relayout.stop()
        self._release_layout()

    def _append(self, widget: QWidget) -> None:
        self._hold_layout()
        self._empty.hide()
        self._entries.append(widget)
        self._layout.insertWidget(self._layout.count() - 1, widget)
        widget.show()

    def _on_scrolled(self, value: int) -> None:
        bar = self._scroll.verticalScrollBar()
        self._following = value >= bar.maximum() - 4
        if self._following:
            self.jump_button.hide()

    def _on_range(self, _low: int, high: int) -> None:
        if self._following:
            self._scroll.verticalScrollBar().setValue(high)
        elif self._entries:
            self._place_jump_button()
            self.jump_button.show()
            self.jump_button.raise_()

    def _place_jump_button(self) -> None:
        hint = self.jump_button.sizeHint()
        self.jump_button.resize(hint)
        self.jump_button.move(
            (self.width() - hint.width()) // 2, self.height() - hint.height() - 12
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_jump_button()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_End:  # End: jump to the latest entry
            self.scroll_to_end()
            return
        super().keyPressEvent(event)
