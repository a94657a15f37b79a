"""Human-in-the-loop approvals and RunState (spec §8) against the local Responses server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core import Agent, RunConfig, Runner, RunState, ToolApprovalItem, UserError, function_tool
from tests.core import approval_agent
from tests.support import items

ROOT = Path(__file__).resolve().parents[2]


async def test_interrupt_serialise_in_new_process_approve_reject_resume(responses_server, tmp_path):
    responses_server.enqueue(
        [
            items.function_call("delete_file", {"path": "old.log"}, call_id="c1"),
            items.function_call("write_note", {"text": "hi"}, call_id="c2"),
            items.function_call("add", {"a": 1, "b": 2}, call_id="c3"),
        ]
    )
    responses_server.enqueue([items.message("cleaned up")])
    approval_agent.EXECUTED.clear()
    agent = approval_agent.build_agent(responses_server.base_url)
    result = await Runner.run(agent, "clean up")

    assert result.final_output is None
    assert [(i.tool_name, i.call_id) for i in result.interruptions] == [
        ("delete_file", "c1"),
        ("write_note", "c2"),
    ]
    assert all(isinstance(i, ToolApprovalItem) for i in result.interruptions)
    assert approval_agent.EXECUTED == ["add"]  # the call that needs no approval ran
    assert len(responses_server.requests) == 1

    state_file = tmp_path / "state.json"
    state_file.write_text(result.to_state().to_string())
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.core.approval_agent",
            responses_server.base_url,
            str(state_file),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.returncode == 0, child.stderr
    summary = json.loads(child.stdout.strip().splitlines()[-1])
    assert summary == {
        "final_output": "cleaned up",
        "executed": ["delete_file:old.log"],
        "decided": ["delete_file", "write_note"],
        "interruptions": 0,
    }
    assert len(responses_server.requests) == 2  # exactly one further model request
    outputs = {
        i["call_id"]: i["output"]
        for i in responses_server.requests[1].body["input"]
        if i.get("type") == "function_call_output"
    }
    assert outputs == {"c1": "deleted old.log", "c2": "Not now: notes are frozen.", "c3": "3"}
    sent_types = [i.get("type") for i in responses_server.requests[1].body["input"]]
    assert "tool_approval_item" not in sent_types


async def test_default_rejection_text_and_always_approve(responses_server, model):
    calls: list[str] = []

    @function_tool(needs_approval=True)
    def risky(n: int) -> str:
        """Risky."""
        calls.append(str(n))
        return f"ran {n}"

    agent = Agent(name="a", model=model, tools=[risky])
    responses_server.enqueue([items.function_call("risky", {"n": 1}, call_id="r1")])
    responses_server.enqueue([items.function_call("risky", {"n": 2}, call_id="r2")])
    responses_server.enqueue([items.message("end")])
    first = await Runner.run(agent, "go")
    state = first.to_state()
    state.reject(first.interruptions[0])
    second = await Runner.run(agent, state)
    assert second.interruptions and second.interruptions[0].call_id == "r2"
    state = second.to_state()
    state.approve(second.interruptions[0], always_approve=True)
    final = await Runner.run(agent, state)
    assert final.final_output == "end"
    assert calls == ["2"]
    rejected = [
        i
        for i in responses_server.requests[1].body["input"]
        if i.get("call_id") == "r1" and i["type"] == "function_call_output"
    ]
    assert rejected[0]["output"] == "Tool execution was not approved."


async def test_formatter_supplies_rejection_text(responses_server, model):
    @function_tool(needs_approval=lambda ctx, args, call_id: args.get("n", 0) > 5)
    def guarded(n: int) -> str:
        """Needs approval above 5."""
        return "ok"

    agent = Agent(name="a", model=model, tools=[guarded])
    responses_server.enqueue(
        [
            items.function_call("guarded", {"n": 9}, call_id="g1"),
            items.function_call("guarded", {"n": 1}, call_id="g2"),
        ]
    )
    responses_server.enqueue([items.message("fine")])
    config = RunConfig(tool_error_formatter=lambda args: f"{args.kind}:{args.tool_name}")
    first = await Runner.run(agent, "go", run_config=config)
    assert [i.call_id for i in first.interruptions] == ["g1"]
    state = first.to_state()
    state.reject(first.interruptions[0])
    await Runner.run(agent, state, run_config=config)
    outputs = {
        i["call_id"]: i["output"]
        for i in responses_server.requests[1].body["input"]
        if i.get("type") == "function_call_output"
    }
    assert outputs == {"g1": "approval_rejected:guarded", "g2": "ok"}


async def test_state_json_rejects_newer_schema():
    agent = Agent(name="a")
    with pytest.raises(UserError, match="newer"):
        await RunState.from_json(agent, {"$schemaVersion": "99.0"})
    with pytest.raises(UserError, match="not JSON"):
        await RunState.from_string(agent, "{nope")
