"""ConversationView: the transcript of a session (messages, reasoning, tool cards, notices)."""

from __future__ import annotations

import logging
import time

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QLayout,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.activity import CardBody, Link
from resources import read_text

from .rich_text import render_markdown
from .tool_card import ToolCard
from .transcript import TranscriptStack
from .transcript.entries import _AssistantMessage, _Notice, _Reasoning, _UserMessage

__all__ = ["ConversationView", "render_markdown"]

_log = logging.getLogger("desktop")
_HINT_MARGIN = 16  # px either side of the empty-state hint


def _depth(layout: QLayout) -> int:
    """How many ancestors the layout's widget has."""
    depth, widget = 0, layout.parentWidget()
    while widget is not None:
        depth, widget = depth + 1, widget.parentWidget()
    return depth


class ConversationView(QWidget):
    """The centre transcript: user and assistant messages, reasoning, tool cards, notices.

    One lightweight widget per entry in a :class:`~desktop.views.transcript.TranscriptStack`,
    which lays out and shows only the entries in view, so an append costs the same at 1,000
    entries as at 10 (``bench/conversation_view.py``). Streamed assistant text is buffered
    and only the message that changed is re-rendered, at most every ``flush_interval_ms``
    (ms; the interval stretches to twice the last render time for very long messages). The
    view follows the end while the user has not scrolled up; a "Jump to latest" button
    appears otherwise.

    Hosted tools get a body under their card (sources, search hits, code, output, images);
    an agent run as a tool gets a sub-conversation under its card: the entries the controller
    :meth:`adopt` s into it, nested to any depth; a long one lays out only its last entries
    (``tool_card.SUB_TAIL``, "Show earlier" for the rest), so a nested append stays flat too.
    Message, reasoning and card ids are global.

    Args:
        parent: the Qt parent.
        flush_interval_ms: coalescing interval for streamed Markdown, in ms.
    """

    #: A tool card's link was clicked: (call id, kind); the window shows the call's view.
    toolCardActivated = Signal(str, str)

    def __init__(self, parent: QWidget | None = None, *, flush_interval_ms: int = 40) -> None:
        super().__init__(parent)
        self.setStyleSheet(read_text("styles", "dark.qss"))
        # a card needs ~300 px (icon, kind, status pill, link), plus margins and the scrollbar
        self.setMinimumWidth(340)
        self._interval = flush_interval_ms
        self._timer = QTimer(self, singleShot=True, interval=flush_interval_ms)
        self._timer.timeout.connect(self.flush)
        # A sub-conversation's layout is off while slots add to it; one pass at the next
        # event-loop turn lays out what was added meanwhile, then its card is measured again.
        self._relayout = QTimer(self, singleShot=True, interval=0)
        self._relayout.timeout.connect(self._release_layout)
        self._messages: dict[str, _AssistantMessage] = {}
        self._reasoning: dict[str, _Reasoning] = {}
        self._cards: dict[str, ToolCard] = {}
        self._adopted: dict[str, str] = {}  # entry id -> the card whose sub-conversation gets it
        self._held: list[QLayout] = []  # nested layouts switched off until the next relayout
        self._held_entries: list[QWidget] = []  # their top-level entries, measured after
        self._dirty: dict[str, None] = {}
        self.render_count = 0  # Markdown renders of streamed messages (for tests and bench)

        self._scroll = QScrollArea()
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._stack = TranscriptStack(self._scroll)
        self._stack.setObjectName("conversationEntries")
        # A QWidget subclass paints its style-sheet background only with this attribute:
        # without it the dark background was not drawn and the answers' text was unreadable.
        self._stack.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._scroll.viewport().setObjectName("conversationViewport")
        self._empty = QLabel(
            "Describe a task below to start. The agent's messages, commands "
            "and edits appear here as it works.",
            self._scroll.viewport(),
        )
        self._empty.setObjectName("emptyHint")
        self._empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        # issue 16: wrapped to the viewport (less a margin) at any width down to the minimum
        self._empty.setWordWrap(True)
        self._empty.raise_()
        self._scroll.viewport().installEventFilter(self)
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
        self._stack.touch(message)

    @Slot(str, str)
    def add_reasoning(self, item_id: str, text: str) -> None:
        """Show reasoning ``text`` collapsed (or replace the text of reasoning ``item_id``)."""
        existing = self._reasoning.get(item_id)
        if existing is not None:
            existing.set_text(text)
            self._stack.touch(existing)
            return
        entry = self._reasoning[item_id] = _Reasoning(text)
        self._place(item_id, entry)

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
            card = self._cards[call_id] = ToolCard(call_id, kind)
            card.activated.connect(self.toolCardActivated)
            card.set_status("running", None, "")
            self._place(call_id, card)
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
        self._hold_layout(card)
        card.set_status(status, duration_ms, summary)
        self._stack.touch(card)

    @Slot(str, object)
    def set_tool_body(self, call_id: str, body: object) -> None:
        """Show ``body`` (a :class:`~desktop.activity.CardBody`) under card ``call_id``.

        A later body replaces the earlier one (code streaming in, partial images); the body
        starts folded unless ``body.expanded``, and once the user toggles it their choice
        stays. An empty body hides the body and its toggle.

        Args:
            call_id: a card added by :meth:`add_tool_card` (unknown ids are ignored).
            body: the ``CardBody`` to show (anything else is ignored).
        """
        card = self._cards.get(call_id)
        if card is None or not isinstance(body, CardBody):
            _log.debug("conversation: body for an unknown tool card ignored")
            return
        self._hold_layout(card)
        card.set_body(body)
        self._stack.touch(card)

    @Slot(str, object)
    def set_citations(self, item_id: str, links: object) -> None:
        """Show the sources assistant message ``item_id`` cites in a numbered footer.

        Args:
            item_id: the message (created if it does not exist yet).
            links: a list of :class:`~desktop.activity.Link`; a link without URL is a file
                (shown as its name); an empty list shows no footer.
        """
        shown = (
            [link for link in links if isinstance(link, Link)]
            if isinstance(links, list | tuple)
            else []
        )
        message = self._message(item_id)
        self._hold_layout(message)
        message.set_sources(shown)
        self._stack.touch(message)

    @Slot(str, str)
    def adopt(self, entry_id: str, parent_call_id: str) -> None:
        """Place the entry created next with id ``entry_id`` in card ``parent_call_id``'s
        sub-conversation (an agent run as a tool) instead of the top level.

        The controller emits this just before the signal that creates the entry (a message,
        reasoning or tool card id). An entry that already exists stays where it is; a parent
        card that does not exist when the entry is created means the top level.
        """
        if entry_id in self._messages or entry_id in self._reasoning or entry_id in self._cards:
            _log.debug("conversation: adopting an existing entry ignored")
            return
        self._adopted[entry_id] = parent_call_id

    @Slot(str, str)
    def add_notice(self, text: str, level: str = "info") -> None:
        """Add a banner line; ``level`` is ``info``, ``warning`` or ``error``."""
        self._append(_Notice(text, level))

    def add_entry(self, widget: QWidget) -> None:
        """Add a ready-made entry widget (e.g. a compaction card, issue 14) at the end."""
        self._append(widget)

    @Slot()
    def clear(self) -> None:
        """Remove every entry (a new or another session)."""
        self._timer.stop()
        self._relayout.stop()
        self._stack.clear()
        self._messages.clear()
        self._reasoning.clear()
        self._cards.clear()
        self._adopted.clear()
        for layout in self._held:  # their widgets are about to be deleted
            layout.setEnabled(True)
        self._held.clear()
        self._held_entries.clear()
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
                self._stack.touch(message)
                self.render_count += 1
        spent_ms = int((time.perf_counter() - started) * 1000)
        self._timer.setInterval(max(self._interval, 2 * spent_ms))

    @Slot()
    def scroll_to_end(self) -> None:
        """Scroll to the newest entry and follow new ones again."""
        self._following = True
        self.jump_button.hide()
        self.settle()
        bar = self._scroll.verticalScrollBar()
        bar.setValue(bar.maximum())

    def reveal(self, call_id: str) -> None:
        """Scroll card ``call_id`` into view with its sub-conversation open, and the folded
        sub-conversations it sits in (the view stops following the end); unknown ids are
        ignored."""
        card = self._cards.get(call_id)
        if card is None:
            return
        if card.sub_entries() and not card.is_sub_expanded():
            card.toggle_sub()
        outer = card.parentWidget()
        while outer is not None and outer is not self._stack:  # open folded parents too
            if isinstance(outer, ToolCard):
                outer.show_sub_entry(card)  # an early entry is brought back (issue 15)
                if not outer.is_sub_expanded():
                    outer.toggle_sub()
                self._stack.touch(outer)
            outer = outer.parentWidget()
        self._stack.touch(card)
        self.settle()
        self._following = False
        self.jump_button.hide()
        top = self._stack.reveal(card)
        if top is None:
            return
        bar = self._scroll.verticalScrollBar()
        bar.setValue(min(bar.maximum(), max(0, top - 8)))
        self._stack.reveal(card)  # now in view: placed and laid out at its final position

    # -- queries ---------------------------------------------------------------------------

    def entry_count(self) -> int:
        """How many entries (messages, reasoning, cards, notices) the transcript shows."""
        return self._stack.count()

    def is_following(self) -> bool:
        """Whether the view scrolls to new content (the user has not scrolled up)."""
        return self._following

    def message_text(self, item_id: str) -> str:
        """The plain text currently displayed for assistant message ``item_id``."""
        return self._messages[item_id].body.toPlainText()

    def tool_card(self, call_id: str) -> ToolCard:
        """The card of ``call_id`` (for tests and the window's focus handling)."""
        return self._cards[call_id]

    def message_sources(self, item_id: str) -> list[str]:
        """The titles of the sources listed under assistant message ``item_id``, in order."""
        message = self._messages[item_id]
        return list(message.source_titles) if message.sources is not None else []

    def reasoning_entry(self, item_id: str) -> _Reasoning:
        """The reasoning entry ``item_id``."""
        return self._reasoning[item_id]

    def entries(self) -> list[QWidget]:
        """The top-level entry widgets, oldest first (nested ones: ``card.sub_entries()``)."""
        return self._stack.entries()

    # -- internals -------------------------------------------------------------------------

    def _message(self, item_id: str) -> _AssistantMessage:
        message = self._messages.get(item_id)
        if message is None:
            message = self._messages[item_id] = _AssistantMessage()
            self._place(item_id, message)
        return message

    def _place(self, entry_id: str, widget: QWidget) -> None:
        """Append a new entry at the top level or in the sub-conversation that adopted it."""
        parent_id = self._adopted.pop(entry_id, None)
        parent = self._cards.get(parent_id) if parent_id is not None else None
        if parent is None:
            if parent_id is not None:
                _log.debug("conversation: adopted by an unknown card; shown at the top level")
            self._append(widget)
            return
        self._hold_layout(parent.sub_container())
        parent.add_sub_entry(widget)

    def _hold_layout(self, inner: QWidget) -> None:
        """Switch the layouts inside a nested sub-conversation off until the next event-loop
        turn, which lays them out once and measures their top-level entry again.

        Args:
            inner: a widget inside the transcript about to change; the layouts of the
                widgets between it and its top-level entry are held (a top-level entry's
                own layout only lays out that entry, so it is never held).
        """
        widget: QWidget | None = inner
        while widget is not None and widget.parentWidget() is not self._stack:
            layout = widget.layout()
            if layout is not None and layout.isEnabled():
                layout.setEnabled(False)
                self._held.append(layout)
            widget = widget.parentWidget()
        if widget is not None and widget is not inner:
            self._held_entries.append(widget)
        if not self._relayout.isActive():
            self._relayout.start()

    def _release_layout(self) -> None:
        held, self._held = self._held, []
        entries, self._held_entries = self._held_entries, []
        for layout in held:
            layout.setEnabled(True)
        for layout in sorted(held, key=_depth):  # outermost first: each then fits its parent
            layout.activate()
        for entry in entries:
            self._stack.touch(entry)
        self._stack.relayout()
        self._keep_entries_visible()

    def _keep_entries_visible(self) -> None:
        """Never narrower than the widest entry's minimum (the scroll area does not scroll
        sideways, so a narrower view would cut cards off at the right)."""
        bar = self._scroll.verticalScrollBar().sizeHint().width()
        left, _top, right, _bottom = self._stack.margins()
        needed = self._stack.minimum_column_width() + left + right + bar
        needed += 2 * self._scroll.frameWidth()
        if needed > self.minimumWidth():
            self.setMinimumWidth(needed)

    def settle(self) -> None:
        """Lay out now what the slots changed (normally done at the next event-loop turn)."""
        self._relayout.stop()
        self._release_layout()

    def _append(self, widget: QWidget) -> None:
        self._empty.hide()
        self._stack.append(widget)
        if not self._relayout.isActive():
            self._relayout.start()

    def _on_scrolled(self, value: int) -> None:
        bar = self._scroll.verticalScrollBar()
        self._following = value >= bar.maximum() - 4
        if self._following:
            self.jump_button.hide()

    def _on_range(self, _low: int, high: int) -> None:
        if self._following:
            self._scroll.verticalScrollBar().setValue(high)
        elif self._stack.count():
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
        self._place_hint()

    def _place_hint(self) -> None:
        """The hint over the viewport, less a margin each side (issue 16: never cut)."""
        self._empty.setGeometry(
            self._scroll.viewport().rect().adjusted(_HINT_MARGIN, 0, -_HINT_MARGIN, 0)
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Follow the viewport's own resizes (they come after this widget's resizeEvent)."""
        if watched is self._scroll.viewport() and event.type() == QEvent.Type.Resize:
            self._place_hint()
        return super().eventFilter(watched, event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_End:  # End: jump to the latest entry
            self.scroll_to_end()
            return
        super().keyPressEvent(event)
