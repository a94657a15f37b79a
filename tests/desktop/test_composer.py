"""Composer: Ctrl+Enter sends, Enter adds a line, Esc/Stop stop a run, Send/Stop toggle."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from desktop.views.composer import Composer

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def composer(qtbot):
    widget = Composer()
    qtbot.addWidget(widget)
    widget.resize(600, 140)
    widget.show()
    qtbot.waitExposed(widget)
    widget.edit.setFocus()
    return widget


def test_typing_enter_adds_lines_and_ctrl_enter_submits(composer, qtbot) -> None:
    QTest.keyClicks(composer.edit, "fix the test")
    QTest.keyClick(composer.edit, Qt.Key.Key_Return)
    QTest.keyClicks(composer.edit, "in a.py")
    assert composer.text() == "fix the test\nin a.py"
    with qtbot.waitSignal(composer.submitted, timeout=1000) as blocker:
        QTest.keyClick(composer.edit, Qt.Key.Key_Return, CTRL)
    assert blocker.args == ["fix the test\nin a.py"]
    assert composer.text() == ""


def test_ctrl_keypad_enter_also_submits(composer, qtbot) -> None:
    QTest.keyClicks(composer.edit, "go")
    with qtbot.waitSignal(composer.submitted, timeout=1000) as blocker:
        QTest.keyClick(composer.edit, Qt.Key.Key_Enter, CTRL | Qt.KeyboardModifier.KeypadModifier)
    assert blocker.args == ["go"]


def test_send_button_submits_stripped_text(composer, qtbot) -> None:
    assert not composer.send_button.isEnabled()  # nothing to send yet
    QTest.keyClicks(composer.edit, "  run the tests  ")
    assert composer.send_button.isEnabled()
    with qtbot.waitSignal(composer.submitted, timeout=1000) as blocker:
        QTest.mouseClick(composer.send_button, Qt.MouseButton.LeftButton)
    assert blocker.args == ["run the tests"]


def test_blank_text_is_not_submitted(composer, qtbot) -> None:
    QTest.keyClicks(composer.edit, "   ")
    with qtbot.assertNotEmitted(composer.submitted):
        QTest.keyClick(composer.edit, Qt.Key.Key_Return, CTRL)


def test_set_running_toggles_send_and_stop(composer) -> None:
    assert composer.send_button.isVisible()
    assert not composer.stop_button.isVisible()
    composer.set_running(True)
    assert composer.is_running()
    assert not composer.send_button.isVisible()
    assert composer.stop_button.isVisible()
    assert "Esc" in composer.stop_button.toolTip()
    assert "Esc" in composer.hint.text()
    composer.set_running(False)
    assert composer.send_button.isVisible()
    assert not composer.stop_button.isVisible()
    assert "Ctrl+Enter" in composer.send_button.toolTip()
    assert "Ctrl+Enter" in composer.hint.text()


def test_stop_button_emits_stop(composer, qtbot) -> None:
    composer.set_running(True)
    with qtbot.waitSignal(composer.stopRequested, timeout=1000):
        QTest.mouseClick(composer.stop_button, Qt.MouseButton.LeftButton)


def test_escape_stops_only_while_running(composer, qtbot) -> None:
    with qtbot.assertNotEmitted(composer.stopRequested):
        QTest.keyClick(composer.edit, Qt.Key.Key_Escape)
    composer.set_running(True)
    with qtbot.waitSignal(composer.stopRequested, timeout=1000):
        QTest.keyClick(composer.edit, Qt.Key.Key_Escape)


def test_running_keeps_the_draft_and_does_not_submit(composer, qtbot) -> None:
    composer.set_running(True)
    QTest.keyClicks(composer.edit, "next: update the docs")
    with qtbot.assertNotEmitted(composer.submitted):
        QTest.keyClick(composer.edit, Qt.Key.Key_Return, CTRL)
    assert composer.text() == "next: update the docs"
    composer.set_running(False)
    with qtbot.waitSignal(composer.submitted, timeout=1000) as blocker:
        QTest.keyClick(composer.edit, Qt.Key.Key_Return, CTRL)
    assert blocker.args == ["next: update the docs"]


def test_field_grows_with_lines_up_to_a_cap(composer) -> None:
    small = composer.edit.height()
    composer.set_text("\n".join(f"line {i}" for i in range(5)))
    grown = composer.edit.height()
    assert grown > small
    composer.set_text("\n".join(f"line {i}" for i in range(50)))
    capped = composer.edit.height()
    assert capped > grown
    composer.set_text("\n".join(f"line {i}" for i in range(80)))
    assert composer.edit.height() == capped
