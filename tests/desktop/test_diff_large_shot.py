"""Issue 15's large diff in the window, for the docs: a 50,000-line file with a change every 12
lines (4,167 hunks) streamed into the Diff tab at 1440x900, shown side by side once the build
ends, a hunk in view. Saves ``tandem-diff-50k.png`` when ``TANDEM_SCREENSHOT_DIR`` is set
(``scripts/screenshots.sh``); the assertions run on every test run."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from desktop.views.diff.model import build_rows
from harnesses.editor.hunks import compute_hunks
from tests.desktop import app_scenario
from tests.desktop.shots import save_shot

LINES = 50_000
EVERY = 12


def _dense() -> tuple[str, str]:
    old = "".join(f"    value_{i} = compute({i}, 'x')  # note {i}\n" for i in range(LINES))
    new = "".join(
        f"    value_{i} = compute({i}, 'y')  # changed\n" if i % EVERY == 0 else line
        for i, line in enumerate(old.splitlines(keepends=True))
    )
    return old, new


@pytest.fixture
def window(tmp_path: Path, qtbot):
    yield from app_scenario.shown_window(tmp_path, qtbot)


def test_a_50k_line_diff_streams_in_and_reads_side_by_side(window, qtbot) -> None:
    old, new = _dense()
    hunks = compute_hunks(old, new)
    assert len(hunks) == 4167
    view = window.diff_view
    window.tabs.setCurrentIndex(0)
    # as MainWindow._show_proposal does: shown at once, the proposal's hunks stream in
    diff = view.stream_file("generated/table.py", old, new, proposal_id="p", hunks=hunks)
    assert view.current_file() is diff and view.building("generated/table.py")
    qtbot.waitUntil(lambda: not view.building("generated/table.py"), timeout=120_000)
    QApplication.processEvents()
    assert "generated/table.py" not in view._errors  # no error row
    assert len(diff.hunks) == 4167
    assert view._file_progress(diff) == "0/4167 reviewed"
    view.set_split_min_columns(0)  # side by side, whatever the font's width
    view.set_unified(False)
    QApplication.processEvents()
    assert not view.is_unified()
    rows = view.displayed_rows()
    assert rows == build_rows(diff.hunks, unified=False)[0]
    assert len(rows) == view._list.model().rowCount()
    for _ in range(3):
        view.next_hunk()
    view.accept_current()  # hunk 4 accepted, the view moves on to hunk 5
    QApplication.processEvents()
    assert view.current_hunk() is diff.hunks[4]
    assert view._hunk_label.text() == "Hunk 5 of 4167"
    top = view._list.indexAt(view._list.rect().topLeft()).row()
    bottom = view._list.indexAt(view._list.rect().bottomLeft()).row()
    shown = [r for r in rows[top : bottom + 1] if r.right is not None]
    assert any("# changed" in r.right.text for r in shown)  # a hunk's change is in view
    assert view._apply_btn.isEnabled()
    save_shot(window, "tandem-diff-50k.png")  # scripts/screenshots.sh
