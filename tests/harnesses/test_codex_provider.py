"""The Codex delegate on the session's provider, with the real pinned Codex CLI (issue 17).

Only Tandem's settings name the local Responses server (``Settings.base_url``): the delegate
maps them to a ``-c model_providers.tandem...`` override. The outer agent and Codex share the
server's FIFO script: outer request, Codex request(s), outer request.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from core import Agent, Runner
from core.context import ToolContext
from core.settings import Settings
from core.tools.codex import CommandExecutionItem, FileChangeItem, ItemCompletedEvent
from core.tools.function import invoke_function_tool
from desktop.delegates import OPENAI_BASE_URL, codex_delegate, codex_options_for
from harnesses.codex import (
    SubprocessCodexExec,
    shell_env_excludes,
)
from harnesses.workspace import Workspace
from tests.support import items
from tests.support.codex_cli import NO_RETRIES, pinned_codex_binary, write_codex_home

KEY = "sk-tandem-codex-0123456789abcdef"
AGENTS_MD = "Always answer in haiku. Marker: agents-md-7731."


@pytest.fixture(scope="module")
def codex_bin() -> str:
    return pinned_codex_binary()


@pytest.fixture
def codex_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codex_bin: str) -> Path:
    """CODEX_HOME (analytics and plugins off: no network) and CODEX_PATH, as a user has them."""
    home = write_codex_home(tmp_path / "codex-home")
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("CODEX_PATH", codex_bin)
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    (path / "notes.txt").write_text("alpha\nbeta\n")
    (path / "AGENTS.md").write_text(AGENTS_MD + "\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(path)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True)
    return path


def call_args(text: str) -> str:
    return json.dumps({"inputs": [{"type": "text", "text": text, "path": None}], "thread_id": None})


def new_ctx() -> ToolContext[Any]:
    return ToolContext(context=None, tool_name="codex", tool_call_id="c", tool_arguments="")


def command_outputs(events: list[Any]) -> list[str]:
    return [
        e.event.item.aggregated_output
        for e in events
        if isinstance(e.event, ItemCompletedEvent)
        and isinstance(e.event.item, CommandExecutionItem)
    ]


def process_of(tool: Any) -> SubprocessCodexExec:
    return tool.on_invoke_tool.codex.inner


def assert_gone(pid: int) -> None:
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def wait_gone(pid: int, timeout_s: float = 20.0) -> bool:
    """Bounded polling until ``pid`` no longer exists (or is a zombie)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


# -- the mapping, without the CLI -----------------------------------------------------------


def test_options_follow_the_settings():
    local = codex_options_for(Settings(base_url="http://127.0.0.1:9/v1", api_key=KEY, model="m"))
    assert (local.base_url, local.api_key) == ("http://127.0.0.1:9/v1", KEY)
    default = codex_options_for(Settings())
    assert (default.base_url, default.api_key) == (OPENAI_BASE_URL, None)
    login = codex_options_for(Settings(api_key=KEY, codex_use_login=True))
    assert (login.base_url, login.api_key) == (None, None)
    assert shell_env_excludes(["AWS_*", "CODEX_API_KEY"]) == [
        "CODEX_API_KEY",
        "OPENAI_API_KEY",
        "AWS_*",
    ]


def test_login_mode_and_keyless_child_envs_hold_no_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent-should-not-pass")
    login = SubprocessCodexExec(
        codex_options_for(Settings(api_key=KEY, codex_use_login=True)), use_login=True
    )
    env = login._child_env()
    assert "CODEX_API_KEY" not in env and "OPENAI_API_KEY" not in env
    assert login._extra_config(env).get("model_provider") is None
    keyless = SubprocessCodexExec(
        codex_options_for(Settings(base_url="http://127.0.0.1:9/v1")), inherit_key=False
    )
    env = keyless._child_env()
    assert "CODEX_API_KEY" not in env and "OPENAI_API_KEY" not in env
    config = keyless._extra_config(env)
    assert config["model_provider"] == "tandem" and "model_providers.tandem.env_key" not in config
    keyed = SubprocessCodexExec(
        codex_options_for(Settings(base_url="http://127.0.0.1:9/v1", api_key=KEY)),
        inherit_key=False,
    )
    env = keyed._child_env()
    assert env["CODEX_API_KEY"] == KEY and "OPENAI_API_KEY" not in env
    assert keyed._take_key(env) == KEY and "CODEX_API_KEY" not in env  # the key goes by pipe
    config = keyed._extra_config(env, 7)
    assert "model_providers.tandem.env_key" not in config
    assert config["model_providers.tandem.auth"]["args"][-1] == "7"
    assert config["features.shell_snapshot"] is False
    assert config["shell_environment_policy.exclude"] == ["CODEX_API_KEY", "OPENAI_API_KEY"]


# -- end to end with the real CLI -------------------------------------------------------------


