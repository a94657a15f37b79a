"""Side by side with openai-agents 0.24 (the bench extra): the same MCP server gives the same
function tools in the request, and the same tool outputs (issue 18, Done means 1)."""

from __future__ import annotations

import pytest

from core import Agent, Runner
from core.mcp import MCPServerStdio, MCPServerStreamableHttp
from tests.support import items
from tests.support.mcp_procs import fault_params, http_fault_server

agents = pytest.importorskip("agents")
from agents.mcp import MCPServerStdio as RefStdio  # noqa: E402
from agents.mcp import MCPServerStreamableHttp as RefHttp  # noqa: E402

CALLS = [("echo", {"text": "hi"}), ("add", {"a": 1, "b": 2}), ("pixel", {})]


def _script(server, mcp_config) -> None:
    prefix = "mcp_fault__" if mcp_config.get("include_server_in_tool_names") else ""
    server.enqueue([items.function_call(prefix + n, a, call_id=f"c_{n}") for n, a in CALLS])
    server.enqueue([items.message("done")])


async def _run_reference(server, openai_client, mcp, mcp_config):
    from agents import Agent as RefAgent
    from agents import OpenAIResponsesModel as RefModel
    from agents import Runner as RefRunner
    from agents import set_tracing_disabled

    set_tracing_disabled(True)
    agent = RefAgent(
        name="a",
        instructions="be brief",
        mcp_servers=[mcp],
        mcp_config=mcp_config,
        model=RefModel(model="test-model", openai_client=openai_client),
    )
    _script(server, mcp_config)
    await RefRunner.run(agent, "go")


async def _run_ours(server, model, mcp, mcp_config):
    agent = Agent(
        name="a", instructions="be brief", mcp_servers=[mcp], mcp_config=mcp_config, model=model
    )
    _script(server, mcp_config)
    await Runner.run(agent, "go")


def _outputs(body):
    return sorted(
        (i["call_id"], i["output"])
        for i in body["input"]
        if i.get("type") == "function_call_output"
    )


@pytest.mark.parametrize(
    "mcp_config",
    [{}, {"convert_schemas_to_strict": True}, {"include_server_in_tool_names": True}],
    ids=["default", "strict", "prefixed"],
)
async def test_stdio_tools_and_outputs_equal_the_reference(
    responses_server, openai_client, model, mcp_config
):
    async with RefStdio(name="fault", params=fault_params()) as ref:
        await _run_reference(responses_server, openai_client, ref, mcp_config)
    async with MCPServerStdio(name="fault", params=fault_params()) as ours:
        await _run_ours(responses_server, model, ours, mcp_config)
    reqs = [r.body for r in responses_server.requests]
    assert len(reqs) == 4
    assert reqs[2]["tools"] == reqs[0]["tools"]
    assert len(reqs[0]["tools"]) == 8 and len(_outputs(reqs[1])) == 3
    if mcp_config.get("include_server_in_tool_names"):
        assert {t["name"] for t in reqs[0]["tools"]} >= {"mcp_fault__echo", "mcp_fault__pixel"}
    if mcp_config.get("convert_schemas_to_strict"):
        strict = [t["strict"] for t in reqs[0]["tools"]]
        assert True in strict and False in strict  # open objects (no properties) stay loose
    assert _outputs(reqs[3]) == _outputs(reqs[1])


async def test_streamable_http_tools_equal_the_reference(responses_server, openai_client, model):
    with http_fault_server() as base:
        params = {"url": f"{base}/mcp"}
        async with RefHttp(name="fault", params=params) as ref:
            await _run_reference(responses_server, openai_client, ref, {})
        async with MCPServerStreamableHttp(name="fault", params=params) as ours:
            await _run_ours(responses_server, model, ours, {})
    reqs = [r.body for r in responses_server.requests]
    assert reqs[2]["tools"] == reqs[0]["tools"]
    assert _outputs(reqs[3]) == _outputs(reqs[1])
