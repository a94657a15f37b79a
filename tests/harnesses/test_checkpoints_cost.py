"""Checkpoints that cost what changed (issue 15, Build item 5), against real git: a short
commit message however many files a checkpoint touches, a listing that reads only new
checkpoints yet sees other processes' creations and deletions, and the kept index commit
and object set that stay exact when another process garbage-collects the store."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import git
import pytest

from harnesses.checkpoints import CheckpointStore
from harnesses.checkpoints.store import FILES_TOUCHED_KEPT
from tests.support.checkpoint_env import isolate_git, settle_rules


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


def _store_git(store: CheckpointStore, *args: str) -> str:
    out = subprocess.run(
        ["git", f"--git-dir={store.location}", *args], check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def _folder(tmp_path: Path, files: int) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(files):
        (ws / f"f{n:04d}.txt").write_text(f"file {n}\n")
    return ws


async def test_a_plain_folders_first_checkpoint_has_a_short_message(tmp_path: Path) -> None:
    ws = _folder(tmp_path, FILES_TOUCHED_KEPT + 150)
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    first = await store.create("first")
    assert first.files_touched_count == FILES_TOUCHED_KEPT + 150
    assert len(first.files_touched) == FILES_TOUCHED_KEPT
    assert list(first.files_touched) == sorted(first.files_touched)
    message = _store_git(store, "cat-file", "commit", first.commit)
    assert len(message) < 8000  # not 250 paths' worth
    (listed,) = await CheckpointStore(ws, data_dir=tmp_path / "data").list()
    assert listed == first  # read back the same, count included
    (ws / "f0001.txt").write_text("changed\n")
    second = await store.create("second")
    assert second.files_touched == ("f0001.txt",) and second.files_touched_count == 1
    assert (ws / "f0001.txt").read_text() == "changed\n"
    await store.restore(first)
    assert (ws / "f0001.txt").read_text() == "file 1\n"


async def test_listing_sees_what_another_process_created_and_deleted(tmp_path: Path) -> None:
    ws = _folder(tmp_path, 5)
    mine = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    other = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    made = []
    for n in range(3):
        (ws / "f0000.txt").write_text(f"edit {n}\n")
        made.append(await mine.create(f"mine {n}"))
    assert [c.id for c in await mine.list()] == [c.id for c in made]
    (ws / "f0000.txt").write_text("theirs\n")
    theirs = await other.create("theirs")
    assert [c.id for c in await mine.list()] == [*(c.id for c in made), theirs.id]
    deleted = await other.prune(keep_count=1, min_age_s=0)
    assert deleted == [c.id for c in made]
    assert [c.id for c in await mine.list()] == [theirs.id]
    assert (await mine.get(theirs.id)).label == "theirs"


async def test_the_kept_index_commit_stays_exact_and_survives_a_gc_elsewhere(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "repo"
    repo = git.Repo.init(ws)
    (ws / "a.txt").write_text("one\n")
    repo.git.add("a.txt")
    repo.git.commit("-m", "init")
    (ws / "a.txt").write_text("staged\n")
    repo.git.add("a.txt")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    first = await store.create("first")
    (ws / "b.txt").write_text("untracked\n")
    second = await store.create("second")  # same staged content: the same index commit
    assert _store_git(store, "rev-parse", f"{first.commit}^1") == _store_git(
        store, "rev-parse", f"{second.commit}^1"
    )
    # another process deletes both and garbage-collects the store behind this one's back
    other = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    other._locked(other._delete, [first.id, second.id])
    other._locked(other._gc)
    assert await store.list() == []
    (ws / "a.txt").write_text("in the work tree\n")
    third = await store.create("third")  # same staged content: its objects were pruned
    assert _store_git(store, "cat-file", "-t", f"{third.commit}^1") == "commit"
    repo.git.add("b.txt")
    fourth = await store.create("fourth")
    repo.git.reset("-q", "b.txt")
    repo.git.add("a.txt")
    await store.restore(fourth)
    assert repo.git.diff("--cached", "--name-only").split() == ["a.txt", "b.txt"]
    await store.restore(third)
    assert repo.git.diff("--cached", "--name-only").split() == ["a.txt"]
    assert repo.git.show(":a.txt") == "staged"  # the index as it was, not the work tree
    assert (ws / "a.txt").read_text() == "in the work tree\n"


def _user_git(ws: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)


async def test_same_size_same_mtime_edits_in_an_untracked_repository_are_captured(
    tmp_path: Path,
) -> None:
    """Racy git: a kept stat cache, the reused index tree and config blob never go stale.

    Between checkpoints a file and a staged file are rewritten at once with the same size
    (git's racily clean entries), and the repository's config with the same size and its
    mtime put back; every new content must be in the next checkpoint (the snapshot tree,
    the index part, the config blob)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    _user_git(ws, "init", "-q")
    for n in range(30):
        (ws / f"u{n}.txt").write_text(f"untracked {n}\n")
    (ws / "u3.txt").write_text("aaaa\n")
    (ws / "staged.txt").write_text("aaaa\n")
    _user_git(ws, "add", "staged.txt")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    await store.create("first")
    config = ws / ".git" / "config"
    config.write_bytes(config.read_bytes() + b"# round x\n")
    for round_, text in enumerate(("bbbb\n", "cccc\n", "dddd\n")):
        for path in (ws / "u3.txt", ws / "staged.txt"):
            size = path.stat().st_size
            path.write_text(text)  # at once: most often within the same mtime second
            assert path.stat().st_size == size
        _user_git(ws, "add", "staged.txt")
        st = config.stat()
        data = config.read_bytes()
        config.write_bytes(data[:-2] + str(round_).encode() + b"\n")  # same size, new bytes
        os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns))
        checkpoint = await store.create(f"round {round_}")
        assert _store_git(store, "cat-file", "blob", f"{checkpoint.commit}:u3.txt") == text.strip()
        assert (
            _store_git(store, "cat-file", "blob", f"{checkpoint.commit}^1:staged.txt")
            == text.strip()
        )
        meta = _store_git(store, "cat-file", "commit", checkpoint.commit)
        config_blob = meta.split('"config":"', 1)[1].split('"', 1)[0]
        assert (
            _store_git(store, "cat-file", "blob", config_blob).encode()
            == config.read_bytes().strip()
        )
        assert await store.diff(checkpoint) == ""


