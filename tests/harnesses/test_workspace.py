"""The workspace harness end to end: runner + local Responses server + real shell, Git and bwrap."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from core import Agent, Runner
from harnesses.editor import ReviewOutcome
from harnesses.shell import sandbox_available
from harnesses.workspace import Workspace
from tests.support import items

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def make_repo(root: Path, *, with_git: bool) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print('hello')\n")
    (root / "src" / "pkg" / "util.py").write_bytes(b"def f():\r\n    return 1\r\n")
    (root / "README.md").write_text("# project\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "out.bin").write_bytes(b"\x00ignored")
    if with_git:
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "init")
        (root / "README.md").write_text("# project\nstashed change\n")
        git(root, "stash", "-q")
        (root / "src" / "main.py").write_text("print('staged')\n")
        git(root, "add", "src/main.py")
    (root / "src" / "untracked.txt").write_text("not in git yet\n")


def git_state(root: Path) -> tuple[bytes, str, str, str]:
    return (
        (root / ".git" / "index").read_bytes(),
        git(root, "diff", "--cached"),
        git(root, "stash", "list"),
        git(root, "for-each-ref", "refs/heads", "refs/tags", "refs/stash")
        + git(root, "rev-parse", "HEAD"),
    )


@pytest.mark.parametrize("with_git", [True, False], ids=["git-repo", "plain-folder"])
async def test_destructive_command_checkpoint_restore_and_undo(
    responses_server, model, tmp_path, with_git
):
    root = tmp_path / "work"
    root.mkdir()
    make_repo(root, with_git=with_git)
    before = snapshot(root)
    state_before = git_state(root) if with_git else None

    workspace = Workspace(root, mode="auto", data_dir=tmp_path / "data")
    agent = Agent(name="a", model=model, tools=workspace.tools())
    responses_server.enqueue(
        [items.shell_call(["rm -rf src && echo gone > README.md"], call_id="sh1")]
    )
    responses_server.enqueue([items.message("removed")])

    first = await Runner.run(agent, "clean up", hooks=workspace.hooks())
    assert [i.tool_name for i in first.interruptions] == ["shell"]  # destructive asks even in auto
    reason = workspace.reason_for("sh1")
    assert reason is not None and "destructive" in reason
    checkpoint = workspace.last_checkpoint
    assert checkpoint is not None and checkpoint.turn == 1
    state = first.to_state()
    state.approve(first.interruptions[0])
    final = await Runner.run(agent, state, hooks=workspace.hooks())
    assert final.final_output == "removed"
    assert not (root / "src").exists() and (root / "README.md").read_text() == "gone\n"
    after_command = snapshot(root)

    await workspace.checkpoints.restore(checkpoint.id)
    assert snapshot(root) == before  # tracked, untracked and ignored files, byte for byte
    await workspace.checkpoints.undo_restore()
    assert snapshot(root) == after_command
    if with_git:
        assert git_state(root) == state_before  # index, stash, branches and HEAD untouched
    else:
        assert not (root / ".git").exists()


async def test_auto_mode_runs_sandboxed_without_asking(responses_server, model, tmp_path):
    workspace = Workspace(tmp_path, mode="auto", data_dir=tmp_path / ".data")
    agent = Agent(name="a", model=model, tools=workspace.tools())
    responses_server.enqueue(
        [items.shell_call(["echo hi > note.txt && cat note.txt"], call_id="s1")]
    )
    responses_server.enqueue([items.message("ok")])
    result = await Runner.run(agent, "write a note", hooks=workspace.hooks())
    assert result.final_output == "ok" and not result.interruptions
    assert (tmp_path / "note.txt").read_text() == "hi\n"
    assert workspace.executor.sandbox == ("workspace-write" if sandbox_available() else "off")


async def test_read_only_mode_denies_writes_with_reason(responses_server, model, tmp_path):
    workspace = Workspace(tmp_path, mode="read-only", data_dir=tmp_path / ".data")
    agent = Agent(name="a", model=model, tools=workspace.tools())
    responses_server.enqueue([items.shell_call(["echo x > f.txt"], call_id="s1")])
    responses_server.enqueue([items.message("cannot write")])
    result = await Runner.run(agent, "write", hooks=workspace.hooks())
    assert result.final_output == "cannot write" and not result.interruptions
    assert not (tmp_path / "f.txt").exists()
    output = responses_server.requests[1].body["input"][-1]
    assert output["type"] == "shell_call_output"
    assert output["output"][0]["stderr"].startswith("Refused by policy:")


async def test_ask_mode_patch_review_accepts_two_of_three_hunks(responses_server, model, tmp_path):
    lines = [f"line {n}" for n in range(1, 31)]
    (tmp_path / "a.txt").write_text("\n".join(lines) + "\n")
    diff = "\n".join(
        [
            "@@",
            " line 1",
            "-line 2",
            "+LINE 2",
            " line 3",
            "@@",
            " line 14",
            "-line 15",
            "+LINE 15",
            " line 16",
            "@@",
            " line 27",
            "-line 28",
            "+LINE 28",
            " line 29",
        ]
    )
    workspace = Workspace(tmp_path, mode="ask", data_dir=tmp_path / ".data")

    def review(event):
        if event.type == "submitted":
            proposal = event.proposal
            assert len(proposal.hunks) == 3
            outcome = ReviewOutcome.per_hunk({1: True, 2: False, 3: True}, comment="keep line 15")
            asyncio.get_running_loop().call_soon(
                workspace.review_queue.resolve, proposal.id, outcome
            )

    workspace.review_queue.add_listener(review)
    agent = Agent(name="a", model=model, tools=workspace.tools())
    responses_server.enqueue(
        [
            items.apply_patch_call(
                {"type": "update_file", "path": "a.txt", "diff": diff}, call_id="p1"
            )
        ]
    )
    responses_server.enqueue([items.message("patched")])
    result = await Runner.run(agent, "edit", hooks=workspace.hooks())
    assert result.final_output == "patched"
    text = (tmp_path / "a.txt").read_text().splitlines()
    assert text[1] == "LINE 2" and text[14] == "line 15" and text[27] == "LINE 28"
    output = responses_server.requests[1].body["input"][-1]
    assert output["type"] == "apply_patch_call_output" and output["status"] == "completed"
    assert "2 of 3 hunks" in output["output"] and "keep line 15" in output["output"]
