"""A session's approval mode is part of the session (issue 16, the safety model: "approval
modes per session"): a reopen restores the mode the session ran in, not the saved default,
and a call that waited for the user is asked again, whatever the mode; Settings OK keeps the
session's mode unless the mode setting itself changed.

``python -m tests.desktop.test_session_mode SETTINGS REPO JOURNAL`` is the crash child: the
real window's session (``desktop.app._Session``) with saved ``approval_mode = "auto"``, the
top bar switched to *Ask*, a task sent; it prints ``SESSION id`` once the run waits for an
approval, and the parent kills it with SIGKILL.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

from core.settings import Settings, save_settings
from harnesses.sessions import SessionJournal
from tests.desktop.crash import kill_at_session_line
from tests.support import items

TASK = "Run the tests and fix the bug"


def _child(settings_path: Path, repo: Path, journal_path: Path) -> None:
    import qasync
    from PySide6.QtWidgets import QApplication

    from desktop.app import AppOptions, _Session

    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    session = _Session(AppOptions(repo, journal_path=journal_path, settings_path=settings_path))
    session.window.show()
    assert session.window.top_bar.mode == "auto"  # the saved default
    session.window.top_bar.modeChangeRequested.emit("ask")  # the user picks Ask, then sends

    def on_approval(request: Any) -> None:
        session.journal.flush()
        print(f"SESSION {session.controller.session_id} {request.id}", flush=True)

    session.controller.approvalRequested.connect(on_approval)
    session.controller.submit(TASK)
    with loop:
        loop.run_forever()


def _crash(settings_path: Path, repo: Path, journal_path: Path) -> str:
    # the crash, between the prompt and the answer
    words = kill_at_session_line(
        "tests.desktop.test_session_mode", [settings_path, repo, journal_path]
    )
    _, session_id, call_id = words
    assert call_id == "c1"
    return session_id


async def _next(controller: Any) -> tuple[str, Any]:
    """The next thing that needs the user (``approval`` | ``review``) or the run's end
    (``ended``), whichever comes first (bounded)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[tuple[str, Any]] = loop.create_future()

    def done(kind: str, value: Any) -> None:
        if not future.done():
            future.set_result((kind, value))

    def on_approval(request: Any) -> None:
        done("approval", request)

    def on_review(proposal: Any) -> None:
        done("review", proposal)

    def on_running(running: bool) -> None:
        if not running:
            done("ended", None)

    controller.approvalRequested.connect(on_approval)
    controller.proposalSubmitted.connect(on_review)
    controller.runningChanged.connect(on_running)
    try:
        return await asyncio.wait_for(future, 30)
    finally:
        controller.approvalRequested.disconnect(on_approval)
        controller.proposalSubmitted.disconnect(on_review)
        controller.runningChanged.disconnect(on_running)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "README.md").write_text("sample\n")
    return folder


async def test_crash_at_an_approval_in_ask_then_relaunch_asks_and_shows_ask(
    repo: Path, tmp_path: Path, responses_server: Any, qtbot: Any
) -> None:
    from desktop.app import AppOptions, _Session

    settings_path = tmp_path / "settings.toml"
    save_settings(
        Settings(
            approval_mode="auto",
            base_url=responses_server.base_url,
            api_key="test-key",
            explorer=False,
        ),
        settings_path,
    )
    journal_path = tmp_path / "journal.sqlite3"
    responses_server.enqueue([items.shell_call(["touch ran1"], call_id="c1")])
    session_id = _crash(settings_path, repo, journal_path)
    assert not (repo / "ran1").exists()

    responses_server.enqueue([items.shell_call(["touch ran2"], call_id="c2")])
    responses_server.enqueue(
        [
            items.apply_patch_call(
                {"type": "create_file", "path": "new.txt", "diff": "+landed\n"}, call_id="p1"
            )
        ]
    )
    responses_server.enqueue([items.message("done")])
    session = _Session(AppOptions(repo, journal_path=journal_path, settings_path=settings_path))
    qtbot.addWidget(session.window)
    controller, window = session.controller, session.window
    try:
        assert session.resumed == session_id
        assert window.top_bar.mode == "ask"  # before the reopen runs: from the first frame
        notices: list[str] = []
        controller.notice.connect(lambda text, _level: notices.append(text))
        asked = asyncio.ensure_future(_next(controller))
        controller.load_session(session_id)  # what the window does after its first paint
        kind, request = await asked
        assert (kind, getattr(request, "id", None)) == ("approval", "c1")
        assert any("asking again" in n for n in notices)
        assert window.top_bar.mode == "ask" and str(session.workspace.mode) == "ask"
        assert "ask" in window.top_bar.mode_badge.text().lower()
        assert not (repo / "ran1").exists()  # nothing ran before the answer
        window.conversation.flush()
        assert window.conversation.tool_card("c1").status_name == "waiting-approval"

        asked = asyncio.ensure_future(_next(controller))
        controller.decide("c1", "allow_once", "")
        kind, request = await asked
        assert (kind, getattr(request, "id", None)) == ("approval", "c2")  # still ask
        assert (repo / "ran1").exists() and not (repo / "ran2").exists()
        window.conversation.flush()
        assert window.conversation.tool_card("c1").status_name == "completed"

        asked = asyncio.ensure_future(_next(controller))
        controller.decide("c2", "reject", "not now")
        kind, proposal = await asked
        assert kind == "review" and proposal.path == "new.txt"  # the patch waits for review
        assert not (repo / "ran2").exists() and not (repo / "new.txt").exists()
        assert len(responses_server.requests) == 3  # the c1 turn, then c2 and the patch
    finally:
        await session.close()


