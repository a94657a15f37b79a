"""Attack class: a checkpoint that misses the user's work because of a reused reading (issue 15).

Next checkpoints reuse what they read last time while the files behind it are "provably
unchanged": the user's refs and ``HEAD`` (``refs_identity``), the user's index (its file's
identity), the walk's changed paths as ``files_touched`` when the previous checkpoint is the
kept index's base, and the listing retention works on. The attacker (the agent's commands,
another Tandem process, an unlucky user) changes the truth while keeping as much of that
identity as a normal process can: the same size, the mtime put back with ``os.utime``, a
symbolic or hard link written through, a ref deleted and re-created, a git child killed
mid-way. The promise: every checkpoint records the working tree, index, refs, ``HEAD`` and
stash as they were when it was taken (checked against git itself and against a fresh
store's full snapshot), ``files_touched`` is what ``diff-tree`` says, and retention never
deletes what another process's restore still needs.

Every reading is made reusable at once (``RACY_NS`` below zero), and each change waits for
the file system's clock to tick, so only the identity check stands between the attack and
a stale record; each test first proves that the reuse is really armed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harnesses.checkpoints import CheckpointStore, Retention, _parts
from harnesses.checkpoints.store import Checkpoint, CheckpointError
from tests.support.checkpoint_env import isolate_git, settle_rules

_SETTLED = -(10**12)


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path)


@pytest.fixture(autouse=True)
def _settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reading is reusable at once: only the identity check can refuse it."""
    settle_rules(monkeypatch, _SETTLED)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The user's repository reads made: ``"refs"`` per ``read_refs``, ``"index"`` per
    ``ls-files -s`` of the user's index (a reused reading adds nothing)."""
    log: list[str] = []
    original = _parts.read_refs

    def read_refs(git_dir: Path, cwd: Path) -> _parts.RefsState:
        log.append("refs")
        return original(git_dir, cwd)

    monkeypatch.setattr(_parts, "read_refs", read_refs)
    from harnesses.checkpoints import _backend

    real = _backend.run_git

    def run_git(args: Any, **kw: Any) -> Any:
        if list(args[:2]) == ["ls-files", "-s"]:
            log.append("index")
        return real(args, **kw)

    monkeypatch.setattr(_backend, "run_git", run_git)
    return log


