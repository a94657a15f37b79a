"""SubprocessShellExecutor with real subprocesses: shapes, timeouts, memory, env, streaming."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.context import RunContextWrapper
from core.tools.shell import ShellTool
from harnesses.shell import (
    BoundedCapture,
    ShellCommandFinished,
    ShellCommandStarted,
    ShellEvent,
    ShellOutputChunk,
    SubprocessShellExecutor,
    build_env,
    fit_texts,
)

MiB = 1024 * 1024


def live_members(pgid: int) -> list[int]:
    """Pids of non-zombie processes in process group ``pgid`` (from ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def wait_for(predicate: Callable[[], bool], timeout_s: float = 2.0) -> bool:
    """Poll ``predicate`` until it holds or ``timeout_s`` passes (waits for a kernel event)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def shell_call(*commands: str, call_id: str = "call_1", **action: Any) -> dict[str, Any]:
    return {
        "type": "shell_call",
        "id": "sh_1",
        "call_id": call_id,
        "status": "completed",
        "action": {"commands": list(commands), **action},
    }


async def test_two_commands_through_shell_tool_give_the_exact_item(tmp_path: Path) -> None:
    tool = ShellTool(executor=SubprocessShellExecutor(tmp_path))
    result = await tool.execute(
        RunContextWrapper(context=None), shell_call("echo one", "echo two >&2; exit 3")
    )
    assert result.input_item == {
        "type": "shell_call_output",
        "call_id": "call_1",
        "output": [
            {"stdout": "one\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}},
            {"stdout": "", "stderr": "two\n", "outcome": {"type": "exit", "exit_code": 3}},
        ],
    }
    assert result.output == (
        "$ echo one\none\n\n$ echo two >&2; exit 3\n\nstderr:\ntwo\nexit code: 3"
    )


async def test_max_output_length_keeps_head_and_tail_within_budget(tmp_path: Path) -> None:
    tool = ShellTool(executor=SubprocessShellExecutor(tmp_path))
    command = "echo START; for i in $(seq 1 2000); do echo middle$i; done; echo END"
    result = await tool.execute(
        RunContextWrapper(context=None), shell_call(command, "echo tiny", max_output_length=120)
    )
    item = result.input_item
    assert item["max_output_length"] == 120
    first, second = item["output"]
    assert first["stdout"].startswith("START\n")
    assert first["stdout"].endswith("END\n")
    assert "characters omitted" in first["stdout"]
    assert second["stdout"] == "tiny\n"
    total = sum(len(e["stdout"]) + len(e["stderr"]) for e in item["output"])
    assert total <= 120


async def test_commands_run_sequentially_in_the_workspace(tmp_path: Path) -> None:
    executor = SubprocessShellExecutor(tmp_path)
    result = await executor.run(["pwd", "echo data > f.txt", "cat f.txt", "cat"])
    assert [o.stdout for o in result.output] == [f"{tmp_path}\n", "", "data\n", ""]
    assert result.provider_data == {
        "working_directory": str(tmp_path),
        "sandbox_mode": "off",
        "sandboxed": False,
    }
    assert result.output[0].provider_data is not None
    assert result.output[0].provider_data["sandboxed"] is False


async def test_timeout_kills_the_whole_group_quickly(tmp_path: Path) -> None:
    events: list[ShellEvent] = []
    executor = SubprocessShellExecutor(tmp_path, listener=events.append)
    started = time.monotonic()
    # Two commands in one shell so bash forks `sleep` instead of exec'ing it; then a command
    # that must not run after the timeout.
    result = await executor.run(["sleep 30; echo never", "echo after"], timeout_ms=500)
    elapsed = time.monotonic() - started
    assert elapsed < 2.0
    assert len(result.output) == 1
    assert result.output[0].outcome.type == "timeout"
    assert result.output[0].outcome.exit_code is None
    pgid = next(e.pid for e in events if isinstance(e, ShellCommandStarted))
    assert await wait_for(lambda: not live_members(pgid))
    finished = [e for e in events if isinstance(e, ShellCommandFinished)]
    assert finished[0].timed_out and finished[0].exit_code is None


async def test_stubborn_process_is_killed_after_the_grace(tmp_path: Path) -> None:
    executor = SubprocessShellExecutor(tmp_path, kill_grace_ms=200)
    started = time.monotonic()
    result = await executor.run(["trap '' TERM; sleep 30; echo never"], timeout_ms=300)
    assert time.monotonic() - started < 2.0
    assert result.output[0].outcome.type == "timeout"


async def test_background_child_is_killed_after_the_command_exits(tmp_path: Path) -> None:
    from tests.security._procs import alive_with, marker_seconds

    # By marker, not by ``$!``: in a PID namespace of its own that pid is not this one's.
    marker = marker_seconds()
    executor = SubprocessShellExecutor(tmp_path)
    result = await executor.run([f"sleep {marker} >/dev/null 2>&1 & echo $!"])
    assert int(result.output[0].stdout) > 0
    assert result.output[0].outcome.exit_code == 0
    assert await wait_for(lambda: not alive_with(marker))


async def test_background_child_holding_the_pipe_does_not_hang(tmp_path: Path) -> None:
    started = time.monotonic()
    result = await SubprocessShellExecutor(tmp_path).run(["sleep 30 & echo started"])
    assert time.monotonic() - started < 2.0
    assert result.output[0].stdout == "started\n"


async def test_cancellation_kills_the_group(tmp_path: Path) -> None:
    started = asyncio.Event()
    pids: list[int] = []

    def listener(event: ShellEvent) -> None:
        if isinstance(event, ShellCommandStarted):
            pids.append(event.pid)
            started.set()

    executor = SubprocessShellExecutor(tmp_path, listener=listener)
    task = asyncio.create_task(executor.run(["sleep 30; echo never"]))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_for(lambda: not live_members(pids[0]))


async def test_fifty_megabytes_are_truncated_with_bounded_memory(tmp_path: Path) -> None:
    executor = SubprocessShellExecutor(tmp_path)
    command = "head -c 50000000 /dev/zero | tr '\\0' a; echo; echo TAIL-END"
    tracemalloc.start()
    try:
        result = await executor.run([command])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    out = result.output[0]
    assert out.outcome.exit_code == 0
    assert len(out.stdout.encode()) <= 2 * MiB + 100
    assert out.stdout.startswith("a" * 1000)
    assert out.stdout.endswith("TAIL-END\n")
    assert out.provider_data is not None
    dropped = out.provider_data["stdout_dropped_bytes"]
    assert dropped == 50_000_000 + 10 - 2 * MiB
    assert f"[... {dropped} bytes omitted ...]" in out.stdout
    assert peak < 24 * MiB, f"peak traced memory {peak} bytes"


async def test_fifty_megabytes_with_budget_report_both_omissions(tmp_path: Path) -> None:
    executor = SubprocessShellExecutor(tmp_path, head_bytes=4096, tail_bytes=4096)
    result = await executor.run(["head -c 5000000 /dev/zero | tr '\\0' b"], max_output_length=200)
    stdout = result.output[0].stdout
    assert len(stdout) <= 200
    assert "characters and 4991808 bytes omitted" in stdout


async def test_command_environment_is_scrubbed_and_non_interactive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-leak")
    monkeypatch.setenv("CODEX_API_KEY", "cx-test")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-test")
    monkeypatch.setenv("db_password", "hunter2")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws")
    monkeypatch.setenv("MY_CREDENTIALS_FILE", "/x")
    monkeypatch.setenv("ALLOWED_TOKEN", "kept")
    monkeypatch.setenv("PLAIN_VALUE", "kept-too")
    executor = SubprocessShellExecutor(
        tmp_path, allow_env={"ALLOWED_TOKEN", "OPENAI_API_KEY"}, env={"TERM": "xterm"}
    )
    result = await executor.run(["env"])
    env = dict(line.split("=", 1) for line in result.output[0].stdout.splitlines() if "=" in line)
    for name in (
        "OPENAI_API_KEY",
        "CODEX_API_KEY",
        "GITHUB_TOKEN",
        "db_password",
        "AWS_SECRET_ACCESS_KEY",
        "MY_CREDENTIALS_FILE",
    ):
        assert name not in env
    assert "sk-test-do-not-leak" not in result.output[0].stdout
    assert env["ALLOWED_TOKEN"] == "kept"
    assert env["PLAIN_VALUE"] == "kept-too"
    assert env["CI"] == "1"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["PAGER"] == "cat" and env["GIT_PAGER"] == "cat"
    assert env["TERM"] == "xterm"


def test_build_env_defaults() -> None:
    env = build_env({"TERM": "xterm-256color", "HOME": "/h", "API_KEY": "k"})
    assert env["TERM"] == "dumb"
    assert env["HOME"] == "/h"
    assert "API_KEY" not in env


async def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    result = await SubprocessShellExecutor(tmp_path).run(["printf 'ok \\377\\376 end'"])
    assert result.output[0].stdout == "ok \ufffd\ufffd end"


async def test_multibyte_split_across_chunks_decodes_right(tmp_path: Path) -> None:
    chunks: list[str] = []

    def listener(event: ShellEvent) -> None:
        if isinstance(event, ShellOutputChunk) and event.stream == "stdout":
            chunks.append(event.text)

    executor = SubprocessShellExecutor(tmp_path, listener=listener)
    result = await executor.run(["printf 'caf\\303'; sleep 0.2; printf '\\251!'"])
    assert "".join(chunks) == "café!"
    assert result.output[0].stdout == "café!"


async def test_listener_gets_ordered_chunks_and_lifecycle(tmp_path: Path) -> None:
    events: list[ShellEvent] = []

    async def listener(event: ShellEvent) -> None:
        events.append(event)

    executor = SubprocessShellExecutor(tmp_path, listener=listener)
    command = "for i in $(seq 1 20000); do echo line$i; done; echo oops >&2"
    result = await executor.run(["true", command], call_id="call_42")
    assert isinstance(events[0], ShellCommandStarted)
    assert events[0].call_id == "call_42" and events[0].command_index == 0
    assert events[0].sandboxed is False and events[0].working_directory == str(tmp_path)
    second = [e for e in events if e.command_index == 1]
    assert isinstance(second[0], ShellCommandStarted) and second[0].command == command
    assert isinstance(second[-1], ShellCommandFinished)
    assert second[-1].exit_code == 0 and second[-1].duration_ms >= 0
    out = "".join(
        e.text for e in second if isinstance(e, ShellOutputChunk) and e.stream == "stdout"
    )
    err = "".join(
        e.text for e in second if isinstance(e, ShellOutputChunk) and e.stream == "stderr"
    )
    assert out == result.output[1].stdout
    assert out == "".join(f"line{i}\n" for i in range(1, 20001))
    assert err == "oops\n"


async def test_failing_listener_does_not_break_the_command(tmp_path: Path) -> None:
    def listener(event: ShellEvent) -> None:
        raise RuntimeError("listener bug")

    result = await SubprocessShellExecutor(tmp_path, listener=listener).run(["echo fine"])
    assert result.output[0].stdout == "fine\n"


async def test_signal_death_reports_128_plus_signal(tmp_path: Path) -> None:
    result = await SubprocessShellExecutor(tmp_path).run(["kill -9 $$"])
    assert result.output[0].outcome.exit_code == 137


async def test_missing_bwrap_is_reported_not_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    bash = shutil.which("bash") or "/bin/sh"
    monkeypatch.setenv("PATH", str(empty))
    events: list[ShellEvent] = []
    executor = SubprocessShellExecutor(
        tmp_path, sandbox="workspace-write", listener=events.append, shell=bash
    )
    result = await executor.run(["echo hi"])
    out = result.output[0]
    assert out.stdout == "hi\n"
    assert out.stderr.startswith("[sandbox unavailable: bwrap not found; command ran unsandboxed]")
    assert out.provider_data is not None
    assert out.provider_data["sandboxed"] is False
    assert out.provider_data["sandbox_unavailable"] == "bwrap not found"
    assert result.provider_data is not None
    assert result.provider_data["sandbox_unavailable"] == "bwrap not found"
    started = next(e for e in events if isinstance(e, ShellCommandStarted))
    assert started.sandbox_unavailable == "bwrap not found" and not started.sandboxed

    strict = SubprocessShellExecutor(
        tmp_path, sandbox="read-only", require_sandbox=True, shell=bash
    )
    refused = (await strict.run(["touch should-not-exist"])).output[0]
    assert refused.outcome.exit_code == 127
    assert "refused to run" in refused.stderr
    assert not (tmp_path / "should-not-exist").exists()


def test_bounded_capture_keeps_head_and_tail() -> None:
    capture = BoundedCapture(head_bytes=4, tail_bytes=4)
    for piece in (b"ab", b"cdef", b"ghij", b"kl"):
        capture.feed(piece)
    assert capture.text() == "abcd\n[... 4 bytes omitted ...]\nijkl"
    assert capture.dropped_bytes == 4 and capture.total_bytes == 12


def test_bounded_capture_does_not_show_a_cut_multibyte_char() -> None:
    capture = BoundedCapture(head_bytes=4, tail_bytes=3)
    capture.feed("aaé".encode() + b"x" * 10 + "é!".encode())  # é is 2 bytes
    text = capture.text()
    assert "\ufffd" not in text
    assert text.startswith("aaé") and text.endswith("é!")


@pytest.mark.parametrize("budget", [0, 5, 40, 100, 1000])
def test_fit_texts_respects_the_budget(budget: int) -> None:
    texts = ["x" * 300, "", "short", "y" * 50]
    fitted = fit_texts(texts, budget)
    assert sum(map(len, fitted)) <= budget
    if budget >= 100:
        assert fitted[2] == "short"


def test_environment_variable_for_test_process_is_untouched() -> None:
    # The executor builds a copy; it never mutates os.environ.
    before = dict(os.environ)
    build_env(os.environ)
    assert dict(os.environ) == before


async def test_git_config_from_the_environment_reaches_commands_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GIT_CONFIG_COUNT/KEY_n/VALUE_n pass as a group: dropping the KEY (it "looks" secret)
    made every git command fail with "missing config key GIT_CONFIG_KEY_0"."""
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "tandem.probe")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "seen")
    executor = SubprocessShellExecutor(tmp_path)
    result = await executor.run(["git config --get tandem.probe"])
    assert result.output[0].stdout == "seen\n", result.output[0].stderr