async def test_settings_ok_keeps_the_sessions_mode(tmp_path: Path, repo: Path, qtbot: Any) -> None:
    from desktop.app import AppOptions, _Session

    settings_path = tmp_path / "settings.toml"
    saved = Settings(approval_mode="auto", explorer=False)
    save_settings(saved, settings_path)
    session = _Session(
        AppOptions(repo, journal_path=tmp_path / "journal.sqlite3", settings_path=settings_path)
    )
    qtbot.addWidget(session.window)
    window = session.window
    try:
        window.top_bar.modeChangeRequested.emit("ask")
        assert window.top_bar.mode == "ask"
        window.show_settings()
        dialog = window._settings_dialog
        dialog.base_url_edit.setText("http://127.0.0.1:9/v1")  # only the base URL changes
        applied: list[Settings] = []
        dialog.settingsApplied.connect(applied.append)
        dialog.ok_button.click()
        assert applied and applied[0].base_url == "http://127.0.0.1:9/v1"
        assert window.top_bar.mode == "ask" and str(session.workspace.mode) == "ask"
        # changing the approval-mode setting itself does switch the session
        window._apply_settings(applied[0].model_copy(update={"approval_mode": "read-only"}))
        assert window.top_bar.mode == "read-only" and str(session.workspace.mode) == "read-only"
    finally:
        await session.close()


async def test_picking_a_session_in_the_list_restores_its_mode(
    tmp_path: Path, repo: Path, qtbot: Any
) -> None:
    from desktop.app import AppOptions, _open_session, _Session

    settings_path = tmp_path / "settings.toml"
    save_settings(Settings(approval_mode="auto", explorer=False), settings_path)
    journal_path = tmp_path / "journal.sqlite3"
    with SessionJournal(journal_path) as journal:
        earlier = journal.create_session(repo, "look around")
        journal.append(earlier, "mode", {"mode": "ask"})
        journal.append(earlier, "user_message", {"text": "look around"})
        journal.append(earlier, "mode", {"mode": "read-only"})  # switched later: the last
        journal.set_status(earlier, "completed")
    session = _Session(AppOptions(repo, journal_path=journal_path, settings_path=settings_path))
    qtbot.addWidget(session.window)
    try:
        assert session.resumed is None and session.window.top_bar.mode == "auto"
        _open_session(session, earlier)
        assert session.window.top_bar.mode == "read-only"
        assert str(session.workspace.mode) == "read-only"
    finally:
        await session.close()


async def test_a_review_waiting_at_a_crash_is_asked_again_in_its_sessions_mode(
    tmp_path: Path, qtbot: Any
) -> None:
    from core import Agent, ScriptedModel
    from desktop.controller import Controller
    from desktop.main_window import MainWindow
    from harnesses.workspace import Workspace
    from tests.desktop import app_scenario
    from tests.desktop.test_reviews_survive import _crash_during_review

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text(app_scenario.notes_text())
    journal_path = tmp_path / "journal.sqlite3"
    session_id = _crash_during_review(repo, journal_path)  # an ask-mode session
    journal = SessionJournal(journal_path)
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / "data")  # the saved default
    model = ScriptedModel([])
    controller = Controller(
        workspace,
        lambda ws: Agent(name="Tandem", model=model, tools=ws.tools()),
        journal=journal,
        session_id=session_id,
    )
    window = MainWindow(controller, Settings(approval_mode="auto"))
    qtbot.addWidget(window)
    try:
        loop = asyncio.get_running_loop()
        shown: asyncio.Future[Any] = loop.create_future()
        controller.proposalSubmitted.connect(lambda p: shown.done() or shown.set_result(p))
        controller.load_session(session_id)
        proposal = await asyncio.wait_for(shown, 30)
        assert proposal.path == "notes.txt"
        assert window.top_bar.mode == "ask" and str(workspace.mode) == "ask"
        assert (repo / "notes.txt").read_text() == app_scenario.notes_text()  # not landed
        assert workspace.review_queue.get(proposal.id) is not None  # waits for the user
    finally:
        await controller.shutdown()
        window.close()
        journal.close()


if __name__ == "__main__":
    _child(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
