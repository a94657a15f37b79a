"""Settings applied in the window reach the next run: model, server, hosted tools, sub-agent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.settings import Settings, save_settings
from desktop.app import AppOptions, _Session


async def test_applied_settings_change_the_next_request(responses_server, tmp_path: Path, qtbot):
    settings_path = tmp_path / "settings.toml"
    first = Settings(
        model="model-a", base_url=responses_server.base_url, api_key="test-key", explorer=False
    )
    save_settings(first, settings_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    session = _Session(
        AppOptions(repo, journal_path=tmp_path / "journal.sqlite3", settings_path=settings_path)
    )
    qtbot.addWidget(session.window)
    try:
        finished = asyncio.Event()
        session.controller.runningChanged.connect(lambda running: running or finished.set())
        responses_server.enqueue(
            [{"type": "message", "content": [{"type": "output_text", "text": "one"}]}]
        )
        session.controller.submit("first")
        await asyncio.wait_for(finished.wait(), 30)
        body = responses_server.requests[-1].body
        assert body["model"] == "model-a"
        assert "explore_repository" not in [t.get("name") for t in body["tools"]]
        assert not [t for t in body["tools"] if t["type"] == "web_search"]

        session.window._apply_settings(
            first.model_copy(update={"model": "model-b", "web_search": True, "explorer": True})
        )
        assert Settings.model_validate(first.model_dump()) == first  # the old object untouched
        finished.clear()
        responses_server.enqueue(
            [{"type": "message", "content": [{"type": "output_text", "text": "two"}]}]
        )
        session.controller.submit("second")
        await asyncio.wait_for(finished.wait(), 30)
        body = responses_server.requests[-1].body
        assert body["model"] == "model-b"
        assert {
            "type": "web_search",
            "filters": None,
            "user_location": None,
            "search_context_size": "medium",
        } in body["tools"]
        assert "explore_repository" in [t.get("name") for t in body["tools"]]
    finally:
        await session.close()
