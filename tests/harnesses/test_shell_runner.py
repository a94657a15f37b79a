"""ShellTool with the real executor, driven by the runner against the local Responses server."""

from __future__ import annotations

from core import Agent, Runner, ShellTool
from harnesses.shell import SubprocessShellExecutor
from tests.support import items


async def test_shell_call_with_two_commands_round_trip(responses_server, model, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    executor = SubprocessShellExecutor(tmp_path)
    agent = Agent(name="a", model=model, tools=[ShellTool(executor=executor)])
    responses_server.enqueue(
        [items.shell_call(["cat a.txt", "echo oops >&2; exit 3"], call_id="sh1", timeout_ms=5000)]
    )
    responses_server.enqueue([items.message("read it")])
    result = await Runner.run(agent, "read a.txt")
    assert result.final_output == "read it"
    assert responses_server.requests[0].body["tools"] == [
        {"type": "shell", "environment": {"type": "local"}}
    ]
    sent = responses_server.requests[1].body["input"]
    assert sent[1]["type"] == "shell_call" and sent[1]["call_id"] == "sh1"
    assert sent[2] == {
        "type": "shell_call_output",
        "call_id": "sh1",
        "output": [
            {"stdout": "alpha\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
            {"stdout": "", "stderr": "oops\n", "outcome": {"type": "exit", "exit_code": 3}},
        ],
    }


async def test_shell_approval_rejection_reaches_model(responses_server, model, tmp_path):
    executor = SubprocessShellExecutor(tmp_path)
    tool = ShellTool(executor=executor, needs_approval=True)
    agent = Agent(name="a", model=model, tools=[tool])
    responses_server.enqueue([items.shell_call(["touch created.txt"], call_id="sh1")])
    responses_server.enqueue([items.message("ok, not touching it")])
    first = await Runner.run(agent, "touch a file")
    assert [i.tool_name for i in first.interruptions] == ["shell"]
    state = first.to_state()
    state.reject(first.interruptions[0], rejection_message="Do not create files here.")
    final = await Runner.run(agent, state)
    assert final.final_output == "ok, not touching it"
    assert not (tmp_path / "created.txt").exists()
    output = responses_server.requests[1].body["input"][-1]
    assert output == {
        "type": "shell_call_output",
        "call_id": "sh1",
        "output": [
            {
                "stdout": "",
                "stderr": "Do not create files here.",
                "outcome": {"type": "exit", "exit_code": 1},
            }
        ],
    }