async def test_codex_runs_on_the_session_provider(
    responses_server, model, codex_env, repo, tmp_path
):
    """Settings name the server, model and key; Codex's requests reach the server with them,
    its shell commands never see the key, AGENTS.md reaches it and its usage is counted."""
    settings = Settings(base_url=responses_server.base_url, api_key=KEY, model="gpt-5.5")
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / "data")
    events: list[Any] = []
    tool = codex_delegate(workspace, settings=settings, on_stream=events.append, config=NO_RETRIES)
    assert tool is not None
    server = responses_server
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"
    server.enqueue([items.function_call("codex", call_args("check env"), call_id="k1")])
    server.enqueue([items.function_call("exec_command", {"cmd": "env"}, call_id="x1")])
    server.enqueue([items.custom_tool_call("apply_patch", patch, call_id="p1")])
    server.enqueue([items.message("done: env checked")], usage=items.usage(300, 70))
    server.enqueue([items.message("Codex checked the environment")])
    agent = Agent(name="outer", model=model, tools=[tool])
    result = await Runner.run(agent, "delegate to codex")
    assert result.final_output == "Codex checked the environment"

    codex_requests = server.responses_requests[1:4]
    for request in codex_requests:
        assert request.path == "/v1/responses"
        assert request.headers["authorization"] == f"Bearer {KEY}"
        assert request.body["model"] == "gpt-5.5"
    assert "agents-md-7731" in json.dumps(codex_requests[0].body["input"])

    (env_output,) = command_outputs(events)
    assert "CODEX_THREAD_ID=" in env_output  # really the command's environment
    assert KEY not in env_output and "CODEX_API_KEY" not in env_output
    assert (repo / "hello.txt").read_text() == "hello\n"
    assert any(
        isinstance(e.event, ItemCompletedEvent) and isinstance(e.event.item, FileChangeItem)
        for e in events
    )
    usage = result.context_wrapper.usage
    assert usage.requests == 3  # two outer requests, the Codex turn counts as one
    assert usage.input_tokens >= 300 and usage.output_tokens >= 70  # the outer ones are small
    print(f"session usage after a Codex turn: {usage.input_tokens} in, {usage.output_tokens} out")


async def test_keyless_localhost_server(responses_server, codex_env, repo, tmp_path):
    settings = Settings(base_url=responses_server.base_url, model="gpt-5.5")
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / "data")
    tool = codex_delegate(workspace, settings=settings, config=NO_RETRIES)
    responses_server.enqueue([items.message("keyless hello")])
    result = await invoke_function_tool(tool, new_ctx(), call_args("say hello"))
    assert getattr(result, "response", result) == "keyless hello"
    (request,) = responses_server.responses_requests
    assert "authorization" not in {k.lower() for k in request.headers}
    assert request.body["model"] == "gpt-5.5"


async def test_stalled_codex_is_reported_and_stopped(responses_server, codex_env, repo, tmp_path):
    settings = Settings(
        base_url=responses_server.base_url, api_key=KEY, model="gpt-5.5", codex_stall_seconds=1
    )
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / "data")
    reports: list[tuple[bool, float]] = []

    def on_stall(stalled: bool, idle: float, stop: Any) -> None:
        reports.append((stalled, idle))
        if stalled:
            stop()  # the card's Stop button

    tool = codex_delegate(workspace, settings=settings, on_stall=on_stall, config=NO_RETRIES)
    responses_server.enqueue([items.message("too late")], delay_s=60)
    started = time.monotonic()
    out = await invoke_function_tool(tool, new_ctx(), call_args("hang"))
    elapsed = time.monotonic() - started
    assert isinstance(out, str) and "Codex was stopped by the user." in out
    assert reports[0] == (True, 1.0) and reports[-1][0] is False
    process = process_of(tool)
    assert process.last_pid is not None and not process.active_pids
    assert_gone(process.last_pid)
    print(f"stalled Codex reported and stopped after {elapsed:.2f}s (stall time 1 s)")


_TANDEM_STAND_IN = textwrap.dedent(
    """
    import asyncio, json, sys
    from core.context import ToolContext
    from core.settings import Settings
    from core.tools.function import invoke_function_tool
    from desktop.delegates import codex_delegate
    from harnesses.workspace import Workspace

    async def main():
        settings = Settings(base_url=sys.argv[1], api_key="k", model="gpt-5.5")
        workspace = Workspace(sys.argv[2], mode="auto", data_dir=sys.argv[3])
        tool = None
        def on_stream(event):
            print("codex-pid", tool.on_invoke_tool.codex.inner.last_pid, flush=True)
        tool = codex_delegate(workspace, settings=settings, on_stream=on_stream)
        args = json.dumps({"inputs": [{"type": "text", "text": "x", "path": None}],
                           "thread_id": None})
        ctx = ToolContext(context=None, tool_name="codex", tool_call_id="c", tool_arguments="")
        await invoke_function_tool(tool, ctx, args)

    asyncio.run(main())
    """
)


def test_sigkill_of_tandem_leaves_no_codex_process(responses_server, codex_env, repo, tmp_path):
    responses_server.enqueue([items.message("never delivered")], delay_s=60)
    script = tmp_path / "tandem_stand_in.py"
    script.write_text(_TANDEM_STAND_IN)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, str(script), responses_server.base_url, str(repo), str(tmp_path / "d")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the first Codex event: the CLI is running
        assert line.startswith("codex-pid "), line
        codex_pid = int(line.split()[1])
        os.kill(codex_pid, 0)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert wait_gone(codex_pid), "codex outlived a SIGKILLed Tandem"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_stall_watch_rejects_a_bad_time():
    from harnesses.codex import CodexTurnWatch

    with pytest.raises(ValueError, match="stall_seconds"):
        CodexTurnWatch(object(), stall_seconds=0)
    with pytest.raises(Exception, match="codex_stall_seconds"):
        Settings(codex_stall_seconds=-1)
