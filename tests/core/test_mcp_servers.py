"""Local MCP servers (issue 18 item 1): the SDK's usage against real servers, with faults."""

from __future__ import annotations

import json
import os

import pytest

from core import Agent, Runner, ToolCallOutputItem
from core.errors import UserError
from core.mcp import (
    MCPServerError,
    MCPServerSse,
    MCPServerStdio,
    MCPServerStreamableHttp,
    ToolFilterContext,
    create_static_tool_filter,
    prefixed_tool_name,
)
from tests.support import items
from tests.support.mcp_procs import fault_params, http_fault_server, live_servers


def _outputs(server, index):
    return [
        i for i in server.requests[index].body["input"] if i.get("type") == "function_call_output"
    ]


def _text(output):
    """The text of a ``function_call_output``'s output (a string or ``input_text`` parts)."""
    if isinstance(output, str):
        return output
    return "".join(part["text"] for part in output if part["type"] == "input_text")


def _tool_names(server, index=0):
    return [t["name"] for t in server.requests[index].body["tools"]]


@pytest.fixture(autouse=True)
def _no_server_left_behind():
    before = set(live_servers())
    yield
    assert set(live_servers()) - before == set()


async def test_seed_stdio_example_runs_and_the_result_reaches_the_model(responses_server, model):
    # the SDK docs' example with only the imports changed: async with, Agent(mcp_servers=...)
    responses_server.enqueue([items.function_call("echo", {"text": "hello"}, call_id="c1")])
    responses_server.enqueue([items.message("done")])
    async with MCPServerStdio(name="Fault", params=fault_params(), cache_tools_list=True) as server:
        agent = Agent(
            name="Assistant",
            instructions="Use the tools to answer.",
            mcp_servers=[server],
            model=model,
        )
        result = await Runner.run(agent, "Echo hello")
    assert result.final_output == "done"
    assert _tool_names(responses_server) == [
        "echo",
        "add",
        "fail",
        "crash",
        "huge",
        "pixel",
        "env",
        "pid",
    ]
    echo = responses_server.requests[0].body["tools"][0]
    assert echo["type"] == "function" and echo["strict"] is False
    assert echo["description"] == "Echo the text back."
    assert echo["parameters"]["properties"]["text"]["type"] == "string"
    assert _outputs(responses_server, 1) == [
        {
            "call_id": "c1",
            "output": [{"type": "input_text", "text": "hello"}],
            "type": "function_call_output",
        }
    ]
    assert server.state == "closed"


async def test_streamable_http_server_on_loopback(responses_server, model):
    responses_server.enqueue([items.function_call("add", {"a": 2, "b": 40}, call_id="c1")])
    responses_server.enqueue([items.message("42")])
    with http_fault_server() as base:
        async with MCPServerStreamableHttp(
            name="Streamable", params={"url": f"{base}/mcp"}, use_structured_content=True
        ) as server:
            agent = Agent(name="Assistant", mcp_servers=[server], model=model)
            result = await Runner.run(agent, "add")
    assert result.final_output == "42"
    assert json.loads(_text(_outputs(responses_server, 1)[0]["output"])) == {"total": 42}


async def test_sse_server_on_loopback():
    with http_fault_server("--sse") as base:
        async with MCPServerSse(params={"url": f"{base}/sse"}) as server:
            assert server.name == f"url: {base}/sse"
            result = await server.call_tool("echo", {"text": "over sse"})
    assert result.content[0].text == "over sse"


async def test_crash_mid_call_is_a_tool_error_and_the_server_restarts(responses_server, model):
    responses_server.enqueue([items.function_call("pid", {}, call_id="c0")])
    responses_server.enqueue([items.function_call("crash", {}, call_id="c1")])
    responses_server.enqueue([items.function_call("pid", {}, call_id="c2")])
    responses_server.enqueue([items.message("still here")])
    states: list[str] = []
    async with MCPServerStdio(name="fault", params=fault_params()) as server:
        server.state_listeners.append(lambda s: states.append(s.state))
        result = await Runner.run(Agent(name="a", mcp_servers=[server], model=model), "go")
    assert result.final_output == "still here"
    first_pid = _text(_outputs(responses_server, 1)[0]["output"])
    crash = _text(_outputs(responses_server, 2)[1]["output"])
    assert crash.startswith("An error occurred while running the tool.")
    assert "MCP server 'fault' stopped" in crash and "crashing now" in crash
    second_pid = _text(_outputs(responses_server, 3)[2]["output"])
    assert second_pid.isdigit() and second_pid != first_pid
    assert states[:3] == ["failed", "starting", "ready"]


