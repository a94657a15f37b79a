"""Shell-invoked ``apply_patch`` (the Codex CLI's spelling) is applied as a patch, not run.

Scripted sessions: the real ``openai`` client against the local Responses server, a real Git
repository in ``tmp_path``, the workspace's real editor, review queue and checkpoints.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core import Agent, Runner
from core.tools.patch_envelope import apply_patch_to_files
from harnesses.editor import ReviewOutcome
from harnesses.workspace import Workspace
from tests.support import items

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}
APP = "def greet():\n    return 'hello'\n"
PATCH = """*** Begin Patch
*** Update File: src/app.py
@@
 def greet():
-    return 'hello'
+    return 'hello, world'
*** Add File: NOTES.md
+# Notes
+greet says hello, world
*** End Patch"""
HEREDOC = f"apply_patch <<'EOF'\n{PATCH}\nEOF\n"
#: The added file as the envelope engine makes it (Codex semantics: patch_envelope's rules).
NOTES = apply_patch_to_files(PATCH, lambda p: APP if p == "src/app.py" else None)["NOTES.md"]
SUCCESS = "Success. Updated the following files:\nA NOTES.md\nM src/app.py\n"


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(APP)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def last_input(server: Any) -> dict[str, Any]:
    return server.requests[-1].body["input"][-1]


async def wait_for(predicate: Any, what: str) -> None:
    """Bounded polling on the event loop (no sleeps for synchronisation)."""
    for _ in range(2000):
        if predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


async def test_auto_mode_lands_at_once_checkpointed(responses_server, model, repo, tmp_path):
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / "data")
    agent = Agent(name="a", model=model, tools=workspace.tools())
    responses_server.enqueue([items.shell_call([HEREDOC], call_id="sh1")])
    responses_server.enqueue([items.message("patched")])
    result = await Runner.run(agent, "greet the world", hooks=workspace.hooks())
    assert result.final_output == "patched" and not result.interruptions
    assert (repo / "src" / "app.py").read_text() == "def greet():\n    return 'hello, world'\n"
    assert (repo / "NOTES.md").read_text() == NOTES
    assert last_input(responses_server) == {
        "type": "shell_call_output",
        "call_id": "sh1",
        "output": [{"stdout": SUCCESS, "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}],
    }
    checkpoint = workspace.last_checkpoint
    assert checkpoint is not None and checkpoint.label == "before turn 1"
    await workspace.checkpoints.restore(checkpoint.id)  # the checkpoint holds the old tree
    assert (repo / "src" / "app.py").read_text() == APP and not (repo / "NOTES.md").exists()


async def test_ask_mode_waits_in_review_then_lands(responses_server, model, repo, tmp_path):
    workspace = Workspace(repo, mode="ask", data_dir=tmp_path / "data")
    agent = Agent(name="a", model=model, tools=workspace.tools())
    responses_server.enqueue([items.shell_call([HEREDOC], call_id="sh1")])
    responses_server.enqueue([items.message("patched")])
    run = asyncio.create_task(Runner.run(agent, "greet", hooks=workspace.hooks()))
    queue = workspace.review_queue
    await wait_for(lambda: queue.pending(), "the first proposal")
    proposal = queue.pending()[0]
    assert proposal.path == "src/app.py" and proposal.kind == "update_file"
    assert (repo / "src" / "app.py").read_text() == APP  # nothing lands before the review
    assert workspace.last_checkpoint is not None
    queue.resolve(proposal.id, ReviewOutcome.accept_all(proposal))
    await wait_for(lambda: queue.pending() and queue.pending()[0].id != proposal.id, "NOTES.md")
    second = queue.pending()[0]
    assert second.path == "NOTES.md" and second.new_text == NOTES
    queue.resolve(second.id, ReviewOutcome.accept_all(second, comment="thanks"))
    result = await asyncio.wait_for(run, 30)
    assert result.final_output == "patched"
    assert (repo / "src" / "app.py").read_text() == "def greet():\n    return 'hello, world'\n"
    assert (repo / "NOTES.md").exists()
    entry = last_input(responses_server)["output"][0]
    assert entry["outcome"] == {"type": "exit", "exit_code": 0}
    assert entry["stdout"].startswith(SUCCESS) and "User comment: thanks" in entry["stdout"]
    checkpoint = workspace.last_checkpoint
    assert checkpoint is not None
    assert "src/app.py" in await workspace.checkpoints.files_changed(checkpoint.id)


async def test_ask_mode_rejection_tells_the_model(responses_server, model, repo, tmp_path):
    workspace = Workspace(repo, mode="ask", data_dir=tmp_path / "data")

    def review(event: Any) -> None:
        if event.type == "submitted":
            outcome = ReviewOutcome.reject_all("not this way")
            asyncio.get_running_loop().call_soon(queue.resolve, event.proposal.id, outcome)

    queue = workspace.review_queue
    queue.add_listener(review)
    agent = Agent(name="a", model=model, tools=workspace.tools())
    patch = "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch"
    responses_server.enqueue([items.shell_call([f"apply_patch <<EOF\n{patch}\nEOF"])])
    responses_server.enqueue([items.message("ok")])
    await Runner.run(agent, "add x", hooks=workspace.hooks())
    entry = last_input(responses_server)["output"][0]
    assert not (repo / "x.txt").exists()
    assert entry["outcome"] == {"type": "exit", "exit_code": 1} and entry["stdout"] == ""
    assert "rejected" in entry["stderr"] and "not this way" in entry["stderr"]


@pytest.mark.parametrize(
    "command",
    [
        ["apply_patch", PATCH],
        ["applypatch", PATCH],
        [f'bash -lc "{HEREDOC}"'],
        ["bash", "-lc", HEREDOC],
        [f'apply_patch "{PATCH}"'],
    ],
    ids=["argv", "applypatch", "bash-lc-string", "bash-lc-argv", "argument"],
)
async def test_spellings_land_in_auto_mode(responses_server, model, repo, tmp_path, command):
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / "data")
    agent = Agent(name="a", model=model, tools=workspace.tools())
    responses_server.enqueue([items.shell_call(command, call_id="sh1")])
    responses_server.enqueue([items.message("ok")])
    await Runner.run(agent, "patch", hooks=workspace.hooks())
    entry = last_input(responses_server)["output"]
    assert entry == [{"stdout": SUCCESS, "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]
    assert "hello, world" in (repo / "src" / "app.py").read_text()


async def test_cd_and_several_commands(responses_server, model, repo, tmp_path):
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / "data")
    agent = Agent(name="a", model=model, tools=workspace.tools())
    first = "cd src && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: b.py\n+B = 1\n*** End Patch\nEOF"
    second = "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: src/app.py\n*** End Patch\nEOF"
    responses_server.enqueue([items.shell_call([first, second], call_id="sh1")])
    responses_server.enqueue([items.message("ok")])
    await Runner.run(agent, "patch", hooks=workspace.hooks())
    outputs = last_input(responses_server)["output"]
    assert [o["stdout"] for o in outputs] == [
        "Success. Updated the following files:\nA src/b.py\n",
        "Success. Updated the following files:\nD src/app.py\n",
    ]
    assert (repo / "src" / "b.py").read_text().rstrip("\n") == "B = 1"
    assert not (repo / "src" / "app.py").exists()


async def test_failing_envelope_writes_nothing(responses_server, model, repo, tmp_path):
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / "data")
    agent = Agent(name="a", model=model, tools=workspace.tools())
    bad = PATCH.replace(" def greet():", " def missing():")  # second file fine, first fails
    bad = bad.replace(
        "*** Update File: src/app.py", "*** Add File: new.txt\n+n\n*** Update File: src/app.py"
    )
    responses_server.enqueue([items.shell_call([f"apply_patch <<'EOF'\n{bad}\nEOF"])])
    responses_server.enqueue([items.message("ok")])
    await Runner.run(agent, "patch", hooks=workspace.hooks())
    entry = last_input(responses_server)["output"][0]
    assert entry["outcome"] == {"type": "exit", "exit_code": 1} and entry["stdout"] == ""
    assert "src/app.py" in entry["stderr"] and "Nothing was written" in entry["stderr"]
    assert not (repo / "new.txt").exists() and not (repo / "NOTES.md").exists()
    assert (repo / "src" / "app.py").read_text() == APP


async def test_cd_then_dotdot_out_of_the_workspace_is_refused(
    responses_server, model, repo, tmp_path
):
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / "data")
    agent = Agent(name="a", model=model, tools=workspace.tools())
    patch = "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch"
    responses_server.enqueue([items.shell_call([f"cd src && apply_patch <<'EOF'\n{patch}\nEOF"])])
    responses_server.enqueue([items.message("ok")])
    await Runner.run(agent, "patch", hooks=workspace.hooks())
    entry = last_input(responses_server)["output"][0]
    assert entry["outcome"]["exit_code"] == 0
    assert (repo / "escape.txt").exists()  # src/../escape.txt is inside the workspace
    patch = "*** Begin Patch\n*** Add File: ../../escape.txt\n+x\n*** End Patch"
    responses_server.enqueue([items.shell_call([f"cd src && apply_patch <<'EOF'\n{patch}\nEOF"])])
    responses_server.enqueue([items.message("ok")])
    await Runner.run(agent, "patch", hooks=workspace.hooks())
    entry = last_input(responses_server)["output"][0]
    assert entry["outcome"]["exit_code"] == 1 and entry["stderr"]
    assert not (tmp_path / "escape.txt").exists()


async def test_read_only_mode_refuses(responses_server, model, repo, tmp_path):
    workspace = Workspace(repo, mode="read-only", data_dir=tmp_path / "data")
    agent = Agent(name="a", model=model, tools=workspace.tools())
    responses_server.enqueue([items.shell_call([HEREDOC])])
    responses_server.enqueue([items.message("ok")])
    result = await Runner.run(agent, "patch", hooks=workspace.hooks())
    assert not result.interruptions
    entry = last_input(responses_server)["output"][0]
    assert entry["stderr"].startswith("Refused by policy:")
    assert (repo / "src" / "app.py").read_text() == APP


async def test_smuggled_command_is_a_normal_command(responses_server, model, repo, tmp_path):
    workspace = Workspace(repo, mode="ask", data_dir=tmp_path / "data")
    agent = Agent(name="a", model=model, tools=workspace.tools())
    smuggled = HEREDOC + "touch pwned\n"
    responses_server.enqueue([items.shell_call([smuggled], call_id="sh1")])
    result = await Runner.run(agent, "patch", hooks=workspace.hooks())
    assert [i.tool_name for i in result.interruptions] == ["shell"]  # the command policy asks
    assert workspace.decisions["sh1"].kind == "command"
    assert not workspace.review_queue.pending()
    assert not (repo / "pwned").exists() and (repo / "src" / "app.py").read_text() == APP


async def test_pasted_patch_goes_through_review(repo, tmp_path):
    workspace = Workspace(repo, mode="ask", data_dir=tmp_path / "data")
    queue = workspace.review_queue
    task = asyncio.create_task(workspace.apply_pasted_patch(f"```\n{PATCH}\n```\n"))
    await wait_for(lambda: queue.pending(), "the proposal")
    assert (repo / "src" / "app.py").read_text() == APP
    for _ in range(2):
        await wait_for(lambda: queue.pending(), "a proposal")
        proposal = queue.pending()[0]
        queue.resolve(proposal.id, ReviewOutcome.accept_all(proposal))
    result = await asyncio.wait_for(task, 30)
    assert result.exit_code == 0 and result.stdout == SUCCESS
    assert workspace.last_checkpoint is not None
    assert workspace.last_checkpoint.label == "before pasted patch"
