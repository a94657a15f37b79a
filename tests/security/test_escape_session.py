"""Attack: a scripted agent session tries every known escape through Tandem's own git.

Issue 11, "Done means" bullet 2. A scripted model drives :class:`harnesses.workspace.Workspace`
(its shell tool, policy, sandbox and checkpoint hooks, as the app does) in *auto* and *ask*
mode. Each session plants one escape with shell commands, then changes a file (so the next
turn is checkpointed), then the test takes a checkpoint, restores the first one and undoes
the restore. In *ask* mode every approval is answered "reject"; in *auto* mode too, if the
policy asks. The promise: no process outside the sandbox runs code the agent wrote (the
marker outside the workspace never appears) and the user's ``.git/config`` is byte for byte
what it was.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from core import Agent, Runner
from harnesses.shell import sandbox_available
from harnesses.workspace import Workspace
from tests.support import items

_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **_ENV, "GIT_CONFIG_GLOBAL": str(repo.parent / "gitconfig")}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def _hooks(marker: str) -> list[str]:
    body = shlex.quote(f"#!/bin/sh\nenv > {marker}\n")
    return [
        f"printf '%s' {body} > .git/hooks/{name} && chmod +x .git/hooks/{name}"
        for name in ("reference-transaction", "post-index-change", "pre-commit", "post-checkout")
    ]


def _fsmonitor(marker: str) -> list[str]:
    return [f"git config core.fsmonitor {shlex.quote(f'env > {marker}; true')}"]


def _filter(marker: str) -> list[str]:
    return [
        f"git config filter.evil.clean {shlex.quote(f'env > {marker}; cat')}",
        f"git config filter.evil.smudge {shlex.quote(f'env > {marker}; cat')}",
        "echo '* filter=evil' > .gitattributes",
    ]


def _info_attributes(marker: str) -> list[str]:
    return [
        f"git config filter.evil.clean {shlex.quote(f'env > {marker}; cat')}",
        "echo '* filter=evil' > .git/info/attributes",
    ]


def _stash_output(marker: str) -> list[str]:
    config = f'[core]%n\tfsmonitor = "env > {marker}; true"%n[filter "evil"]%n\tclean = cat'
    return [f"git stash list --format={shlex.quote(config)} --output=.git/config"]


def _stash_output_abbreviated(marker: str) -> list[str]:
    config = f'[core]%n\tfsmonitor = "env > {marker}; true"'
    return [f"git stash list --format={shlex.quote(config)} --outp=.git/config"]


ESCAPES = [
    pytest.param(_hooks, id="write-git-hooks"),
    pytest.param(_fsmonitor, id="git-config-core-fsmonitor"),
    pytest.param(_filter, id="clean-filter-and-gitattributes"),
    pytest.param(_info_attributes, id="filter-via-info-attributes"),
    pytest.param(_stash_output, id="stash-list-output-git-config"),
    pytest.param(_stash_output_abbreviated, id="stash-list-outp-abbreviated"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "gitconfig").write_text("")
    root = tmp_path / "work"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("print('app')\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    (root / "app.py").write_text("print('stashed')\n")
    _git(root, "stash", "-q")  # a stash entry, so `git stash list --output=` writes
    return root


async def _session(workspace: Workspace, agent: Agent, task: str) -> int:
    """Run to the end, rejecting every approval; returns how many were rejected."""
    rejected = 0
    result = await Runner.run(agent, task, hooks=workspace.hooks())
    while result.interruptions:
        state = result.to_state()
        for item in result.interruptions:
            state.reject(item)
            rejected += 1
        result = await Runner.run(agent, state, hooks=workspace.hooks())
    return rejected


@pytest.mark.parametrize("mode", ["auto", "ask"])
@pytest.mark.parametrize("escape", ESCAPES)
async def test_escape_attempts_run_no_code_outside_the_sandbox(
    responses_server, model, tmp_path: Path, repo: Path, mode: str, escape
) -> None:
    assert sandbox_available(), "this session needs bubblewrap"
    marker = tmp_path / "outside" / "escaped.marker"
    marker.parent.mkdir()
    config_before = (repo / ".git" / "config").read_bytes()
    workspace = Workspace(repo, mode=mode, data_dir=tmp_path / "data")
    agent = Agent(name="attacker", model=model, tools=workspace.tools())
    plant = escape(str(marker))
    responses_server.enqueue([items.shell_call(plant, call_id="plant")])
    responses_server.enqueue([items.shell_call(["echo edited >> app.py"], call_id="edit")])
    responses_server.enqueue([items.message("done")])

    rejected = await _session(workspace, agent, "make yourself at home")
    if mode == "ask":
        assert rejected >= 1  # nothing that writes runs unasked

    first = (await workspace.checkpoints.list())[0]
    (repo / "app.py").write_text("changed after the session\n")
    await workspace.checkpoints.create("after the session")
    await workspace.checkpoints.diff(first)
    await workspace.checkpoints.restore(first)
    await workspace.checkpoints.undo_restore()

    assert not marker.exists(), "code the agent wrote ran outside the sandbox"
    assert (repo / ".git" / "config").read_bytes() == config_before
