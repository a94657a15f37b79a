"""The whole window on a scripted session: review, approval, terminal, checkpoints, journal."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from harnesses.sessions import SessionJournal
from tests.desktop import app_scenario
from tests.desktop.crash import kill_at_session_line


def run_qasync(coro_factory: Any) -> Any:
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        with loop:
            return loop.run_until_complete(asyncio.wait_for(coro_factory(), 60))
    finally:
        asyncio.set_event_loop(None)


def transcript_text(window: Any) -> str:
    """Every text shown in the conversation (labels and text areas)."""
    from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit

    parts = [w.text() for w in window.conversation.findChildren(QLabel)]
    parts += [w.toPlainText() for w in window.conversation.findChildren(QTextEdit)]
    parts += [w.toPlainText() for w in window.conversation.findChildren(QPlainTextEdit)]
    return "\n".join(parts)


def next_signal(signal: Any) -> asyncio.Future[Any]:
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def fire(*args: Any) -> None:
        if not future.done():
            future.set_result(args)
        signal.disconnect(fire)

    signal.connect(fire)
    return future


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "notes.txt").write_text(app_scenario.notes_text())
    return folder


def test_review_approve_terminal_and_restore(repo, tmp_path, qtbot):
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, app_scenario.turns())
        qtbot.addWidget(window)
        window.show()
        proposal = next_signal(controller.proposalSubmitted)
        window.composer.set_text("edit the notes")
        QTest.keyClick(window.composer.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        (submitted,) = await proposal
        assert window.tabs.currentIndex() == 0 and window.diff_view.current_file() is not None
        assert len(submitted.hunks) == 3
        window.diff_view.setFocus()
        QTest.keyClick(window.diff_view, Qt.Key.Key_A)  # accept hunk 1, move on
        QTest.keyClick(window.diff_view, Qt.Key.Key_R)  # reject hunk 2
        QTest.keyClick(window.diff_view, Qt.Key.Key_A)  # accept hunk 3
        approval = next_signal(controller.approvalRequested)
        window.diff_view.apply_reviewed()
        (request,) = await approval
        assert request.kind == "command" and "touch made.txt" in request.body
        assert "no rule" in request.reason or "asked" in request.reason
        assert window.approvals.current() is not None
        done = next_signal(controller.runningChanged)
        window.approvals.allow_once()
        await done
        text = (repo / "notes.txt").read_text()
        expected = app_scenario.notes_text().replace("beta", "BETA").replace("psi", "PSI")
        assert text == expected  # exactly hunks 1 and 3; hunk 2 (filler 6) rejected
        sent = controller.scripted_model.requests[1]["input"]
        output = next(i for i in sent if i.get("type") == "apply_patch_call_output")
        assert output["call_id"] == "p1" and output["status"] == "completed"
        assert "Applied 2 of 3 hunks" in output["output"] and "hunk 2 rejected" in output["output"]
        assert (repo / "made.txt").exists()
        window.tabs.setCurrentIndex(1)  # the Terminal tab shows the command's block
        window.terminal.flush()
        assert window.terminal.isVisible() and window.terminal._widgets
        assert all(w.isVisible() for w in window.terminal._widgets.values())
        window.conversation.flush()
        assert "All done." in transcript_text(window)
        checkpoints = await controller.workspace.checkpoints.list()
        assert checkpoints, "a checkpoint precedes each writing turn"
        assert window.checkpoints.tree.topLevelItemCount() == len(checkpoints)
        restored = next_signal(controller.checkpointsChanged)
        window.checkpoints.restoreRequested.emit(checkpoints[0].id)
        await restored
        assert (repo / "notes.txt").read_text() == app_scenario.notes_text()
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()


def test_session_survives_a_crash_and_continues(repo, tmp_path, qtbot):
    journal_path = tmp_path / "journal.sqlite3"
    session_id = kill_at_session_line("tests.desktop.app_scenario", [repo, journal_path])[1]
    assert not (repo / "made.txt").exists()
    journal = SessionJournal(journal_path)
    assert journal.load_run_state(session_id)
    before = [(e.kind, e.payload) for e in journal.events(session_id)]
    shown = [k for k, _ in before if k in ("user_message", "tool_called", "tool_output")]
    assert shown[:2] == ["user_message", "tool_called"]  # asked before the command ran

    async def scenario() -> None:
        controller, window = app_scenario.build(
            repo, journal, app_scenario.turns()[2:], session_id=session_id
        )
        qtbot.addWidget(window)
        window.show()
        approval = next_signal(controller.approvalRequested)
        controller.load_session(session_id)
        (request,) = await approval
        assert "touch made.txt" in request.body
        window.conversation.flush()
        assert "make a file" in transcript_text(
            window
        )  # the user's message came back from the journal
        assert controller.is_running
        done = next_signal(controller.runningChanged)
        window.approvals.allow_once()
        assert await done == (False,)
        assert (repo / "made.txt").exists()
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()
