"""A next checkpoint's ``files_touched`` from the walk of the kept stat cache (no ``diff-tree``
run), against real git: equal to what ``git diff-tree`` lists between the two checkpoints,
and the tree equal to a fresh ``git add -A``, through edits in nested folders, whole folders
removed, file/folder swaps, symbolic links, the executable bit and no-op rewrites; the
shortcut is not taken when the previous checkpoint is not the kept index's base."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harnesses.checkpoints import Checkpoint, CheckpointStore
from tests.support.checkpoint_env import fresh_tree as _fresh_tree
from tests.support.checkpoint_env import isolate_git, settle_rules


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path, identity=False)


@pytest.fixture(autouse=True)
def _settled_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule and config files count as settled at once (no waiting out the 1 s racy window),
    so every next checkpoint takes the kept stat cache; git's racy-git rules for file
    contents are untouched."""
    settle_rules(monkeypatch)


def _git(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    out = subprocess.run(
        ["git", *args],
        check=True,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    return out.stdout.strip()


def _diff_tree(store: CheckpointStore, old: Checkpoint, new: Checkpoint) -> tuple[str, ...]:
    out = _git(
        f"--git-dir={store.location}",
        "diff-tree",
        "-r",
        "-z",
        "--no-renames",
        "--name-only",
        old.commit,
        new.commit,
    )
    return tuple(sorted(p for p in out.split("\0") if p))


def _runs() -> int:
    from harnesses.vcs import door_counters

    return door_counters()["runs"]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _shapes(ws: Path) -> list[tuple[str, Callable[[], None]]]:
    def same_size_rewrite() -> None:
        (ws / "a" / "b" / "c" / "deep.txt").write_text("DEEP\n")  # same size, same tick

    def remove_folder() -> None:
        for name in ("one.txt", "two.txt"):
            (ws / "gone" / name).unlink()
        (ws / "gone").rmdir()

    def file_to_folder() -> None:
        (ws / "swap").unlink()
        _write(ws / "swap" / "inner.txt", "inside\n")

    def folder_to_file() -> None:
        (ws / "swap" / "inner.txt").unlink()
        (ws / "swap").rmdir()
        (ws / "swap").write_text("a file again\n")

    def exec_bit() -> None:
        os.chmod(ws / "tool.sh", 0o755)

    def retarget() -> None:
        (ws / "link").unlink()
        os.symlink("a/b/c/deep.txt", ws / "link")

    def link_to_file() -> None:
        (ws / "link").unlink()
        (ws / "link").write_text("a file now\n")

    def no_op() -> None:
        data = (ws / "keep.txt").read_bytes()
        (ws / "keep.txt").write_bytes(data)  # new mtime, same bytes
        st = (ws / "keep.txt").stat()
        os.utime(ws / "keep.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10**9))

    def mixed() -> None:
        _write(ws / "a" / "b" / "new.txt", "new\n")
        (ws / "a" / "top.txt").unlink()
        _write(ws / "fresh" / "x" / "y.txt", "y\n")
        os.symlink("keep.txt", ws / "fresh" / "l")

    return [
        ("nested edit", lambda: _write(ws / "a" / "b" / "c" / "deep.txt", "deep, longer\n")),
        ("same-size rewrite", same_size_rewrite),
        ("whole folder removed", remove_folder),
        ("file becomes a folder", file_to_folder),
        ("folder becomes a file", folder_to_file),
        ("executable bit", exec_bit),
        ("symbolic link retargeted", retarget),
        ("symbolic link becomes a file", link_to_file),
        ("rewrite with the same bytes", no_op),
        ("several at once", mixed),
    ]


def _workspace(tmp_path: Path, kind: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    if kind == "untracked":
        _git("init", "-q", str(ws))
    for name in ("keep.txt", "a/top.txt", "a/b/c/deep.txt", "gone/one.txt", "gone/two.txt"):
        _write(ws / name, f"{name}\n")
    for n in range(20):
        _write(ws / "bulk" / f"f{n}.txt", f"bulk {n}\n")
    (ws / "swap").write_text("a file\n")
    (ws / "tool.sh").write_text("echo hi\n")
    os.symlink("keep.txt", ws / "link")
    return ws


@pytest.mark.parametrize("kind", ["untracked", "plain"])
async def test_files_touched_from_the_walk_equal_diff_tree(tmp_path: Path, kind: str) -> None:
    ws = _workspace(tmp_path, kind)
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    await store.create("first")
    previous = await store.create("second")  # from here on: the kept stat cache
    for label, change in _shapes(ws):
        change()
        before = _runs()
        made = await store.create(label)
        runs = _runs() - before
        # the incremental path without diff-tree: repository parts (2 in a repository),
        # listing, the walk (diff-files and ls-files), update-index, write-tree, commit-tree, update-ref
        assert runs <= (9 if kind == "untracked" else 7), (label, runs)
        assert made.files_touched == _diff_tree(store, previous, made), label
        assert made.files_touched_count == len(made.files_touched)
        tree = _git(f"--git-dir={store.location}", "rev-parse", f"{made.commit}^{{tree}}")
        assert tree == _fresh_tree(ws, tmp_path), label
        previous = made
    assert (await store.create("nothing changed")).files_touched == ()


async def test_the_kept_index_keeps_its_cache_tree(tmp_path: Path) -> None:
    """``write-tree`` stores git's cache-tree (``TREE`` extension) in the kept index, so the
    next ``write-tree`` rebuilds only the folders ``update-index`` invalidated."""
    ws = _workspace(tmp_path, "untracked")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    await store.create("first")
    assert b"TREE" in (store.location / "index").read_bytes()
    await store.create("second")
    _write(ws / "a" / "b" / "c" / "deep.txt", "edited\n")
    await store.create("third")
    assert b"TREE" in (store.location / "index").read_bytes()


async def test_another_processs_checkpoint_in_between_is_diffed(tmp_path: Path) -> None:
    """The walk's changes are relative to the kept index; when the previous checkpoint is
    another store's (or a working-tree diff moved the kept index), ``diff-tree`` decides."""
    ws = _workspace(tmp_path, "untracked")
    mine = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    other = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    await mine.create("first")
    await mine.create("second")
    _write(ws / "keep.txt", "changed by the first edit\n")
    theirs = await other.create("theirs")
    _write(ws / "a" / "top.txt", "changed by the second edit\n")
    made = await mine.create("mine")  # the walk saw both edits; theirs holds the first
    assert made.files_touched == ("a/top.txt",) == _diff_tree(mine, theirs, made)

    _write(ws / "keep.txt", "edited before a diff\n")
    assert "edited before a diff" in await mine.diff(made)  # snapshots into the kept index
    _write(ws / "bulk" / "f1.txt", "edited after it\n")
    after = await mine.create("after a diff")
    assert after.files_touched == ("bulk/f1.txt", "keep.txt") == _diff_tree(mine, made, after)


def _walked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], list[str]]]:
    """What each walk listed: ``(diff-files paths, ls-files --others paths)``."""
    from harnesses.checkpoints import _incremental

    seen: list[tuple[list[str], list[str]]] = []
    real = _incremental.walk

    def walk(g: object, index: Path) -> object:
        entries, others = real(g, index)  # type: ignore[arg-type]
        seen.append(([e.path for e in entries], list(others)))
        return entries, others

    monkeypatch.setattr(_incremental, "walk", walk)
    return seen


async def test_a_touched_file_is_not_a_change_and_is_not_listed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``diff-files`` names a file whose stat data changed with its bytes; the blob id
    check keeps it out of ``files_touched`` and ``update-index`` refreshes its entry, so
    the next walk no longer names it (``ls-files --modified`` compared such files by
    content at every checkpoint)."""
    ws = _workspace(tmp_path, "untracked")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    await store.create("first")
    await store.create("second")
    seen = _walked(monkeypatch)
    earlier = time.time_ns() - 100 * 10**9  # not racy: older than the index
    for name in ("keep.txt", "a/top.txt", "link"):
        os.utime(ws / name, ns=(earlier, earlier), follow_symlinks=False)
    os.chmod(ws / "bulk" / "f3.txt", 0o600)  # ctime only: git does not record 0600 vs 0644
    made = await store.create("touched")
    assert made.files_touched == ()
    assert set(seen[-1][0]) >= {"keep.txt", "a/top.txt", "link"}
    (ws / "bulk" / "f1.txt").write_text("bulk 9\n")  # same size, other bytes
    os.utime(ws / "bulk" / "f1.txt", ns=(earlier, earlier))
    made = await store.create("one real change")
    assert made.files_touched == ("bulk/f1.txt",)
    assert seen[-1][0] == ["bulk/f1.txt"]  # the touched ones are not named again
    assert _git(f"--git-dir={store.location}", "show", f"{made.commit}:bulk/f1.txt") == "bulk 9"


async def test_same_blob_reads_no_fifo_and_follows_no_link(tmp_path: Path) -> None:
    """The blob id check never blocks on a FIFO swapped in since the listing, never reads
    through a link, and knows SHA-256 ids (a store made for a SHA-256 repository)."""
    from harnesses.checkpoints._walk import Entry, same_blob

    text = tmp_path / "t.txt"
    text.write_text("hello\n")
    sha1 = _git("hash-object", str(text))
    assert same_blob(str(text), Entry("t.txt", "100644", "100644", sha1, "M"))
    sha256_repo = tmp_path / "s256"
    _git("init", "-q", "--object-format=sha256", str(sha256_repo))
    sha256 = _git("hash-object", str(text), cwd=sha256_repo)
    assert len(sha256) == 64
    assert same_blob(str(text), Entry("t.txt", "100644", "100644", sha256, "M"))
    text.write_text("hellO\n")
    assert not same_blob(str(text), Entry("t.txt", "100644", "100644", sha1, "M"))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert not same_blob(str(fifo), Entry("fifo", "100644", "100644", sha1, "M"))
    link = tmp_path / "link"
    os.symlink("t.txt", link)
    assert not same_blob(str(link), Entry("link", "100644", "100644", sha1, "M"))
    target = (
        subprocess.run(
            ["git", "hash-object", "--stdin"], input=b"t.txt", capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )
    assert same_blob(str(link), Entry("link", "120000", "120000", target, "M"))


async def test_the_kept_index_is_split_and_stays_small(tmp_path: Path) -> None:
    """The store's index is split (``sharedindex.*`` holds the entries): a next checkpoint
    writes a small index file, and after every entry was rewritten (git re-shares when most
    entries are new) or refreshed, the split part is small again and one shared file is
    left (the fold of a split part grown by refreshed entries: the red-team suite's
    ``test_the_split_index_stays_bounded_over_many_checkpoints``)."""
    from harnesses.checkpoints._incremental import SPLIT_MAX_BYTES

    ws = _workspace(tmp_path, "untracked")
    for n in range(1500):
        _write(ws / "many" / f"m{n}.txt", f"many {n}\n")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    await store.create("first")
    await store.create("second")
    assert list(store.location.glob("sharedindex.*"))
    earlier = time.time_ns() - 100 * 10**9
    for n in range(1500):  # every entry's stat data changes
        os.utime(ws / "many" / f"m{n}.txt", ns=(earlier, earlier))
    assert (await store.create("all touched")).files_touched == ()
    for n in range(1500):
        _write(ws / "many" / f"m{n}.txt", f"MANY {n}\n")  # every entry's bytes change
    rewritten = await store.create("all rewritten")
    assert rewritten.files_touched_count == 1500
    time.sleep(2.2)  # the racy guard (their second, or the one after) is over
    for n in range(2):  # the first one still reads the guarded index (its entries racy)
        _write(ws / "keep.txt", f"edited {n}\n")
        made = await store.create(f"edit {n}")
        assert made.files_touched == ("keep.txt",)
    assert (store.location / "index").stat().st_size < SPLIT_MAX_BYTES
    assert len(list(store.location.glob("sharedindex.*"))) == 1  # the old ones deleted
    tree = _git(f"--git-dir={store.location}", "rev-parse", f"{made.commit}^{{tree}}")
    assert tree == _fresh_tree(ws, tmp_path)


async def test_a_lost_shared_index_falls_back_to_the_full_path(tmp_path: Path) -> None:
    """A shared index file removed under the kept index (another process, a clean-up) makes
    the walk fail; the checkpoint is then taken the full way, and is right."""
    ws = _workspace(tmp_path, "untracked")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    first = await store.create("first")
    await store.create("second")
    for shared in store.location.glob("sharedindex.*"):
        shared.unlink()
    _write(ws / "a" / "top.txt", "after the loss\n")
    made = await store.create("after the loss")
    assert made.files_touched == _diff_tree(store, first, made) or made.files_touched
    tree = _git(f"--git-dir={store.location}", "rev-parse", f"{made.commit}^{{tree}}")
    assert tree == _fresh_tree(ws, tmp_path)
    _write(ws / "keep.txt", "and the next one\n")
    again = await store.create("next")
    assert again.files_touched == ("keep.txt",)


async def test_a_failed_snapshot_waits_for_the_listing_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checkpoints are listed on a thread while the tree is walked; when the walk
    fails, that thread has ended (it shares the store) before the error reaches the caller,
    and the listing's result is right when nothing fails."""
    from harnesses.checkpoints import _backend

    ws = _workspace(tmp_path, "untracked")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    first = await store.create("first")
    ended: list[bool] = []
    real_list = CheckpointStore._list

    def slow_list(self: CheckpointStore) -> object:
        time.sleep(0.3)
        out = real_list(self)
        ended.append(True)
        return out

    def broken(self: object, *args: object, **kw: object) -> object:
        raise RuntimeError("the walk failed")

    monkeypatch.setattr(CheckpointStore, "_list", slow_list)
    with monkeypatch.context() as patch:
        patch.setattr(_backend.GitBackend, "snapshot_tree", broken)
        with pytest.raises(RuntimeError, match="the walk failed"):
            await store.create("broken")
        assert ended == [True]
    made = await store.create("second")
    assert [cp.id for cp in await store.list()] == [first.id, made.id]


async def test_throwaway_indexes_leave_no_shared_index_files(tmp_path: Path) -> None:
    """Only the stat cache's chain is split: capturing a changed user index, a diff of the
    working tree and a restore (their own temporary indexes) leave no ``sharedindex.*``
    file behind, and the store holds one however many checkpoints are taken."""
    ws = _workspace(tmp_path, "untracked")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t.invalid",
    }
    _git("add", "-A", cwd=ws)
    _git("commit", "-qm", "base", env=env, cwd=ws)
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    first = await store.create("first")
    for n in range(6):
        _write(ws / "bulk" / f"f{n}.txt", f"staged {n}\n")
        _git("add", f"bulk/f{n}.txt", cwd=ws)  # the user's index changes: captured again
        _write(ws / f"new{n}.txt", f"new {n}\n")
        await store.create(f"next {n}")
    assert "staged 5" in await store.diff(first)
    await store.restore(first)
    assert (ws / "bulk" / "f5.txt").read_text() == "bulk 5\n"
    await store.undo_restore()
    await store.create("after the restore")
    assert len(list(store.location.glob("sharedindex.*"))) == 1
