"""Builds a real window on a scripted session, for the desktop tests and their crash child.

``python -m tests.desktop.app_scenario REPO JOURNAL`` starts a session that stops at a shell
approval, prints ``SESSION <id>`` once the approval is on screen and waits there until the
test kills it with SIGKILL (a crash: no clean-up runs). With a third argument ``review`` it
stops at the patch review instead, after the user accepted hunk 1 and rejected hunk 2;
with ``review-all``, after the user rejected hunk 2 and then clicked *Accept all*.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtWidgets import QApplication

from core import Agent, ScriptedModel
from core.settings import Settings
from desktop.controller import Controller
from desktop.main_window import MainWindow
from harnesses.sessions import SessionJournal
from harnesses.workspace import Workspace

PATCH = "\n".join(
    [
        "@@",
        " alpha",
        "-beta",
        "+BETA",
        " gamma",
        "@@",
        " filler 5",
        "-filler 6",
        "+FILLER 6",
        " filler 7",
        "@@",
        " omega",
        "-psi",
        "+PSI",
        "",
    ]
)


def turns() -> list[dict[str, Any]]:
    lines_patch = {"type": "update_file", "path": "notes.txt", "diff": PATCH}
    return [
        {"output": [{"type": "apply_patch_call", "call_id": "p1", "operation": lines_patch}]},
        {
            "output": [
                {"type": "shell_call", "call_id": "s1", "action": {"commands": ["touch made.txt"]}}
            ]
        },
        {
            "output": [
                {"type": "message", "content": [{"type": "output_text", "text": "All **done**."}]}
            ]
        },
    ]


def notes_text() -> str:
    body = ["alpha", "beta", "gamma", *[f"filler {n}" for n in range(14)], "omega", "psi", "chi"]
    return "\n".join(body) + "\n"


def build(
    repo: Path,
    journal: SessionJournal,
    model_turns: list[dict[str, Any]],
    session_id: str | None = None,
) -> tuple[Controller, MainWindow]:
    workspace = Workspace(repo, mode="ask", data_dir=repo.parent / "data")

    model = ScriptedModel(model_turns)

    def factory(ws: Workspace) -> Agent[Any]:
        return Agent(name="Tandem", model=model, tools=ws.tools())

    sid = session_id or journal.create_session(repo, "scenario")
    controller = Controller(workspace, factory, journal=journal, session_id=sid)
    window = MainWindow(controller, Settings())
    controller.scripted_model = model  # type: ignore[attr-defined]  (tests read its requests)
    return controller, window


def shown_window(tmp_path: Path, qtbot: Any, size: tuple[int, int] = (1440, 900)) -> Any:
    """A window on an empty repository and no scripted turns, shown at ``size`` (a
    pytest fixture's body: ``yield from``); closed with its journal afterwards."""
    repo = tmp_path / "repo"
    repo.mkdir()
    journal = SessionJournal(tmp_path / "journal.sqlite3")
    _controller, window = build(repo, journal, [])
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    yield window
    window.close()
    journal.close()


def _review_child(repo: Path, journal_path: Path, *, accept_all: bool = False) -> None:
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    journal = SessionJournal(journal_path)
    controller, window = build(repo, journal, turns())
    window.show()

    def on_proposal(_proposal: Any) -> None:
        if accept_all:
            window.diff_view.next_hunk()
            window.diff_view.reject_current()  # hunk 2 rejected by hand
            window.diff_view.accept_all()  # hunks 1 and 3 (the pending ones) in one event
        else:
            window.diff_view.accept_current()  # hunk 1 accepted, moves on
            window.diff_view.reject_current()  # hunk 2 rejected; hunk 3 still pending
        journal.flush()
        print(f"SESSION {controller.session_id}", flush=True)

    controller.proposalSubmitted.connect(on_proposal)
    controller.submit("edit the notes")
    with loop:
        loop.run_forever()


def _crash_child(repo: Path, journal_path: Path) -> None:
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    journal = SessionJournal(journal_path)
    # the patch turn is already done in this scenario: start at the shell call
    controller, window = build(repo, journal, turns()[1:])
    window.show()

    def on_approval(_request: Any) -> None:
        # the run state was saved before asking; give the journal's writer a moment, then
        # tell the parent, which kills this process with SIGKILL (no clean-up runs)
        journal.flush()
        print(f"SESSION {controller.session_id}", flush=True)

    controller.approvalRequested.connect(on_approval)
    controller.submit("make a file")
    with loop:
        loop.run_forever()


if __name__ == "__main__":
    if sys.argv[3:] in (["review"], ["review-all"]):
        _review_child(Path(sys.argv[1]), Path(sys.argv[2]), accept_all=sys.argv[3] != "review")
    else:
        _crash_child(Path(sys.argv[1]), Path(sys.argv[2]))
