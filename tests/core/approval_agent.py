"""An agent with approval-gated tools, shared by the approval test and its child process.

Run as ``python -m tests.core.approval_agent BASE_URL STATE_FILE``: loads the state, approves
the ``delete_file`` call, rejects the ``write_note`` call with a message, resumes the run and
prints a JSON summary on stdout.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import openai

from core import Agent, OpenAIResponsesModel, Runner, RunState, function_tool

EXECUTED: list[str] = []


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file (needs approval)."""
    EXECUTED.append(f"delete_file:{path}")
    return f"deleted {path}"


@function_tool(needs_approval=True)
def write_note(text: str) -> str:
    """Write a note (needs approval)."""
    EXECUTED.append(f"write_note:{text}")
    return "written"


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    EXECUTED.append("add")
    return a + b


def build_agent(base_url: str) -> Agent:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="test-key", max_retries=0)
    return Agent(
        name="janitor",
        model=OpenAIResponsesModel("test-model", client),
        tools=[delete_file, write_note, add],
    )


async def _resume(base_url: str, state_file: Path) -> dict:
    agent = build_agent(base_url)
    state = await RunState.from_string(agent, state_file.read_text())
    decided = []
    for item in state.get_interruptions():
        if item.tool_name == "delete_file":
            state.approve(item)
        else:
            state.reject(item, rejection_message="Not now: notes are frozen.")
        decided.append(item.tool_name)
    result = await Runner.run(agent, state)
    return {
        "final_output": result.final_output,
        "executed": EXECUTED,
        "decided": decided,
        "interruptions": len(result.interruptions),
    }


if __name__ == "__main__":
    summary = asyncio.run(_resume(sys.argv[1], Path(sys.argv[2])))
    print(json.dumps(summary))
