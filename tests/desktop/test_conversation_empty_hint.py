"""ConversationView's empty-state hint (issue 16): wrapped, never cut at the right edge."""

from __future__ import annotations

import pytest

from desktop.views.conversation_view import ConversationView


@pytest.mark.parametrize("width", [340, 420, 470, 900])
def test_the_empty_hint_fits_its_viewport_at_any_width(qtbot, width: int) -> None:
    view = ConversationView()
    qtbot.addWidget(view)
    view.resize(width, 500)
    view.show()
    qtbot.waitExposed(view)
    hint = view._empty
    viewport = view._scroll.viewport()
    qtbot.waitUntil(lambda: hint.geometry().width() <= viewport.width() and hint.width() > 0)
    assert hint.isVisible()
    assert "Describe a task below to start" in hint.text()
    # inside the viewport, both edges
    assert hint.geometry().left() >= 0 and hint.geometry().right() < viewport.width()
    # its text needs no more width than it has, and its wrapped height fits
    assert hint.minimumSizeHint().width() <= hint.width()
    assert hint.heightForWidth(hint.width()) <= hint.height()


def test_the_window_minimum_is_the_narrowest_width(qtbot) -> None:
    view = ConversationView()
    qtbot.addWidget(view)
    view.resize(100, 400)  # asks for less than the minimum: gets the minimum
    view.show()
    qtbot.waitExposed(view)
    assert view.width() == view.minimumWidth()
    hint = view._empty
    qtbot.waitUntil(lambda: hint.width() > 0)
    assert hint.minimumSizeHint().width() <= hint.width()
