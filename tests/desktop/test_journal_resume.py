"""An append-only journal (issue 15, Build item 3): a run's end is a marker with what the run
added, never the whole history; reopening rebuilds the history from those markers, and the
next run sends it; an approval pause stores a run state that loads again, and its items are
stored once however often the state is saved.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from core import RunState
from harnesses.sessions import SessionJournal
from tests.desktop import app_scenario
from tests.desktop.test_app import next_signal, run_qasync
from tests.desktop.test_card_truth import run_ended


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "notes.txt").write_text(app_scenario.notes_text())
    return folder


def _say(text: str) -> dict[str, Any]:
    return {"output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}]}


def _texts(items: list[dict[str, Any]]) -> list[str]:
    out = []
    for item in items:
        content = item.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.append("".join(str(part.get("text", "")) for part in content))
    return out


def test_runs_end_with_markers_and_a_reopened_session_sends_the_whole_history(
    repo, tmp_path, qtbot
):
    journal = SessionJournal(tmp_path / "journal.sqlite3")
    seen: dict[str, Any] = {}

    async def first_launch() -> None:
        controller, window = app_scenario.build(repo, journal, [_say("one"), _say("two")])
        qtbot.addWidget(window)
        for prompt in ("first", "second"):
            done = run_ended(controller)
            controller.submit(prompt)
            await done
        seen["history"] = list(controller._history)
        seen["session"] = controller.session_id
        await controller.shutdown()
        window.close()

    run_qasync(first_launch)
    journal.flush()
    events = journal.events(seen["session"])
    kinds = [e.kind for e in events]
    assert "history" not in kinds and kinds.count("run_finished") == 2
    ends = [e.payload for e in events if e.kind == "run_finished"]
    assert [_texts(p["items"]) for p in ends] == [["first", "one"], ["second", "two"]]
    assert _texts(seen["history"]) == ["first", "one", "second", "two"]

    async def second_launch() -> None:
        controller, window = app_scenario.build(repo, journal, [_say("three")], seen["session"])
        qtbot.addWidget(window)
        controller.load_session(seen["session"])
        assert controller._history == seen["history"]  # rebuilt from the markers
        done = run_ended(controller)
        controller.submit("third")
        await done
        sent = controller.scripted_model.requests[-1]["input"]
        assert _texts(sent) == ["first", "one", "second", "two", "third"]
        await controller.shutdown()
        window.close()

    run_qasync(second_launch)
    journal.close()


def test_an_approval_pause_stores_a_loadable_state_whose_items_are_stored_once(
    repo, tmp_path, qtbot
):
    journal = SessionJournal(tmp_path / "journal.sqlite3")
    shell = {
        "output": [
            {"type": "shell_call", "call_id": "s1", "action": {"commands": ["touch made.txt"]}}
        ]
    }

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, [shell, _say("done")])
        qtbot.addWidget(window)
        asked = next_signal(controller.approvalRequested)
        controller.submit("make a file")
        await asked
        journal.flush()
        saved = journal.load_run_state(controller.session_id)
        assert saved is not None
        state = await RunState.from_string(controller.agent, saved)
        assert [i.call_id for i in state.get_interruptions()] == ["s1"]
        assert json.loads(saved)["original_input"][-1]["content"] == "make a file"
        done = run_ended(controller)
        window.approvals.reject()
        await done
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.flush()
    with sqlite3.connect(journal.path) as db:
        blobs = [row[0] for row in db.execute("SELECT json FROM blobs")]
    calls = [b for b in blobs if '"type": "shell_call"' in b and '"call_id": "s1"' in b]
    assert len(calls) == 1  # the event, the run state and the run's end share one copy
    journal.close()
