"""Issue 16, Build item 5: the welcome window (no folder and no last folder), and the
question before opening the home folder or ``/``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from core.settings import Settings, load_settings, save_settings
from desktop.app import AppOptions, _welcome
from desktop.welcome import WelcomeChoice, WelcomeWindow, needs_welcome, risky_folder
from tests.desktop.shots import save_shot


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def test_risky_folders_are_home_and_root(home: Path, tmp_path: Path) -> None:
    assert "home folder" in (risky_folder(home) or "")
    assert "root" in (risky_folder(Path("/")) or "")
    project = home / "project"
    project.mkdir()
    assert risky_folder(project) is None
    assert risky_folder(home / "project" / "..") is not None  # resolved first


def test_needs_welcome(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    assert needs_welcome(None, None)
    assert needs_welcome(None, tmp_path / "gone")  # the last folder was deleted
    assert not needs_welcome(None, project)
    assert not needs_welcome(project, None)
    assert needs_welcome(home, None)  # asked first
    assert needs_welcome(None, home)


def test_window_lists_recent_folders_and_opens_one(home: Path, tmp_path: Path, qtbot) -> None:
    a, b = tmp_path / "alpha", tmp_path / "beta"
    a.mkdir()
    b.mkdir()
    window = WelcomeWindow([b, tmp_path / "deleted", a])
    qtbot.addWidget(window)
    window.show()
    assert window.view.recent_folders() == [b, a]  # missing ones are left out
    assert str(b) in window.view.recent_buttons[0].text()  # the whole path is shown
    save_shot(window, "tandem-welcome.png")  # scripts/screenshots.sh
    with qtbot.waitSignal(window.chosen) as blocker:
        qtbot.mouseClick(window.view.recent_buttons[1], Qt.MouseButton.LeftButton)
    assert blocker.args == [WelcomeChoice(folder=a)]
    assert not window.isVisible()


def test_demo_button(home: Path, qtbot) -> None:
    window = WelcomeWindow([])
    qtbot.addWidget(window)
    window.show()
    assert window.view.empty.isVisible()
    with qtbot.waitSignal(window.chosen) as blocker:
        qtbot.mouseClick(window.view.demo_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [WelcomeChoice(demo=True)]


@pytest.mark.parametrize("answer", ["cancel", "open"])
def test_home_asks_before_opening(home: Path, qtbot, answer: str) -> None:
    window = WelcomeWindow([home])
    qtbot.addWidget(window)
    window.show()
    chosen: list[object] = []
    window.chosen.connect(chosen.append)
    qtbot.mouseClick(window.view.recent_buttons[0], Qt.MouseButton.LeftButton)
    box = window.question
    assert box is not None and box.isVisible()  # asked without blocking the loop
    assert "home folder" in box.text() and chosen == []
    button = (
        QMessageBox.StandardButton.Open if answer == "open" else QMessageBox.StandardButton.Cancel
    )
    qtbot.mouseClick(box.button(button), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not box.isVisible())
    if answer == "open":
        assert chosen == [WelcomeChoice(folder=home)]
    else:
        assert chosen == [] and window.isVisible()  # back on the welcome page
        window.close()
        assert chosen == [None]


def _run(coro_factory):
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        return coro_factory(loop)
    finally:
        loop.close()
        asyncio.set_event_loop(None)


def test_first_launch_shows_welcome_and_remembers_the_folder(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    settings_path = tmp_path / "settings.toml"
    save_settings(Settings(recent_folders=[project]), settings_path)
    seen: list[WelcomeWindow] = []
    tries = [0]

    def click() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, WelcomeWindow)]
        if not windows or not windows[0].isVisible():
            tries[0] += 1
            if tries[0] < 500:  # bounded polling (about 10 s)
                QTimer.singleShot(20, click)
            return
        seen.append(windows[0])
        windows[0].view.recent_buttons[0].click()

    def first(loop):
        QTimer.singleShot(0, click)
        return _welcome(AppOptions(settings_path=settings_path), loop)

    options = _run(first)
    assert seen, "the welcome window was not shown"
    assert options is not None and options.folder == project and not options.demo
    assert load_settings(settings_path).last_folder == project

    def second(loop):  # the last folder is known now: no welcome window
        return _welcome(AppOptions(settings_path=settings_path), loop)

    again = _run(second)
    assert again is not None and again.folder == project and len(seen) == 1


def test_closing_the_welcome_window_quits(home: Path, tmp_path: Path) -> None:
    def close() -> None:
        for w in QApplication.topLevelWidgets():
            if isinstance(w, WelcomeWindow) and w.isVisible():
                w.close()
                return
        QTimer.singleShot(20, close)

    def run(loop):
        QTimer.singleShot(0, close)
        return _welcome(AppOptions(settings_path=tmp_path / "settings.toml"), loop)

    assert _run(run) is None
    assert not (tmp_path / "settings.toml").exists()  # nothing chosen, nothing written
