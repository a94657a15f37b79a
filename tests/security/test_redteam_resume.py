"""Attack class: a resumed session running a call that waited for the user, unasked.

``tandem sessions resume`` (desktop/headless.py) and the window (desktop/controller.py
``_resume_saved``) rebuild the saved ``RunState`` from the journal and ask its waiting calls
again. A saved state also carries the run's approval records (``context.approvals``); an
edited journal (or any state saved with a sticky "approve every call of this tool" record)
must not make a waiting call run: the promise is that the call runs only if the user says
yes on the resume itself. Without a terminal every question is answered "reject", so a
marker the waiting command would create must stay absent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.desktop.test_session_mode_cli import (
    _home,
    _interrupted_at_an_approval,
    _journal,
    _message,
    _script,
)
from tests.desktop.test_tandem_run_tty import _cli

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the window test runs the controller

# What an edited journal writes into the saved run state's approval records.
RECORDS = [
    pytest.param({"approved": True, "rejected": []}, id="sticky-approve-every-call"),
    pytest.param({"approved": ["c1"], "rejected": []}, id="waiting-call-pre-approved"),
    pytest.param({"approved": True, "rejected": True}, id="sticky-approve-and-sticky-reject"),
]


@pytest.mark.parametrize("record", RECORDS)
def test_an_approval_record_in_the_saved_state_does_not_answer_the_waiting_call(
    tmp_path: Path, record: dict[str, object]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    home = _home(tmp_path)
    session_id = _interrupted_at_an_approval(tmp_path, home, repo)
    with _journal(home) as journal:
        state = json.loads(journal.load_run_state(session_id) or "{}")
        (waiting,) = [i for i in state["generated_items"] if i.get("type") == "tool_approval_item"]
        key = waiting.get("tool_name") or "shell"
        state["context"]["approvals"] = {key: record, "shell": record}
        journal.save_run_state(session_id, state)
    second = _script(tmp_path / "second.json", _message("done"))
    run = _cli(home, "sessions", "resume", session_id, "--repo", str(repo), "--model", second)
    assert "asking again" in run.stdout + run.stderr, run.stderr
    assert not (repo / "ran1").exists()  # the waiting `touch ran1` never ran unasked


@pytest.mark.parametrize("record", RECORDS[::2])
def test_the_window_reopening_an_edited_journal_asks_and_a_rejection_holds(
    tmp_path: Path, qtbot: object, record: dict[str, object]
) -> None:
    """The same attack through the window (``Controller.load_session`` -> ``_resume_saved``)."""
    from harnesses.sessions import SessionJournal
    from tests.desktop import app_scenario
    from tests.desktop.test_app import next_signal, run_qasync
    from tests.desktop.test_card_truth import run_ended

    repo = tmp_path / "repo"
    repo.mkdir()
    journal = SessionJournal(tmp_path / "journal.sqlite3")
    shell = {
        "output": [
            {"type": "shell_call", "call_id": "s1", "action": {"commands": ["touch made.txt"]}}
        ]
    }
    seen: dict[str, str] = {}

    async def first_launch() -> None:  # Tandem closes while the call waits
        controller, window = app_scenario.build(repo, journal, [shell])
        qtbot.addWidget(window)  # type: ignore[attr-defined]
        asked = next_signal(controller.approvalRequested)
        controller.submit("make a file")
        await asked
        seen["session"] = str(controller.session_id)
        journal.flush()
        await controller.shutdown()
        window.close()

    run_qasync(first_launch)
    state = json.loads(journal.load_run_state(seen["session"]) or "{}")
    state["context"]["approvals"] = {"shell": record}
    journal.save_run_state(seen["session"], state)

    async def second_launch() -> None:
        controller, window = app_scenario.build(
            repo, journal, [_message_turn("done")], seen["session"]
        )
        qtbot.addWidget(window)  # type: ignore[attr-defined]
        asked = next_signal(controller.approvalRequested)
        controller.load_session(seen["session"])
        (request,) = await asked
        assert getattr(request, "id", None) == "s1"  # asked again
        done = run_ended(controller)
        controller.decide("s1", "reject", "no")
        await done
        await controller.shutdown()
        window.close()

    run_qasync(second_launch)
    journal.close()
    assert not (repo / "made.txt").exists()  # rejected on the reopen: never ran


def _message_turn(text: str) -> dict[str, object]:
    return {"output": [_message(text)]}


async def test_the_agent_cannot_write_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command (real bubblewrap sandbox, workspace writable) tries to edit the journal a
    resume trusts: append to it, rewrite it with sqlite, delete or replace it."""
    from harnesses.sessions import SessionJournal
    from harnesses.sessions.journal import default_journal_path
    from harnesses.shell import SubprocessShellExecutor

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local/share"))
    workspace = home / "projects" / "ws"
    workspace.mkdir(parents=True)
    path = default_journal_path()
    with SessionJournal(path) as journal:
        journal.create_session(workspace, "a session")
    before = {p.name: p.read_bytes() for p in path.parent.iterdir() if p.is_file()}
    edit = (
        "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); "
        "db.execute(\"UPDATE sessions SET run_state_json='{}'\"); db.commit()"
    )
    control = workspace / "copy.sqlite3"  # the same edit on a copy proves it works
    control.write_bytes(path.read_bytes())
    executor = SubprocessShellExecutor(workspace, sandbox="workspace-write")
    result = await executor.run(
        [
            f'python3 -c "{edit}" {control}; printf x >> {control}',
            f"printf x >> {path}; true",
            f'python3 -c "{edit}" {path}; true',
            f"rm -f {path}; true",
            f"mv {path} {path}.gone; true",
            f"ln -sf /dev/null {path}; true",
        ],
        timeout_ms=30_000,
    )
    assert all(o.provider_data and o.provider_data["sandboxed"] for o in result.output)
    after = {p.name: p.read_bytes() for p in path.parent.iterdir() if p.is_file()}
    assert control.read_bytes() != path.read_bytes()  # the commands do edit a journal
    assert after == before and not path.is_symlink()
