"""BrowserPlaceholder: the Browser tab until the agent uses the browser."""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from resources import read_text

__all__ = ["BrowserPlaceholder"]

_DEFAULT = (
    "The live browser view appears here when the agent uses the browser.\n"
    "You will see each page as it loads, with every click marked."
)


class BrowserPlaceholder(QFrame):
    """A quiet panel saying where the live browser view will appear.

    Args:
        parent: the Qt parent.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setStyleSheet(read_text("styles", "dark.qss"))
        icon = QLabel("◉")
        icon.setObjectName("placeholderIcon")
        font = icon.font()
        font.setPointSizeF(font.pointSizeF() * 3.2)
        icon.setFont(font)
        self.title = QLabel("No browser session")
        self.title.setObjectName("placeholderTitle")
        self.text = QLabel(_DEFAULT)
        self.text.setObjectName("placeholderText")
        self.text.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 24, 24, 24)
        layout.setSpacing(8)
        layout.addStretch(1)
        for label in (icon, self.title, self.text):
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            layout.addWidget(label)
        layout.addStretch(2)

    @Slot(str)
    def set_message(self, text: str) -> None:
        """Replace the explanation (e.g. "Chromium was not found: set its path in Settings")."""
        self.text.setText(text or _DEFAULT)
