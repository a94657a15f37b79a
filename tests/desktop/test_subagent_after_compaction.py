"""Found trying issue 15's views as a new user: after the window's session was compacted, the
Explorer sub-agent (an agent as a tool) failed with "compaction covers N items but the history
has 1". The nested run took the session's compaction state from the run config the window
binds (``ContextSession.run_config``); a nested run has a history of its own."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from core import Agent, RunConfig, Runner, ScriptedModel
from core.context_window import ContextPolicy
from core.context_window.state import CompactionRecord
from desktop.context_session import ContextSession


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "content": [{"type": "output_text", "text": text}]}


def test_a_sub_agent_runs_after_the_session_was_compacted() -> None:
    session = ContextSession(journal=lambda *_a: None, notice=lambda *_a: None)
    summary = {"type": "message", "role": "user", "content": "summary of 11 items"}
    session.state.compactions.append(
        CompactionRecord(strategy="summary", reason="threshold", covers=11, prefix=[summary])
    )
    inner = ScriptedModel([{"output": [_message("the answer, from the sub-agent")]}])
    explorer = Agent(name="Explorer", model=inner).as_tool(
        tool_name="explore_repository", tool_description="ask"
    )
    call = {
        "type": "function_call",
        "call_id": "x1",
        "name": "explore_repository",
        "arguments": json.dumps({"input": "where?"}),
    }
    outer = ScriptedModel([{"output": [call]}, {"output": [_message("done")]}])
    agent = Agent(name="Tandem", model=outer, tools=[explorer])
    history = [_message(f"earlier {n}") for n in range(11)]
    config = session.run_config(RunConfig(context_policy=ContextPolicy()))
    result = asyncio.run(Runner.run(agent, [*history, _message("go")], run_config=config))
    outputs = [
        item for item in result.to_input_list() if item.get("type") == "function_call_output"
    ]
    assert outputs and "compaction covers" not in str(outputs[0]["output"])
    assert "the answer, from the sub-agent" in str(outputs[0]["output"])
    assert len(session.state.compactions) == 1  # the session's state is not the nested one's
