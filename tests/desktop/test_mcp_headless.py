"""``tandem run`` with a local MCP server from a fresh HOME's settings (issue 18, Done means 2)."""

from __future__ import annotations

import io
import json
import sys

from core.mcp.config import LocalMcpServer
from core.settings import Settings, save_settings
from desktop.headless import HeadlessOptions, run_headless
from tests.support import items
from tests.support.mcp_procs import FAULT_SERVER, live_servers
from tests.support.mcp_published import GIT, git_repo, need


def _outputs(body):
    return [i for i in body["input"] if i.get("type") == "function_call_output"]


async def test_tandem_run_calls_mcp_server_git_and_the_log_reaches_the_model(
    tmp_path, responses_server, monkeypatch
):
    need(GIT)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    repo = git_repo(tmp_path / "repo", "teach the parser about tabs")
    save_settings(
        Settings(
            local_mcp_servers={
                "git": LocalMcpServer(command=str(GIT), args=["--repository", str(repo)])
            }
        )
    )
    responses_server.enqueue(
        [items.function_call("mcp_git__git_log", {"repo_path": str(repo)}, call_id="c1")]
    )
    responses_server.enqueue([items.message("the last commit teaches the parser about tabs")])
    out = io.StringIO()
    options = HeadlessOptions(
        repo, "what changed?", model="m", base_url=responses_server.base_url, interactive=False
    )
    assert await run_headless(options, out) == 0
    text = out.getvalue()
    tools = [
        t["name"] for t in responses_server.requests[0].body["tools"] if t.get("type") == "function"
    ]
    assert "mcp_git__git_log" in tools and "mcp_git__git_commit" in tools
    carried = _outputs(responses_server.requests[1].body)
    assert carried[0]["call_id"] == "c1"
    assert "teach the parser about tabs" in carried[0]["output"][0]["text"]
    assert "[mcp] git: ready, 12 tools" in text
    assert f'[mcp] git > git_log {{"repo_path": "{repo}"}}' in text
    assert "  | Commit history:" in text and "(git_log: " in text
    assert "[approval]" not in text  # git_log declares readOnlyHint: allowed in ask mode
    assert not [p for p in live_servers("mcp-server-git")]


async def test_tandem_run_asks_before_a_write_tool_and_a_crash_is_a_tool_error(
    tmp_path, responses_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    repo = tmp_path / "repo"
    repo.mkdir()
    fault = LocalMcpServer(command=sys.executable, args=[FAULT_SERVER])
    save_settings(
        Settings(
            local_mcp_servers={"fault": fault, "off": fault.model_copy(update={"enabled": False})}
        )
    )
    responses_server.enqueue(
        [items.function_call("mcp_fault__add", {"a": 1, "b": 2}, call_id="c1")]
    )
    responses_server.enqueue([items.function_call("mcp_fault__crash", {}, call_id="c2")])
    responses_server.enqueue([items.message("done")])
    out = io.StringIO()
    options = HeadlessOptions(
        repo, "go", mode="full", model="m", base_url=responses_server.base_url, interactive=False
    )
    assert await run_headless(options, out) == 0
    text = out.getvalue()
    assert "[mcp] off: disabled" in text and "[mcp] fault: ready, 8 tools" in text
    crash = _outputs(responses_server.requests[2].body)[-1]["output"]
    assert "MCP server 'fault' stopped" in str(crash)
    assert "(crash failed: " in text

    responses_server.enqueue(
        [items.function_call("mcp_fault__add", {"a": 1, "b": 2}, call_id="c3")]
    )
    responses_server.enqueue([items.message("not allowed")])
    out = io.StringIO()
    options = HeadlessOptions(
        repo, "go", mode="ask", model="m", base_url=responses_server.base_url, interactive=False
    )
    assert await run_headless(options, out) == 3  # issue 16: rejected for lack of a terminal
    text = out.getvalue()
    assert '[approval] MCP fault > add\n  {\n    "a": 1,\n    "b": 2\n  }' in text
    assert "rejected (no terminal)" in text
    assert not live_servers("mcp_server.py")


async def test_project_servers_are_off_until_trusted_and_the_answer_is_remembered(
    tmp_path, responses_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    repo = tmp_path / "repo"
    (repo / ".tandem").mkdir(parents=True)
    project_file = repo / ".tandem" / "mcp.toml"
    project_file.write_text(
        f"[mcp_servers.proj]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(FAULT_SERVER)}]\n"
    )

    async def run(interactive: bool, answers: list[str]) -> tuple[str, list[str]]:
        responses_server.enqueue([items.message("ok")])
        out = io.StringIO()
        replies = iter(answers)
        options = HeadlessOptions(
            repo, "go", model="m", base_url=responses_server.base_url, interactive=interactive
        )
        assert await run_headless(options, out, ask=lambda _p: next(replies)) == 0
        tools = [t.get("name") for t in responses_server.requests[-1].body["tools"]]
        return out.getvalue(), tools

    text, tools = await run(False, [])
    assert "servers off (not trusted): proj" in text and "mcp_proj__echo" not in tools
    text, tools = await run(True, ["y"])
    assert "adds MCP servers: proj" in text and "mcp_proj__echo" in tools
    text, tools = await run(False, [])  # remembered for this repository
    assert "[mcp] proj: ready, 8 tools" in text and "mcp_proj__echo" in tools
    project_file.write_text(project_file.read_text() + 'env = { EXTRA = "1" }\n')
    text, tools = await run(False, [])  # the file changed: asked again, off meanwhile
    assert "servers off (not trusted)" in text and "mcp_proj__echo" not in tools