async def test_a_next_checkpoint_starts_few_git_processes(tmp_path: Path) -> None:
    """An untracked-heavy repository's next checkpoint: 7 git runs (the walk's two listings,
    side by side, update-index, write-tree, the checkpoints' listing, commit-tree,
    update-ref; the user's refs and index reused, no diff-tree) and 1 config listing (the
    repository lookup, which has no explicit git dir); was 18 runs and 18 listings, then 12,
    then 6 with a one-process walk."""
    from harnesses.vcs import door_counters

    ws = tmp_path / "ws"
    ws.mkdir()
    _user_git(ws, "init", "-q")
    for n in range(50):
        (ws / f"u{n}.txt").write_text(f"untracked {n}\n")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    await store.create("first")
    config = ws / ".git" / "config"
    old = config.stat().st_mtime_ns - 5 * 10**9
    for path in (config, store.location / "config"):
        os.utime(path, ns=(old, old))  # mtime only; ctime stays fresh, see below
    from harnesses.checkpoints import _incremental
    from harnesses.vcs import runner

    saved, saved_rules = runner._RACY_NS, _incremental.RACY_NS
    runner._RACY_NS = -(10**12)  # treat the configs as settled (no waiting)
    _incremental.RACY_NS = -(10**12)  # and the rule files, the user's refs and index
    try:
        await store.create("second")  # lists each repository's config once more
        (ws / "u1.txt").write_text("edited\n")
        before = door_counters()
        checkpoint = await store.create("third")
        after = door_counters()
    finally:
        runner._RACY_NS, _incremental.RACY_NS = saved, saved_rules
    assert checkpoint.files_touched == ("u1.txt",)
    runs = after["runs"] - before["runs"]
    listings = after["listings"] - before["listings"]
    assert runs <= 7, runs
    assert listings <= 1, listings


@pytest.fixture
def _settled_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Treat rule and config files as settled at once (no waiting out the 1 s racy window);
    git's own racy-git rules for file contents are untouched."""
    settle_rules(monkeypatch)


def _runs() -> int:
    from harnesses.vcs import door_counters

    return door_counters()["runs"]


@pytest.mark.usefixtures("_settled_rules")
async def test_the_changed_only_cap_scan_skips_a_grown_file_and_takes_back_a_shrunk_one(
    tmp_path: Path,
) -> None:
    """A next checkpoint sizes only what changed: a file growing past the cap between two
    checkpoints is left out and reported; shrinking under it again, it is captured again."""
    ws = tmp_path / "ws"
    ws.mkdir()
    _user_git(ws, "init", "-q")
    for n in range(20):
        (ws / f"u{n}.txt").write_text(f"untracked {n}\n")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None, cap_bytes=1000)
    await store.create("first")
    await store.create("second")  # from here on: the kept stat cache
    (ws / "u5.txt").write_bytes(b"x" * 5000)
    before = _runs()
    grown = await store.create("grown")
    assert _runs() - before <= 7  # the incremental path (the full one runs 12 or more)
    assert grown.skipped == (("u5.txt", 5000),)
    tree = _store_git(store, "ls-tree", "-r", "--name-only", grown.commit).split("\n")
    assert "u5.txt" not in tree and "u4.txt" in tree
    (ws / "u6.txt").write_text("changed beside it\n")
    still = await store.create("still big")
    assert still.skipped == (("u5.txt", 5000),)
    assert _store_git(store, "cat-file", "blob", f"{still.commit}:u6.txt") == "changed beside it"
    (ws / "u5.txt").write_text("small again\n")
    shrunk = await store.create("shrunk")
    assert shrunk.skipped == ()
    assert _store_git(store, "cat-file", "blob", f"{shrunk.commit}:u5.txt") == "small again"
    assert await store.diff(shrunk) == ""


