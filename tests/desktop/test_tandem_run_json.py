"""``tandem run``: saved settings, ``--json`` events, ``--yes``, exit codes (issue 16, item 2)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from core.settings import Settings, save_settings
from desktop.cli import main
from desktop.headless import HeadlessOptions, run_headless
from desktop.run_cli.events import EVENT_TYPES, ITEM_TYPES
from tests.support import items

ROOT = Path(__file__).resolve().parents[2]


def _script(tmp_path: Path, *outputs: list[dict]) -> Path:
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"turns": [{"output": o} for o in outputs]}))
    return path


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "data" / "keep.txt").write_text("precious\n")
    return repo


def _shell(call_id: str, command: str) -> list[dict]:
    return [{"type": "shell_call", "call_id": call_id, "action": {"commands": [command]}}]


def _done(text: str = "all done") -> list[dict]:
    return [{"type": "message", "content": [{"type": "output_text", "text": text}]}]


_CREATE = {"type": "create_file", "path": "notes.txt", "diff": "+first\n+second\n"}


def _check_schema(event: dict) -> None:
    """The documented shape (docs/tandem-run.md) of one event."""
    assert event["type"] in EVENT_TYPES
    if event["type"].startswith("item."):
        assert isinstance(event["item"]["id"], str) and event["item"]["id"]
        if event["type"] != "item.updated" or "type" in event["item"]:
            assert event["item"]["type"] in ITEM_TYPES
    elif event["type"] == "turn.completed":
        assert set(event["usage"]) == {"input_tokens", "output_tokens", "total_tokens", "requests"}
    elif event["type"] == "approval.requested":
        assert {"call_id", "tool", "destructive"} <= set(event)
    elif event["type"] == "session.started":
        assert {"session_id", "repo", "model", "mode", "sandbox"} <= set(event)
    elif event["type"] == "session.ended":
        assert {"session_id", "status", "exit_code", "final_message"} <= set(event)
    elif event["type"] == "error":
        assert event["message"]


async def test_json_events_of_a_command_a_patch_an_approval_and_a_failure(tmp_path):
    repo = _repo(tmp_path)
    script = _script(
        tmp_path,
        _shell("c1", "echo streamed-line"),
        [{"type": "apply_patch_call", "call_id": "p1", "operation": _CREATE}],
        _shell("c2", "ls no-such-file"),
        _shell("c3", "rm -rf data"),
        _done(),
    )
    events, out = io.StringIO(), io.StringIO()
    last = tmp_path / "last.txt"
    options = HeadlessOptions(
        repo,
        "tidy",
        mode="ask",
        model=f"scripted:{script}",
        interactive=False,
        yes=True,
        json=True,
        output_last_message=last,
        journal_path=tmp_path / "journal.sqlite3",
    )
    assert await run_headless(options, out, events_out=events) == 3  # rm -rf: rejected
    lines = events.getvalue().splitlines()
    parsed = [json.loads(line) for line in lines]  # every line is one JSON object
    for event in parsed:
        _check_schema(event)
    kinds = [e["type"] for e in parsed]
    assert kinds[0] == "session.started" and kinds[-1] == "session.ended"
    assert parsed[0]["mode"] == "ask" and parsed[0]["model"] == "scripted"
    by_id: dict[str, list[dict]] = {}
    for event in parsed:
        if "item" in event:
            by_id.setdefault(event["item"]["id"], []).append(event)
    # the command: started, its output streamed as a delta, completed with exit code 0
    c1 = by_id["c1"]
    assert c1[0]["type"] == "item.started" and c1[0]["item"]["commands"] == ["echo streamed-line"]
    deltas = [
        e["item"]["delta"] for e in c1 if e["type"] == "item.updated" and "delta" in e["item"]
    ]
    assert "".join(deltas) == "streamed-line\n"
    assert c1[-1]["type"] == "item.completed" and c1[-1]["item"]["exit_codes"] == [0]
    # the patch, reviewed (--yes applies it) and landed
    p1 = by_id["p1"]
    assert p1[0]["item"] == {
        "id": "p1",
        "status": "in_progress",
        "type": "file_change",
        "operation": "create_file",
        "path": "notes.txt",
    }
    assert any(e["item"].get("review") == "applied" for e in p1)
    assert (repo / "notes.txt").read_text().splitlines() == ["first", "second"]
    # the failure: a command that exits non-zero
    c2 = by_id["c2"][-1]["item"]
    assert c2["status"] == "failed" and c2["exit_codes"][0] != 0
    # the approval: destructive, not approved by --yes, rejected without a terminal
    asked = [e for e in parsed if e["type"] == "approval.requested" and e["call_id"] == "c3"]
    assert asked and asked[0]["destructive"] is True and "destructive" in asked[0]["reason"]
    verdict = [e for e in by_id["c3"] if e["item"].get("approval")]
    assert (
        verdict[0]["item"]["approval"] == "reject" and verdict[0]["item"]["decided_by"] == "no-tty"
    )
    assert (repo / "data" / "keep.txt").exists()
    # the answer, the usage per pass, the end
    assert any(e["item"].get("text") == "all done" for e in parsed if e["type"] == "item.completed")
    assert "turn.completed" in kinds
    assert parsed[-1]["exit_code"] == 3 and parsed[-1]["status"] == "stopped"
    assert parsed[-1]["final_message"] == "all done" and parsed[-1]["rejected"] == 1
    assert last.read_text() == "all done\n"
    assert "  | streamed-line" in out.getvalue()  # the human lines went elsewhere


async def test_yes_destructive_approves_a_destructive_command(tmp_path):
    repo = _repo(tmp_path)
    script = _script(tmp_path, _shell("c1", "rm -rf data"), _done())
    options = HeadlessOptions(
        repo,
        "tidy",
        mode="ask",
        model=f"scripted:{script}",
        interactive=False,
        yes_destructive=True,
        journal_path=tmp_path / "j.sqlite3",
    )
    out = io.StringIO()
    assert await run_headless(options, out) == 0
    assert "approved (--yes-destructive)" in out.getvalue()
    assert not (repo / "data").exists()


def test_tandem_run_reads_the_saved_settings_in_a_fresh_home(
    tmp_path, responses_server, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    save_settings(
        Settings(
            model="saved-model",
            base_url=responses_server.base_url,
            api_key="sk-saved-in-settings-0123456789",
            approval_mode="auto",
            explorer=False,
        )
    )
    responses_server.enqueue([items.shell_call(["echo from-settings"], call_id="c1")])
    responses_server.enqueue([items.message("finished")])
    repo = _repo(tmp_path)
    out = tmp_path / "out.jsonl"
    code = main(["run", "look", "--repo", str(repo), "--json", "--output-last-message", str(out)])
    assert code == 0
    first = responses_server.requests[0]
    assert first.body["model"] == "saved-model"
    assert first.headers.get("authorization") == "Bearer sk-saved-in-settings-0123456789"
    # auto mode from the settings: the command ran without asking
    outputs = [
        i
        for i in responses_server.requests[1].body["input"]
        if i.get("type") == "shell_call_output"
    ]
    assert "from-settings" in json.dumps(outputs)
    assert out.read_text() == "finished\n"
    # a flag overrides the saved mode: read-only refuses nothing here but says so in the header
    responses_server.enqueue([items.message("ok")])
    assert (
        main(["run", "look", "--repo", str(repo), "--mode", "read-only", "--model", "flag-model"])
        == 0
    )
    assert responses_server.requests[-1].body["model"] == "flag-model"


def _cli(*args: str, cwd: Path, env_home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    env |= {
        "HOME": str(env_home),
        "XDG_CONFIG_HOME": str(env_home / ".config"),
        "XDG_DATA_HOME": str(env_home / ".local/share"),
        "XDG_STATE_HOME": str(env_home / ".local/state"),
        "XDG_CACHE_HOME": str(env_home / ".cache"),
    }
    return subprocess.run(
        [sys.executable, "-m", "desktop.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_exit_codes(tmp_path):
    repo = _repo(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    done = _script(tmp_path, _done())
    assert (
        _cli(
            "run", "t", "--repo", str(repo), "--model", f"scripted:{done}", cwd=repo, env_home=home
        ).returncode
        == 0
    )
    # 1: the run failed (the turns ran out: max turns exceeded)
    loop = tmp_path / "loop.json"
    loop.write_text(json.dumps({"turns": [{"output": _shell("c1", "true")}, {"output": _done()}]}))
    failed = _cli(
        "run",
        "t",
        "--repo",
        str(repo),
        "--mode",
        "auto",
        "--max-turns",
        "1",
        "--model",
        f"scripted:{loop}",
        "--json",
        cwd=repo,
        env_home=home,
    )
    assert failed.returncode == 1, failed.stderr
    ended = json.loads(failed.stdout.splitlines()[-1])
    assert ended["type"] == "session.ended" and ended["exit_code"] == 1
    assert any(json.loads(line)["type"] == "error" for line in failed.stdout.splitlines())
    # 2: usage (no such folder, a bad flag)
    assert (
        _cli("run", "t", "--repo", str(tmp_path / "nope"), cwd=repo, env_home=home).returncode == 2
    )
    assert _cli("run", "t", "--mode", "sideways", cwd=repo, env_home=home).returncode == 2
    # 3: an approval without a terminal
    rm = tmp_path / "rm.json"
    rm.write_text(
        json.dumps({"turns": [{"output": _shell("c1", "rm -rf data")}, {"output": _done()}]})
    )
    stopped = _cli(
        "run",
        "t",
        "--repo",
        str(repo),
        "--mode",
        "auto",
        "--model",
        f"scripted:{rm}",
        cwd=repo,
        env_home=home,
    )
    assert stopped.returncode == 3 and "rejected (no terminal)" in stopped.stdout
    assert (repo / "data" / "keep.txt").exists()


async def test_mcp_calls_are_json_events(tmp_path, responses_server, monkeypatch):
    from core.mcp.config import LocalMcpServer
    from tests.support.mcp_procs import FAULT_SERVER

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    save_settings(
        Settings(
            explorer=False,
            local_mcp_servers={
                "fault": LocalMcpServer(command=sys.executable, args=[FAULT_SERVER])
            },
        )
    )
    responses_server.enqueue(
        [items.function_call("mcp_fault__add", {"a": 1, "b": 2}, call_id="m1")]
    )
    responses_server.enqueue([items.message("three")])
    events, out = io.StringIO(), io.StringIO()
    options = HeadlessOptions(
        _repo(tmp_path),
        "add",
        mode="full",
        model="m",
        base_url=responses_server.base_url,
        interactive=False,
        json=True,
        journal_path=tmp_path / "j.sqlite3",
    )
    assert await run_headless(options, out, events_out=events) == 0
    parsed = [json.loads(line) for line in events.getvalue().splitlines()]
    for event in parsed:
        _check_schema(event)
    calls = [e for e in parsed if e.get("item", {}).get("id") == "m1"]
    assert calls[0]["type"] == "item.started"
    assert calls[0]["item"] | {} == {
        "id": "m1",
        "status": "in_progress",
        "type": "mcp_tool_call",
        "server": "fault",
        "tool": "add",
        "arguments": {"a": 1, "b": 2},
    }
    assert calls[-1]["type"] == "item.completed" and calls[-1]["item"]["type"] == "mcp_tool_call"
    assert "3" in calls[-1]["item"]["output"]
    assert "[mcp] fault > add" in out.getvalue()  # and the line as before (issue 18)


async def test_full_mode_header_says_the_sandbox_is_off(tmp_path):
    script = _script(tmp_path, _done())
    out = io.StringIO()
    options = HeadlessOptions(
        _repo(tmp_path),
        "t",
        mode="full",
        model=f"scripted:{script}",
        interactive=False,
        journal_path=tmp_path / "j.sqlite3",
    )
    assert await run_headless(options, out) == 0
    header = out.getvalue().splitlines()
    first = next(line for line in header if line.startswith("tandem run in"))
    assert "sandbox off" in first and "sandbox on" not in first
    assert any(line.startswith("sandbox: off") for line in header)


async def test_saved_rules_and_sandbox_switch_apply(tmp_path):
    from core.settings import settings_dir

    save_settings(Settings(sandbox_enabled=False, explorer=False))  # ask mode by default
    rule = {"id": "r-1", "action": "allow", "kind": "command", "pattern": "touch made.txt"}
    (settings_dir() / "rules.json").write_text(json.dumps({"version": 1, "rules": [rule]}))
    repo = _repo(tmp_path)
    script = _script(tmp_path, _shell("c1", "touch made.txt"), _done())
    out = io.StringIO()
    options = HeadlessOptions(
        repo, "t", model=f"scripted:{script}", interactive=False, journal_path=tmp_path / "j.db"
    )
    assert await run_headless(options, out) == 0  # the saved rule allows it: nothing asked
    assert (repo / "made.txt").exists() and "[approval]" not in out.getvalue()
    assert "(mode ask, sandbox off)" in out.getvalue()
    (settings_dir() / "rules.json").write_text(json.dumps({"version": 1, "rules": []}))
    (repo / "made.txt").unlink()
    script = _script(tmp_path, _shell("c1", "touch made.txt"), _done())
    assert await run_headless(options, io.StringIO()) == 3  # without it: asked, rejected
    assert not (repo / "made.txt").exists()
