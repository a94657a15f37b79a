"""Cards tell the truth (issue 12, Trust II item 5).

A command the user rejected says "rejected" with the user's message (not "failed, exit 1");
a killed one says who ended it (the user, a timeout); a patch waiting for review says so; a
partly applied patch says "Applied N of M hunks" with the lines it landed; the diff's
``+N -M`` follows the user's hunk edits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit

from desktop.views.diff_model import build_file_diff
from desktop.views.diff_view import DiffView
from harnesses.sessions import SessionJournal
from tests.desktop import app_scenario
from tests.desktop.test_app import next_signal, run_qasync


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "notes.txt").write_text(app_scenario.notes_text())
    return folder


def _card(window: Any, call_id: str) -> tuple[str, str]:
    window.conversation.flush()
    card = window.conversation.tool_card(call_id)
    summary = "".join(ch for ch in card.summary.text() if ch.isprintable())
    return card.status_name, summary


def _shell(call_id: str, command: str, timeout_ms: int | None = None) -> dict[str, Any]:
    action: dict[str, Any] = {"commands": [command]}
    if timeout_ms is not None:
        action["timeout_ms"] = timeout_ms
    return {"output": [{"type": "shell_call", "call_id": call_id, "action": action}]}


def run_ended(controller: Any) -> Any:
    """A future set when the controller's run ends (``runningChanged(False)``)."""
    import asyncio

    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def fire(running: bool) -> None:
        if not running and not future.done():
            future.set_result(None)

    controller.runningChanged.connect(fire)
    return future


_DONE = {"output": [{"type": "message", "content": [{"type": "output_text", "text": "ok"}]}]}


def test_a_rejected_command_says_rejected_with_the_users_message(repo, tmp_path, qtbot):
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        turns = [_shell("s1", "touch made.txt"), _DONE]
        controller, window = app_scenario.build(repo, journal, turns)
        qtbot.addWidget(window)
        window.show()
        asked = next_signal(controller.approvalRequested)
        controller.submit("make a file")
        await asked
        done = run_ended(controller)
        window.approvals.message_edit.setText("not in this folder")
        window.approvals.reject()
        await done
        status, summary = _card(window, "s1")
        assert status == "rejected" and summary == "rejected by you: not in this folder"
        assert not (repo / "made.txt").exists()
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()


def test_killed_commands_say_who_ended_them(repo, tmp_path, qtbot):
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        turns = [_shell("s1", "sleep 30"), _shell("s2", "sleep 30", timeout_ms=300), _DONE]
        controller, window = app_scenario.build(repo, journal, turns)
        controller.workspace.set_mode("full")  # no prompt: both run at once
        qtbot.addWidget(window)
        window.show()
        started = next_signal(controller.commandStarted)
        finished = run_ended(controller)
        controller.submit("wait a bit")
        (block_id, *_rest) = await started
        controller.kill_command(block_id)  # the terminal's kill button
        await finished
        assert _card(window, "s1") == ("killed", "killed by you (SIGTERM, exit 143)")
        status, summary = _card(window, "s2")
        assert status == "killed" and summary == "timed out (ended by Tandem)"
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()


def test_patch_card_waits_for_review_then_says_what_landed(repo, tmp_path, qtbot):
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, [app_scenario.turns()[0], _DONE])
        qtbot.addWidget(window)
        window.show()
        shown = next_signal(controller.proposalSubmitted)
        controller.submit("edit the notes")
        await shown
        status, summary = _card(window, "p1")
        assert status == "waiting-review" and "waiting for your review" in summary
        window.diff_view.accept_current()
        window.diff_view.reject_current()
        window.diff_view.accept_current()
        done = run_ended(controller)
        window.diff_view.apply_reviewed()
        await done
        status, summary = _card(window, "p1")
        assert status == "completed"
        assert summary.startswith("+2 \u22122 · Applied 2 of 3 hunks to notes.txt")
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()


def test_a_rejected_patch_says_rejected(repo, tmp_path, qtbot):
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, [app_scenario.turns()[0], _DONE])
        qtbot.addWidget(window)
        window.show()
        shown = next_signal(controller.proposalSubmitted)
        controller.submit("edit the notes")
        await shown
        done = run_ended(controller)
        window.diff_view.apply_reviewed()  # nothing accepted: the whole change is rejected
        await done
        status, summary = _card(window, "p1")
        assert status == "rejected" and summary.startswith("The user rejected")
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()


def test_plus_minus_counts_follow_a_hunk_edit(qtbot):
    old = "".join(f"line {n}\n" for n in range(1, 21))
    new = old.replace("line 5\n", "line five\n")
    diff = build_file_diff("a.txt", old, new, proposal_id="p")
    view = DiffView([diff])
    qtbot.addWidget(view)
    view.show()
    assert view.counts("a.txt") == (1, 1)
    view.edit_current()
    editor = view.findChild(QPlainTextEdit, "hunkEditor")
    assert editor is not None
    editor.setPlainText(editor.toPlainText().replace("line five", "line five\nline 5.5\nline 5.6"))
    with qtbot.waitSignal(view.decisionChanged):
        qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert view.counts("a.txt") == (3, 1)
    shown = [label.text() for label in view.findChildren(QLabel)]
    assert any("+3" in text and "minus;1" in text for text in shown), shown
