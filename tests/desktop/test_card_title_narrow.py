"""A card too narrow for its command beside the status pill shows it on a line of its own.

Found trying issue 15's views as a new user: in a sub-conversation (about 300 px wide) every
shell card read "Shell … ✓ done · 91 ms": the command was elided to nothing.
"""

from __future__ import annotations

from desktop.views.tool_card import TITLE_MIN_WIDTH, ToolCard

COMMAND = "python -m pytest -x tests/test_filesize.py::test_naturalsize"


def _card(qtbot, width: int) -> ToolCard:
    card = ToolCard("c1", "shell")
    qtbot.addWidget(card)
    card.set_content(COMMAND, "/tmp/project")
    card.set_status("completed", 91, "exit 0")
    card.resize(width, 120)
    card.show()
    qtbot.waitExposed(card)
    return card


def test_a_narrow_card_gives_the_command_its_own_line(qtbot) -> None:
    card = _card(qtbot, 300)
    qtbot.waitUntil(card.title_on_own_line)
    qtbot.waitUntil(lambda: card.title.width() >= TITLE_MIN_WIDTH)  # the layout settles
    shown = card.title.text()
    assert shown.startswith("python -m pytest"), shown
    assert card.title.geometry().top() > card.status.geometry().bottom()


def test_a_wide_card_keeps_it_beside_the_pill_and_a_resize_moves_it(qtbot) -> None:
    card = _card(qtbot, 900)
    assert not card.title_on_own_line()
    assert card.title.text() == COMMAND
    card.resize(300, 120)
    qtbot.waitUntil(card.title_on_own_line)
    card.resize(900, 120)
    qtbot.waitUntil(lambda: not card.title_on_own_line())
    qtbot.waitUntil(lambda: card.title.text() == COMMAND)
