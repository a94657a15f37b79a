"""Issue 15, "window up under 1.5 s": start-up work that the first frame does not show runs
right after the main window's first paint (``desktop.first_paint``), and ``run_app`` still
fills the sessions list, reopens an interrupted session and lists checkpoints."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from desktop.first_paint import after_first_paint


class _Paints(QObject):
    """Counts paint events that reach ``window`` or its children."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.count = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Paint
            and isinstance(watched, QWidget)
            and watched.window() is self.window
        ):
            self.count += 1
        return False


def _window(qtbot: Any) -> QWidget:
    window = QWidget()
    QVBoxLayout(window).addWidget(QLabel("hello"))
    qtbot.addWidget(window)
    return window


def test_the_callback_runs_once_after_the_first_paint(qtbot) -> None:
    window = _window(qtbot)
    paints = _Paints(window)
    QApplication.instance().installEventFilter(paints)
    seen: list[int] = []
    try:
        window.show()
        after_first_paint(window, lambda: seen.append(paints.count), fallback_ms=60_000)
        assert seen == []  # not before the event loop painted the window
        qtbot.waitUntil(lambda: seen != [], timeout=10_000)
        assert seen[0] >= 1  # the window had painted when it ran
        window.update()
        qtbot.waitUntil(lambda: paints.count > seen[0], timeout=10_000)
        qtbot.wait(50)
        assert len(seen) == 1  # later paints do not call it again
    finally:
        QApplication.instance().removeEventFilter(paints)


def test_a_window_that_never_paints_gets_the_callback_after_the_fallback(qtbot) -> None:
    window = _window(qtbot)  # never shown
    seen: list[bool] = []
    after_first_paint(window, lambda: seen.append(True), fallback_ms=50)
    qtbot.waitUntil(lambda: seen == [True], timeout=10_000)
    window.show()  # its first paint now comes too late to call it again
    qtbot.wait(100)
    assert seen == [True]


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    (repo / "README.md").write_text("hello\n")
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "i"],
        cwd=repo,
        check=True,
    )
    return repo


def test_run_app_fills_the_window_after_its_first_paint(tmp_path: Path, qtbot) -> None:
    from core.settings import Settings, save_settings
    from desktop.app import AppOptions, run_app
    from desktop.main_window import MainWindow
    from harnesses.sessions import SessionJournal

    repo = _repo(tmp_path)
    journal_path = tmp_path / "journal.sqlite3"
    with SessionJournal(journal_path) as journal:
        done = journal.create_session(repo, "Older task")
        journal.append(done, "user_message", {"text": "Older task"})
        journal.set_status(done, "completed")
        cut = journal.create_session(repo, "Task cut short")
        journal.append(cut, "user_message", {"text": "Task cut short"})  # left "active"
    settings_path = tmp_path / "settings.toml"
    save_settings(Settings(last_folder=repo, recent_folders=[repo]), settings_path)
    seen: dict[str, Any] = {}
    tries = [0]

    def watch() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
        if windows and windows[0].isVisible():
            window = windows[0]
            seen.setdefault("first", [s.id for s in window.sessions.sessions()])
            if len(window.sessions.sessions()) == 2 and window.controller.session_id == cut:
                seen["then"] = [s.id for s in window.sessions.sessions()]
                seen["state"] = {s.id: s.status for s in window.sessions.sessions()}
                window.close()
                return
        tries[0] += 1
        if tries[0] < 1000:  # bounded polling (about 10 s)
            QTimer.singleShot(10, watch)
        else:
            for w in windows:
                w.close()

    QTimer.singleShot(0, watch)
    code = run_app(AppOptions(repo, journal_path=journal_path, settings_path=settings_path))
    assert code == 0
    assert seen.get("then") == [cut, done], seen  # newest first
    assert seen["state"] == {cut: "interrupted", done: "done"}


def test_collection_is_off_for_the_start_up_and_back_for_commands(monkeypatch) -> None:
    import gc

    from desktop import cli

    seen: list[bool] = []
    monkeypatch.setattr(cli, "_sessions", lambda args: seen.append(gc.isenabled()) or 0)
    monkeypatch.setattr(cli, "_redact_output", lambda **kw: seen.append(gc.isenabled()))
    monkeypatch.setattr(cli, "_has_display", lambda: False)
    gc.enable()  # as a process starts (the desktop tests' fixture turns it off)
    try:
        assert cli.main(["sessions", "list"]) == 0
        assert seen == [False, True]  # off while starting, on while the command runs
        assert gc.isenabled()
        assert cli.main([]) == 2  # the window path without a display: as it was after
        assert gc.isenabled()
        gc.disable()  # a caller that had it off (the window's own policy) keeps it off
        assert cli.main(["sessions", "list"]) == 0
        assert not gc.isenabled() and seen[-1] is False
    finally:
        gc.disable()