def _git(ws: Path, *args: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run(
        ["git", *args],
        cwd=ws,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    return out.stdout.strip()


def _tick(where: Path) -> None:
    """Wait (bounded polling, no sleep) until a file changed now gets a later ctime."""
    probe = where / ".tick-probe"
    probe.write_text("0")
    first = os.stat(probe).st_ctime_ns
    for n in range(10_000_000):
        probe.write_text(str(n % 2))
        if os.stat(probe).st_ctime_ns != first:
            break
    else:
        pytest.fail("the file system clock never ticked")
    probe.unlink()


def _keep_times(path: Path) -> Callable[[], None]:
    """Put ``path``'s atime and mtime back later (what ``os.utime`` can restore)."""
    st = os.lstat(path)
    return lambda: os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    _git(ws, "init", "-q", "-b", "main")
    (ws / "a.txt").write_text("one\n")
    (ws / "b.txt").write_text("two\n")
    _git(ws, "add", "a.txt", "b.txt")
    _git(ws, "commit", "-q", "-m", "first")
    _git(ws, "branch", "side")
    _git(ws, "branch", "abcd")
    (ws / "a.txt").write_text("stashed\n")
    _git(ws, "stash", "push", "-q", "-m", "wip")
    return ws


def _store(ws: Path, tmp_path: Path, name: str = "data", **kw: Any) -> CheckpointStore:
    kw.setdefault("retention", None)
    return CheckpointStore(ws, data_dir=tmp_path / name, **kw)


def _meta(store: CheckpointStore, commit: str) -> dict[str, Any]:
    out = _git(store.workspace, f"--git-dir={store.location}", "cat-file", "commit", commit)
    line = next(x for x in out.splitlines() if x.startswith("tandem-checkpoint: "))
    meta: dict[str, Any] = json.loads(line.split(": ", 1)[1])
    return meta


def _truth(ws: Path) -> dict[str, Any]:
    """The user's HEAD, refs, stash reflog and index, as git itself reads them now."""
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
    log = ws / ".git" / "logs" / "refs" / "stash"
    stash = [x for x in log.read_text().splitlines() if x.strip()] if log.exists() else []
    index = _git(ws, "ls-files", "-s")
    return {"head": head, "refs": refs, "stash_log": stash, "index": index}


def _recorded(store: CheckpointStore, cp: Checkpoint) -> dict[str, Any]:
    meta = _meta(store, cp.commit)
    listing = _git(
        store.workspace, f"--git-dir={store.location}", "ls-tree", "-r", f"{cp.commit}^1"
    )
    index = "\n".join(
        f"{header.split(' ')[0]} {header.split(' ')[2]} 0\t{path}"
        for header, path in (line.split("\t", 1) for line in listing.splitlines())
    )
    return {
        "head": meta["head"],
        "refs": meta["refs"],
        "stash_log": meta["stash_log"],
        "index": index,
    }


_oracles = [0]


def _fresh_tree(ws: Path, tmp_path: Path) -> str:
    """The working tree as a brand-new store's full snapshot writes it (the same object ids
    in every store: content addressed)."""
    _oracles[0] += 1
    oracle = _store(ws, tmp_path, f"oracle-{_oracles[0]}")
    return oracle._locked(lambda: oracle._git.snapshot_tree((), oracle.cap_bytes)[0])


def _touched_truth(store: CheckpointStore, cp: Checkpoint) -> tuple[str, ...]:
    previous = _meta(store, cp.commit)["previous"]
    prev = next(c for c in store._known() if c.id == previous)
    out = _git(
        store.workspace,
        f"--git-dir={store.location}",
        "diff-tree",
        "-r",
        "--no-renames",
        "--name-only",
        f"{prev.commit}^{{tree}}",
        f"{cp.commit}^{{tree}}",
    )
    return tuple(sorted(p for p in out.splitlines() if p))


def _check(store: CheckpointStore, cp: Checkpoint, tmp_path: Path, *, state: bool = True) -> None:
    ws = store.workspace
    if state:
        assert _recorded(store, cp) == _truth(ws)
    tree = _git(ws, f"--git-dir={store.location}", "rev-parse", f"{cp.commit}^{{tree}}")
    assert tree == _fresh_tree(ws, tmp_path)
    if _meta(store, cp.commit)["previous"]:
        assert cp.files_touched == _touched_truth(store, cp)


async def _armed(store: CheckpointStore, reads: list[str]) -> Checkpoint:
    """Two checkpoints; the second reads neither the refs nor the index again."""
    await store.create("first")
    del reads[:]
    made = await store.create("second")
    assert reads == [], "the reuse is not armed: the attack would prove nothing"
    return made


# -- the user's refs and HEAD -------------------------------------------------------------


def _rewrite_ref_same_size(ws: Path) -> None:
    ref = ws / ".git" / "refs" / "heads" / "side"
    put_back = _keep_times(ref)
    _tick(ws)
    ref.write_text(_git(ws, "rev-parse", "stash@{0}") + "\n")  # same size, same inode
    put_back()


def _packed_refs_same_size(ws: Path) -> None:
    _git(ws, "pack-refs", "--all")
    packed = ws / ".git" / "packed-refs"
    before = packed.read_text()
    put_back = _keep_times(packed)
    _tick(ws)
    _git(ws, "update-ref", "refs/heads/side", "stash@{0}")  # loose again: the folder changes
    _git(ws, "pack-refs", "--all")  # the same refs, the same size
    assert len(packed.read_text()) == len(before) and packed.read_text() != before
    put_back()


def _packed_refs_in_place(ws: Path) -> None:
    _git(ws, "pack-refs", "--all")
    packed = ws / ".git" / "packed-refs"
    text = packed.read_text()
    head = _git(ws, "rev-parse", "HEAD")
    other = _git(ws, "rev-parse", "stash@{0}")
    put_back = _keep_times(packed)
    _tick(ws)
    with open(packed, "r+") as f:
        f.write(text.replace(f"{head} refs/heads/side", f"{other} refs/heads/side"))
    put_back()


def _new_subfolder(ws: Path) -> None:
    _tick(ws)
    _git(ws, "update-ref", "refs/heads/new/deep/x", "HEAD")


def _deleted_and_recreated(ws: Path) -> None:
    ref = ws / ".git" / "refs" / "heads" / "side"
    put_back = _keep_times(ref)
    folder_back = _keep_times(ref.parent)
    _tick(ws)
    ref.unlink()
    ref.write_text(_git(ws, "rev-parse", "stash@{0}") + "\n")  # inode may be reused
    put_back()
    folder_back()


def _checkout_equal_length(ws: Path) -> None:
    put_back = _keep_times(ws / ".git" / "HEAD")
    _tick(ws)
    _git(ws, "checkout", "-q", "side")  # "main" -> "side": HEAD keeps its size
    put_back()


def _head_in_place(ws: Path) -> None:
    head = ws / ".git" / "HEAD"
    put_back = _keep_times(head)
    _tick(ws)
    head.write_text("ref: refs/heads/abcd\n")  # main -> abcd: same size, same inode
    put_back()


def _worktree_add(ws: Path) -> None:
    _tick(ws)
    _git(ws, "worktree", "add", "-q", "-b", "wt", str(ws.parent / "linked"))


def _no_reflogs(ws: Path) -> None:
    _git(ws, "config", "core.logAllRefUpdates", "false")
    _tick(ws)
    _git(ws, "update-ref", "refs/heads/side", "stash@{0}")


def _stash_log_in_place(ws: Path) -> None:
    log = ws / ".git" / "logs" / "refs" / "stash"
    text = log.read_text()
    put_back = _keep_times(log)
    _tick(ws)
    with open(log, "r+") as f:
        f.write(text.replace("wip", "WIP"))
    put_back()


def _stash_drop_and_push(ws: Path) -> None:
    _tick(ws)
    _git(ws, "stash", "drop", "-q")
    (ws / "a.txt").write_text("stashd2\n")
    _git(ws, "stash", "push", "-q", "-m", "wip")


def _hard_link_written_through(ws: Path) -> None:
    ref = ws / ".git" / "refs" / "heads" / "side"
    outside = ws.parent / "outside-ref"
    os.link(ref, outside)
    put_back = _keep_times(ref)
    _tick(ws)
    outside.write_text(_git(ws, "rev-parse", "stash@{0}") + "\n")
    put_back()


_REF_ATTACKS: dict[str, Callable[[Path], None]] = {
    "same-size ref rewrite, mtime put back": _rewrite_ref_same_size,
    "packed-refs rewritten by pack-refs at the same size": _packed_refs_same_size,
    "packed-refs edited in place, mtime put back": _packed_refs_in_place,
    "update-ref in a new subfolder": _new_subfolder,
    "ref deleted and re-created, times put back": _deleted_and_recreated,
    "checkout between equal-length branch names": _checkout_equal_length,
    "HEAD rewritten in place, mtime put back": _head_in_place,
    "worktree add -b after the memo": _worktree_add,
    "core.logAllRefUpdates=false": _no_reflogs,
    "stash reflog edited in place, mtime put back": _stash_log_in_place,
    "stash drop and push": _stash_drop_and_push,
    "hard link to a ref written through": _hard_link_written_through,
}


@pytest.mark.parametrize("attack", sorted(_REF_ATTACKS))
async def test_a_ref_change_keeping_what_it_can_is_recorded(
    repo: Path, tmp_path: Path, reads: list[str], attack: str
) -> None:
    store = _store(repo, tmp_path)
    await _armed(store, reads)
    _REF_ATTACKS[attack](repo)
    made = await store.create("after")
    _check(store, made, tmp_path)


async def test_a_symlinked_ref_file_is_read_again_every_time(
    repo: Path, tmp_path: Path, reads: list[str]
) -> None:
    _git(repo, "pack-refs", "--all")
    packed = repo / ".git" / "packed-refs"
    target = tmp_path / "packed-elsewhere"
    shutil.move(packed, target)
    os.symlink(target, packed)
    store = _store(repo, tmp_path)
    await store.create("first")
    _tick(repo)
    text = target.read_text()
    target.write_text(text.replace("refs/heads/side", "refs/heads/edis"))
    made = await store.create("after")
    _check(store, made, tmp_path)


async def test_a_linked_worktree_workspace_sees_the_main_worktrees_commits(
    repo: Path, tmp_path: Path, reads: list[str]
) -> None:
    linked = tmp_path / "linked"
    _git(repo, "worktree", "add", "-q", "-b", "wt", str(linked))
    store = _store(linked, tmp_path)
    await store.create("first")
    await store.create("second")
    (repo / "b.txt").write_text("main moved\n")
    _git(repo, "commit", "-q", "-am", "from the main worktree")
    made = await store.create("after")
    _check(store, made, tmp_path)


# -- the user's index ---------------------------------------------------------------------


def _chmod(ws: Path) -> None:
    _tick(ws)
    _git(ws, "update-index", "--chmod=+x", "a.txt")


def _add_same_size(ws: Path) -> None:
    _tick(ws)
    (ws / "a.txt").write_text("One\n")
    _git(ws, "add", "a.txt")


def _rm_cached(ws: Path) -> None:
    _tick(ws)
    _git(ws, "rm", "-q", "--cached", "b.txt")


def _index_bytes(ws: Path, *setup: list[str]) -> bytes:
    other = ws.parent / "other-index"
    env = {"GIT_INDEX_FILE": str(other)}
    _git(ws, "read-tree", "HEAD", env=env)
    for args in setup:
        _git(ws, *args, env=env)
    data = other.read_bytes()
    other.unlink()
    return data


def _index_hard_link(ws: Path) -> None:
    (ws / "a.txt").write_text("One\n")
    data = _index_bytes(ws, ["add", "a.txt"])
    outside = ws.parent / "outside-index"
    os.link(ws / ".git" / "index", outside)
    put_back = _keep_times(ws / ".git" / "index")
    _tick(ws)
    with open(outside, "r+b") as f:
        f.write(data)
        f.truncate()
    put_back()


_INDEX_ATTACKS: dict[str, Callable[[Path], None]] = {
    "update-index --chmod (same size)": _chmod,
    "git add of a same-size change": _add_same_size,
    "git rm --cached": _rm_cached,
    "hard link to the index written through": _index_hard_link,
}


@pytest.mark.parametrize("attack", sorted(_INDEX_ATTACKS))
async def test_an_index_change_keeping_what_it_can_is_recorded(
    repo: Path, tmp_path: Path, reads: list[str], attack: str
) -> None:
    store = _store(repo, tmp_path)
    await _armed(store, reads)
    _INDEX_ATTACKS[attack](repo)
    made = await store.create("after")
    _check(store, made, tmp_path)


async def test_an_index_rewritten_in_place_at_the_same_size_is_recorded(
    repo: Path, tmp_path: Path, reads: list[str]
) -> None:
    index = repo / ".git" / "index"
    _git(repo, "rm", "-q", "--cached", "a.txt")
    _git(repo, "add", "a.txt")  # the index as ``git add`` writes it (no cache tree)
    (repo / "a.txt").write_text("One\n")
    data = _index_bytes(repo, ["rm", "-q", "--cached", "a.txt"], ["add", "a.txt"])
    (repo / "a.txt").write_text("one\n")
    assert len(data) == index.stat().st_size
    store = _store(repo, tmp_path)
    await _armed(store, reads)
    put_back = _keep_times(index)
    _tick(repo)
    with open(index, "r+b") as f:
        f.write(data)
    put_back()
    made = await store.create("after")
    _check(store, made, tmp_path)


async def test_a_symlinked_index_whose_target_is_replaced_is_recorded(
    repo: Path, tmp_path: Path, reads: list[str]
) -> None:
    """Git follows a symbolic link at ``.git/index``; the link's own identity says nothing
    about the file git reads (hole: the listing was reused, the staged ``b.txt`` change and
    ``c.txt`` were missing from the checkpoint's index)."""
    index = repo / ".git" / "index"
    target = tmp_path / "index-elsewhere"
    shutil.move(index, target)
    os.symlink(target, index)
    store = _store(repo, tmp_path)
    await store.create("first")
    await store.create("second")
    (repo / "b.txt").write_text("TWO\n")
    (repo / "c.txt").write_text("new\n")
    data = _index_bytes(repo, ["add", "b.txt", "c.txt"])
    _tick(repo)
    tmp = tmp_path / "index-new"
    tmp.write_bytes(data)
    os.replace(tmp, target)  # the link itself is untouched
    made = await store.create("after")
    _check(store, made, tmp_path)
    restored = await store.create("again")
    _check(store, restored, tmp_path)


# -- files_touched from the walk (the previous checkpoint is the kept index's base) --------


@pytest.fixture
def killer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """A ``git`` first on PATH that, once armed for a subcommand, runs the real git and
    then is killed (``kill -9``): the child dies after (part of) its work, as when Tandem's
    git child is killed mid-way. ``arm(name)`` arms it for one run."""
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mark = tmp_path / "kill-mark"
    script = bin_dir / "git"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ -e "{mark}" ]; then\n'
        f'  want=$(cat "{mark}")\n'
        '  for a in "$@"; do\n'
        '    if [ "$a" = "$want" ]; then\n'
        f'      rm -f "{mark}"; "{real}" "$@"; kill -9 $$\n'
        "    fi\n"
        "  done\n"
        "fi\n"
        f'exec "{real}" "$@"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    def arm(name: str) -> None:
        mark.write_text(name)

    return arm


async def _made(store: CheckpointStore, tmp_path: Path, label: str, **kw: Any) -> Checkpoint:
    made = await store.create(label, **kw)
    _check(store, made, tmp_path)
    return made


async def test_after_a_restore_files_touched_is_the_diff(repo: Path, tmp_path: Path) -> None:
    store = _store(repo, tmp_path)
    first = await _made(store, tmp_path, "first")
    (repo / "a.txt").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    await _made(store, tmp_path, "second")
    await store.restore(first)
    tree = _git(repo, f"--git-dir={store.location}", "rev-parse", f"{first.commit}^{{tree}}")
    assert _fresh_tree(repo, tmp_path) == tree
    assert _truth(repo) == _recorded(store, first)
    (repo / "b.txt").write_text("two, edited\n")
    after = await _made(store, tmp_path, "after the restore")  # from the pre-restore one
    assert after.files_touched == ("a.txt", "b.txt", "new.txt")
    await store.undo_restore()
    undone = await _made(store, tmp_path, "after the undo")
    assert "new.txt" in undone.files_touched


@pytest.mark.parametrize("step", ["write-tree", "update-index", "commit-tree", "update-ref"])
async def test_a_git_child_killed_mid_checkpoint_leaves_no_wrong_shortcut(
    repo: Path, tmp_path: Path, killer: Callable[[str], None], step: str
) -> None:
    store = _store(repo, tmp_path)
    await _made(store, tmp_path, "first")
    (repo / "a.txt").write_text("second\n")
    await _made(store, tmp_path, "second")
    (repo / "b.txt").write_text("killed\n")
    killer(step)
    killed: Checkpoint | None = None
    with contextlib.suppress(CheckpointError):  # it may fail or recover: both are fine
        killed = await store.create("killed")
    assert not (tmp_path / "kill-mark").exists(), "the git child was never killed"
    if killed is not None:
        _check(store, killed, tmp_path)
    (repo / "b.txt").write_text("two\n")  # back as it was at "second"
    (repo / "c.txt").write_text("c\n")
    made = await _made(store, tmp_path, "after")
    kept = any(c.label == "killed" for c in await store.list())  # update-ref: made anyway
    assert made.files_touched == (("b.txt", "c.txt") if kept else ("c.txt",))


async def test_two_stores_on_one_workspace_take_turns(repo: Path, tmp_path: Path) -> None:
    one, two = _store(repo, tmp_path), _store(repo, tmp_path)
    await _made(one, tmp_path, "one")
    for n in range(4):
        (repo / "a.txt").write_text(f"turn {n}\n")
        if n % 2:
            (repo / f"f{n}.txt").write_text("x\n")
        await _made(two if n % 2 == 0 else one, tmp_path, f"turn {n}")
        (repo / "a.txt").write_text("one\n")
        await _made(one if n % 2 == 0 else two, tmp_path, f"back {n}")


def _stash(ws: Path) -> None:
    (ws / "a.txt").write_text("to stash\n")
    _git(ws, "stash", "push", "-q", "-m", "again")


def _reset_hard(ws: Path) -> None:
    _git(ws, "reset", "-q", "--hard", "HEAD")


def _clean_fdx(ws: Path) -> None:
    _git(ws, "clean", "-q", "-fdx")


def _case_only_rename(ws: Path) -> None:
    os.rename(ws / "b.txt", ws / "B.txt")


def _file_becomes_folder(ws: Path) -> None:
    (ws / "b.txt").unlink()
    (ws / "b.txt").mkdir()
    (ws / "b.txt" / "inner").write_text("inside\n")


def _folder_becomes_file(ws: Path) -> None:
    shutil.rmtree(ws / "dir")
    (ws / "dir").write_text("now a file\n")


def _symlink_retarget(ws: Path) -> None:
    (ws / "link").unlink()
    os.symlink("b.txt", ws / "link")  # as long as "a.txt"


def _chmod_x(ws: Path) -> None:
    (ws / "b.txt").chmod(0o755)


def _nested_repo_moves(ws: Path) -> None:
    nested = ws / "nested"
    (nested / "n.txt").write_text("moved\n")
    _git(nested, "commit", "-q", "-am", "moved")


def _same_size_mtime_put_back(ws: Path) -> None:
    """Racy git: the same size, the mtime put back, right after the checkpoint."""
    path = ws / "b.txt"
    put_back = _keep_times(path)
    path.write_text("TWO\n")
    put_back()


def _ignored_now_tracked(ws: Path) -> None:
    _git(ws, "add", "-f", "build.log")


def _tracked_ignored_untracked(ws: Path) -> None:
    _git(ws, "rm", "-q", "--cached", "kept.log")


_WALK_STEPS: dict[str, Callable[[Path], None]] = {
    "git stash": _stash,
    "git reset --hard": _reset_hard,
    "git clean -fdx": _clean_fdx,
    "case-only rename": _case_only_rename,
    "a file becomes a folder": _file_becomes_folder,
    "a folder becomes a file": _folder_becomes_file,
    "a symlink retargeted at the same length": _symlink_retarget,
    "chmod +x": _chmod_x,
    "a nested repository's HEAD moves": _nested_repo_moves,
    "same size, mtime put back (racy git)": _same_size_mtime_put_back,
    "an ignored file force-added": _ignored_now_tracked,
    "a tracked ignored file untracked": _tracked_ignored_untracked,
}


@pytest.fixture
def busy(repo: Path) -> Path:
    """The repository with untracked, ignored, tracked-ignored files, a folder, a symlink
    and a nested repository."""
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "kept.log").write_text("tracked anyway\n")
    _git(repo, "add", ".gitignore")
    _git(repo, "add", "-f", "kept.log")
    _git(repo, "commit", "-q", "-m", "ignore")
    (repo / "build.log").write_text("ignored\n")
    (repo / "untracked.txt").write_text("untracked\n")
    (repo / "dir").mkdir()
    (repo / "dir" / "x.txt").write_text("x\n")
    os.symlink("a.txt", repo / "link")
    nested = repo / "nested"
    nested.mkdir()
    _git(nested, "init", "-q", "-b", "main")
    (nested / "n.txt").write_text("n\n")
    _git(nested, "add", "n.txt")
    _git(nested, "commit", "-q", "-m", "n")
    return repo