@pytest.mark.usefixtures("_settled_rules")
async def test_racy_edits_are_captured_on_the_incremental_path(tmp_path: Path) -> None:
    """Same-size rewrites within the same mtime tick, deletions, a file replaced by a folder
    and a new nested file: each next checkpoint (kept stat cache, no full walk of sizes)
    equals the working tree."""
    ws = tmp_path / "ws"
    ws.mkdir()
    _user_git(ws, "init", "-q")
    for n in range(30):
        (ws / f"u{n}.txt").write_text(f"untracked {n}\n")
    (ws / "d").mkdir()
    (ws / "d" / "a.txt").write_text("aaaa\n")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    await store.create("first")
    await store.create("second")
    for text in ("bbbb\n", "cccc\n", "dddd\n"):
        (ws / "d" / "a.txt").write_text(text)  # same size, most often the same mtime tick
        before = _runs()
        checkpoint = await store.create(text)
        assert _runs() - before <= 7
        assert _store_git(store, "cat-file", "blob", f"{checkpoint.commit}:d/a.txt") == text.strip()
        assert await store.diff(checkpoint) == ""
    (ws / "u1.txt").unlink()
    (ws / "u2.txt").unlink()
    (ws / "u2.txt").mkdir()
    (ws / "u2.txt" / "inner").write_text("inside\n")
    os.symlink("u3.txt", ws / "link")
    changed = await store.create("shapes")
    tree = _store_git(store, "ls-tree", "-r", "--name-only", changed.commit).split("\n")
    assert "u1.txt" not in tree and "u2.txt/inner" in tree and "link" in tree
    assert set(changed.files_touched) == {"u1.txt", "u2.txt", "u2.txt/inner", "link"}
    assert await store.diff(changed) == ""


@pytest.mark.usefixtures("_settled_rules")
async def test_a_new_ignore_rule_is_applied_on_the_next_checkpoint(tmp_path: Path) -> None:
    """The kept index trusts its ignored entries only while the rule files are unchanged: a
    new ``.gitignore`` (and an edited one) takes the full path, like a fresh ``add -A``."""
    ws = tmp_path / "ws"
    ws.mkdir()
    _user_git(ws, "init", "-q")
    (ws / "sub").mkdir()
    for name in ("keep.txt", "build.log", "sub/deep.log", "sub/x.tmp"):
        (ws / name).write_text(f"{name}\n")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    await store.create("first")
    await store.create("second")
    (ws / ".gitignore").write_text("*.log\n")
    first = await store.create("root rule")
    tree = _store_git(store, "ls-tree", "-r", "--name-only", first.commit).split("\n")
    assert "build.log" not in tree and "sub/deep.log" not in tree and "sub/x.tmp" in tree
    await store.create("settle")
    (ws / "sub" / ".gitignore").write_text("*.tmp\n")
    second = await store.create("sub rule")
    tree = _store_git(store, "ls-tree", "-r", "--name-only", second.commit).split("\n")
    assert "sub/x.tmp" not in tree and "keep.txt" in tree
    (ws / ".gitignore").write_text("*.txt\n")  # edited: build.log is back, keep.txt goes
    third = await store.create("edited rule")
    tree = _store_git(store, "ls-tree", "-r", "--name-only", third.commit).split("\n")
    assert "keep.txt" not in tree and "build.log" in tree


@pytest.mark.usefixtures("_settled_rules")
async def test_retention_after_a_checkpoint_reuses_its_listing(tmp_path: Path) -> None:
    """Automatic retention works on the listing the new checkpoint was made with: no second
    ``for-each-ref`` per checkpoint, and it still deletes what is over the count (also what
    another process made in between, seen by the next checkpoint)."""
    from harnesses.checkpoints import Retention

    ws = tmp_path / "ws"
    ws.mkdir()
    _user_git(ws, "init", "-q")
    for n in range(10):
        (ws / f"u{n}.txt").write_text(f"untracked {n}\n")
    store = CheckpointStore(ws, data_dir=tmp_path / "data")  # the default retention
    await store.create("first")
    await store.create("second")
    (ws / "u1.txt").write_text("edited\n")
    before = _runs()
    await store.create("third")  # nothing expires: no second listing
    assert _runs() - before <= 7
    keep = Retention(keep_count=2, min_age_s=0.0)
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=keep)
    (ws / "u2.txt").write_text("edited\n")
    fourth = await store.create("fourth")
    assert [c.label for c in await store.list()] == ["third", "fourth"]
    other = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    await other.create("theirs")
    (ws / "u3.txt").write_text("edited\n")
    await store.create("fifth")
    assert [c.label for c in await store.list()] == ["theirs", "fifth"]
    assert fourth.id not in {c.id for c in await other.list()}
