"""Complaint, replayed as a session: "the agent ran X and my work is gone" (issue 12, Trust II).

Each case is a scripted session against the local Responses server on a real repository that
holds uncommitted, staged-only, untracked, ignored (``.env``) and stashed content
(:mod:`tests.security._damage`). The model asks for one destructive command, in *ask*, *auto*
and *full* mode. The promise, in every mode:

- the command asks first (the run stops at an approval, and nothing has changed yet);
- the prompt's recoverability line says everything it removes is recoverable;
- once the user approves and it has run, one restore of the checkpoint taken before it brings
  back the working tree, the index and the stash byte for byte;
- *undo restore* brings back the state the command left.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core import Agent, Runner
from harnesses.workspace import Workspace
from tests.security._damage import git, make_repo, state
from tests.security._python import SANDBOX_PYTHON
from tests.support import items

# The Done-means list of issue 12, each spelled as a model would send it.
COMMANDS = [
    pytest.param("git checkout src/main.py", id="git-checkout-file"),
    pytest.param("git checkout .", id="git-checkout-dot"),
    pytest.param("git restore .", id="git-restore"),
    pytest.param("git reset", id="git-reset"),
    pytest.param("git reset --hard", id="git-reset-hard"),
    pytest.param("git clean -fdx", id="git-clean-fdx-dotenv"),
    pytest.param("git stash clear", id="git-stash-clear"),
    pytest.param("rm -rf src", id="rm-rf-src"),
    pytest.param("mv README.md src/main.py", id="mv-over-file"),
    pytest.param("find . -name '*.py' -not -path './.git/*' -delete", id="find-delete"),
    pytest.param("rm -rf .git", id="rm-rf-dot-git"),
    pytest.param(
        f"{SANDBOX_PYTHON} -c \"import shutil; shutil.rmtree('src')\"", id="python-inline-rmtree"
    ),
]
MODES = [pytest.param(m, id=m) for m in ("ask", "auto", "full")]


@pytest.fixture(autouse=True)
def _git_env(git_env: None) -> None:
    """Plain git for the test's own commands (see :func:`tests.security._damage.git_env`)."""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", COMMANDS)
async def test_destructive_command_asks_then_one_restore_and_undo_are_exact(
    responses_server, model, tmp_path: Path, command: str, mode: str
) -> None:
    ws = tmp_path / "repo"
    make_repo(ws)
    before = state(ws)
    workspace = Workspace(ws, mode=mode, data_dir=tmp_path / "data")
    agent = Agent(name="coder", model=model, tools=workspace.tools())
    responses_server.enqueue([items.shell_call([command], call_id="sh1", timeout_ms=60_000)])
    responses_server.enqueue([items.message("done")])

    first = await Runner.run(agent, "tidy up the repository", hooks=workspace.hooks())
    assert [i.tool_name for i in first.interruptions] == ["shell"], f"{command!r} ran in {mode}"
    assert state(ws) == before, "nothing may change before the user answers"
    decision = workspace.decisions["sh1"].decision
    assert decision.checkpoint_required
    assert (await workspace.recoverability(decision)).summary() == (
        "everything it removes is recoverable"
    )

    run_state = first.to_state()
    run_state.approve(first.interruptions[0])
    final = await Runner.run(agent, run_state, hooks=workspace.hooks())
    assert final.final_output == "done"
    damaged = state(ws)
    assert damaged != before, f"{command!r} should have destroyed something"
    sent = responses_server.requests[-1].body["input"][-1]
    assert sent["type"] == "shell_call_output" and sent["call_id"] == "sh1"

    checkpoints = await workspace.checkpoints.list()
    guard = [c for c in checkpoints if c.label == "before destructive command"]
    assert guard, [c.label for c in checkpoints]
    await workspace.checkpoints.restore(guard[0].id)
    after = state(ws)
    for key in before:
        assert after[key] == before[key], f"{key} not restored byte for byte"
    assert "second commit" in git(ws, "log", "--format=%s")

    await workspace.checkpoints.undo_restore()
    undone = state(ws)
    for key in damaged:
        assert undone[key] == damaged[key], f"undo restore: {key} differs from the damage"
