"""Codex's work in the window: the real Codex CLI, driven by the runner against the local
Responses server; its command becomes a Codex terminal block and its edit opens in the diff."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from core import Agent, Runner
from desktop.controller import Controller
from harnesses.workspace import Workspace
from tests.harnesses.test_codex_cli import codex_bin, codex_home, make_exec, make_tool, repo  # noqa: F401
from tests.support import items

PATCH = "*** Begin Patch\n*** Update File: notes.txt\n@@\n alpha\n-beta\n+gamma\n*** End Patch\n"


def _record(signal: Any) -> list[tuple[Any, ...]]:
    seen: list[tuple[Any, ...]] = []
    signal.connect(lambda *args: seen.append(args))
    return seen


async def test_codex_command_and_edit_show_in_terminal_and_diff(responses_server, model, make_exec, repo, qtbot):  # noqa: F811
    workspace = Workspace(repo, mode="auto", data_dir=repo.parent / "data")
    holder: dict[str, Controller] = {}

    def factory(ws: Workspace) -> Agent[Any]:
        tool = make_tool(make_exec(), repo, on_stream=lambda event: holder["c"].on_codex_event(event))
        return Agent(name="outer", model=model, tools=[*ws.tools(), tool])

    controller = Controller(workspace, factory)
    holder["c"] = controller
    started, finished, diffs = (
        _record(controller.commandStarted),
        _record(controller.commandFinished),
        _record(controller.checkpointDiffReady),
    )
    server = responses_server
    call = {"inputs": [{"type": "text", "text": "fix the notes", "path": None}]}
    server.enqueue([items.function_call("codex", call, call_id="outer_1")])  # outer agent
    server.enqueue([items.function_call("exec_command", {"cmd": "echo checking"}, call_id="x1")])  # Codex
    server.enqueue([items.custom_tool_call("apply_patch", PATCH, call_id="p1")])  # Codex
    server.enqueue([items.message("notes fixed")])  # Codex's answer
    server.enqueue([items.message("Codex fixed the notes.")])  # outer agent's answer
    diff_shown = asyncio.Event()
    controller.checkpointDiffReady.connect(lambda *_: diff_shown.set())
    result = await Runner.run(controller.agent, "delegate", hooks=workspace.hooks())
    await asyncio.wait_for(diff_shown.wait(), 30)
    await controller.shutdown()

    assert result.final_output == "Codex fixed the notes."
    assert (repo / "notes.txt").read_text() == "alpha\ngamma\n"
    codex_blocks = [s for s in started if s[4] == "codex"]
    assert codex_blocks and "echo checking" in codex_blocks[0][1]
    assert next(f for f in finished if f[0] == codex_blocks[0][0])[1] == 0
    assert workspace.last_checkpoint is not None  # taken before the turn that delegated
    assert diffs and "notes.txt" in diffs[-1][2] and "+gamma" in diffs[-1][2]
    tool_output = next(i for i in server.responses_requests[-1].body["input"] if i.get("type") == "function_call_output")
    assert json.loads(tool_output["output"])["response"] == "notes fixed"
