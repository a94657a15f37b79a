"""Nested repositories inside the workspace (a new user's trial, issue 15): a fresh ``git
init`` with no commit yet made every checkpoint fail, and removing a folder that holds a
nested repository was called recoverable, then its checkpoint failed. Now a nested
repository without a commit is left out (it cannot be a gitlink) until it has one, and the
approval line says a nested repository's history and work are not recoverable."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harnesses.checkpoints import CheckpointStore
from harnesses.checkpoints._cap import Recoverability
from harnesses.checkpoints._nested import has_head_commit

ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t.invalid",
}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True)
    return done.stdout.decode()


def _entries(store: CheckpointStore, commit: str) -> dict[str, str]:
    """path -> mode of a checkpoint's tree."""
    out = _git(store.location, "--git-dir", str(store.location), "ls-tree", "-r", "-z", commit)
    entries = {}
    for record in out.split("\0"):
        if record:
            header, _, path = record.partition("\t")
            entries[path] = header.split(" ")[0]
    return entries


@pytest.fixture(autouse=True)
def _settled(monkeypatch: pytest.MonkeyPatch) -> None:
    from harnesses.checkpoints import _incremental
    from harnesses.vcs import runner

    monkeypatch.setattr(_incremental, "RACY_NS", -(10**12))  # the kept stat cache at once
    monkeypatch.setattr(runner, "_RACY_NS", -(10**12))


@pytest.mark.parametrize("outer", ["plain", "git"])
async def test_a_nested_repository_without_a_commit_is_left_out_until_it_has_one(
    tmp_path: Path, outer: str
) -> None:
    ws = tmp_path / "ws"
    (ws / "first").mkdir(parents=True)
    if outer == "git":
        _git(ws, "init", "-q")
    (ws / "keep.txt").write_text("keep\n")
    _git(ws / "first", "init", "-q")
    (ws / "first" / "f.txt").write_text("inside\n")
    assert not has_head_commit(str(ws / "first"))
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    made = await store.create("full path")
    assert _entries(store, made.commit) == {"keep.txt": "100644"}
    await store.create("from the kept index")
    (ws / "second").mkdir()
    _git(ws / "second", "init", "-q")  # appears later: the walk leaves it out too
    (ws / "keep.txt").write_text("edited\n")
    walked = await store.create("walked")
    assert walked.files_touched == ("keep.txt",)
    _git(ws / "first", "add", "-A")
    _git(ws / "first", "commit", "-qm", "first commit")
    assert has_head_commit(str(ws / "first"))
    born = await store.create("it has a commit now")
    assert born.files_touched == ("first",)
    assert _entries(store, born.commit) == {"keep.txt": "100644", "first": "160000"}
    (ws / "keep.txt").unlink()
    await store.restore(made)
    assert (ws / "keep.txt").read_text() == "keep\n"
    assert (ws / "first" / "f.txt").read_text() == "inside\n"  # never touched by a restore


async def test_removing_a_folder_with_a_nested_repository_says_it_is_not_recoverable(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    nested = ws / "vendor" / "lib"
    nested.mkdir(parents=True)
    (ws / "vendor" / "notes.txt").write_text("notes\n")
    _git(nested, "init", "-q")
    (nested / "lib.txt").write_text("lib\n")
    _git(nested, "add", "-A")
    _git(nested, "commit", "-qm", "lib")
    (nested / "lib.txt").write_text("uncommitted work\n")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    told = await store.recoverability(["vendor"])
    assert told.nested == ("vendor/lib",)
    assert told.summary() == (
        "1 nested git repository (vendor/lib) with its history and uncommitted work will not"
        " be recoverable"
    )
    made = await store.create("before rm -rf vendor", removes=["vendor"])  # it failed here
    assert _entries(store, made.commit) == {"vendor/notes.txt": "100644", "vendor/lib": "160000"}


def test_the_summary_names_lost_files_and_nested_repositories_together() -> None:
    both = Recoverability(covered=(), lost=(("big.bin", 2_000_000_000),), nested=("a", "b"))
    assert both.summary() == (
        "1 untracked file, 2.0 GB, is over the cap and will not be recoverable; 2 nested git "
        "repositories (a, b) with their history and uncommitted work will not be recoverable"
    )
    many = Recoverability(covered=(), lost=(), nested=("a", "b", "c", "d"))
    assert many.summary().startswith("4 nested git repositories (a, b, c, …)")
