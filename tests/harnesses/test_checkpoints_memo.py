"""The user's refs and index read once and reused while their files are provably unchanged
(issue 15), against real git: every way the refs or the index can change between two
checkpoints (``update-ref``, a new nested branch, ``pack-refs``, a ref file rewritten in
place, ``checkout -b``, a stash, ``git add``) is in the next checkpoint, and an unchanged
repository costs no ``symbolic-ref``/``for-each-ref``/``ls-files -s`` run."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from harnesses.checkpoints import CheckpointStore
from tests.support.checkpoint_env import isolate_git, settle_rules


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


@pytest.fixture(autouse=True)
def _settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as settled at once (no waiting out the 1 s racy window); each
    change below also gives the files it touches a new identity (a new inode from git's
    lock-and-rename, or a new mtime)."""
    settle_rules(monkeypatch)


def _git(ws: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def _spawned(log: list[str]) -> Callable[[], list[str]]:
    from harnesses.vcs import runner

    original = runner._spawn

    def spawn(args: list[str], *rest: object) -> object:
        log.append(args[0])
        return original(args, *rest)  # type: ignore[arg-type]

    runner._spawn = spawn  # type: ignore[assignment]
    return lambda: log


def _meta(store: CheckpointStore, commit: str) -> dict[str, object]:
    out = _git(store.workspace, f"--git-dir={store.location}", "cat-file", "commit", commit)
    line = next(x for x in out.splitlines() if x.startswith("tandem-checkpoint: "))
    meta: dict[str, object] = json.loads(line.split(": ", 1)[1])
    return meta


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(ws, "init", "-q", "-b", "main")
    (ws / "a.txt").write_text("one\n")
    _git(ws, "add", "a.txt")
    _git(ws, "commit", "-q", "-m", "first")
    return ws


async def test_an_unchanged_repository_is_not_read_again(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harnesses.vcs import runner

    store = CheckpointStore(repo, data_dir=tmp_path / "data", retention=None)
    await store.create("first")
    await store.create("second")
    log: list[str] = []
    monkeypatch.setattr(runner, "_spawn", runner._spawn)  # restored after the test
    _spawned(log)
    (repo / "a.txt").write_text("edited\n")
    made = await store.create("third")
    assert made.files_touched == ("a.txt",)
    for command in ("symbolic-ref", "for-each-ref", "rev-parse"):
        assert log.count(command) <= (1 if command == "for-each-ref" else 0), log  # store's
    assert "ls-files" in log and log.count("ls-files") <= 2, log  # walk + tracked-ignored
    meta = _meta(store, made.commit)
    assert meta["head"] == "ref: refs/heads/main"
    assert meta["refs"] == {"refs/heads/main": _git(repo, "rev-parse", "HEAD")}


def _changes(ws: Path) -> list[tuple[str, Callable[[], None]]]:
    def in_place() -> None:
        ref = ws / ".git" / "refs" / "heads" / "side"
        old = ref.stat()
        ref.write_text(_git(ws, "rev-parse", "HEAD") + "\n")  # same size, same inode
        os.utime(ref, ns=(old.st_atime_ns, old.st_mtime_ns + 7 * 10**9))

    def commit() -> None:
        (ws / "a.txt").write_text("two\n")
        _git(ws, "commit", "-q", "-am", "second")

    def stash() -> None:
        (ws / "a.txt").write_text("stashed\n")
        _git(ws, "stash", "push", "-q", "-m", "wip")

    return [
        ("commit moves main", commit),
        ("a new branch", lambda: _git(ws, "branch", "side")),
        ("a nested branch", lambda: _git(ws, "branch", "feature/deep/x")),
        ("pack-refs", lambda: _git(ws, "pack-refs", "--all")),
        ("a loose ref again", lambda: _git(ws, "update-ref", "refs/heads/side", "HEAD~1")),
        ("rewritten in place", in_place),
        ("checkout -b", lambda: _git(ws, "checkout", "-q", "-b", "other")),
        ("detached", lambda: _git(ws, "checkout", "-q", "--detach")),
        ("a tag", lambda: _git(ws, "tag", "-a", "-m", "t", "v1")),
        ("a stash", stash),
        ("a branch deleted", lambda: _git(ws, "branch", "-D", "feature/deep/x")),
    ]


def _expected(ws: Path) -> tuple[str, dict[str, str]]:
    sym = subprocess.run(["git", "symbolic-ref", "-q", "HEAD"], cwd=ws, capture_output=True)
    head = (
        "ref: " + sym.stdout.decode().strip()
        if sym.returncode == 0
        else _git(ws, "rev-parse", "HEAD")
    )
    refs = {}
    for line in _git(ws, "for-each-ref", "--format=%(objectname) %(refname)").splitlines():
        oid, name = line.split(" ", 1)
        refs[name] = oid
    return head, refs


async def test_every_ref_change_is_in_the_next_checkpoint(repo: Path, tmp_path: Path) -> None:
    store = CheckpointStore(repo, data_dir=tmp_path / "data", retention=None)
    await store.create("first")
    await store.create("second")
    for label, change in _changes(repo):
        change()
        made = await store.create(label)
        meta = _meta(store, made.commit)
        head, refs = _expected(repo)
        assert (meta["head"], meta["refs"]) == (head, refs), label


async def test_a_staged_change_is_in_the_next_checkpoint(repo: Path, tmp_path: Path) -> None:
    store = CheckpointStore(repo, data_dir=tmp_path / "data", retention=None)
    await store.create("first")
    await store.create("second")
    for n in range(3):
        (repo / "a.txt").write_text(f"staged {n}\n")  # same size each time
        _git(repo, "add", "a.txt")
        (repo / f"new{n}.txt").write_text("new\n")
        _git(repo, "add", f"new{n}.txt")
        made = await store.create(f"staged {n}")
        shown = _git(repo, f"--git-dir={store.location}", "show", f"{made.commit}^1:a.txt")
        assert shown == f"staged {n}"
        listed = _git(
            repo, f"--git-dir={store.location}", "ls-tree", "--name-only", f"{made.commit}^1"
        )
        assert f"new{n}.txt" in listed.split("\n")
