"""``tandem run`` with a scripted session: approvals on the terminal, or refused without one."""

from __future__ import annotations

import io
import json
from pathlib import Path

from desktop.headless import HeadlessOptions, run_headless


def _session(tmp_path: Path) -> Path:
    turns = [
        {"output": [{"type": "shell_call", "call_id": "c1", "action": {"commands": ["ls"]}}]},
        {
            "output": [
                {"type": "shell_call", "call_id": "c2", "action": {"commands": ["rm -rf data"]}}
            ]
        },
        {"output": [{"type": "message", "content": [{"type": "output_text", "text": "all done"}]}]},
    ]
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"turns": turns}))
    return path


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "data" / "keep.txt").write_text("precious\n")
    return repo


async def test_non_interactive_run_rejects_destructive_command(tmp_path):
    repo = _repo(tmp_path)
    out = io.StringIO()
    options = HeadlessOptions(
        repo, "tidy", mode="auto", model=f"scripted:{_session(tmp_path)}", interactive=False
    )
    assert await run_headless(options, out) == 3  # issue 16: stopped on a rejection
    text = out.getvalue()
    assert "$ ls" in text and "data" in text  # allowed command ran
    assert "[approval] shell" in text and "destructive" in text and "rejected (no terminal)" in text
    assert (repo / "data" / "keep.txt").read_text() == "precious\n"
    assert "all done" in text


async def test_interactive_approval_runs_the_command(tmp_path):
    repo = _repo(tmp_path)
    answers = iter(["y"])
    out = io.StringIO()
    options = HeadlessOptions(
        repo, "tidy", mode="auto", model=f"scripted:{_session(tmp_path)}", interactive=True
    )
    assert await run_headless(options, out, ask=lambda _prompt: next(answers)) == 0
    assert not (repo / "data").exists()


async def test_settings_add_hosted_tools_and_the_explorer(tmp_path, responses_server, monkeypatch):
    from core.settings import McpServer, Settings, save_settings
    from tests.support import items

    save_settings(
        Settings(
            web_search=True,
            mcp_servers=[McpServer(label="wiki", url="https://wiki.example.invalid/mcp")],
        )
    )
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    repo = _repo(tmp_path)
    web = items.web_search_call("qt 6.11 release", id="ws_1")
    web["action"]["sources"] = [{"type": "url", "url": "https://www.qt.io/blog/qt-6.11"}]
    responses_server.enqueue([web, items.function_call("explore_repository", {"input": "what is in data?"}, "c_x")])
    responses_server.enqueue([items.shell_call(["ls data"], call_id="c_ls")])  # the Explorer
    responses_server.enqueue([items.message("data holds keep.txt")])  # the Explorer's answer
    responses_server.enqueue([items.mcp_approval_request("wiki", "read_page", {"page": "x"}, id="mcpr_1")])
    responses_server.enqueue([items.message("finished")])
    out = io.StringIO()
    options = HeadlessOptions(
        repo, "look", mode="auto", model="m", base_url=responses_server.base_url, interactive=False
    )
    assert await run_headless(options, out) == 3  # the MCP call was rejected (no terminal)
    text = out.getvalue()
    tools = responses_server.requests[0].body["tools"]
    assert {"type": "web_search", "filters": None, "user_location": None, "search_context_size": "medium"} in tools
    assert {"type": "mcp", "server_label": "wiki", "server_url": "https://wiki.example.invalid/mcp", "require_approval": "always"} in tools
    assert "explore_repository" in [t.get("name") for t in tools]
    assert "[web_search] qt 6.11 release -> 1 source from qt.io" in text
    assert "   | qt.io: https://www.qt.io/blog/qt-6.11" in text
    assert "Explorer │ $ ls data" in text and "Explorer │ | keep.txt" in text
    assert "[approval] read_page" in text and "rejected (no terminal)" in text
    assert "the MCP server 'wiki' asks before each tool call" in text
    rejected = [i for i in responses_server.requests[-1].body["input"] if i.get("type") == "mcp_approval_response"]
    assert rejected and rejected[0]["approve"] is False
    *_, answer, summary = text.rstrip().splitlines()
    assert answer == "finished" and summary.startswith("tandem run: stopped (exit 3")


async def test_unreadable_settings_fall_back_to_defaults(tmp_path, monkeypatch):
    from core.settings import settings_dir

    settings_dir().mkdir(parents=True, exist_ok=True)
    (settings_dir() / "settings.toml").write_text("web_search = 'maybe'\n")
    out = io.StringIO()
    options = HeadlessOptions(
        _repo(tmp_path), "tidy", mode="auto", model=f"scripted:{_session(tmp_path)}", interactive=False
    )
    assert await run_headless(options, out) == 3  # rm -rf rejected without a terminal
    assert "settings not loaded" in out.getvalue() and "web_search" in out.getvalue()


async def test_header_says_what_the_sandbox_hides(tmp_path, monkeypatch):
    from harnesses.shell import sandbox_available

    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    out = io.StringIO()
    options = HeadlessOptions(
        _repo(tmp_path), "tidy", mode="auto", model=f"scripted:{_session(tmp_path)}"
    )
    options.interactive = False
    assert await run_headless(options, out) == 3
    header = next(line for line in out.getvalue().splitlines() if line.startswith("sandbox:"))
    if sandbox_available():
        assert header.startswith("sandbox: workspace-write, network off, hiding ")
        assert "~/.ssh" in header
    else:
        assert header.startswith("sandbox: unavailable")
