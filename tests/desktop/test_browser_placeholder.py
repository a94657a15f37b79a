"""BrowserPlaceholder: explains where the live browser view will appear."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QLabel

from desktop.views.browser_placeholder import BrowserPlaceholder


def test_placeholder_text_and_message(qtbot) -> None:
    widget = BrowserPlaceholder()
    qtbot.addWidget(widget)
    widget.show()
    shown = " ".join(label.text() for label in widget.findChildren(QLabel))
    assert "browser" in shown.lower()
    assert "appears here when the agent uses the browser" in shown
    widget.set_message("Chromium was not found: set its path in Settings.")
    assert widget.text.text() == "Chromium was not found: set its path in Settings."
    widget.set_message("")
    assert "appears here" in widget.text.text()


def test_views_share_the_dark_style_sheet_from_resources(qtbot) -> None:
    from resources import read_text

    style = read_text("styles", "dark.qss")
    widget = BrowserPlaceholder()
    qtbot.addWidget(widget)
    assert widget.styleSheet() == style
    for selector in ("ConversationView", "Composer", "TopBar", "SessionsList", "_ToolCard"):
        assert selector in style