def _diff_trees(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many ``diff-tree`` runs the store made (the shortcut makes none)."""
    from harnesses.checkpoints import _backend

    count = [0]
    real = _backend.GitBackend.run

    def run(self: Any, *args: str, **kw: Any) -> str:
        count[0] += args[:1] == ("diff-tree",)
        return real(self, *args, **kw)

    monkeypatch.setattr(_backend.GitBackend, "run", run)
    return count


@pytest.mark.parametrize("step", sorted(_WALK_STEPS))
async def test_a_change_between_checkpoints_is_in_files_touched(
    busy: Path, tmp_path: Path, step: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(busy, tmp_path)
    await _made(store, tmp_path, "first")
    (busy / "untracked.txt").write_text("untracked, edited\n")
    (busy / "a.txt").write_text("one, not committed\n")
    diff_trees = _diff_trees(monkeypatch)
    await _made(store, tmp_path, "second")  # from the kept index
    assert diff_trees == [0], "the shortcut is not armed: the attack would prove nothing"
    _WALK_STEPS[step](busy)
    made = await _made(store, tmp_path, step)
    assert made.files_touched, step


async def test_a_working_tree_diff_between_checkpoints_then_undone(
    busy: Path, tmp_path: Path
) -> None:
    store = _store(busy, tmp_path)
    first = await _made(store, tmp_path, "first")
    await _made(store, tmp_path, "second")
    (busy / "a.txt").write_text("briefly\n")
    assert await store.files_changed(first) == ["a.txt"]
    (busy / "a.txt").write_text("one\n")
    (busy / "b.txt").write_text("later\n")
    made = await _made(store, tmp_path, "after")
    assert made.files_touched == ("b.txt",)
    await store.ensure("same")
    (busy / "b.txt").write_text("two\n")
    await _made(store, tmp_path, "after ensure")


async def test_files_appearing_and_vanishing_during_the_walk(
    busy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harnesses.checkpoints import _backend

    store = _store(busy, tmp_path)
    await _made(store, tmp_path, "first")
    await _made(store, tmp_path, "second")
    real = _backend.GitBackend.run

    def run(self: Any, *args: str, **kw: Any) -> str:
        out = real(self, *args, **kw)
        if args[:1] == ("diff-files",):
            (busy / "appeared.txt").write_text("during the walk\n")
            (busy / "b.txt").unlink()
            (busy / "a.txt").write_text("one, edited during the walk\n")
        return out

    monkeypatch.setattr(_backend.GitBackend, "run", run)
    (busy / "untracked.txt").write_text("before the walk\n")
    raced = await store.create("raced")
    monkeypatch.setattr(_backend.GitBackend, "run", real)
    assert raced.files_touched == _touched_truth(store, raced)
    made = await _made(store, tmp_path, "after")
    # the new-files listing runs beside diff-files: it may see appeared.txt already
    assert {"appeared.txt", "b.txt", "a.txt"} <= {*raced.files_touched, *made.files_touched}
    assert {"b.txt", "a.txt"} <= set(made.files_touched)


# -- retention on the listing the new checkpoint was made with ----------------------------


async def test_retention_keeps_what_another_processs_restore_needs(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another Tandem process restores while this one takes a checkpoint: the restore's
    pre-restore checkpoint protects its target (the undo deletes the refs the restore
    recreated from it), so retention must not delete that target on a listing made before
    the restore (hole: the target was deleted, and the undo left ``refs/heads/gone``)."""
    from harnesses.checkpoints import store as store_module

    other = _store(repo, tmp_path)
    _git(repo, "branch", "gone")
    target = await other.create("with the branch")
    _git(repo, "branch", "-D", "gone")
    (repo / "a.txt").write_text("later\n")
    await other.create("without it")
    mine = _store(repo, tmp_path, retention=Retention(keep_count=1, min_age_s=0.0))
    real = store_module.parts_refs
    raced: list[str] = []

    def parts_refs(g: Any, *args: Any, **kw: Any) -> Any:
        if g is mine._backend and not raced:  # after this checkpoint's listing
            raced.append(other._locked(other._restore, target.id))  # meanwhile, elsewhere
        return real(g, *args, **kw)

    monkeypatch.setattr(store_module, "parts_refs", parts_refs)
    await mine.create("mine")
    monkeypatch.setattr(store_module, "parts_refs", real)
    assert raced
    ids = {c.id for c in await other.list()}
    assert target.id in ids and raced[0] in ids
    before_undo = _meta(other, (await other.get(raced[0])).commit)["refs"]
    await other.undo_restore()
    assert _truth(repo)["refs"] == before_undo


# -- racy git: a rewrite in the second the checkpoint hashed the file ----------------------


def _new_second() -> int:
    """Wait (bounded polling) for the start of a wall-clock second; return that second."""
    import time

    for _ in range(50_000_000):
        now = time.time_ns()
        if now % 10**9 < 100_000_000:
            return now // 10**9
    pytest.fail("the clock never reached a new second")


@pytest.mark.parametrize(
    ("kind", "old", "between"),
    [
        ("tracked", 1_000_000_000 * 10**9, False),  # 2001
        ("untracked", 1_000_000_000 * 10**9, False),
        ("tracked", 1_000_000_000 * 10**9, True),  # a checkpoint between, same second
        ("untracked", 0, False),  # the epoch: git's racy check is off for that mtime
        ("tracked", 0, True),
    ],
)
async def test_a_same_second_rewrite_with_an_old_mtime_is_in_the_next_checkpoint(
    repo: Path, tmp_path: Path, kind: str, old: int, between: bool
) -> None:
    """Git compares whole seconds of ctime (no USE_NSEC) and takes an entry whose mtime is
    older than the index file as clean: a file hashed by a checkpoint, then rewritten in
    the same second at the same size with its (old) mtime put back (``cp -p``, ``tar x``,
    ``touch -d``, a reproducible build's fixed mtime) kept git's view of it (hole: the next
    checkpoints held the old bytes; a restore would have written them over the new)."""
    import time

    name = "b.txt" if kind == "tracked" else "untracked.bin"
    path = repo / name
    store = _store(repo, tmp_path)
    await store.create("first")
    for _attempt in range(5):
        second = _new_second()
        path.write_text("aaaa\n")
        os.utime(path, ns=(old, old))
        await store.create("hashes aaaa")
        if between:  # another file changes: the kept index is written again
            (repo / "a.txt").write_text(f"between {_attempt}\n")
            await store.create("another file changed")
        path.write_text("bbbb\n")  # the same size
        os.utime(path, ns=(old, old))
        if time.time_ns() // 10**9 == second and os.stat(path).st_ctime_ns // 10**9 == second:
            break
    else:
        pytest.skip("the machine was too slow to stay within one second")
    made = await store.create("after")
    shown = _git(repo, f"--git-dir={store.location}", "show", f"{made.commit}:{name}")
    assert shown == "bbbb"
    assert name in made.files_touched
    again = await store.create("later")  # and the kept index stays right afterwards
    assert _git(repo, f"--git-dir={store.location}", "show", f"{again.commit}:{name}") == "bbbb"
