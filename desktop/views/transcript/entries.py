"""The transcript's entries: user and assistant messages, reasoning and notices (tool cards:
:mod:`desktop.views.tool_card`)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout

from desktop.activity import Link

from ..rich_text import (
    DIM_COLOR,
    TextBlock,
    ToggleButton,
    display_text,
    link_label,
    links_html,
    render_markdown,
    set_shown,
)

__all__ = ["_AssistantMessage", "_Notice", "_Reasoning", "_UserMessage"]

# The classes keep their underscore names: resources/styles/dark.qss selects them by class name.


class _UserMessage(QFrame):
    """The user's message: "You" and the text, plain (never Markdown)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        speaker = QLabel("You")
        speaker.setObjectName("speaker")
        speaker.setContentsMargins(2, 0, 0, 0)  # align with the text's document margin
        self.body = TextBlock()
        self.body.setPlainText(text)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.setSpacing(2)
        layout.addWidget(speaker)
        layout.addWidget(self.body)


class _AssistantMessage(QFrame):
    """An assistant message: Markdown, streamed in, and an optional "Sources" footer."""

    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        self.finished = False
        self.body = TextBlock()
        self.sources: QLabel | None = None  # the "Sources" footer, made on first citations
        self.source_titles: list[str] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(4, 2, 4, 2)
        self._layout.addWidget(self.body)

    def render_text(self) -> None:
        render_markdown(self.body.document(), self.text)

    def set_sources(self, links: Sequence[Link]) -> None:
        """Show ``links`` in a numbered "Sources" footer (none: no footer)."""
        self.source_titles = [link.title for link in links]
        if self.sources is None:
            if not links:
                return
            self.sources = link_label("messageSources")
            self._layout.addWidget(self.sources)
        header = f'<div style="color:{DIM_COLOR}; font-weight:bold">Sources</div>'
        self.sources.setText(header + links_html(links))
        set_shown(self.sources, bool(links))


class _Reasoning(QFrame):
    """Reasoning: a one-line toggle, the text (dim) shown only when expanded."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.toggle = ToggleButton()
        self.toggle.setObjectName("reasoningToggle")
        self.toggle.setCursor(Qt.CursorShape.PointingHandCursor)
        self.toggle.setToolTip("Show or hide the model's reasoning")
        self.body = TextBlock()
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


class _Notice(QFrame):
    """A banner line: an icon per level (``info``, ``warning``, ``error``) and plain text."""

    _ICONS = {"info": "i", "warning": "!", "error": "✕"}

    def __init__(self, text: str, level: str) -> None:
        super().__init__()
        level = level if level in self._ICONS else "info"
        self.setProperty("level", level)
        icon = QLabel(self._ICONS[level])
        icon.setObjectName("noticeIcon")
        self.label = QLabel(display_text(text))
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 5, 10, 5)
        layout.setSpacing(8)
        layout.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.label, 1)
