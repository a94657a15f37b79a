"""Issue 16, Build item 5: a session is created at the first task and named from it; right
after a crash it is "interrupted" and the one reopened; reopened, it shows its terminal
blocks, its cards' durations and its token totals from the journal.

``python -m tests.desktop.test_sessions_reopen REPO JOURNAL`` is the crash child: two tasks,
the second one running a command when the parent kills it with SIGKILL.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from core import Agent, ScriptedModel
from core.settings import Settings
from harnesses.sessions import SessionJournal
from harnesses.workspace import Workspace
from tests.desktop.crash import kill_at_session_line

FIRST_TASK = "Say hello to the team\nand nothing else"
SECOND_TASK = "Run the build and report"
WAIT = "echo READY; for i in $(seq 600); do [ -e stop ] && break; sleep 0.1; done"


def _turns() -> list[dict[str, Any]]:
    usage = {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}
    return [
        {
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "Hi!"}]}],
            "usage": usage,
        },
        {
            "output": [
                {
                    "type": "shell_call",
                    "call_id": "s1",
                    "action": {"commands": ["printf 'hello\\n'; printf 'oops\\n' >&2"]},
                }
            ]
        },
        {"output": [{"type": "shell_call", "call_id": "s2", "action": {"commands": [WAIT]}}]},
    ]


def _build(repo: Path, journal: SessionJournal, turns: list[dict[str, Any]]) -> Any:
    from desktop.controller import Controller
    from desktop.main_window import MainWindow

    workspace = Workspace(repo, mode="full", data_dir=repo.parent / "data")
    model = ScriptedModel(turns)

    def factory(ws: Workspace) -> Agent[Any]:
        return Agent(name="Tandem", model=model, tools=ws.tools())

    controller = Controller(workspace, factory, journal=journal)  # no session yet
    return controller, MainWindow(controller, Settings())


def _crash_child(repo: Path, journal_path: Path) -> None:
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    journal = SessionJournal(journal_path)
    controller, window = _build(repo, journal, _turns())
    window.show()
    runs: list[bool] = []

    def second() -> None:
        if controller.is_running:  # the first run's task ends right after its signal
            QTimer.singleShot(10, second)
            return
        controller.submit(SECOND_TASK)

    def on_running(running: bool) -> None:
        if not running and not runs:
            runs.append(True)
            QTimer.singleShot(0, second)

    def on_started(block_id: str, command: str, *_: Any) -> None:
        if command == WAIT:
            journal.flush()
            print(f"SESSION {controller.session_id}", flush=True)

    controller.runningChanged.connect(on_running)
    controller.commandStarted.connect(on_started)
    controller.submit(FIRST_TASK)
    with loop:
        loop.run_forever()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "README.md").write_text("sample\n")
    return folder


def _crash(repo: Path, journal_path: Path) -> str:
    # the crash, in the middle of a command; the orphaned command then ends at once
    words = kill_at_session_line(
        "tests.desktop.test_sessions_reopen",
        [repo, journal_path],
        after_kill=lambda: (repo / "stop").write_text(""),
    )
    return words[1]


def test_named_stated_and_restored_after_a_crash(repo: Path, tmp_path: Path, qtbot) -> None:
    from desktop.app import _session_to_resume, session_state

    journal_path = tmp_path / "journal.sqlite3"
    session_id = _crash(repo, journal_path)
    journal = SessionJournal(journal_path)
    try:
        records = journal.sessions(repo)
        assert [r.id for r in records] == [session_id]  # one session, none made at launch
        (record,) = records
        assert record.title == "Say hello to the team"  # named from the first task
        assert record.status == "active" and not journal.owner_alive(session_id)
        assert session_state(journal, record) == "interrupted"
        assert _session_to_resume(journal, repo) == session_id  # selected on reopen

        app = QApplication.instance() or QApplication([])
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        try:
            controller, window = _build(repo, journal, [])
            qtbot.addWidget(window)
            durations: dict[str, Any] = {}
            controller.toolUpdated.connect(
                lambda call_id, status, ms, _s: durations.__setitem__(call_id, (status, ms))
            )
            controller.load_session(session_id)
            window.terminal.flush()
            (block,) = window.terminal.model.blocks()  # the finished command came back
            assert block.command.startswith("printf 'hello")
            assert block.status == "exit" and block.exit_code == 0
            assert isinstance(block.duration_ms, int)
            assert "hello" in block.text() and "oops" in block.text()
            assert "hello" in window.terminal.output_document(block.block_id).toPlainText()
            status, ms = durations["s1"]
            assert status == "completed" and isinstance(ms, int)  # timed from the journal
            assert durations["s2"][0] == "interrupted"
            assert "120 tokens" in window.top_bar.usage.text()  # the first run's tokens
            assert controller.usage_base == (100, 20, 120)
            reopened = journal.session(session_id)
            assert journal.owner_alive(session_id)  # this process drives it now
            assert session_state(journal, reopened, current=session_id) == "interrupted"
            assert session_state(journal, reopened) == "running"  # as another window sees it
            loop.run_until_complete(controller.shutdown())
            window.close()
        finally:
            loop.close()
            asyncio.set_event_loop(None)
    finally:
        journal.close()


def test_a_session_is_made_at_the_first_task_and_renamed(repo: Path, tmp_path: Path, qtbot):
    journal = SessionJournal(tmp_path / "journal.sqlite3")
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        turns = [
            {"output": [{"type": "message", "content": [{"type": "output_text", "text": "ok"}]}]}
        ]
        controller, window = _build(repo, journal, turns)
        qtbot.addWidget(window)
        assert controller.session_id is None and journal.sessions(repo) == []
        created: list[str] = []
        controller.sessionCreated.connect(created.append)
        done: asyncio.Future[None] = loop.create_future()
        controller.runningChanged.connect(
            lambda running: running or done.done() or done.set_result(None)
        )
        long_task = "   Fix the flaky   test in tests/test_io.py " + "because " * 20
        controller.submit(long_task)
        loop.run_until_complete(asyncio.wait_for(done, 30))
        journal.flush()
        (record,) = journal.sessions(repo)
        assert created == [record.id] and controller.session_id == record.id
        assert record.title.startswith("Fix the flaky test in tests/test_io.py")
        assert record.title.endswith("…") and len(record.title) <= 60
        assert record.status == "completed"
        assert journal.rename_session(record.id, "  flaky   io test ") == "flaky io test"
        assert journal.session(record.id).title == "flaky io test"
        with pytest.raises(Exception, match="empty"):
            journal.rename_session(record.id, "   ")
        loop.run_until_complete(controller.shutdown())
        window.close()
    finally:
        loop.close()
        asyncio.set_event_loop(None)
        journal.close()


if __name__ == "__main__":
    _crash_child(Path(sys.argv[1]), Path(sys.argv[2]))
