"""Local MCP servers as Tandem runs them (issue 18 items 3, 5): published servers under the
supervisor, a clean environment, the sandbox, the approval policy, states."""

from __future__ import annotations

import sys

import pytest

from core.mcp.config import LocalMcpServer
from core.policy.modes import ApprovalMode
from core.redaction import redact_text
from harnesses.mcp import LocalMcpServers, needs_approval, static_filter
from tests.support.mcp_procs import FAULT_SERVER, live_servers
from tests.support.mcp_published import FILESYSTEM, GIT, TIME, git_repo, need


@pytest.fixture(autouse=True)
def _no_server_left_behind():
    before = set(live_servers("mcp-server")) | set(live_servers("mcp_server.py"))
    yield
    after = set(live_servers("mcp-server")) | set(live_servers("mcp_server.py"))
    assert after - before == set()


def _fault(**kw) -> LocalMcpServer:
    args = [FAULT_SERVER, *kw.pop("extra", [])]
    return LocalMcpServer(command=sys.executable, args=args, **kw)


async def test_published_git_and_time_servers_start_and_answer(tmp_path):
    need(GIT, TIME)
    repo = git_repo(tmp_path / "repo", "add alpha")
    servers = LocalMcpServers(
        {
            "git": LocalMcpServer(command=str(GIT), args=["--repository", str(repo)]),
            "time": LocalMcpServer(command=str(TIME), enabled_tools=["get_current_time"]),
            "off": LocalMcpServer(command="nowhere", enabled=False),
        },
        workspace=repo,
        mode=lambda: ApprovalMode.ASK,
    )
    try:
        lines = [s.line() for s in await servers.start()]
        assert lines == ["git: ready, 12 tools", "time: ready, 1 tool", "off: disabled"]
        log = await servers.servers["git"].call_tool("git_log", {"repo_path": str(repo)})
        assert "add alpha" in log.content[0].text
        assert servers.describe_call("mcp_git__git_log", '{"repo_path": "."}') == (
            "git",
            "git_log",
            '{\n  "repo_path": "."\n}',
        )
    finally:
        await servers.aclose()


async def test_filesystem_server_is_read_only_in_the_sandbox(tmp_path):
    need(FILESYSTEM)
    ws = tmp_path / "ws"
    ws.mkdir()
    servers = LocalMcpServers(
        {
            "boxed": LocalMcpServer(command=str(FILESYSTEM), args=[str(ws)], sandbox=True),
            "open": LocalMcpServer(command=str(FILESYSTEM), args=[str(ws)]),
        },
        workspace=ws,
        mode=lambda: ApprovalMode.ASK,
    )
    try:
        await servers.start()
        boxed = await servers.servers["boxed"].call_tool(
            "write_file", {"path": str(ws / "b.txt"), "content": "x"}
        )
        assert boxed.is_error and "read-only file system" in boxed.content[0].text
        assert not (ws / "b.txt").exists()
        done = await servers.servers["open"].call_tool(
            "write_file", {"path": str(ws / "c.txt"), "content": "y"}
        )
        assert not done.is_error and (ws / "c.txt").read_text() == "y"
    finally:
        await servers.aclose()


async def test_clean_environment_only_named_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("TANDEM_MCP_TOKEN", "tok-123456789")
    monkeypatch.setenv("TANDEM_OTHER_SECRET", "other-987654321")
    servers = LocalMcpServers(
        {"f": _fault(env={"GIVEN": "1"}, env_vars=["TANDEM_MCP_TOKEN"])},
        workspace=tmp_path,
        mode=lambda: ApprovalMode.ASK,
    )
    try:
        await servers.start()
        f = servers.servers["f"]
        named = (await f.call_tool("env", {"name": "TANDEM_MCP_TOKEN"})).content[0].text
        other = (await f.call_tool("env", {"name": "TANDEM_OTHER_SECRET"})).content[0].text
        given = (await f.call_tool("env", {"name": "GIVEN"})).content[0].text
    finally:
        await servers.aclose()
    assert (named, other, given) == ("tok-123456789", "<unset>", "1")
    assert "tok-123456789" not in redact_text("the token tok-123456789 leaked")


async def test_missing_variables_and_start_failures_are_states(tmp_path, monkeypatch):
    monkeypatch.delenv("NO_SUCH_TOKEN", raising=False)
    servers = LocalMcpServers(
        {
            "web": LocalMcpServer(
                url="http://127.0.0.1:9/mcp", bearer_token_env_var="NO_SUCH_TOKEN"
            ),
            "silent": _fault(extra=["--mode", "never-start"], startup_timeout_sec=0.5),
            "quits": _fault(extra=["--mode", "exit-at-start"]),
            "ok": _fault(),
        },
        workspace=tmp_path,
        mode=lambda: ApprovalMode.ASK,
    )
    seen: list[str] = []
    servers.listeners.append(lambda status: seen.append(f"{status.name}:{status.state}"))
    try:
        statuses = {s.name: s for s in await servers.start()}
        assert [s.name for s in servers.ready()] == ["ok"]
    finally:
        await servers.aclose()
    assert statuses["web"].state == "failed" and "NO_SUCH_TOKEN" in (statuses["web"].error or "")
    assert "no answer within 0.5 s" in (statuses["silent"].error or "")
    assert "refusing to start" in (statuses["quits"].error or "")
    assert statuses["ok"].line() == "ok: ready, 8 tools"
    assert "ok:starting" in seen and "ok:ready" in seen


def _tool(name: str, read_only: bool | None = None):
    from mcp_types import Tool, ToolAnnotations

    annotations = ToolAnnotations(readOnlyHint=read_only) if read_only is not None else None
    return Tool(name=name, inputSchema={"type": "object"}, annotations=annotations)


@pytest.mark.parametrize(
    ("mode", "rule", "read_only", "asks"),
    [
        (ApprovalMode.ASK, None, False, True),
        (ApprovalMode.ASK, None, True, False),
        (ApprovalMode.AUTO, None, True, False),
        (ApprovalMode.AUTO, None, False, True),
        (ApprovalMode.READ_ONLY, None, True, True),
        (ApprovalMode.FULL, None, False, False),
        (ApprovalMode.ASK, "allow", False, False),
        (ApprovalMode.READ_ONLY, "allow", False, False),
        (ApprovalMode.ASK, "ask", True, False),
    ],
)
def test_approval_policy(mode, rule, read_only, asks):
    config = LocalMcpServer(command="x", tools={"t": rule} if rule else {})
    assert needs_approval(config, _tool("t", read_only), mode) is asks


def test_deny_hides_tools():
    assert static_filter(LocalMcpServer(command="x")) is None
    config = LocalMcpServer(
        command="x", enabled_tools=["a", "b", "c"], disabled_tools=["c"], tools={"b": "deny"}
    )
    assert static_filter(config) == {
        "allowed_tool_names": ["a", "b", "c"],
        "blocked_tool_names": ["c", "b"],
    }
    only = LocalMcpServer(command="x", approval="deny", tools={"a": "allow", "b": "deny"})
    assert static_filter(only) == {"allowed_tool_names": ["a"], "blocked_tool_names": ["b"]}
