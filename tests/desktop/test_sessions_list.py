"""SessionsList: order, status and time display, selection signals, new-session button."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from datetime import datetime

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from desktop.views.sessions_list import SessionsList, SessionSummary, format_session_time

NOW = datetime(2026, 3, 18, 15, 30).timestamp()  # a Wednesday afternoon, local time


@pytest.fixture
def sessions_list(qtbot):
    widget = SessionsList(now=lambda: NOW)
    qtbot.addWidget(widget)
    widget.resize(280, 400)
    widget.show()
    qtbot.waitExposed(widget)
    widget.set_sessions(
        [
            SessionSummary("old", "Write the README", NOW - 86400 * 40, "done"),
            SessionSummary("new", "Fix the failing test", NOW - 30, "running"),
            SessionSummary("mid", "Check signup errors", NOW - 600, "waiting-approval"),
        ]
    )
    return widget


def test_format_session_time() -> None:
    assert format_session_time(NOW - 10, NOW) == "just now"
    assert format_session_time(NOW - 600, NOW) == "10 min ago"
    assert format_session_time(datetime(2026, 3, 18, 9, 5).timestamp(), NOW) == "09:05"
    assert format_session_time(datetime(2026, 3, 17, 23, 0).timestamp(), NOW) == "Yesterday"
    assert format_session_time(datetime(2026, 3, 14, 12, 0).timestamp(), NOW) == "Saturday"
    assert format_session_time(datetime(2026, 2, 2, 12, 0).timestamp(), NOW) == "2 Feb"
    assert format_session_time(datetime(2025, 12, 24, 12, 0).timestamp(), NOW) == "24 Dec 2025"


def test_sessions_are_shown_newest_first(sessions_list) -> None:
    assert [s.id for s in sessions_list.sessions()] == ["new", "mid", "old"]
    assert sessions_list.view.isVisible()
    assert not sessions_list.empty.isVisible()
    sessions_list.set_sessions([])
    assert not sessions_list.view.isVisible()
    assert sessions_list.empty.isVisible()


def test_rows_paint_title_status_and_time(sessions_list) -> None:
    """The delegate paints something different for each row (title/status/time)."""
    view = sessions_list.view
    rects = [view.visualRect(view.model().index(row, 0)) for row in range(3)]
    assert all(r.height() > view.fontMetrics().height() * 2 for r in rects)
    image = view.viewport().grab().toImage()
    crops = [image.copy(r) for r in rects]
    assert crops[0] != crops[1] != crops[2]


def test_clicking_a_row_emits_session_selected(sessions_list, qtbot) -> None:
    view = sessions_list.view
    rect = view.visualRect(view.model().index(1, 0))
    with qtbot.waitSignal(sessions_list.sessionSelected, timeout=1000) as blocker:
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == ["mid"]
    assert sessions_list.current_id() == "mid"


def test_keyboard_navigation_emits_session_selected(sessions_list, qtbot) -> None:
    sessions_list.select("new")
    sessions_list.view.setFocus()
    with qtbot.waitSignal(sessions_list.sessionSelected, timeout=1000) as blocker:
        QTest.keyClick(sessions_list.view, Qt.Key.Key_Down)
    assert blocker.args == ["mid"]


def test_select_and_set_sessions_do_not_emit(sessions_list, qtbot) -> None:
    with qtbot.assertNotEmitted(sessions_list.sessionSelected):
        sessions_list.select("old")
        assert sessions_list.current_id() == "old"
        sessions_list.set_sessions(
            [
                SessionSummary("old", "Write the README", NOW - 5, "failed"),
                SessionSummary("x", "Another", NOW - 50, "done"),
            ]
        )
    assert sessions_list.current_id() == "old"  # the selection survives a refresh
    assert sessions_list.sessions()[0].status == "failed"
    sessions_list.select("missing")
    assert sessions_list.current_id() is None


def test_new_session_button(sessions_list, qtbot) -> None:
    assert "Ctrl+N" in sessions_list.new_button.toolTip()
    with qtbot.waitSignal(sessions_list.newSessionRequested, timeout=1000):
        QTest.mouseClick(sessions_list.new_button, Qt.MouseButton.LeftButton)


def test_status_aliases_are_normalised(sessions_list) -> None:
    sessions_list.set_sessions([SessionSummary("a", "t", NOW, "waiting")])
    assert sessions_list.sessions()[0].status == "waiting-approval"


def test_summary_is_frozen() -> None:
    summary = SessionSummary("a", "t", 1.0, "done")
    with pytest.raises(AttributeError):
        summary.title = "other"  # type: ignore[misc]
