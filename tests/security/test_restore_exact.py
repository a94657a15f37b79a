"""Complaint: "the agent ran a destructive command and my work is gone" (issue 12, Trust II).

Each case is a real repository holding uncommitted, staged-only, untracked, ignored
(``.env``) and stashed (two entries) content. A checkpoint is taken the way the Workspace
takes it before a destructive command (with what the policy says the command removes), the
test runs the command itself with plain git/shell, then one restore must bring back the
working tree, the index (``git ls-files -s`` and the staged blobs) and the stash (``git stash
list`` and each entry's diff) byte for byte, and *undo restore* must bring back the state
the command left.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harnesses.checkpoints import CheckpointStore
from tests.security._damage import CASES, ENV, git, make_repo, sh, state


@pytest.fixture(autouse=True)
def _git_env(git_env: None) -> None:
    """Plain git for the test's own commands (see :func:`tests.security._damage.git_env`)."""


@pytest.mark.parametrize(("command", "harm"), [pytest.param(c, h, id=i) for i, c, h in CASES])
async def test_one_restore_brings_everything_back_and_undo_brings_the_damage_back(
    tmp_path: Path, command: str, harm: tuple[list[str], bool, list[list[str]]]
) -> None:
    ws = tmp_path / "repo"
    make_repo(ws)
    before = state(ws)
    assert len(before["stash"]) == 2 and "staged only" in str(before["staged blobs"])  # type: ignore[arg-type]
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    removes, unknown, cleans = harm
    cp = await store.create(
        "before destructive command",
        removes=removes,
        removes_unknown=unknown,
        git_clean=cleans,
    )
    assert cp.skipped == ()
    assert {"worktree", "index", "refs", "stash"} <= set(cp.parts)

    sh(ws, command)
    damaged = state(ws)
    assert damaged != before, "the command should have destroyed something"

    await store.restore(cp.id)
    after = state(ws)
    for key in before:
        assert after[key] == before[key], f"{key} not restored byte for byte"
    git(ws, "fsck", "--no-progress")  # a valid repository (shallow if .git was removed)
    assert "second commit" in git(ws, "log", "--format=%s")

    await store.undo_restore()
    undone = state(ws)
    for key in damaged:
        assert undone[key] == damaged[key], (
            f"undo restore: {key} differs from the post-command state"
        )


