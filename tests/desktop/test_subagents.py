"""The Explorer sub-agent and the window's agent factory: hosted tools, MCP servers, Explorer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core import (
    Agent,
    CodeInterpreterTool,
    HostedMCPTool,
    ImageGenerationTool,
    OpenAIProvider,
    RunConfig,
    Runner,
    ShellTool,
    WebSearchTool,
)
from core.settings import McpServer, Settings
from core.tools.agent_tool import AgentTool
from desktop.app import _agent_factory, _CodexRelay
from desktop.subagents import EXPLORER_MAX_TURNS, EXPLORER_TOOL_NAME, explorer_tool
from harnesses.workspace import Workspace
from resources import read_text
from tests.support import items

HOSTED_TYPES = ("web_search", "code_interpreter", "image_generation", "mcp")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "inventory.py").write_text("def restock(item):\n    return item\n")
    (root / "README.md").write_text("# Inventory\n")
    return root


def _items_of(request: Any, kind: str) -> list[dict[str, Any]]:
    return [i for i in request.body["input"] if i.get("type") == kind]


def _tool_names(request: Any) -> list[str]:
    return [t.get("name", t["type"]) for t in request.body.get("tools", [])]


def test_explorer_has_only_the_workspace_shell(repo: Path) -> None:
    tool = explorer_tool(Workspace(repo, mode="auto", sandbox_enabled=False), model="gpt-test")
    assert isinstance(tool, AgentTool)
    assert tool.name == EXPLORER_TOOL_NAME == "explore_repository"
    assert "read-only" in tool.description and "line numbers" in tool.description
    assert tool.to_wire()["parameters"]["required"] == ["input"]
    nested = tool.agent
    assert nested.name == "Explorer" and nested.model == "gpt-test"
    [shell] = nested.tools
    assert isinstance(shell, ShellTool)
    assert nested.instructions == read_text("prompts", "explorer_instructions.md")
    for needle in ("read-only", "rg", "git log", "Never modify", "line"):
        assert needle in nested.instructions
    assert EXPLORER_MAX_TURNS == 20


async def test_outer_agent_asks_the_explorer(responses_server, model, repo: Path) -> None:
    workspace = Workspace(repo, mode="auto", sandbox_enabled=False)
    outer = Agent(name="Tandem", model=model, tools=[explorer_tool(workspace, model=model)])
    responses_server.enqueue(
        [items.function_call("explore_repository", {"input": "Where is restock?"}, "outer_1")]
    )
    responses_server.enqueue([items.shell_call("ls src", call_id="inner_1")])
    responses_server.enqueue([items.message("restock is defined in src/inventory.py:1")])
    responses_server.enqueue([items.message("The Explorer says: src/inventory.py:1")])

    result = await Runner.run(outer, "Where is restock defined?")

    assert result.interruptions == []
    assert result.final_output == "The Explorer says: src/inventory.py:1"
    first, nested_first, nested_second, outer_second = responses_server.requests
    assert "explore_repository" in _tool_names(first)
    [wire] = [t for t in first.body["tools"] if t.get("name") == "explore_repository"]
    assert wire["type"] == "function" and wire["strict"] is True
    # The nested Explorer: its own instructions, the question as input, only the shell tool.
    assert nested_first.body["instructions"] == read_text("prompts", "explorer_instructions.md")
    assert nested_first.body["input"] == [{"content": "Where is restock?", "role": "user"}]
    assert [t["type"] for t in nested_first.body["tools"]] == ["shell"]
    # `ls src` really ran in the repository through the workspace shell.
    [shell_output] = _items_of(nested_second, "shell_call_output")
    assert shell_output["call_id"] == "inner_1"
    assert "inventory.py" in json.dumps(shell_output["output"])
    # The Explorer's answer is the outer call's output.
    [answer] = _items_of(outer_second, "function_call_output")
    assert answer["call_id"] == "outer_1"
    assert answer["output"] == "restock is defined in src/inventory.py:1"


async def test_explorer_commands_follow_the_approval_policy(
    responses_server, model, repo: Path
) -> None:
    workspace = Workspace(repo, mode="ask", sandbox_enabled=False)
    outer = Agent(name="Tandem", model=model, tools=[explorer_tool(workspace, model=model)])
    responses_server.enqueue(
        [items.function_call("explore_repository", {"input": "Make a file"}, "outer_1")]
    )
    responses_server.enqueue([items.shell_call("touch created.txt", call_id="inner_1")])

    first = await Runner.run(outer, "go")

    [pending] = first.interruptions  # the nested shell call waits on the outer run
    assert (pending.call_id, pending.agent.name) == ("inner_1", "Explorer")
    assert not (repo / "created.txt").exists()
    state = first.to_state()
    state.reject(pending, rejection_message="Read-only, please.")
    responses_server.enqueue([items.message("I may not create files.")])
    responses_server.enqueue([items.message("Done.")])
    final = await Runner.run(outer, state)
    assert final.final_output == "Done."
    assert not (repo / "created.txt").exists()
    [answer] = _items_of(responses_server.requests[-1], "function_call_output")
    assert answer["output"] == "I may not create files."


def _build(settings: Settings, repo: Path) -> Agent[Any]:
    factory = _agent_factory(settings, _CodexRelay())
    return factory(Workspace(repo, mode="auto", sandbox_enabled=False))


def test_factory_adds_hosted_tools_mcp_servers_and_the_explorer(repo: Path) -> None:
    settings = Settings(
        web_search=True,
        mcp_servers=[
            McpServer(label="deepwiki", url="https://mcp.deepwiki.com/mcp"),
            McpServer(
                label="gh",
                url="http://127.0.0.1:7/mcp",
                require_approval="never",
                allowed_tools=["search_issues"],
            ),
        ],
    )
    agent = _build(settings, repo)
    names = [tool.name for tool in agent.tools]
    assert names[:2] == ["shell", "apply_patch"]
    assert "web_search" in names and "explore_repository" in names
    assert "code_interpreter" not in names and "image_generation" not in names
    mcp = [tool for tool in agent.tools if isinstance(tool, HostedMCPTool)]
    assert [m.server_label for m in mcp] == ["deepwiki", "gh"]
    assert all(m.on_approval_request is None for m in mcp)  # approvals interrupt the run
    assert next(t for t in agent.tools if isinstance(t, WebSearchTool)) == WebSearchTool()

    plain = _build(Settings(explorer=False), repo)
    assert [t.name for t in plain.tools if t.name in (*HOSTED_TYPES, "hosted_mcp")] == []
    assert "explore_repository" not in [t.name for t in plain.tools]
    everything = _build(Settings(code_interpreter=True, image_generation=True), repo)
    assert any(isinstance(t, CodeInterpreterTool) for t in everything.tools)
    assert any(isinstance(t, ImageGenerationTool) for t in everything.tools)


async def test_factory_tools_on_the_wire(responses_server, repo: Path) -> None:
    settings = Settings(
        model="gpt-test",
        web_search=True,
        code_interpreter=True,
        image_generation=True,
        mcp_servers=[
            McpServer(label="deepwiki", url="https://mcp.deepwiki.com/mcp"),
            McpServer(
                label="gh",
                url="http://127.0.0.1:7/mcp",
                require_approval="never",
                allowed_tools=["search_issues"],
            ),
        ],
    )
    agent = _build(settings, repo)
    responses_server.enqueue([items.message("hi")])
    config = RunConfig(
        model_provider=OpenAIProvider(
            api_key="test-key", base_url=responses_server.base_url, max_retries=0
        )
    )
    result = await Runner.run(agent, "hello", run_config=config)
    assert result.final_output == "hi"
    [request] = responses_server.requests
    assert request.body["model"] == "gpt-test"
    tools = request.body["tools"]
    assert [t for t in tools if t["type"] in HOSTED_TYPES] == [
        {
            "type": "web_search",
            "filters": None,
            "user_location": None,
            "search_context_size": "medium",
        },
        {"type": "code_interpreter", "container": {"type": "auto"}},
        {"type": "image_generation"},
        {
            "type": "mcp",
            "server_label": "deepwiki",
            "server_url": "https://mcp.deepwiki.com/mcp",
            "require_approval": "always",
        },
        {
            "type": "mcp",
            "server_label": "gh",
            "server_url": "http://127.0.0.1:7/mcp",
            "require_approval": "never",
            "allowed_tools": ["search_issues"],
        },
    ]
    assert "explore_repository" in _tool_names(request)
