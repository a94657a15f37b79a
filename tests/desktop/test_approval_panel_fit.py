"""ApprovalPanel (issue 16): a long command is readable whole, the reason line wraps."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QVBoxLayout, QWidget

from desktop.views.approval_panel import ApprovalPanel, ApprovalRequest

_LONG = (
    "cd /work/humanize && python -m pytest tests/test_time.py tests/test_number.py "
    "tests/test_filesize.py -k 'naturaldelta or naturaltime or intcomma' -x -q "
    "--maxfail=1 -p no:cacheprovider --tb=short 2>&1 | tee /tmp/humanize-test.log | tail -n 40"
)
_REASON = (
    "asked: no rule matches `python -m pytest tests/test_time.py tests/test_number.py "
    "tests/test_filesize.py…` (in /work/humanize)"
)


def _request(body: str, rid: str = "c1") -> ApprovalRequest:
    return ApprovalRequest(rid, "command", "Run a shell command", body, _REASON, "any `cd …`")


@pytest.fixture
def host(qtbot) -> tuple[QWidget, ApprovalPanel]:
    """The panel in a column as narrow as the window's centre column at 1440x900."""
    column = QWidget()
    layout = QVBoxLayout(column)
    layout.addStretch(1)
    panel = ApprovalPanel()
    layout.addWidget(panel)
    qtbot.addWidget(column)
    column.resize(470, 700)
    column.show()
    qtbot.waitExposed(column)
    return column, panel


def _settle(qtbot, panel: ApprovalPanel) -> None:
    qtbot.waitUntil(lambda: panel.isVisible() and panel.body_view.viewport().width() > 0)
    # the layout settles in posted events; a bounded wait for the height to stop changing
    heights: list[int] = []

    def stable() -> bool:
        heights.append(panel.body_view.height())
        return len(heights) > 3 and len(set(heights[-3:])) == 1

    qtbot.waitUntil(stable, timeout=2000)


def test_a_long_command_is_shown_whole_without_scrollbars(qtbot, host) -> None:
    _column, panel = host
    panel.enqueue(_request(_LONG))
    _settle(qtbot, panel)
    view = panel.body_view
    # no horizontal scrolling: the command wraps inside the box
    assert view.horizontalScrollBar().maximum() == 0
    assert not view.horizontalScrollBar().isVisible()
    # every wrapped line is inside the viewport: nothing to scroll, nothing clipped at the top
    assert view.verticalScrollBar().maximum() == 0
    assert not view.verticalScrollBar().isVisible()
    assert view.document().lineCount() >= 1
    # several lines tall (today's box is cut to about one line)
    assert view.height() >= 3 * view.fontMetrics().lineSpacing()
    layout = view.document().documentLayout()
    assert layout.documentSize().height() >= 3  # QPlainTextDocumentLayout: visual lines


def test_a_very_long_command_scrolls_vertically_beyond_the_cap(qtbot, host) -> None:
    _column, panel = host
    body = "\n".join(f"echo line {n}" for n in range(40))
    panel.enqueue(_request(body))
    _settle(qtbot, panel)
    view = panel.body_view
    assert view.verticalScrollBar().maximum() > 0  # scrolls, the box does not grow without end
    assert view.height() < 14 * view.fontMetrics().lineSpacing()
    assert view.horizontalScrollBar().maximum() == 0


def test_the_box_refits_when_the_panel_gets_narrower(qtbot, host) -> None:
    column, panel = host
    panel.enqueue(_request(_LONG))
    _settle(qtbot, panel)
    wide = panel.body_view.height()
    column.resize(330, 700)  # the window's minimum centre width
    _settle(qtbot, panel)
    assert panel.body_view.height() > wide
    assert panel.body_view.verticalScrollBar().maximum() == 0


def test_a_short_command_stays_one_line(qtbot, host) -> None:
    _column, panel = host
    panel.enqueue(_request("git status"))
    _settle(qtbot, panel)
    view = panel.body_view
    assert view.verticalScrollBar().maximum() == 0
    assert view.height() < 2 * view.fontMetrics().lineSpacing() + 20


def test_the_reason_wraps_and_has_the_whole_text_as_tooltip(qtbot, host) -> None:
    _column, panel = host
    panel.enqueue(_request(_LONG))
    _settle(qtbot, panel)
    label = panel.reason_label
    assert label.wordWrap()
    assert label.toolTip() == _REASON
    # the label is as tall as its wrapped text needs at its width: nothing cut
    assert label.height() >= label.heightForWidth(label.width())
    assert label.sizeHint().width() <= panel.width()
    panel.reject()
    assert label.toolTip() == ""
