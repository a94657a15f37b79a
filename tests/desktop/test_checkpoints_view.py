"""CheckpointsView: rows, selection of two, diff/restore/undo signals; never touches a store."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.views.checkpoints_view import CheckpointInfo, CheckpointsView

NOW = time.time()


def _infos() -> list[CheckpointInfo]:
    return [
        CheckpointInfo("c1", NOW - 300, 1, "before turn 1", 0),
        CheckpointInfo("c3", NOW - 100, 3, "before turn 3", 1),
        CheckpointInfo("c2", NOW - 200, 2, "before turn 2", 4),
        CheckpointInfo("pre", NOW - 50, None, "before restore", 2),
    ]


@pytest.fixture
def view(qtbot) -> CheckpointsView:
    v = CheckpointsView(_infos())
    qtbot.addWidget(v)
    v.resize(600, 320)
    v.show()
    qtbot.waitExposed(v)
    return v


def _row_ids(view: CheckpointsView) -> list[str]:
    tree = view.tree
    return [
        tree.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole)
        for i in range(tree.topLevelItemCount())
    ]


def _click(qtbot, view: CheckpointsView, checkpoint_id: str, ctrl: bool = False) -> None:
    row = _row_ids(view).index(checkpoint_id)
    item = view.tree.topLevelItem(row)
    rect = view.tree.visualItemRect(item)
    mods = Qt.KeyboardModifier.ControlModifier if ctrl else Qt.KeyboardModifier.NoModifier
    qtbot.mouseClick(view.tree.viewport(), Qt.MouseButton.LeftButton, mods, rect.center())


def test_rows_newest_first_with_columns(view: CheckpointsView) -> None:
    assert _row_ids(view) == ["pre", "c3", "c2", "c1"]
    first = view.tree.topLevelItem(0)
    assert first.text(1) == "—"
    assert first.text(2) == "before restore"
    assert first.text(3) == "2 files"
    assert view.tree.topLevelItem(1).text(3) == "1 file"
    assert view.tree.topLevelItem(2).text(1) == "2"
    assert first.text(0) == time.strftime("%H:%M:%S", time.localtime(NOW - 50))
    assert view._stack.currentWidget() is view.tree


def test_old_checkpoints_show_the_date(qtbot) -> None:
    old = NOW - 3 * 86400
    v = CheckpointsView([CheckpointInfo("o", old, 1, "old", 1)])
    qtbot.addWidget(v)
    assert v.tree.topLevelItem(0).text(0) == time.strftime("%Y-%m-%d %H:%M", time.localtime(old))


def test_empty_state(qtbot) -> None:
    v = CheckpointsView()
    qtbot.addWidget(v)
    assert v._stack.currentWidget() is v.empty_label
    assert not v.diff_button.isEnabled() and not v.restore_button.isEnabled()
    assert not v.undo_button.isEnabled()


def test_one_selected_diffs_against_working_tree_and_restores(qtbot, view: CheckpointsView) -> None:
    assert not view.diff_button.isEnabled() and not view.restore_button.isEnabled()
    _click(qtbot, view, "c2")
    assert view.selected_ids() == ["c2"]
    assert view.diff_button.text() == "Diff with working tree"
    with qtbot.waitSignal(view.diffRequested) as sig:
        qtbot.mouseClick(view.diff_button, Qt.MouseButton.LeftButton)
    assert sig.args == ["c2", ""]
    with qtbot.waitSignal(view.restoreRequested) as sig:
        qtbot.mouseClick(view.restore_button, Qt.MouseButton.LeftButton)
    assert sig.args == ["c2"]


def test_two_selected_diff_older_to_newer_and_third_drops_oldest_pick(
    qtbot, view: CheckpointsView
) -> None:
    _click(qtbot, view, "c3")
    _click(qtbot, view, "c1", ctrl=True)
    assert view.selected_ids() == ["c1", "c3"]
    assert view.diff_button.text() == "Diff between selected"
    assert not view.restore_button.isEnabled()
    assert "before turn 1" in view.hint_label.text()
    with qtbot.waitSignal(view.diffRequested) as sig:
        qtbot.mouseClick(view.diff_button, Qt.MouseButton.LeftButton)
    assert sig.args == ["c1", "c3"]

    _click(qtbot, view, "pre", ctrl=True)  # c3 was picked first: it is dropped
    assert view.selected_ids() == ["c1", "pre"]
    assert len(view.tree.selectedItems()) == 2
    with qtbot.waitSignal(view.diffRequested) as sig:
        view.diff_button.click()
    assert sig.args == ["c1", "pre"]


def test_double_click_and_enter_diff_against_working_tree(qtbot, view: CheckpointsView) -> None:
    row = _row_ids(view).index("c3")
    rect = view.tree.visualItemRect(view.tree.topLevelItem(row))
    qtbot.mouseClick(view.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    with qtbot.waitSignal(view.diffRequested) as sig:
        qtbot.mouseDClick(view.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert sig.args == ["c3", ""]
    view.tree.setFocus()
    view.tree.setCurrentItem(view.tree.topLevelItem(_row_ids(view).index("c1")))
    with qtbot.waitSignal(view.diffRequested) as sig:
        qtbot.keyClick(view.tree, Qt.Key.Key_Return)
    assert sig.args == ["c1", ""]


def test_undo_restore(qtbot, view: CheckpointsView) -> None:
    assert not view.undo_button.isEnabled()
    view.set_undo_available(True)
    with qtbot.waitSignal(view.undoRestoreRequested):
        qtbot.mouseClick(view.undo_button, Qt.MouseButton.LeftButton)
    view.set_undo_available(False)
    assert not view.undo_button.isEnabled()


def test_set_checkpoints_keeps_selection_of_remaining_ids(view: CheckpointsView) -> None:
    view.select(["c1", "c2"])
    assert view.selected_ids() == ["c1", "c2"]
    view.set_checkpoints([*_infos(), CheckpointInfo("c4", NOW, 4, "before turn 4", 3)])
    assert _row_ids(view)[0] == "c4"
    assert view.selected_ids() == ["c1", "c2"]
    assert {i.data(0, Qt.ItemDataRole.UserRole) for i in view.tree.selectedItems()} == {"c1", "c2"}
    view.set_checkpoints([i for i in _infos() if i.id != "c1"])
    assert view.selected_ids() == ["c2"]
    assert view.restore_button.isEnabled()
    view.set_checkpoints([])
    assert view.selected_ids() == [] and view._stack.currentWidget() is view.empty_label


def test_from_real_checkpoint(tmp_path: Path) -> None:
    import asyncio

    import git

    from harnesses.checkpoints import CheckpointStore

    repo = git.Repo.init(tmp_path)
    (tmp_path / "a.txt").write_text("1\n")
    repo.index.add(["a.txt"])
    repo.index.commit("init")
    (tmp_path / "a.txt").write_text("2\n")
    (tmp_path / "b.txt").write_text("new\n")
    store = CheckpointStore(tmp_path, data_dir=tmp_path / "data")
    checkpoint = asyncio.run(store.create("before turn 1", turn=1))
    info = CheckpointInfo.from_checkpoint(checkpoint)
    assert info == CheckpointInfo(checkpoint.id, checkpoint.created_at, 1, "before turn 1", 2)
