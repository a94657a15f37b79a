"""The Codex delegate in the window: the real pinned Codex CLI on the session's provider.

Commands and edits reach the terminal and diff views, Codex's usage reaches the session
total, and a stalled Codex is shown as stalled in its card, whose Stop kills it (issue 17).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from core import Agent
from core.settings import Settings
from desktop.controller import Controller
from desktop.delegates import codex_delegate
from desktop.views.conversation_view import ConversationView
from harnesses.codex import local_codex_binary
from harnesses.workspace import Workspace
from tests.support import items
from tests.support.codex_cli import NO_RETRIES

KEY = "sk-tandem-window-0123456789abcdef"


@pytest.fixture
def codex_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = local_codex_binary()
    if binary is None:
        pytest.fail("Codex CLI not installed: run `bash scripts/install_codex.sh`")
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(
        'analytics.enabled = false\nweb_search = "disabled"\n[features]\nplugins = false\n'
    )
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("CODEX_PATH", str(binary))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    (path / "notes.txt").write_text("alpha\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(path)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True)
    return path


def _record(signal: Any) -> list[tuple[Any, ...]]:
    seen: list[tuple[Any, ...]] = []
    signal.connect(lambda *args: seen.append(args))
    return seen


async def _until(predicate: Any, timeout: float = 60.0) -> None:
    async def wait() -> None:
        while not predicate():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), timeout)


def _controller(workspace: Workspace, model: Any, settings: Settings) -> Controller:
    relay: dict[str, Any] = {}

    def factory(ws: Workspace) -> Agent[Any]:
        tool = codex_delegate(
            ws,
            settings=settings,
            on_stream=lambda e: relay["controller"].on_codex_event(e),
            on_stall=lambda *a: relay["controller"].on_codex_stall(*a),
            config=NO_RETRIES,
        )
        assert tool is not None
        return Agent(name="outer", model=model, tools=[tool])

    controller = Controller(workspace, factory)
    relay["controller"] = controller
    return controller


def _status(view: ConversationView, call_id: str) -> str | None:
    try:
        return view.tool_card(call_id).status_name
    except KeyError:
        return None


def _codex_call(text: str, call_id: str) -> dict[str, Any]:
    args = {"inputs": [{"type": "text", "text": text, "path": None}], "thread_id": None}
    return items.function_call("codex", json.dumps(args), call_id=call_id)


async def test_codex_work_shows_in_terminal_and_diff_and_counts_usage(
    responses_server, model, codex_env, repo, tmp_path, qtbot
):
    settings = Settings(base_url=responses_server.base_url, api_key=KEY, model="gpt-5.5")
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / "data")
    controller = _controller(workspace, model, settings)
    started, output, finished = (
        _record(controller.commandStarted),
        _record(controller.commandOutput),
        _record(controller.commandFinished),
    )
    diffs, usage, running = (
        _record(controller.checkpointDiffReady),
        _record(controller.usageChanged),
        _record(controller.runningChanged),
    )
    updates = _record(controller.toolUpdated)
    server = responses_server
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello from codex\n*** End Patch\n"
    server.enqueue([_codex_call("add hello.txt", "k1")], usage=items.usage(10, 5))
    server.enqueue([items.function_call("exec_command", {"cmd": "echo codex-ran"}, call_id="x")])
    server.enqueue([items.custom_tool_call("apply_patch", patch, call_id="p")])
    server.enqueue([items.message("added hello.txt")], usage=items.usage(400, 90))
    server.enqueue([items.message("Codex added the file")], usage=items.usage(10, 5))
    controller.submit("delegate")
    await _until(lambda: running and running[-1] == (False,) and len(running) >= 2)
    await _until(lambda: bool(diffs))

    codex_blocks = [s for s in started if s[4] == "codex"]
    assert codex_blocks and "echo codex-ran" in codex_blocks[0][1]
    assert any(o[0] == codex_blocks[0][0] and "codex-ran" in o[2] for o in output)
    assert any(f[0] == codex_blocks[0][0] and f[1] == 0 for f in finished)
    progress = [u[3] for u in updates if u[0] == "k1" and u[1] == "running"]
    assert progress[0] == "Codex started" and any("echo codex-ran" in p for p in progress)
    assert "Codex changed hello.txt" in progress  # the card follows Codex from its 1st event
    assert "hello.txt" in diffs[-1][2] and "+hello from codex" in diffs[-1][2]
    assert (repo / "hello.txt").read_text() == "hello from codex\n"
    reported = next(
        json.loads(i["output"])
        for i in server.responses_requests[4].body["input"]
        if i.get("type") == "function_call_output"
    )["usage"]  # Codex's turn: the sum of its three requests (400 + 2 small ones)
    assert reported["input_tokens"] >= 400 and reported["output_tokens"] >= 90
    input_tokens, output_tokens, _total = usage[-1]
    assert input_tokens == 10 + 10 + reported["input_tokens"]  # the 2 outer requests + Codex
    assert output_tokens == 5 + 5 + reported["output_tokens"]
    for request in server.responses_requests[1:4]:
        assert request.headers["authorization"] == f"Bearer {KEY}"
    await controller.shutdown()


async def test_stalled_codex_card_offers_stop(
    responses_server, model, codex_env, repo, tmp_path, qtbot
):
    settings = Settings(
        base_url=responses_server.base_url, api_key=KEY, model="gpt-5.5", codex_stall_seconds=1
    )
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / "data")
    controller = _controller(workspace, model, settings)
    view = ConversationView()
    qtbot.addWidget(view)
    controller.toolStarted.connect(view.add_tool_card)
    controller.toolUpdated.connect(view.update_tool_card)
    view.toolCardActivated.connect(
        lambda call_id, kind: controller.stop_tool(call_id) if kind == "stop" else None
    )
    running = _record(controller.runningChanged)
    server = responses_server
    server.enqueue([_codex_call("hang", "k1")])
    server.enqueue([items.message("never delivered")], delay_s=60)
    server.enqueue([items.message("Codex was stopped; moving on")])
    controller.submit("delegate")
    await _until(lambda: _status(view, "k1") == "stalled")
    card = view.tool_card("k1")
    assert card.stop_button.isVisibleTo(card)
    assert "no event from Codex for 1 s" in card.summary.text()
    process = controller.agent.tools[0].on_invoke_tool.codex.inner
    pid = process.last_pid
    assert pid is not None and pid in process.active_pids
    qtbot.mouseClick(card.stop_button, Qt.MouseButton.LeftButton)
    await _until(lambda: running and running[-1] == (False,) and len(running) >= 2)
    assert not process.active_pids
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    outputs = [
        i
        for i in server.responses_requests[-1].body["input"]
        if i.get("type") == "function_call_output"
    ]
    assert "Codex was stopped by the user." in outputs[0]["output"]
    assert card.status_name == "completed" and not card.stop_button.isVisibleTo(card)
    await controller.shutdown()
