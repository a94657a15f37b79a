"""A ``tandem run`` session opens in the window: the same journal events (issue 16, item 2)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

from desktop.headless import HeadlessOptions, run_headless
from harnesses.sessions import SessionJournal
from tests.desktop import app_scenario
from tests.desktop.test_app import run_qasync
from tests.desktop.test_card_truth import run_ended


def _say(text: str) -> dict[str, Any]:
    return {"output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}]}


def test_the_window_opens_a_cli_session_and_continues_it(tmp_path: Path, qtbot):
    repo = tmp_path / "repo"
    repo.mkdir()
    script = tmp_path / "s.json"
    shell = {"type": "shell_call", "call_id": "c1", "action": {"commands": ["echo from-cli"]}}
    script.write_text(json.dumps({"turns": [{"output": [shell]}, _say("cli answer")]}))
    journal_path = tmp_path / "journal.sqlite3"
    events = io.StringIO()
    options = HeadlessOptions(
        repo,
        "say hello",
        mode="auto",
        model=f"scripted:{script}",
        interactive=False,
        json=True,
        journal_path=journal_path,
    )
    assert asyncio.run(run_headless(options, io.StringIO(), events_out=events)) == 0
    session_id = json.loads(events.getvalue().splitlines()[0])["session_id"]
    journal = SessionJournal(journal_path)
    assert journal.session(session_id).status == "completed"
    seen: dict[str, list[Any]] = {"users": [], "tools": [], "answers": []}

    async def reopen() -> None:
        controller, window = app_scenario.build(repo, journal, [_say("window answer")], session_id)
        qtbot.addWidget(window)
        controller.userMessage.connect(seen["users"].append)
        controller.toolStarted.connect(lambda call_id, *_: seen["tools"].append(call_id))
        controller.assistantDone.connect(lambda _id, text: seen["answers"].append(text))
        controller.load_session(session_id)
        done = run_ended(controller)
        controller.submit("and then?")
        await done
        seen["sent"] = controller.scripted_model.requests[-1]["input"]
        await controller.shutdown()
        window.close()

    run_qasync(reopen)
    journal.close()
    assert seen["users"][:2] == ["say hello", "and then?"]
    assert "c1" in seen["tools"]  # the CLI's command card, replayed
    assert seen["answers"][:2] == ["cli answer", "window answer"]
    sent = json.dumps(seen["sent"])  # the CLI run's history goes with the window's message
    assert "say hello" in sent and "from-cli" in sent and "cli answer" in sent
