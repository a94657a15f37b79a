"""The real pinned Codex CLI (``scripts/install_codex.sh``) behind ``codex_tool``, fully offline.

Every Codex turn talks to the local Responses server on 127.0.0.1 (custom provider from
``base_url``; plugins and analytics off), in a real Git repository under ``tmp_path``. The
outer agent and Codex share the server's FIFO script: outer request, Codex request(s), outer.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

import core
from core import Agent, Runner
from core.context import ToolContext
from core.tools.codex import (
    STREAM_LIMIT_ENV,
    CodexExecArgs,
    CodexOptions,
    CodexToolResult,
    CodexToolStreamEvent,
    CommandExecutionItem,
    FileChangeItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ThreadOptions,
    TurnOptions,
    TurnStartedEvent,
    codex_tool,
)
from core.tools.function import invoke_function_tool
from harnesses.codex import (
    CodexNotFoundError,
    SubprocessCodexExec,
    build_argv,
    build_child_env,
    find_codex_binary,
    needs_private_tmpdir,
    resolve_codex_binary,
)
from tests.support import items
from tests.support.codex_cli import NO_RETRIES, pinned_codex_binary, write_codex_home
from tests.support.seed import core_source, run_block

CONFIG_TOML = """\
analytics.enabled = false
[features]
plugins = false
"""


@pytest.fixture(scope="module")
def codex_bin() -> str:
    return pinned_codex_binary()


@pytest.fixture
def codex_home(tmp_path: Path) -> Path:
    """A fresh CODEX_HOME under the temp dir (so the private-TMPDIR path is exercised)."""
    return write_codex_home(tmp_path / "codex-home", CONFIG_TOML)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    (path / "notes.txt").write_text("alpha\nbeta\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(path)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True)
    return path


@pytest.fixture
def make_exec(codex_bin, codex_home, responses_server, tmp_path):
    """``make_exec(**codex_options)`` → a ``SubprocessCodexExec`` on the local server."""

    def make(**overrides: Any) -> SubprocessCodexExec:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path),
            "CODEX_HOME": str(codex_home),
            "LANG": "C.UTF-8",
        }
        options: dict[str, Any] = {
            "codex_path_override": codex_bin,
            "base_url": responses_server.base_url,
            "api_key": "codex-test-key",
            "env": env,
            "config": dict(NO_RETRIES),
        }
        options.update(overrides)
        return SubprocessCodexExec(CodexOptions(**options), terminate_grace_seconds=1.0)

    return make


def make_tool(codex_exec: SubprocessCodexExec, repo: Path, **kwargs: Any):
    kwargs.setdefault("default_turn_options", TurnOptions(idle_timeout_seconds=30))
    return codex_tool(
        codex=codex_exec,
        sandbox_mode="workspace-write",
        working_directory=str(repo),
        default_thread_options=ThreadOptions(
            model="gpt-5.5", web_search_mode="disabled", approval_policy="never"
        ),
        **kwargs,
    )


def args_json(text: str, thread_id: str | None = None) -> str:
    return json.dumps(
        {"inputs": [{"type": "text", "text": text, "path": None}], "thread_id": thread_id}
    )


def new_ctx(context: Any = None) -> ToolContext[Any]:
    return ToolContext(context=context, tool_name="codex", tool_call_id="c", tool_arguments="")


def user_texts(request) -> list[str]:
    """Texts of the user messages of a recorded Codex request."""
    texts = []
    for item in request.body["input"]:
        if item.get("type") == "message" and item.get("role") == "user":
            texts += [c.get("text", "") for c in item.get("content", [])]
    return texts


def assert_gone(pid: int) -> None:
    """The process and its whole group no longer exist."""
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)


# -- pure parts of the harness ---------------------------------------------------------------


def test_argv_in_spec_order():
    opts = ThreadOptions(
        model="m",
        sandbox_mode="workspace-write",
        working_directory="/w",
        additional_directories=["/a", "/b"],
        skip_git_repo_check=True,
        model_reasoning_effort="low",
        network_access_enabled=True,
        web_search_enabled=False,
        approval_policy="never",
    )
    args = CodexExecArgs(input="p", images=["/i.png"], thread_id="th", thread_options=opts)
    assert build_argv(args, output_schema_path="/s.json", extra_config={"x.y": 1}) == [
        "exec", "--experimental-json", "--model", "m", "--sandbox", "workspace-write",
        "--cd", "/w", "--add-dir", "/a", "--add-dir", "/b", "--skip-git-repo-check",
        "--output-schema", "/s.json",
        "--config", 'model_reasoning_effort="low"',
        "--config", "sandbox_workspace_write.network_access=true",
        "--config", 'web_search="disabled"',
        "--config", 'approval_policy="never"',
        "--config", "x.y=1",
        "resume", "--image", "/i.png", "th", "-",
    ]  # fmt: skip
    assert build_argv(CodexExecArgs(input="p")) == ["exec", "--experimental-json", "-"]


def test_child_env_replacement_key_and_base_url():
    parent = {"PATH": "/bin", "OPENAI_API_KEY": "parent-key", "SECRET": "s"}
    inherited = build_child_env(CodexOptions(), parent)
    assert inherited["SECRET"] == "s" and inherited["CODEX_API_KEY"] == "parent-key"
    assert inherited["CODEX_INTERNAL_ORIGINATOR_OVERRIDE"] == "codex_sdk_ts"
    replaced = build_child_env(CodexOptions(env={"A": "1", "CODEX_API_KEY": "env-key"}), parent)
    assert "SECRET" not in replaced and "PATH" not in replaced
    assert replaced["CODEX_API_KEY"] == "env-key"
    explicit = build_child_env(CodexOptions(api_key="k", base_url="http://127.0.0.1:9/v1"), {})
    assert explicit["CODEX_API_KEY"] == "k" and explicit["OPENAI_BASE_URL"].endswith(":9/v1")
    assert "CODEX_API_KEY" not in build_child_env(CodexOptions(env={}), {})


def test_private_tmpdir_rule(tmp_path):
    assert needs_private_tmpdir({"CODEX_HOME": "/tmp/x/home"})
    assert needs_private_tmpdir({"CODEX_HOME": str(tmp_path / "h"), "TMPDIR": str(tmp_path)})
    assert not needs_private_tmpdir({"CODEX_HOME": str(tmp_path / "h"), "TMPDIR": "/nonexistent"})


def test_binary_resolution_order(tmp_path, codex_bin):
    fake = tmp_path / "bin" / "codex"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    env = {"PATH": str(fake.parent), "CODEX_PATH": "/from/env"}
    assert find_codex_binary("/override", env) == "/override"
    assert find_codex_binary(None, env) == "/from/env"
    assert find_codex_binary(None, {"PATH": str(fake.parent)}) == str(fake)
    empty = tmp_path / "empty"
    assert find_codex_binary(None, {"PATH": ""}) == codex_bin
    assert find_codex_binary(None, {"PATH": ""}, install_dir=empty) is None
    with pytest.raises(CodexNotFoundError, match=r"install_codex\.sh"):
        resolve_codex_binary(str(tmp_path / "missing"), {})


# -- end to end with the real CLI -------------------------------------------------------------


async def test_text_answer_reaches_outer_agent(responses_server, model, make_exec, repo):
    started = time.perf_counter()
    tool = make_tool(make_exec(), repo)
    agent = Agent(name="outer", model=model, tools=[tool])
    server = responses_server
    server.enqueue([items.function_call("codex", args_json("Say hello"), call_id="k1")])
    server.enqueue([items.message("hello from codex")], usage=items.usage(30, 7))
    server.enqueue([items.message("Codex said hello")])
    result = await Runner.run(agent, "delegate")
    assert result.final_output == "Codex said hello"
    codex_request = server.responses_requests[1]
    assert codex_request.path == "/v1/responses"
    assert codex_request.headers["authorization"] == "Bearer codex-test-key"
    assert codex_request.body["model"] == "gpt-5.5" and "Say hello" in user_texts(codex_request)
    output = [
        i
        for i in server.responses_requests[2].body["input"]
        if i.get("type") == "function_call_output"
    ]
    payload = json.loads(output[0]["output"])
    assert payload["response"] == "hello from codex" and payload["thread_id"]
    assert payload["usage"] == {"input_tokens": 30, "cached_input_tokens": 0, "output_tokens": 7}
    usage = result.context_wrapper.usage
    assert usage.requests == 3 and usage.input_tokens >= 30
    print(f"codex text turn through the runner: {time.perf_counter() - started:.2f}s")


async def test_command_execution_events(responses_server, make_exec, repo):
    server = responses_server
    server.enqueue(
        [items.function_call("exec_command", {"cmd": "echo out-$((40+2))"}, call_id="x1")]
    )
    server.enqueue([items.message("ran it")])
    events: list[CodexToolStreamEvent] = []
    tool = make_tool(make_exec(), repo, on_stream=events.append)
    result = await invoke_function_tool(tool, new_ctx(), args_json("run a command"))
    assert isinstance(result, CodexToolResult) and result.response == "ran it"
    started = [e.event for e in events if isinstance(e.event, ItemStartedEvent)]
    done = [
        e.event.item
        for e in events
        if isinstance(e.event, ItemCompletedEvent)
        and isinstance(e.event.item, CommandExecutionItem)
    ]
    assert started and isinstance(started[0].item, CommandExecutionItem)
    assert len(done) == 1 and "out-42" in done[0].aggregated_output
    assert done[0].status == "completed" and done[0].exit_code == 0
    replay = [
        i
        for i in server.responses_requests[1].body["input"]
        if i.get("type") == "function_call_output"
    ]
    assert replay and replay[0]["call_id"] == "x1" and "out-42" in json.dumps(replay[0])


async def test_apply_patch_changes_the_file(responses_server, make_exec, repo):
    patch = (
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n alpha\n-beta\n+gamma\n*** End Patch\n"
    )
    server = responses_server
    server.enqueue([items.custom_tool_call("apply_patch", patch, call_id="p1")])
    server.enqueue([items.message("patched")])
    events: list[Any] = []
    tool = make_tool(make_exec(), repo, on_stream=lambda e: events.append(e.event))
    result = await invoke_function_tool(tool, new_ctx(), args_json("edit notes"))
    assert result.response == "patched"
    assert (repo / "notes.txt").read_text() == "alpha\ngamma\n"
    changes = [
        e.item
        for e in events
        if isinstance(e, ItemCompletedEvent) and isinstance(e.item, FileChangeItem)
    ]
    assert changes and changes[0].status == "completed"
    assert [(Path(c.path).name, c.kind) for c in changes[0].changes] == [("notes.txt", "update")]


async def test_persist_session_resumes_the_thread(responses_server, make_exec, repo):
    server = responses_server
    server.enqueue([items.message("first answer")])
    server.enqueue([items.message("second answer")])
    tool = make_tool(make_exec(), repo, persist_session=True)
    ctx = new_ctx()
    first = await invoke_function_tool(tool, ctx, args_json("question one"))
    second = await invoke_function_tool(tool, ctx, args_json("question two"))
    assert first.thread_id and second.thread_id == first.thread_id
    replayed = json.dumps(server.responses_requests[1].body["input"])
    assert "question one" in replayed and "first answer" in replayed
    assert "question two" in user_texts(server.responses_requests[1])
    assert ctx.usage.requests == 2


async def test_run_context_thread_shared_across_runs(responses_server, model, make_exec, repo):
    tool = make_tool(make_exec(), repo, use_run_context_thread_id=True)
    agent = Agent(name="outer", model=model, tools=[tool])
    context: dict[str, Any] = {}
    server = responses_server
    call = {"inputs": [{"type": "text", "text": "remember 7", "path": None}]}
    server.enqueue([items.function_call("codex", call, call_id="r1")])
    server.enqueue([items.message("noted")])
    server.enqueue([items.message("run one done")])
    await Runner.run(agent, "one", context=context)
    thread_id = context["codex_thread_id"]
    call2 = {"inputs": [{"type": "text", "text": "what number?", "path": None}]}
    server.enqueue([items.function_call("codex", call2, call_id="r2")])
    server.enqueue([items.message("7")])
    server.enqueue([items.message("run two done")])
    await Runner.run(agent, "two", context=context)
    assert context["codex_thread_id"] == thread_id
    second_codex = server.responses_requests[4]
    assert "remember 7" in json.dumps(second_codex.body["input"])
    assert second_codex.headers["thread-id"] == thread_id


async def test_output_schema_reaches_text_format(
    responses_server, make_exec, repo, tmp_path, monkeypatch
):
    import tempfile

    schema_root = tmp_path / "schema-tmp"
    schema_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(schema_root))
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    responses_server.enqueue([items.message('{"answer": "42"}')])
    tool = make_tool(make_exec(), repo, output_schema=schema)
    result = await invoke_function_tool(tool, new_ctx(), args_json("answer in JSON"))
    assert json.loads(result.response) == {"answer": "42"}
    fmt = responses_server.responses_requests[0].body["text"]["format"]
    assert fmt["type"] == "json_schema"
    assert fmt["schema"] == {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "additionalProperties": False,
        "required": ["answer"],
    }
    assert list(schema_root.iterdir()) == []  # the schema file's folder was removed


# -- failure paths: a clear tool error, the run goes on ---------------------------------------


async def test_missing_binary_is_a_tool_error_and_run_continues(
    responses_server, model, make_exec, repo, tmp_path
):
    tool = make_tool(make_exec(codex_path_override=str(tmp_path / "no-codex")), repo)
    agent = Agent(name="outer", model=model, tools=[tool])
    responses_server.enqueue([items.function_call("codex", args_json("x"), call_id="m1")])
    responses_server.enqueue([items.message("Codex is unavailable")])
    result = await Runner.run(agent, "go")
    assert result.final_output == "Codex is unavailable"
    out = [
        i
        for i in responses_server.responses_requests[1].body["input"]
        if i.get("type") == "function_call_output"
    ]
    assert "Codex CLI at" in out[0]["output"] and "install_codex.sh" in out[0]["output"]


async def test_http_401_is_a_tool_error_and_run_continues(responses_server, model, make_exec, repo):
    tool = make_tool(make_exec(), repo)
    agent = Agent(name="outer", model=model, tools=[tool])
    server = responses_server
    server.enqueue([items.function_call("codex", args_json("x"), call_id="u1")])
    server.enqueue_error(status=401, message="invalid api key", code="invalid_api_key")
    server.enqueue([items.message("auth failed, sorry")])
    result = await Runner.run(agent, "go")
    assert result.final_output == "auth failed, sorry"
    out = [
        i
        for i in server.responses_requests[2].body["input"]
        if i.get("type") == "function_call_output"
    ]
    text = out[0]["output"]
    assert text.startswith("An error occurred while running the tool.")
    assert "Codex turn failed" in text and "401" in text


async def test_stream_cut_mid_response_is_a_tool_error(responses_server, make_exec, repo):
    responses_server.enqueue([items.message("partial answer")], cut_after_events=4)
    tool = make_tool(make_exec(), repo)
    out = await invoke_function_tool(tool, new_ctx(), args_json("x"))
    assert isinstance(out, str) and "Codex turn failed" in out


async def test_idle_timeout_kills_the_process(responses_server, make_exec, repo):
    responses_server.enqueue([items.message("too late")], delay_s=30)
    codex_exec = make_exec()
    tool = make_tool(codex_exec, repo, default_turn_options=TurnOptions(idle_timeout_seconds=2))
    started = time.perf_counter()
    out = await invoke_function_tool(tool, new_ctx(), args_json("x"))
    assert out.endswith("Error: Codex stream idle for 2 seconds.")
    assert time.perf_counter() - started < 15  # generous: 2 s idle plus start-up
    assert codex_exec.last_pid is not None and not codex_exec.active_pids
    assert_gone(codex_exec.last_pid)


async def test_signal_terminates_the_turn(responses_server, make_exec, repo):
    responses_server.enqueue([items.message("too late")], delay_s=30)
    signal = asyncio.Event()

    def on_stream(event: CodexToolStreamEvent) -> None:
        if isinstance(event.event, TurnStartedEvent):
            signal.set()

    codex_exec = make_exec()
    tool = make_tool(
        codex_exec, repo, on_stream=on_stream, default_turn_options=TurnOptions(signal=signal)
    )
    out = await invoke_function_tool(tool, new_ctx(), args_json("x"))
    assert "Codex turn cancelled by signal." in out
    assert_gone(codex_exec.last_pid)


async def test_cancelled_run_leaves_no_codex_process(responses_server, model, make_exec, repo):
    server = responses_server
    server.enqueue([items.function_call("codex", args_json("x"), call_id="c1")])
    server.enqueue([items.message("never delivered")], delay_s=30)
    turn_started = asyncio.Event()

    def on_stream(event: CodexToolStreamEvent) -> None:
        if isinstance(event.event, TurnStartedEvent):
            turn_started.set()

    codex_exec = make_exec()
    agent = Agent(
        name="outer", model=model, tools=[make_tool(codex_exec, repo, on_stream=on_stream)]
    )
    result = Runner.run_streamed(agent, "go")

    async def consume() -> None:
        async for _ in result.stream_events():
            pass

    consumer = asyncio.ensure_future(consume())
    await asyncio.wait_for(turn_started.wait(), 30)
    pid = codex_exec.last_pid
    assert pid is not None and pid in codex_exec.active_pids
    result.cancel()
    await asyncio.wait_for(consumer, 30)
    assert not codex_exec.active_pids
    assert_gone(pid)


async def test_stream_limit_option_and_env(responses_server, make_exec, repo, monkeypatch):
    long_text = "x" * 100_000  # the agent_message line is longer than 65,536 bytes
    responses_server.enqueue([items.message(long_text)])
    small = make_tool(make_exec(codex_subprocess_stream_limit_bytes=65_536), repo)
    out = await invoke_function_tool(small, new_ctx(), args_json("x"))
    assert "exceeded the stream limit of 65536 bytes" in out

    monkeypatch.setenv(STREAM_LIMIT_ENV, "65536")
    responses_server.enqueue([items.message(long_text)])
    out = await invoke_function_tool(make_tool(make_exec(), repo), new_ctx(), args_json("x"))
    assert "exceeded the stream limit of 65536 bytes" in out

    monkeypatch.setenv(STREAM_LIMIT_ENV, "262144")
    responses_server.enqueue([items.message(long_text)])
    ok = await invoke_function_tool(make_tool(make_exec(), repo), new_ctx(), args_json("x"))
    assert isinstance(ok, CodexToolResult) and ok.response == long_text

    monkeypatch.setenv(STREAM_LIMIT_ENV, "1024")
    out = await invoke_function_tool(make_tool(make_exec(), repo), new_ctx(), args_json("x"))
    assert "between 65536 and 67108864" in out


async def test_env_option_replaces_inherited_environment(
    responses_server, make_exec, repo, monkeypatch
):
    monkeypatch.setenv("TANDEM_PARENT_ONLY", "leaked")
    cmd = "echo parent=${TANDEM_PARENT_ONLY:-none} tmp=$TMPDIR"
    responses_server.enqueue([items.function_call("exec_command", {"cmd": cmd}, call_id="e1")])
    responses_server.enqueue([items.message("ok")])
    outputs: list[str] = []

    def on_stream(event: CodexToolStreamEvent) -> None:
        item = getattr(event.event, "item", None)
        if isinstance(event.event, ItemCompletedEvent) and isinstance(item, CommandExecutionItem):
            outputs.append(item.aggregated_output)

    codex_exec = make_exec()
    await invoke_function_tool(
        make_tool(codex_exec, repo, on_stream=on_stream), new_ctx(), args_json("x")
    )
    assert outputs and "parent=none" in outputs[0]
    home = codex_exec.options.env["CODEX_HOME"]  # type: ignore[index]
    assert f"tmp={home}/.tmp-" in outputs[0]  # the private TMPDIR inside CODEX_HOME
    assert not [p for p in Path(home).iterdir() if p.name.startswith(".tmp-")]  # removed after


# -- the seed's Codex example (block 16) ------------------------------------------------------


async def test_seed_block_16_runs_with_only_imports_changed(
    responses_server, codex_bin, codex_home, monkeypatch
):
    for name in ("ThreadOptions", "TurnOptions", "codex_tool"):  # until core/__init__ exports them
        if not hasattr(core, name):
            monkeypatch.setattr(core, name, globals()[name], raising=False)
    assert "agents" not in core_source(16).replace("Agent", "")
    # The example has no base_url: the CLI reads CODEX_HOME/config.toml, pointed at the server.
    (codex_home / "config.toml").write_text(
        CONFIG_TOML.replace(
            "[features]",
            'model_provider = "local"\n[features]',
        )
        + "[model_providers.local]\n"
        + 'name = "local"\n'
        + f'base_url = "{responses_server.base_url}"\n'
        + 'wire_api = "responses"\nstream_max_retries = 0\nrequest_max_retries = 0\n'
    )
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("CODEX_PATH", codex_bin)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", responses_server.base_url)

    scope, _ = await run_block(16)
    agent = scope["agent"]
    (tool,) = agent.tools
    invoker = tool.on_invoke_tool
    assert tool.name == "codex" and invoker.persist_session is True
    assert invoker.turn_options.idle_timeout_seconds == 60
    argv = build_argv(CodexExecArgs(input="p", thread_options=invoker.thread_options))
    assert argv == [
        "exec", "--experimental-json", "--model", "gpt-5.5", "--sandbox", "workspace-write",
        "--cd", "/path/to/repo",
        "--config", 'model_reasoning_effort="low"',
        "--config", "sandbox_workspace_write.network_access=true",
        "--config", 'web_search="disabled"',
        "--config", 'approval_policy="never"', "-",
    ]  # fmt: skip

    # /path/to/repo does not exist: the real CLI fails, the model sees a tool error, run goes on
    responses_server.enqueue([items.function_call("codex", args_json("inspect"), call_id="s1")])
    responses_server.enqueue([items.message("the workspace is missing")])
    result = await Runner.run(agent, "What is in the repo?")
    assert result.final_output == "the workspace is missing"
    out = [
        i
        for i in responses_server.responses_requests[1].body["input"]
        if i.get("type") == "function_call_output"
    ]
    assert "Codex exec exited with code 1" in out[0]["output"]
    assert len(responses_server.responses_requests) == 2  # the CLI never reached a model
