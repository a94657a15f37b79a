"""Attack class: apply_patch plants code where the user's own git runs it (red-team hole 4).

The sandbox binds a repository's configured hooks folders and included config files
read-only, so the shell cannot write them; the editor writes by itself, outside the
sandbox. A repository that sets ``core.hooksPath .githooks`` (or husky's ``.husky``), a
global ``core.hooksPath`` into the workspace, or an ``include.path`` naming a workspace file
turns an ordinary-looking patch into code the user's next ``git commit`` runs unsandboxed.

Promise: in ``immediate`` mode (auto and full access) the editor refuses such a write with a
model-visible reason naming the place, writes nothing, and the user's next ``git commit``
(real git, the user's own config) runs no planted code: the marker outside the workspace
never appears. In ``review`` mode (ask) the patch goes to the user's review instead.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.tools.editor import ApplyPatchOperation, ApplyPatchResult
from harnesses.editor import GitAwareEditor, ReviewEvent, ReviewOutcome, ReviewQueue

_IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


@dataclass(frozen=True, slots=True)
class Scene:
    """``ws``: a git repo with one commit; ``marker``: a file outside it that planted code
    would create; ``global_config``: the user's global git config (``GIT_CONFIG_GLOBAL``)."""

    ws: Path
    marker: Path
    global_config: Path

    @property
    def payload(self) -> str:
        """A hook body that creates the marker."""
        return f"touch {shlex.quote(str(self.marker))}"

    def git(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The user's own git in the workspace (their config, hooks enabled)."""
        return subprocess.run(
            ["git", *args], cwd=self.ws, capture_output=True, text=True, timeout=30
        )

    def hook(self, rel: str, body: str = "echo lint") -> Path:
        """An executable hook script at ``rel`` (``#!/bin/sh`` then ``body``)."""
        path = self.ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
        return path

    def user_commits(self) -> None:
        """The user's next ``git commit`` (hooks run, as they would for the user)."""
        (self.ws / "work.txt").write_text(f"{os.urandom(4).hex()}\n")
        self.git("add", "work.txt")
        self.git("commit", "-qm", "user work")


@pytest.fixture
def scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scene:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    global_config = home / "gitconfig"
    global_config.write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key, value in _IDENTITY.items():
        monkeypatch.setenv(key, value)
    s = Scene(ws, tmp_path / "MARK", global_config)
    s.git("init", "-q", "-b", "main")
    (ws / "README.md").write_text("hello\n")
    s.git("add", "-A")
    s.git("commit", "-qm", "init")
    return s


def _update(path: str, old: str, new: str, move_to: str | None = None) -> ApplyPatchOperation:
    return ApplyPatchOperation(
        "update_file", path, diff=f"@@\n #!/bin/sh\n-{old}\n+{new}\n", move_to=move_to
    )


def _create(path: str, body: str) -> ApplyPatchOperation:
    return ApplyPatchOperation("create_file", path, diff=f"+#!/bin/sh\n+{body}\n")


async def _apply(
    scene: Scene, op: ApplyPatchOperation, mode: str = "immediate"
) -> ApplyPatchResult:
    editor = GitAwareEditor(scene.ws, mode=mode)  # type: ignore[arg-type]
    if op.type == "create_file":
        return await editor.create_file(op)
    return await editor.update_file(op)


def _assert_held(scene: Scene, result: ApplyPatchResult, place: str) -> None:
    assert result.status == "failed", result.output
    assert "Refused" in (result.output or "") and place in (result.output or ""), result.output
    assert "Nothing was written" in (result.output or "")
    scene.user_commits()
    assert not scene.marker.exists(), "the user's git commit ran code the patch planted"


def _plant_is_live(scene: Scene, rel: str) -> None:
    """Prove with the user's git that ``rel`` is where git runs code from, then undo."""
    path = scene.ws / rel
    before = path.read_text() if path.exists() else None
    mode = path.stat().st_mode if path.exists() else None
    scene.hook(rel, scene.payload)
    scene.user_commits()
    assert scene.marker.exists(), f"{rel} is not a live hook: the test proves nothing"
    scene.marker.unlink()
    if before is None:
        path.unlink()
    else:
        path.write_text(before)
        assert mode is not None
        path.chmod(mode)


# -- repository core.hooksPath ---------------------------------------------------------------


async def test_githooks_update_of_an_executable_hook_is_refused(scene: Scene) -> None:
    """The red-team reproducer: ``core.hooksPath .githooks``, executable pre-commit."""
    scene.git("config", "core.hooksPath", ".githooks")
    scene.hook(".githooks/pre-commit")
    _plant_is_live(scene, ".githooks/pre-commit")
    result = await _apply(scene, _update(".githooks/pre-commit", "echo lint", scene.payload))
    _assert_held(scene, result, ".githooks")
    assert "echo lint" in (scene.ws / ".githooks/pre-commit").read_text()


async def test_githooks_new_hook_is_refused(scene: Scene) -> None:
    scene.git("config", "core.hooksPath", ".githooks")
    result = await _apply(scene, _create(".githooks/pre-commit", scene.payload))
    _assert_held(scene, result, ".githooks")
    assert not (scene.ws / ".githooks/pre-commit").exists()


async def test_githooks_reached_through_a_workspace_symlink_is_refused(scene: Scene) -> None:
    scene.git("config", "core.hooksPath", ".githooks")
    scene.hook(".githooks/pre-commit")
    (scene.ws / "tools").symlink_to(".githooks")
    result = await _apply(scene, _update("tools/pre-commit", "echo lint", scene.payload))
    _assert_held(scene, result, ".githooks")


async def test_rename_into_the_hooks_folder_is_refused(scene: Scene) -> None:
    scene.git("config", "core.hooksPath", ".githooks")
    (scene.ws / ".githooks").mkdir()
    scene.hook("scripts/lint.sh")
    op = _update("scripts/lint.sh", "echo lint", scene.payload, move_to=".githooks/pre-commit")
    result = await _apply(scene, op)
    _assert_held(scene, result, ".githooks")
    assert not (scene.ws / ".githooks/pre-commit").exists()


async def test_hooks_path_in_a_config_worktree_is_refused(scene: Scene) -> None:
    scene.git("config", "extensions.worktreeConfig", "true")
    scene.git("config", "--worktree", "core.hooksPath", "hooks-dir")
    scene.hook("hooks-dir/pre-commit")
    _plant_is_live(scene, "hooks-dir/pre-commit")
    result = await _apply(scene, _update("hooks-dir/pre-commit", "echo lint", scene.payload))
    _assert_held(scene, result, "hooks-dir")


async def test_workspace_in_a_subfolder_of_the_repository_is_refused(scene: Scene) -> None:
    """The workspace is ``app/`` of the repository; the repo's config (outside the
    workspace) sets ``core.hooksPath app/hooks``, relative to the work-tree top."""
    scene.git("config", "core.hooksPath", "app/hooks")
    scene.hook("app/hooks/pre-commit")
    _plant_is_live(scene, "app/hooks/pre-commit")
    editor = GitAwareEditor(scene.ws / "app", mode="immediate")
    result = await editor.update_file(_update("hooks/pre-commit", "echo lint", scene.payload))
    _assert_held(scene, result, "hooks")


# -- husky --------------------------------------------------------------------------------------


async def test_husky_8_hook_is_refused(scene: Scene) -> None:
    """husky 8: ``core.hooksPath .husky``, hooks are ``.husky/<name>``."""
    scene.git("config", "core.hooksPath", ".husky")
    scene.hook(".husky/pre-commit", "npx lint-staged")
    _plant_is_live(scene, ".husky/pre-commit")
    result = await _apply(scene, _update(".husky/pre-commit", "npx lint-staged", scene.payload))
    _assert_held(scene, result, ".husky")


async def test_husky_9_user_hook_outside_the_hooks_path_is_refused(scene: Scene) -> None:
    """husky 9: ``core.hooksPath .husky/_``; ``_/pre-commit`` sources ``_/h``, which runs
    ``.husky/pre-commit`` with ``sh`` (executable or not), one folder above the hooks path."""
    scene.git("config", "core.hooksPath", ".husky/_")
    scene.hook(".husky/_/pre-commit", '. "$(dirname "$0")/h"')
    h = scene.ws / ".husky/_/h"
    h.write_text(
        '#!/usr/bin/env sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n'
        '[ ! -f "$s" ] && exit 0\nsh -e "$s" "$@"\n'
    )
    (scene.ws / ".husky/pre-commit").write_text(scene.payload + "\n")
    scene.user_commits()
    assert scene.marker.exists(), "the husky 9 layout is not live: the test proves nothing"
    scene.marker.unlink()
    (scene.ws / ".husky/pre-commit").write_text("npx lint-staged\n")
    op = ApplyPatchOperation(
        "update_file", ".husky/pre-commit", diff=f"@@\n-npx lint-staged\n+{scene.payload}\n"
    )
    result = await _apply(scene, op)
    _assert_held(scene, result, ".husky")


# -- the user's global config and includes ------------------------------------------------------


async def test_global_hooks_path_into_the_workspace_is_refused(scene: Scene) -> None:
    hooks = scene.ws / "ci" / "hooks"
    scene.global_config.write_text(f"[core]\n\thooksPath = {hooks}\n")
    scene.hook("ci/hooks/pre-commit")
    _plant_is_live(scene, "ci/hooks/pre-commit")
    result = await _apply(scene, _update("ci/hooks/pre-commit", "echo lint", scene.payload))
    _assert_held(scene, result, "ci/hooks")


async def test_global_relative_hooks_path_is_refused(scene: Scene) -> None:
    """A relative global ``core.hooksPath`` is relative to each work tree's top."""
    scene.global_config.write_text("[core]\n\thooksPath = .config/hooks\n")
    result = await _apply(scene, _create(".config/hooks/pre-commit", scene.payload))
    _assert_held(scene, result, ".config/hooks")


async def test_included_config_in_the_workspace_is_refused(scene: Scene) -> None:
    """``include.path = ../project.gitconfig`` in ``.git/config``: the file is config."""
    scene.git("config", "include.path", "../project.gitconfig")
    (scene.ws / "project.gitconfig").write_text("[user]\n\tname = t\n")
    op = ApplyPatchOperation(
        "update_file",
        "project.gitconfig",
        diff=f"@@\n [user]\n \tname = t\n+[core]\n+\thooksPath = {scene.ws / 'planted'}\n",
    )
    scene.hook("planted/pre-commit", scene.payload)
    result = await _apply(scene, op)
    _assert_held(scene, result, "include.path")
    assert "hooksPath" not in (scene.ws / "project.gitconfig").read_text()


async def test_global_include_target_in_the_workspace_is_refused(scene: Scene) -> None:
    target = scene.ws / "team.gitconfig"
    scene.global_config.write_text(f"[include]\n\tpath = {target}\n")
    result = await _apply(
        scene,
        ApplyPatchOperation("create_file", "team.gitconfig", diff="+[core]\n+\tfsmonitor = x\n"),
    )
    _assert_held(scene, result, "include.path")
    assert not target.exists()


async def test_bare_repository_in_the_workspace_is_refused(scene: Scene) -> None:
    """A bare repo (``remote.git``) in the workspace: its hooks run on ``git push`` to it."""
    subprocess.run(
        ["git", "init", "-q", "--bare", str(scene.ws / "remote.git")], check=True, timeout=30
    )
    result = await _apply(scene, _create("remote.git/hooks/pre-receive", scene.payload))
    assert result.status == "failed", result.output
    assert "remote.git" in (result.output or "")
    assert not (scene.ws / "remote.git/hooks/pre-receive").exists()


# -- what still works ---------------------------------------------------------------------------


async def test_review_mode_sends_a_hooks_patch_to_the_user(scene: Scene) -> None:
    """In ask mode the patch is proposed for review (not refused); rejected, nothing lands."""
    scene.git("config", "core.hooksPath", ".githooks")
    scene.hook(".githooks/pre-commit")
    queue = ReviewQueue()
    seen: list[str] = []

    def reviewer(event: ReviewEvent) -> None:
        if event.type == "submitted":
            seen.append(event.proposal.path)
            queue.resolve(event.proposal.id, ReviewOutcome.reject_all("not a hook change"))

    queue.add_listener(reviewer)
    editor = GitAwareEditor(scene.ws, mode="review", queue=queue)
    result = await editor.update_file(_update(".githooks/pre-commit", "echo lint", scene.payload))
    assert seen == [".githooks/pre-commit"]
    assert result.status == "failed"
    assert "echo lint" in (scene.ws / ".githooks/pre-commit").read_text()
    scene.user_commits()
    assert not scene.marker.exists()


async def test_ordinary_files_still_land_in_immediate_mode(scene: Scene) -> None:
    scene.git("config", "core.hooksPath", ".githooks")
    result = await _apply(scene, _create("src/hooks.py", "print('not a hook')"))
    assert result.status == "completed", result.output
    assert (scene.ws / "src/hooks.py").exists()
