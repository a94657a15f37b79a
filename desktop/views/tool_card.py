"""ToolCard: one tool call in the transcript (head, status, folding body, sub-conversation)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.activity import CardBody

from .card_body import CardBodyView
from .rich_text import (
    ElidedLabel,
    ToggleButton,
    breakable,
    display_text,
    mono_font,
    set_shown,
)
from .units import human_ms

__all__ = ["SUB_PAGE", "SUB_TAIL", "TITLE_MIN_WIDTH", "ToolCard"]

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
    "agent": ("◈", "Agent"),
    "web_search": ("⊕", "Web search"),
    "file_search": ("▤", "File search"),
    "code_interpreter": ("\u276f", "Code"),  # a shell-prompt chevron
    "image_generation": ("✦", "Image"),
    "tool_search": ("⚲", "Tool search"),
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
    "waiting-review": "◆ waiting for review",
    "stalled": "◌ stalled",
    "killed": "✗ killed",
    "cancelled": "⊘ cancelled",
    "interrupted": "◌ interrupted",
}
_MONO_KINDS = {"shell", "local_shell", "apply_patch", "codex", "code_interpreter"}
#: Statuses after which a sub-conversation folds.
_FINAL = {"completed", "failed", "rejected", "killed", "cancelled", "interrupted"}
#: A sub-conversation lays out only its last ``SUB_TAIL`` entries; earlier ones wait, hidden
#: and out of its layout, behind a "Show earlier" button that brings back ``SUB_PAGE`` more
#: per click. Laying all of them out made a nested append grow with the run (issue 15).
SUB_TAIL = 30
SUB_PAGE = 50
#: The title's least width beside the status pill (px); below it the title gets its own line.
TITLE_MIN_WIDTH = 160


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


class _ToolCard(QFrame):
    """One tool call: kind icon, title, status pill, duration, detail/summary, view link.

    The class keeps its underscore name because Qt style sheets select widgets by class name
    and ``resources/styles/dark.qss`` styles ``_ToolCard``; import it as :data:`ToolCard`.

    Args:
        call_id: the tool call's id (emitted by :attr:`activated`).
        kind: ``shell``, ``apply_patch``, ``computer``, ``codex``, ``web_search``…; unknown
            kinds get a generic icon and their own name as label.
    """

    #: The card's view link was clicked: (call id, kind).
    activated = Signal(str, str)

    def __init__(self, call_id: str, kind: str) -> None:
        super().__init__()
        self.call_id = call_id
        self.kind = kind
        glyph, label = _KINDS.get(kind, ("•", kind or "tool"))
        self.icon = QLabel(glyph)
        self.icon.setObjectName("cardIcon")
        self.icon.setProperty("kind", kind)
        self.icon.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.kind_label = QLabel(label)
        self.kind_label.setTextFormat(Qt.TextFormat.PlainText)  # model text is never markup
        self.kind_label.setObjectName("cardKind")
        self.title = ElidedLabel()
        self.title.setObjectName("cardTitle")
        if kind in _MONO_KINDS:
            self.title.setFont(mono_font())
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # model text is never markup
        self.status.setObjectName("cardStatus")
        self.status.setFixedHeight(22)
        self.link = QToolButton()
        self.link.setObjectName("cardLink")
        self.link.setText(f"{_LINKS.get(kind, '')} {_ARROW}")
        self.link.setVisible(kind in _LINKS)
        self.link.setCursor(Qt.CursorShape.PointingHandCursor)
        self.link.setToolTip(f"Show this call in the {_LINKS.get(kind, '')} view")
        self.link.clicked.connect(self._activate)
        self.detail = ElidedLabel()
        self.detail.setObjectName("cardDetail")
        self.summary = QLabel()
        self.summary.setTextFormat(Qt.TextFormat.PlainText)  # model text is never markup
        self.summary.setObjectName("cardSummary")
        self.summary.setWordWrap(True)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        top = self._top = QHBoxLayout()
        top.setSpacing(8)
        top.addWidget(self.icon)
        top.addWidget(self.kind_label)
        top.addWidget(self.title, 1)
        top.addWidget(self.status)
        top.addWidget(self.link)
        self.stop_button = QToolButton()  # shown while stalled; activated(call_id, "stop")
        self.stop_button.setObjectName("cardStop")
        self.stop_button.setText("Stop")
        self.stop_button.setToolTip("Stop this call (its process is killed)")
        self.stop_button.clicked.connect(lambda: self.activated.emit(self.call_id, "stop"))
        self.stop_button.setVisible(False)
        top.addWidget(self.stop_button)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(10, 7, 10, 7)
        self._layout.setSpacing(3)
        self._layout.addLayout(top)
        self._text_box = QVBoxLayout()
        self._text_box.setContentsMargins(30, 0, 0, 0)
        self._text_box.setSpacing(1)
        self._text_box.addWidget(self.detail)
        self._text_box.addWidget(self.summary)
        self._layout.addLayout(self._text_box)
        self.status_name = ""
        self.duration_ms: int | None = None
        # The body and the sub-conversation are made on first use (most cards have neither).
        self.body: CardBodyView | None = None
        self.body_toggle: QToolButton | None = None
        self._body_words = "details"
        self._body_chosen = False  # the user toggled the body: keep their choice
        self.sub_toggle: QToolButton | None = None
        self.sub_box: QFrame | None = None
        self._sub_layout: QVBoxLayout | None = None
        self._sub_entries: list[QWidget] = []
        self._sub_first = 0  # the first entry in the layout; earlier ones are hidden
        self._sub_limit: int | None = SUB_TAIL  # the last entries laid out (None: all)
        self.sub_earlier: QToolButton | None = None  # "Show earlier", made on first use
        self._sub_chosen = False  # the user toggled the sub-conversation: keep their choice

    def _activate(self) -> None:
        self.activated.emit(self.call_id, self.kind)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A card too narrow for its title beside the status pill (a sub-conversation, a
        narrow pane) shows the title on a line of its own, under the header."""
        super().resizeEvent(event)
        self._place_title()

    def title_on_own_line(self) -> bool:
        """Whether the title has its own line (the card is narrow)."""
        return self._text_box.indexOf(self.title) >= 0

    def _place_title(self) -> None:
        margins = self._layout.contentsMargins()
        others = [self.icon, self.kind_label, self.status, self.link, self.stop_button]
        used = sum(w.sizeHint().width() for w in others if not w.isHidden())
        used += self._top.spacing() * len(others) + margins.left() + margins.right()
        narrow = self.width() - used < TITLE_MIN_WIDTH
        if narrow == self.title_on_own_line():
            return
        if narrow:
            self._top.removeWidget(self.title)
            self._text_box.insertWidget(0, self.title)
        else:
            self._text_box.removeWidget(self.title)
            self._top.insertWidget(2, self.title, 1)

    def set_content(self, title: str, detail: str) -> None:
        """Show ``title`` (one line, elided) and the dim ``detail`` line (hidden when empty)."""
        self.title.set_full_text(title)
        self.detail.set_full_text(detail)
        set_shown(self.detail, bool(detail))

    def set_status(self, status: str, duration_ms: int | None, summary: str) -> None:
        """Show ``status`` (``running``, ``completed``…) with ``duration_ms`` (ms, or ``None``)
        in the pill and ``summary`` below; a final status folds the sub-conversation."""
        self.status_name = status
        self.duration_ms = duration_ms
        text = _STATUS.get(status, status)
        if duration_ms is not None:
            text += f" · {human_ms(duration_ms)}"
        self.status.setText(text)
        self.stop_button.setVisible(status == "stalled")
        self.summary.setText(breakable(display_text(summary)))
        set_shown(self.summary, bool(summary))
        for widget in (self, self.status):
            widget.setProperty("status", status)
            widget.style().unpolish(widget)
            widget.style().polish(widget)
        if self.sub_box is not None and not self._sub_chosen:
            self._set_sub_expanded(status not in _FINAL)
        self._place_title()  # the pill's new text may leave the title too little room

    # -- body ------------------------------------------------------------------------------

    def set_body(self, body: CardBody) -> None:
        """Show ``body`` under the head (replacing the previous one), behind a toggle."""
        if self.body is None or self.body_toggle is None:
            if body.is_empty():
                return
            self.body_toggle = ToggleButton()
            self.body_toggle.setObjectName("bodyToggle")
            self.body_toggle.setCursor(Qt.CursorShape.PointingHandCursor)
            self.body_toggle.setToolTip("Show or hide the details of this call")
            self.body_toggle.clicked.connect(self.toggle_body)
            self.body = CardBodyView()
            self.body.hide()
            self._text_box.addWidget(self.body_toggle, 0, Qt.AlignmentFlag.AlignLeft)
            self._text_box.addWidget(self.body)
        if body.is_empty():
            set_shown(self.body_toggle, False)
            set_shown(self.body, False)
            return
        self.body.set_body(body)
        if body.links and not (body.hits or body.code or body.output or body.images):
            self._body_words = _plural(len(body.links), "source")
        elif body.hits and not (body.code or body.output or body.images):
            self._body_words = _plural(len(body.hits), "result")
        elif body.lines and not (body.code or body.output or body.images or body.links):
            self._body_words = _plural(len(body.lines), "tool")
        else:
            self._body_words = "details"
        set_shown(self.body_toggle, True)
        opened = not self.body.isHidden() if self._body_chosen else body.expanded
        self._set_body_expanded(opened)

    def toggle_body(self) -> None:
        """Show or hide the body (what its toggle button does); the choice then sticks."""
        if self.body is None:
            return
        self._body_chosen = True
        self._set_body_expanded(self.body.isHidden())

    def _set_body_expanded(self, expanded: bool) -> None:
        if self.body is None or self.body_toggle is None:
            return
        set_shown(self.body, expanded)
        self.body_toggle.setText(f"{'▾' if expanded else '▸'} {self._body_words}")

    def is_body_visible(self) -> bool:
        """Whether the body is expanded (and not empty)."""
        return self.body is not None and not self.body.isHidden()

    def body_text(self) -> str:
        """The plain text of the body's content (shown or folded), link URLs included."""
        if self.body is None or self.body_toggle is None or self.body_toggle.isHidden():
            return ""
        return self.body.text()

    def image_count(self) -> int:
        """How many images the body holds as pixmaps (undecodable ones excluded)."""
        return 0 if self.body is None else self.body.image_count()

    # -- sub-conversation (an agent run as a tool) -----------------------------------------

    def sub_container(self) -> QFrame:
        """The box holding the nested entries (made, expanded while running, on first use)."""
        if self.sub_box is None:
            self.sub_toggle = ToggleButton()
            self.sub_toggle.setObjectName("subToggle")
            self.sub_toggle.setCursor(Qt.CursorShape.PointingHandCursor)
            self.sub_toggle.setToolTip("Show or hide this run's conversation")
            self.sub_toggle.clicked.connect(self.toggle_sub)
            self.sub_box = QFrame()
            self.sub_box.setObjectName("subConversation")
            self._sub_layout = QVBoxLayout(self.sub_box)
            self._sub_layout.setContentsMargins(10, 4, 0, 2)
            self._sub_layout.setSpacing(8)
            self._layout.addWidget(self.sub_toggle, 0, Qt.AlignmentFlag.AlignLeft)
            self._layout.addWidget(self.sub_box)
            self._set_sub_expanded(self.status_name not in _FINAL)
        return self.sub_box

    def add_sub_entry(self, widget: QWidget) -> None:
        """Append ``widget`` to the sub-conversation; past the last :data:`SUB_TAIL` entries
        (or as many as "Show earlier" brought back), the oldest one shown is hidden."""
        self.sub_container()
        assert self._sub_layout is not None
        self._sub_entries.append(widget)
        self._sub_layout.addWidget(widget)
        widget.show()
        limit = self._sub_limit
        while limit is not None and len(self._sub_entries) - self._sub_first > limit:
            oldest = self._sub_entries[self._sub_first]
            self._sub_layout.removeWidget(oldest)
            oldest.hide()
            self._sub_first += 1
        self._update_sub_earlier()
        self._update_sub_toggle()

    def sub_entries(self) -> list[QWidget]:
        """The nested entries, oldest first (the hidden earlier ones included)."""
        return list(self._sub_entries)

    def hidden_sub_count(self) -> int:
        """How many earlier nested entries wait behind "Show earlier"."""
        return self._sub_first

    def show_earlier(self) -> None:
        """Bring back the :data:`SUB_PAGE` nested entries before the first one shown (what
        the "Show earlier" button does). What the user brought back then stays while the run
        appends (nothing is hidden under the reader), so appends cost what is shown."""
        self.show_sub_entry_at(max(0, self._sub_first - SUB_PAGE))

    def show_sub_entry(self, widget: QWidget) -> None:
        """Make nested entry ``widget`` (or the one holding it) shown, with every entry after
        it; no-op for a widget that is not in this sub-conversation."""
        entry_of: QWidget | None = widget
        while entry_of is not None and entry_of.parentWidget() is not self.sub_box:
            entry_of = entry_of.parentWidget()
        for index, entry in enumerate(self._sub_entries):
            if entry is entry_of:
                self.show_sub_entry_at(index)
                return

    def show_sub_entry_at(self, index: int) -> None:
        """Show nested entries ``index`` (0 = the oldest) onwards."""
        if self._sub_layout is None or index >= self._sub_first:
            return
        offset = 1 if self.sub_earlier is not None else 0  # the button is the first item
        for entry in reversed(self._sub_entries[index : self._sub_first]):
            self._sub_layout.insertWidget(offset, entry)
            entry.show()
        self._sub_first = index
        self._sub_limit = None  # the user chose what to see: later appends hide nothing
        self._update_sub_earlier()

    def _update_sub_earlier(self) -> None:
        if self._sub_first and self.sub_earlier is None and self._sub_layout is not None:
            self.sub_earlier = ToggleButton()
            self.sub_earlier.setObjectName("subEarlier")
            self.sub_earlier.setCursor(Qt.CursorShape.PointingHandCursor)
            self.sub_earlier.setToolTip("Show earlier entries of this run's conversation")
            self.sub_earlier.clicked.connect(self.show_earlier)
            self._sub_layout.insertWidget(0, self.sub_earlier, 0, Qt.AlignmentFlag.AlignLeft)
        if self.sub_earlier is not None:
            hidden = self._sub_first
            self.sub_earlier.setText(
                f"\u25b4 Show {min(SUB_PAGE, hidden)} earlier · {hidden} hidden" if hidden else ""
            )
            set_shown(self.sub_earlier, bool(hidden))

    def is_sub_expanded(self) -> bool:
        """Whether the sub-conversation is shown."""
        return self.sub_box is not None and not self.sub_box.isHidden()

    def toggle_sub(self) -> None:
        """Show or hide the sub-conversation (what its toggle does); the choice then sticks."""
        if self.sub_box is None:
            return
        self._sub_chosen = True
        self._set_sub_expanded(self.sub_box.isHidden())

    def _set_sub_expanded(self, expanded: bool) -> None:
        if self.sub_box is not None:
            set_shown(self.sub_box, expanded)
            self._update_sub_toggle()

    def _update_sub_toggle(self) -> None:
        if self.sub_toggle is not None:
            arrow = "▾" if self.is_sub_expanded() else "▸"
            count = len(self._sub_entries)
            self.sub_toggle.setText(
                f"{arrow} Conversation · {count} entr{'ies' if count != 1 else 'y'}"
            )


#: The public name of the tool card class.
ToolCard = _ToolCard