def _store_has(store: CheckpointStore, oid: str) -> bool:
    done = subprocess.run(
        ["git", f"--git-dir={store.location}", "cat-file", "-e", oid],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def _store_bytes(store: CheckpointStore) -> int:
    return sum(p.stat().st_size for p in (store.location / "objects").rglob("*") if p.is_file())


async def test_400mb_untracked_file_is_skipped_and_reported(tmp_path: Path) -> None:
    """Never copied silently: skipped, named in the checkpoint, nothing of it in the store.
    (Its cost, 1.0x a run without it, is measured by ``python -m bench.checkpoints``.)"""
    ws = tmp_path / "repo"
    make_repo(ws)
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    await store.create("warm the stat cache")
    big = 400 * 1024 * 1024

    with open(ws / "dataset.bin", "wb") as f:  # sparse: git would still read 400 MB
        f.truncate(big)
    assert (ws / "dataset.bin").stat().st_size == big
    cp = await store.create("with the big file")
    assert cp.skipped == (("dataset.bin", big),)
    listed = (await store.list())[-1]
    assert listed.skipped == (("dataset.bin", big),)  # read back from the store
    tree = subprocess.run(
        ["git", f"--git-dir={store.location}", "ls-tree", "-r", "--name-only", cp.commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert "dataset.bin" not in tree and "notes.txt" in tree
    assert _store_bytes(store) < 5 * 1024 * 1024  # nothing of the 400 MB was copied
    assert git(ws, "for-each-ref", "refs/tandem") == ""  # and nothing into the user's .git
    # the approval prompt's line
    rec = await store.recoverability(removes=["dataset.bin", ENV])
    assert rec.lost == (("dataset.bin", big),)
    assert rec.summary() == "1 untracked file, 419 MB, is over the cap and will not be recoverable"
    # restore neither deletes nor rewrites the skipped file
    (ws / "README.md").write_text("changed\n")
    await store.restore(cp.id)
    assert (ws / "dataset.bin").stat().st_size == big


async def test_ignored_files_over_the_cap_are_named_in_the_prompt(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    make_repo(ws)
    for name in ("a.log", "b.log"):
        with open(ws / name, "wb") as f:
            f.truncate(650 * 1000 * 1000)
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    rec = await store.recoverability(git_clean=[["-fdx"]])
    assert {p for p, _ in rec.covered} >= {ENV, "build/out.bin", "notes.txt"}
    assert rec.summary() == "2 ignored files, 1.3 GB, are over the cap and will not be recoverable"
    cp = await store.create("before git clean -fdx", git_clean=[["-fdx"]])
    assert {p for p, _ in cp.skipped} == {"a.log", "b.log"}
    sh(ws, "git clean -fdxq")
    await store.restore(cp.id)
    assert (ws / ENV).read_text() == "API_TOKEN=never-lose-me\n"


async def test_retention_and_gc_keep_the_store_bounded(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    make_repo(ws)
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    blobs = []
    made = []
    for n in range(5):
        body = f"unique content {n} " * 100 + "\n"
        (ws / "notes.txt").write_text(body)
        blobs.append(git(ws, "hash-object", "notes.txt").strip())
        made.append(await store.create(f"turn {n}"))
    pre = await store.restore(made[1].id)
    now = time.time() + 3 * 86400
    # young checkpoints are never deleted
    assert await store.prune(keep_count=1, max_age_s=86400, min_age_s=10 * 86400, now=now) == []
    deleted = await store.prune(keep_count=2, max_age_s=86400, min_age_s=60, now=now)
    left = [c.id for c in await store.list()]
    # the latest (the pre-restore, needed for undo) and the restored one stay
    assert pre in left and made[1].id in left
    assert set(deleted) == {made[0].id, made[2].id, made[3].id, made[4].id}
    assert not _store_has(store, blobs[0]) and not _store_has(store, blobs[3])
    assert _store_has(store, blobs[1]) and _store_has(store, blobs[4])  # pre-restore holds v4
    await store.undo_restore()
    assert (ws / "notes.txt").read_text() == f"unique content {4} " * 100 + "\n"
    assert len(state(ws)["stash"]) == 2  # type: ignore[arg-type]


def test_tandem_checkpoints_cli_round_trip(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    make_repo(ws)
    before = state(ws)
    root = Path(__file__).resolve().parents[2]

    def tandem(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "desktop.cli", "checkpoints", *args, "--repo", str(ws)],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    import asyncio

    cp = asyncio.run(CheckpointStore(ws).create("before rm -rf src", removes=["src"]))
    listed = tandem("list")
    assert (
        listed.returncode == 0 and cp.id in listed.stdout and "before rm -rf src" in listed.stdout
    )
    sh(ws, "rm -rf src && git stash clear && git reset -q")
    damaged = state(ws)
    diff = tandem("diff", cp.id)
    assert diff.returncode == 0 and "-print('staged only')" in diff.stdout
    done = tandem("restore", cp.id)
    assert done.returncode == 0, done.stderr
    assert state(ws) == before
    undone = tandem("undo")
    assert undone.returncode == 0, undone.stderr
    assert state(ws) == damaged
    bad = tandem("restore", "no-such-id")
    assert bad.returncode == 1 and "unknown checkpoint" in bad.stderr


async def test_automatic_retention_bounds_the_count_and_gc_runs(tmp_path: Path) -> None:
    from harnesses.checkpoints import Retention

    ws = tmp_path / "repo"
    make_repo(ws)
    retention = Retention(keep_count=3, max_age_s=86400, min_age_s=0, gc_every=2)
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=retention)
    first_blob = ""
    for n in range(6):
        (ws / "notes.txt").write_text(f"version {n} " * 50 + "\n")
        if n == 0:
            first_blob = git(ws, "hash-object", "notes.txt").strip()
        if n == 3:  # an hour and more later: the first turns' objects are past the grace
            aged = time.time() - 2 * 3600
            for loose in (store.location / "objects").glob("??/*"):
                os.utime(loose, (aged, aged))
        await store.create(f"turn {n}")
    assert [c.label for c in await store.list()] == ["turn 3", "turn 4", "turn 5"]
    assert not _store_has(store, first_blob)  # gc pruned the deleted checkpoints' objects


async def test_a_failed_gc_does_not_fail_the_checkpoint_and_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stores repacking at once: the second ``git repack`` fails ("unable to rename
    temporary file"). The checkpoint it ran after is made and returned (``create`` raised,
    so the command it guarded was refused), and the next retention runs the gc again."""
    from harnesses.checkpoints import Retention, _backend
    from harnesses.vcs import GitError

    ws = tmp_path / "repo"
    make_repo(ws)
    retention = Retention(keep_count=1, max_age_s=86400, min_age_s=0, gc_every=1)
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=retention)
    await store.create("turn 0")
    real = _backend.GitBackend.run
    repacks: list[str] = []

    def run(self, *args, **kw):
        if args[:1] == ("repack",):
            repacks.append("tried")
            if len(repacks) == 1:
                raise GitError(list(args), 128, "unable to rename temporary file")
        return real(self, *args, **kw)

    monkeypatch.setattr(_backend.GitBackend, "run", run)
    (ws / "notes.txt").write_text("turn 1\n")
    made = await store.create("turn 1")  # retention deletes turn 0, its gc fails
    assert [c.id for c in await store.list()] == [made.id]
    assert (store.location / "tandem-gc-pending").read_text().strip() == "1"
    (ws / "notes.txt").write_text("turn 2\n")
    await store.create("turn 2")
    assert repacks == ["tried", "tried"]
    assert (store.location / "tandem-gc-pending").read_text().strip() == "0"


@pytest.mark.parametrize("command", [pytest.param(c, id=i) for i, c, _ in CASES])
async def test_the_workspaces_checkpoint_from_the_policy_decision_restores_exactly(
    tmp_path: Path, command: str
) -> None:
    """Same promise, with the checkpoint the Workspace takes from the policy's decision."""
    from harnesses.workspace import Workspace

    ws = tmp_path / "repo"
    make_repo(ws)
    before = state(ws)
    workspace = Workspace(ws, mode="auto", data_dir=tmp_path / "data", sandbox_enabled=False)
    for mode in ("ask", "full", "auto"):  # the command asks in every mode
        workspace.set_mode(mode)
        decision = workspace.decide_commands([command])
        assert (decision.action, decision.checkpoint_required) == ("ask", True), mode
    line = (await workspace.recoverability(decision)).summary()
    assert line == "everything it removes is recoverable"
    cp = await workspace.checkpoint("before destructive command", decision=decision)
    assert cp is not None and cp.skipped == ()
    sh(ws, command)
    damaged = state(ws)
    await workspace.checkpoints.restore(cp.id)
    assert state(ws) == before
    await workspace.checkpoints.undo_restore()
    assert state(ws) == damaged