async def test_is_error_result_is_fed_back_as_an_error(responses_server, model):
    responses_server.enqueue([items.function_call("fail", {"message": "disk full"}, call_id="c1")])
    responses_server.enqueue([items.message("ok")])
    async with MCPServerStdio(name="fault", params=fault_params()) as server:
        await Runner.run(Agent(name="a", mcp_servers=[server], model=model), "go")
        assert server.state == "ready"
    output = _text(_outputs(responses_server, 1)[0]["output"])
    assert output.startswith("Error: MCP tool 'fail' on server 'fault' failed:")
    assert "disk full" in output


async def test_server_that_never_starts_times_out_and_leaves_no_process():
    server = MCPServerStdio(
        name="silent",
        params=fault_params("--mode", "never-start"),
        client_session_timeout_seconds=0.5,
    )
    with pytest.raises(MCPServerError, match="MCP server 'silent' failed to start"):
        await server.connect()
    assert server.state == "failed" and "failed to start" in (server.last_error or "")
    assert live_servers() == []  # the silent server was stopped with its start
    await server.cleanup()


async def test_server_that_exits_at_start_reports_its_stderr():
    server = MCPServerStdio(name="quitter", params=fault_params("--mode", "exit-at-start"))
    with pytest.raises(MCPServerError) as caught:
        await server.connect()
    assert "refusing to start" in str(caught.value)
    assert server.stderr_tail() == ["fault server: refusing to start"]
    await server.cleanup()


async def test_a_server_that_cannot_restart_gives_a_tool_error_and_the_run_goes_on(
    responses_server, model, tmp_path
):
    # the server crashes; its restart never answers: the next call is a tool error, not a crash
    responses_server.enqueue([items.function_call("crash", {}, call_id="c1")])
    responses_server.enqueue([items.function_call("echo", {"text": "x"}, call_id="c2")])
    responses_server.enqueue([items.message("gave up")])
    server = MCPServerStdio(name="flaky", params=fault_params(), client_session_timeout_seconds=2)
    async with server:
        server.params.args[:] = [*server.params.args, "--mode", "never-start"]
        result = await Runner.run(Agent(name="a", mcp_servers=[server], model=model), "go")
        assert server.state == "failed"
    assert result.final_output == "gave up"
    assert "failed to start" in _text(_outputs(responses_server, 2)[1]["output"])


async def test_huge_output_is_cut_and_non_utf8_stderr_is_readable():
    async with MCPServerStdio(name="big", params=fault_params("--mode", "bad-stderr")) as server:
        tools = {
            t.name: t for t in await Agent(name="a", mcp_servers=[server]).get_all_tools(_ctx())
        }
        out = await tools["huge"].on_invoke_tool(_tool_ctx("huge"), '{"chars": 300000}')
        assert "\ufffd" in server.stderr_tail()[0] and "follow" in server.stderr_tail()[0]
    assert out["type"] == "text" and len(out["text"]) < 200_100
    assert out["text"].endswith("[output truncated: 100000 more characters]")


async def test_image_output_and_bad_arguments():
    async with MCPServerStdio(name="img", params=fault_params()) as server:
        tools = {
            t.name: t for t in await Agent(name="a", mcp_servers=[server]).get_all_tools(_ctx())
        }
        image = await tools["pixel"].on_invoke_tool(_tool_ctx("pixel"), "{}")
        bad = await tools["echo"].on_invoke_tool(_tool_ctx("echo"), "{not json")
    assert image["type"] == "image" and image["image_url"].startswith("data:image/png;base64,")
    assert bad.startswith("An error occurred while parsing tool arguments")


