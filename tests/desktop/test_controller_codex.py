"""Codex CLI events shown like the agent's own work: terminal blocks, conversation notices."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from core import Agent
from core.tools.codex.events import (
    AgentMessageItem,
    CommandExecutionItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    TodoEntry,
    TodoListItem,
)
from desktop.controller import Controller
from harnesses.workspace import Workspace


def _record(signal: Any) -> list[tuple[Any, ...]]:
    seen: list[tuple[Any, ...]] = []
    signal.connect(lambda *args: seen.append(args))
    return seen


def _event(event: Any) -> Any:
    return SimpleNamespace(event=event, thread=None, tool_call=None)


def test_codex_commands_become_codex_terminal_blocks(tmp_path, qtbot):
    workspace = Workspace(tmp_path, mode="auto", data_dir=tmp_path / ".data")
    controller = Controller(workspace, lambda ws: Agent(name="a", tools=ws.tools()))
    started, output, finished, notices = (
        _record(controller.commandStarted),
        _record(controller.commandOutput),
        _record(controller.commandFinished),
        _record(controller.notice),
    )
    running = CommandExecutionItem(id="item_1", command="pytest -q", status="in_progress")
    done = CommandExecutionItem(id="item_1", command="pytest -q", aggregated_output="3 passed\n", status="completed", exit_code=0)
    controller.on_codex_event(_event(ItemStartedEvent(item=running)))
    controller.on_codex_event(_event(ItemCompletedEvent(item=done)))
    assert started == [("codex:item_1", "pytest -q", str(tmp_path.resolve()), None, "codex", None)]
    assert output == [("codex:item_1", "stdout", "3 passed\n")]
    assert finished[0][:3] == ("codex:item_1", 0, "exit")

    controller.on_codex_event(_event(ItemCompletedEvent(item=AgentMessageItem(id="m", text="Tests pass now."))))
    plan = TodoListItem(id="t", items=(TodoEntry(text="run tests", completed=True), TodoEntry(text="fix bug")))
    controller.on_codex_event(_event(ItemCompletedEvent(item=plan)))
    assert ("Codex: Tests pass now.", "info") in notices
    assert ("Codex plan: [x] run tests; [ ] fix bug", "info") in notices
