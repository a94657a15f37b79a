"""The conversation is drawn on its dark background, so the answers' light text is readable.

A ``QWidget`` subclass (the virtualised transcript stack) paints no style-sheet background
unless it has ``WA_StyledBackground``; a new user found the agent's answer light grey on
light grey after the transcript was virtualised (issue 16, new-user trial).
"""

from __future__ import annotations

from PySide6.QtGui import QColor

from desktop.views.conversation_view import ConversationView

_BACKGROUND = QColor("#15171c")


def _close(a: QColor, b: QColor, tolerance: int = 6) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a.getRgb()[:3], b.getRgb()[:3], strict=True))


def test_the_answer_is_light_text_on_the_dark_background(qtbot):
    view = ConversationView()
    qtbot.addWidget(view)
    view.resize(700, 500)
    view.show()
    view.add_user_message("Fix the failing test")
    view.append_assistant_delta("msg_1", "Fixed `naturalsize`: it now compares the absolute size.")
    qtbot.wait(50)  # one event-loop turn: the stack lays out and shows the entries
    image = view.grab().toImage()
    # Below the last entry and in the margin: nothing but the conversation's background.
    for x, y in [(view.width() // 2, view.height() - 20), (4, view.height() // 2)]:
        assert _close(image.pixelColor(x, y), _BACKGROUND), (x, y, image.pixelColor(x, y).name())
    # The answer's text is lighter than the background (it is drawn light on dark).
    lightest = max(
        image.pixelColor(x, y).lightness()
        for x in range(0, view.width(), 3)
        for y in range(0, view.height() - 40, 3)
    )
    assert lightest > 150