async def test_clean_environment_plus_configured_env(monkeypatch):
    monkeypatch.setenv("TANDEM_TEST_SECRET", "s3cret-value")
    params = fault_params(env={"GIVEN": "yes"})
    async with MCPServerStdio(name="env", params=params) as server:
        leaked = await server.call_tool("env", {"name": "TANDEM_TEST_SECRET"})
        given = await server.call_tool("env", {"name": "GIVEN"})
    assert leaked.content[0].text == "<unset>"
    assert given.content[0].text == "yes"


async def test_static_and_callable_tool_filters():
    static = create_static_tool_filter(
        allowed_tool_names=["echo", "add", "fail"], blocked_tool_names=["fail"]
    )
    assert create_static_tool_filter() is None
    seen: list[str] = []

    def only_readonly(context: ToolFilterContext, tool) -> bool:
        seen.append(context.server_name)
        return bool(tool.annotations and tool.annotations.read_only_hint)

    async with (
        MCPServerStdio(name="s1", params=fault_params(), tool_filter=static) as one,
        MCPServerStdio(name="s2", params=fault_params(), tool_filter=only_readonly) as two,
    ):
        assert [t.name for t in await one.list_tools()] == ["echo", "add"]
        agent = Agent(name="a", mcp_servers=[two])
        assert [t.name for t in await agent.get_all_tools(_ctx())] == ["echo"]
    assert set(seen) == {"s2"}


async def test_duplicate_names_need_server_prefixes():
    async with (
        MCPServerStdio(name="alpha", params=fault_params()) as one,
        MCPServerStdio(name="beta.local", params=fault_params()) as two,
    ):
        with pytest.raises(UserError, match="include_server_in_tool_names"):
            await Agent(name="a", mcp_servers=[one, two]).get_all_tools(_ctx())
        agent = Agent(
            name="a", mcp_servers=[one, two], mcp_config={"include_server_in_tool_names": True}
        )
        names = [t.name for t in await agent.get_all_tools(_ctx())]
    assert names[:2] == ["mcp_alpha__echo", "mcp_alpha__add"]
    assert "mcp_beta_local__echo" in names and len(set(names)) == 16
    long = prefixed_tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long.startswith("mcp_sss")


async def test_cache_tools_list_and_invalidate():
    async with MCPServerStdio(name="c", params=fault_params(), cache_tools_list=True) as server:
        first = await server.list_tools()
        again = await server.list_tools()
        assert server.cached_tools is not None and first[0] is again[0]
        server.invalidate_tools_cache()
        fresh = await server.list_tools()
        assert fresh[0] is not first[0] and [t.name for t in fresh] == [t.name for t in first]


async def test_require_approval_interrupts_and_resumes(responses_server, model):
    responses_server.enqueue([items.function_call("add", {"a": 1, "b": 1}, call_id="c1")])
    responses_server.enqueue([items.message("two")])
    async with MCPServerStdio(
        name="ask", params=fault_params(), require_approval={"always": {"tool_names": ["add"]}}
    ) as server:
        agent = Agent(name="a", mcp_servers=[server], model=model)
        first = await Runner.run(agent, "add")
        assert [i.tool_name for i in first.interruptions] == ["add"]
        state = first.to_state()
        state.approve(first.interruptions[0])
        result = await Runner.run(agent, state)
    assert result.final_output == "two"
    output = next(i for i in result.new_items if isinstance(i, ToolCallOutputItem)).output
    assert json.loads(output["text"]) == {"total": 2}


async def test_require_approval_rejects_bad_values():
    with pytest.raises(UserError):
        MCPServerStdio(params=fault_params(), require_approval="sometimes")
    with pytest.raises(UserError):
        MCPServerStdio(
            params=fault_params(),
            require_approval={"always": {"tool_names": ["x"]}, "never": {"tool_names": ["x"]}},
        )


async def test_not_connected_is_a_user_error():
    server = MCPServerStdio(params=fault_params())
    assert server.name.startswith("stdio: ")
    with pytest.raises(UserError, match="connect"):
        await server.list_tools()


def _ctx():
    from core.context import RunContextWrapper

    return RunContextWrapper(context=None)


def _tool_ctx(name: str):
    from core.context import ToolContext

    return ToolContext(context=None, tool_name=name, tool_call_id="c", tool_arguments="")


assert os.sep == "/"  # /proc-based checks: Linux only
