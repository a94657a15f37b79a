"""AGENTS.md discovery (issue 16, item 1): global files, the repository root down to the
working directory, overrides, the cap; and the request's instructions carry them in order."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from core import Agent, OpenAIProvider, RunConfig, Runner
from harnesses.instructions import (
    instructions_with_agents_md,
    load_instructions,
)
from tests.support import items


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A real git repository with a nested working directory, a Tandem config dir and a
    Codex home, each with its own AGENTS.md."""
    repo = tmp_path / "repo"
    work = repo / "pkg" / "sub"
    work.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    config = tmp_path / "config" / "tandem"
    config.mkdir(parents=True)
    codex = tmp_path / "codex-home"
    codex.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex))
    (tmp_path / "AGENTS.md").write_text("ABOVE THE REPO: never loaded\n")
    (config / "AGENTS.md").write_text("TANDEM GLOBAL\n")
    (codex / "AGENTS.md").write_text("CODEX GLOBAL\n")
    (repo / "AGENTS.md").write_text("REPO ROOT\n")
    (repo / "pkg" / "AGENTS.md").write_text("PKG PLAIN\n")
    (repo / "pkg" / "AGENTS.override.md").write_text("PKG OVERRIDE\n")
    (work / "AGENTS.md").write_text("SUB\n")
    return {"repo": repo, "work": work, "config": config, "codex": codex}


def test_order_override_and_scope(tree):
    loaded = load_instructions(tree["work"], config_dir=tree["config"])
    names = [(f.scope, f.label(tree["work"])) for f in loaded.files]
    assert [scope for scope, _ in names] == ["tandem", "codex", "project", "project", "project"]
    text = loaded.text
    order = ["TANDEM GLOBAL", "CODEX GLOBAL", "REPO ROOT", "PKG OVERRIDE", "SUB"]
    positions = [text.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "PKG PLAIN" not in text and "ABOVE THE REPO" not in text
    override = loaded.files[3]
    assert override.path.name == "AGENTS.override.md"
    assert override.replaces == tree["repo"] / "pkg" / "AGENTS.md"
    assert not loaded.truncated
    assert loaded.total_bytes == sum(len(m) + 1 for m in order)


def test_global_override_replaces_codex_file(tree):
    (tree["codex"] / "AGENTS.override.md").write_text("CODEX OVERRIDE\n")
    text = load_instructions(tree["work"], config_dir=tree["config"]).text
    assert "CODEX OVERRIDE" in text and "CODEX GLOBAL" not in text


def test_a_worktree_git_file_marks_the_root(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "none"))
    (tmp_path / "AGENTS.md").write_text("PARENT\n")
    folder = tmp_path / "worktree"
    (folder / "src").mkdir(parents=True)
    (folder / ".git").write_text("gitdir: /elsewhere/.git/worktrees/w\n")  # a linked worktree
    (folder / "AGENTS.md").write_text("HERE\n")
    loaded = load_instructions(folder / "src", config_dir=tmp_path / "cfg")
    assert [f.path for f in loaded.files] == [folder / "AGENTS.md"]


def test_cap_truncates_and_says_so(tree):
    (tree["work"] / "AGENTS.md").write_text("SUB " + "é" * 100 + "\n")  # multi-byte at the cut
    loaded = load_instructions(tree["work"], cap_bytes=80, config_dir=tree["config"])
    assert loaded.total_bytes <= 80
    assert loaded.truncated
    sub = loaded.files[-1]
    assert sub.truncated and sub.size > sub.used
    assert "truncated here" in loaded.text and "capped at 80 bytes" in loaded.text
    assert "\ufffd" not in loaded.text  # the cut falls between characters
    assert any("truncated to" in line or "skipped" in line for line in loaded.summary_lines())


def test_cap_reached_skips_later_files(tree):
    loaded = load_instructions(tree["work"], cap_bytes=14, config_dir=tree["config"])
    assert [f.used for f in loaded.files][:2] == [14, 0]
    assert all(f.truncated for f in loaded.files[1:])
    assert "REPO ROOT" not in loaded.text and "not included" in loaded.text


def test_link_leaving_the_repository_is_not_read(tree, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("sk-should-not-leak\n")
    target = tree["work"] / "AGENTS.md"
    target.unlink()
    os.symlink(secret, target)
    loaded = load_instructions(tree["work"], config_dir=tree["config"])
    assert "sk-should-not-leak" not in loaded.text
    assert loaded.files[-1].error == "a link leaving the repository"


def test_no_files_no_text(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "none"))
    loaded = load_instructions(tmp_path, config_dir=tmp_path / "cfg")
    assert loaded.files == () and loaded.text == ""
    assert loaded.summary_lines() == ["no AGENTS.md found"]


def test_default_config_dir_is_tandems(tree, monkeypatch, tmp_path):
    from core.settings import settings_dir

    settings_dir().mkdir(parents=True, exist_ok=True)
    (settings_dir() / "AGENTS.md").write_text("FROM XDG CONFIG\n")
    assert "FROM XDG CONFIG" in load_instructions(tree["work"]).text


async def test_request_instructions_carry_the_files_in_order_and_reload_per_run(
    tree, responses_server
):
    loads = []
    instructions = instructions_with_agents_md(
        "BASE PROMPT", tree["work"], on_load=loads.append, config_dir=tree["config"]
    )
    agent = Agent(name="a", instructions=instructions, model="test-model")
    config = RunConfig(model_provider=OpenAIProvider(base_url=responses_server.base_url))
    call = items.function_call("missing_tool", {}, call_id="c1")
    responses_server.enqueue([call])
    responses_server.enqueue([items.message("one")])
    config.tool_not_found_behavior = "return_error_to_model"
    await Runner.run(agent, "first", run_config=config)
    first, second = (r.body["instructions"] for r in responses_server.requests)
    assert first == second  # two turns of one run: read once
    assert first.startswith("BASE PROMPT")
    markers = ["TANDEM GLOBAL", "CODEX GLOBAL", "REPO ROOT", "PKG OVERRIDE", "SUB"]
    assert [first.index(m) for m in markers] == sorted(first.index(m) for m in markers)
    assert len(loads) == 1
    (tree["work"] / "AGENTS.md").write_text("SUB CHANGED\n")  # the next run reads it again
    responses_server.enqueue([items.message("two")])
    await Runner.run(agent, "second", run_config=config)
    assert "SUB CHANGED" in responses_server.requests[-1].body["instructions"]
    assert len(loads) == 2
