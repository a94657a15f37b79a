"""CheckpointStore against real git: snapshot, restore, undo, and the user's state untouched."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import git
import pytest

from harnesses.checkpoints import REF_PREFIX, CheckpointError, CheckpointStore


def _store_git(store: CheckpointStore, *args: str) -> str:
    """Plain git on the checkpoint store (test inspection only)."""
    return git.Git(str(store.workspace)).execute(
        ["git", f"--git-dir={store.location}", *args], strip_newline_in_stdout=True
    )


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Isolate git from the user's config; give the *test set-up* an identity via env."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("[user]\n\tuseConfigOnly = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv(
        "GIT_OPTIONAL_LOCKS", "0"
    )  # `git status` in tests must not rewrite the index
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Author")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "author@example.invalid")


def _drop_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkpoint code must work without any git identity configured."""
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(key, raising=False)


def _tree_bytes(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root`` except ``.git``: relative path → (bytes, mode bits)."""
    result: dict[str, tuple[bytes, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            result[rel] = (path.read_bytes(), stat.S_IMODE(path.lstat().st_mode))
    return result


def _populate(ws: Path) -> None:
    (ws / "src" / "util").mkdir(parents=True)
    (ws / "bin").mkdir()
    (ws / "README.md").write_bytes(b"# Project\r\nline with CRLF\r\n")
    (ws / "src" / "app.py").write_text("print('app')\n")
    (ws / "src" / "util" / "helpers.py").write_text("def helper():\n    return 1\n")
    (ws / "bin" / "run.sh").write_text("#!/bin/sh\necho run\n")
    (ws / "bin" / "run.sh").chmod(0o755)
    (ws / ".gitignore").write_text("*.log\nbuild/\n")


def _add_untracked_and_ignored(ws: Path) -> None:
    (ws / "src" / "new_module.py").write_text("NEW = True\n")
    (ws / "notes.txt").write_bytes(b"untracked notes\x00\xff binary-ish\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.bin").write_bytes(b"\x00\x01\x02")
    (ws / "debug.log").write_text("log 1\n")


def _make_repo(ws: Path) -> git.Repo:
    repo = git.Repo.init(ws)
    _populate(ws)
    repo.git.add("-A")
    repo.git.commit("-m", "initial")
    # a stash entry
    (ws / "README.md").write_bytes(b"# Project\r\nstashed edit\r\n")
    repo.git.stash("push", "-m", "user stash")
    # a staged change, then a further unstaged edit of the same file
    (ws / "src" / "app.py").write_text("print('staged')\n")
    repo.git.add("src/app.py")
    (ws / "src" / "app.py").write_text("print('staged')\nprint('unstaged')\n")
    _add_untracked_and_ignored(ws)
    return repo


def _user_state(repo: git.Repo) -> dict[str, object]:
    ws = Path(repo.working_tree_dir or "")
    return {
        "index": (ws / ".git" / "index").read_bytes(),
        "cached": repo.git.diff("--cached"),
        "stash": repo.git.stash("list"),
        "branches": repo.git.branch("-a", "-v", "--no-abbrev"),
        "head": repo.git.rev_parse("HEAD"),
        "symbolic": repo.git.symbolic_ref("HEAD"),
        "refs_heads": repo.git.for_each_ref("refs/heads", "refs/tags", "refs/stash"),
    }


def _simulate_shell(ws: Path) -> None:
    """What a careless shell command does: rm -rf src, overwrite README, new junk."""
    shutil.rmtree(ws / "src")
    (ws / "README.md").write_text("overwritten\n")
    (ws / "junk.txt").write_text("created after the checkpoint\n")
    (ws / "bin" / "run.sh").chmod(0o644)
    (ws / "debug.log").write_text("log 2 (ignored, must survive restore)\n")


async def test_restore_in_repo_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    repo = _make_repo(ws)
    user_before = _user_state(repo)
    status_before = repo.git.status("--porcelain")
    _drop_identity(monkeypatch)

    store = CheckpointStore(ws)
    snapshot = _tree_bytes(ws)
    objects_before = sorted(p.name for p in (ws / ".git" / "objects").rglob("*"))
    cp = await store.create("before turn 1", turn=1)
    assert cp.ref == REF_PREFIX + cp.id and cp.turn == 1 and cp.label == "before turn 1"
    # the store lives in the (test-isolated) data dir, outside the workspace
    assert ws not in store.location.parents and store.location.is_dir()
    assert _store_git(store, "rev-parse", cp.ref) == cp.commit
    assert repo.git.for_each_ref("refs/tandem") == ""  # nothing written to the user's repo
    assert sorted(p.name for p in (ws / ".git" / "objects").rglob("*")) == objects_before
    # the first checkpoint records HEAD; files_touched = what differs from HEAD
    assert cp.base == user_before["head"]
    assert set(cp.files_touched) == {"src/app.py", "src/new_module.py", "notes.txt"}
    tree_files = _store_git(store, "ls-tree", "-r", "--name-only", cp.commit).splitlines()
    assert "build/out.bin" not in tree_files and "debug.log" not in tree_files
    assert "notes.txt" in tree_files and "src/new_module.py" in tree_files
    assert _user_state(repo) == user_before

    _simulate_shell(ws)
    after_shell = _tree_bytes(ws)

    pre_id = await store.restore(cp.id)
    restored = _tree_bytes(ws)
    expected = dict(snapshot)
    expected["debug.log"] = after_shell["debug.log"]  # ignored: left alone
    assert restored == expected
    assert "junk.txt" not in restored
    assert stat.S_IMODE((ws / "bin" / "run.sh").stat().st_mode) == 0o755
    assert _user_state(repo) == user_before
    assert repo.git.status("--porcelain") == status_before

    listed = await store.list()
    assert [c.id for c in listed] == [cp.id, pre_id]
    assert listed[1].kind == "pre-restore" and listed[1].restored_to == cp.id

    changed = await store.files_changed(cp.id, pre_id)
    assert changed == sorted(
        [
            "README.md",
            "bin/run.sh",
            "junk.txt",
            "src/app.py",
            "src/new_module.py",
            "src/util/helpers.py",
        ]
    )
    text = await store.diff(cp.id, pre_id)
    assert "+overwritten" in text and "-print('staged')" in text
    assert "diff --git a/junk.txt b/junk.txt" in text
    assert await store.diff(cp.id) == ""  # working tree equals the checkpoint again

    await store.undo_restore()
    assert _tree_bytes(ws) == after_shell
    assert not (ws / "src").exists()
    assert _user_state(repo) == user_before

    # survives a restart: a fresh store reads the refs
    again = await CheckpointStore(ws).list()
    assert [c.id for c in again][:2] == [cp.id, pre_id]
    assert again[0].files_touched == cp.files_touched and again[0].base == cp.base
    assert _user_state(repo) == user_before
    assert repo.git.for_each_ref("refs/tandem") == ""


async def test_restore_in_plain_folder_uses_shadow_repo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    _populate(ws)
    _add_untracked_and_ignored(ws)
    _drop_identity(monkeypatch)
    data = tmp_path / "data"
    store = CheckpointStore(ws, data_dir=data)
    snapshot = _tree_bytes(ws)
    cp = await store.create("first")
    assert not (ws / ".git").exists()
    assert any(p.suffix == ".git" for p in data.iterdir())

    _simulate_shell(ws)
    after_shell = _tree_bytes(ws)
    assert set(await store.files_changed(cp)) >= {"README.md", "junk.txt", "src/app.py"}
    assert "+overwritten" in await store.diff(cp)

    pre_id = await store.restore(cp)
    expected = dict(snapshot)
    expected["debug.log"] = after_shell["debug.log"]
    assert _tree_bytes(ws) == expected
    assert not (ws / ".git").exists()

    await store.undo_restore()
    assert _tree_bytes(ws) == after_shell

    fresh = CheckpointStore(ws, data_dir=data)
    assert [c.id for c in await fresh.list()][:2] == [cp.id, pre_id]


async def test_subdirectory_of_repo_gets_shadow_and_leaves_repo_alone(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    repo = _make_repo(outer)
    user_before = _user_state(repo)
    ws = outer / "src"
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    cp = await store.create("sub")
    (ws / "app.py").write_text("changed\n")
    await store.restore(cp.id)
    assert (ws / "app.py").read_text() == "print('staged')\nprint('unstaged')\n"
    assert repo.git.for_each_ref("refs/tandem") == ""
    assert _user_state(repo) == user_before


async def test_ensure_reuses_an_unchanged_snapshot(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    first = await store.ensure("one")
    same = await store.ensure("two")
    assert same.id == first.id
    (ws / "a.txt").write_text("b\n")
    second = await store.ensure("three")
    assert second.id != first.id and second.files_touched == ("a.txt",)
    assert [c.id for c in await store.list()] == [first.id, second.id]


async def test_unknown_checkpoint_and_nothing_to_undo(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    with pytest.raises(CheckpointError):
        await store.restore("nope")
    with pytest.raises(CheckpointError):
        await store.undo_restore()
    assert await store.list() == []


async def test_file_replaced_by_directory_and_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "thing").write_text("a file\n")
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    cp = await store.create("file")
    (ws / "thing").unlink()
    (ws / "thing").mkdir()
    (ws / "thing" / "inner.txt").write_text("inner\n")
    await store.restore(cp.id)
    assert (ws / "thing").read_text() == "a file\n"
    await store.undo_restore()
    assert (ws / "thing" / "inner.txt").read_text() == "inner\n"


async def test_restore_leaves_ignored_files_but_restores_newly_ignored_paths(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("*.log\n")
    (ws / "out.txt").write_text("snapshot version\n")
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    cp = await store.create("base")
    # after the checkpoint: new dirs, one with only a new file, one also holding an ignored file
    (ws / "gone").mkdir()
    (ws / "gone" / "new.py").write_text("x\n")
    (ws / "mixed").mkdir()
    (ws / "mixed" / "new.py").write_text("y\n")
    (ws / "mixed" / "trace.log").write_text("ignored\n")
    # out.txt becomes ignored and is replaced by an ignored file of the same name
    (ws / ".gitignore").write_text("*.log\nout.txt\n")
    (ws / "out.txt").write_text("ignored replacement\n")
    await store.restore(cp.id)
    assert not (ws / "gone").exists()
    assert not (ws / "mixed" / "new.py").exists()
    assert (ws / "mixed" / "trace.log").read_text() == "ignored\n"
    assert (ws / ".gitignore").read_text() == "*.log\n"
    # issue 12: a path that became ignored since is restored too (the pre-restore
    # checkpoint holds the ignored file that was in the way, so undo brings it back)
    assert (ws / "out.txt").read_text() == "snapshot version\n"
    await store.undo_restore()
    assert (ws / "out.txt").read_text() == "ignored replacement\n"
    assert (ws / "mixed" / "trace.log").read_text() == "ignored\n"


async def test_same_size_edits_within_a_second_are_seen(tmp_path: Path) -> None:
    """Quick same-size edits are seen (the cached index keeps its mtime for racy-git checks)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    for round_ in range(5):
        (ws / "a.txt").write_text(f"{round_}\n")
        checkpoint = await store.ensure(f"round {round_}")
        text = await store.diff(checkpoint)
        assert text == "", f"round {round_}: snapshot missed the edit"
        assert len(await store.list()) == round_ + 1


def _wipe_git_dir(ws: Path, repo: git.Repo) -> None:
    repo.close()
    shutil.rmtree(ws / ".git")


def _move_git_dir(ws: Path, repo: git.Repo) -> None:
    repo.close()
    (ws / ".git").rename(ws.parent / "moved-away.git")


def _delete_refs_and_prune(ws: Path, repo: git.Repo) -> None:
    for ref in repo.git.for_each_ref("--format=%(refname)").splitlines():
        repo.git.update_ref("-d", ref)
    repo.git.reflog("expire", "--expire=now", "--all")
    repo.git.gc("--prune=now", "-q")


def _delete_tandem_refs(ws: Path, repo: git.Repo) -> None:
    # what an agent would try against earlier versions' refs/tandem/checkpoints
    for ref in repo.git.for_each_ref("--format=%(refname)", "refs/tandem").splitlines():
        repo.git.update_ref("-d", ref)
    repo.git.gc("--prune=now", "-q")


@pytest.mark.parametrize(
    "attack",
    [
        pytest.param(_wipe_git_dir, id="rm-rf-dot-git"),
        pytest.param(_move_git_dir, id="mv-dot-git-away"),
        pytest.param(_delete_refs_and_prune, id="update-ref-d-all-and-gc-prune-now"),
        pytest.param(_delete_tandem_refs, id="update-ref-d-refs-tandem-and-gc"),
    ],
)
async def test_checkpoints_survive_what_the_agent_does_to_dot_git(
    tmp_path: Path, attack: object
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    repo = _make_repo(ws)
    store = CheckpointStore(ws)
    first_state = _tree_bytes(ws)
    first = await store.create("one")
    (ws / "src" / "app.py").write_text("second state\n")
    (ws / "extra.bin").write_bytes(bytes(range(256)))
    second_state = _tree_bytes(ws)
    second = await store.create("two")
    assert ws not in store.location.parents

    attack(ws, repo)  # type: ignore[operator]
    shutil.rmtree(ws / "src")
    (ws / "README.md").write_text("vandalised\n")

    fresh = CheckpointStore(ws)  # e.g. after a restart
    assert [c.id for c in await fresh.list()] == [first.id, second.id]
    await fresh.restore(first.id)
    assert _tree_bytes(ws) == first_state
    await fresh.restore(second.id)
    assert _tree_bytes(ws) == second_state


async def test_tracked_but_ignored_files_are_in_the_snapshot(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    repo = git.Repo.init(ws)
    (ws / ".gitignore").write_text("*.local\n")
    (ws / "settings.local").write_text("tracked on purpose\n")
    (ws / "scratch.local").write_text("really ignored\n")
    repo.git.add("-f", "settings.local", ".gitignore")
    repo.git.commit("-m", "init")
    store = CheckpointStore(ws)
    cp = await store.create("one")
    names = _store_git(store, "ls-tree", "-r", "--name-only", cp.commit).splitlines()
    assert "settings.local" in names and "scratch.local" not in names
    assert cp.files_touched == ()  # equal to HEAD
    (ws / "settings.local").write_text("changed\n")
    await store.restore(cp.id)
    assert (ws / "settings.local").read_text() == "tracked on purpose\n"


async def test_user_info_exclude_is_honoured(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    git.Repo.init(ws).close()
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "exclude").write_text("secret-notes/\n")
    (ws / "secret-notes").mkdir()
    (ws / "secret-notes" / "n.txt").write_text("x\n")
    (ws / "kept.txt").write_text("y\n")
    store = CheckpointStore(ws)
    cp = await store.create("one")
    assert cp.files_touched == ("kept.txt",) and cp.base is None


# -- issue 12: size cap, git clean dry runs, parts ------------------------------------------


def test_the_door_runs_git_clean_only_as_a_dry_run(tmp_path: Path) -> None:
    from harnesses.vcs import run_git

    ws = tmp_path / "ws"
    ws.mkdir()
    git.Repo.init(ws).close()
    (ws / "junk.txt").write_text("x\n")
    for args in (["clean", "-f"], ["clean", "-fdx"], ["clean", "-f", "--", "-n"]):
        with pytest.raises(ValueError, match="dry run"):
            run_git(args, cwd=ws)
    out = run_git(["clean", "-n", "-d"], cwd=ws).text
    assert out == "Would remove junk.txt\n" and (ws / "junk.txt").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(["-fdx"], ["-n", "-d", "-x", "--"], id="combined-letters"),
        pytest.param(["-f", "-X", "--", "build"], ["-n", "-X", "--", "build"], id="X-with-path"),
        pytest.param(
            ["-f", "-e", "*.keep", "src"], ["-n", "-e", "*.keep", "--", "src"], id="exclude"
        ),
        pytest.param(["-f", "--interactive"], ["-n", "-d", "-x"], id="unknown-option-widest"),
        pytest.param(None, ["-n", "-d", "-x"], id="not-analysed-widest"),
    ],
)
def test_clean_dry_run_arguments(args: list[str] | None, expected: list[str]) -> None:
    from harnesses.checkpoints._cap import clean_dry_run_args

    assert clean_dry_run_args(args) == expected


def test_clean_output_and_sizes_are_parsed() -> None:
    from harnesses.checkpoints import human_bytes
    from harnesses.checkpoints._cap import exclude_pattern, parse_clean_output

    out = 'Would remove .env\nWould remove build/\nWould remove "caf\\303\\251 \\"q\\".txt"\n'
    assert parse_clean_output(out) == [".env", "build/", 'café "q".txt']
    assert exclude_pattern("a[1]*?.bin") == "/a\\[1]\\*\\?.bin"
    assert exclude_pattern("line\nbreak") is None
    assert [human_bytes(n) for n in (12, 1300, 419430400, 1_300_000_000)] == [
        "12 bytes",
        "1.3 kB",
        "419 MB",
        "1.3 GB",
    ]


async def test_cap_skips_exactly_the_big_file_even_with_glob_characters(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "big[1]*.bin").write_bytes(b"x" * 5000)
    (ws / "big1x.bin").write_bytes(b"y" * 10)
    (ws / "small.txt").write_text("s\n")
    store = CheckpointStore(ws, data_dir=tmp_path / "data", cap_bytes=1000)
    cp = await store.create("capped")
    assert cp.skipped == (("big[1]*.bin", 5000),)
    assert cp.parts == ("worktree",)  # no repository: no index, refs or stash
    names = _store_git(store, "ls-tree", "-r", "--name-only", cp.commit).splitlines()
    assert sorted(names) == ["big1x.bin", "small.txt"]
    (ws / "small.txt").write_text("changed\n")
    await store.restore(cp.id)
    assert (ws / "small.txt").read_text() == "s\n"
    assert (ws / "big[1]*.bin").read_bytes() == b"x" * 5000  # not deleted by the restore
    with pytest.raises(ValueError):
        CheckpointStore(ws, cap_bytes=-1)


async def test_a_checkpoint_never_writes_to_the_users_repository(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    repo = _make_repo(ws)
    (ws / ".env").write_text("ignored\n")
    (ws / ".gitignore").write_text("*.log\nbuild/\n.env\n")
    objects_before = sorted(p.name for p in (ws / ".git" / "objects").rglob("*"))
    user_before = _user_state(repo)
    store = CheckpointStore(ws)
    cp = await store.create("with parts", removes=[".env"], git_clean=[["-fdx"]])
    assert {"index", "refs", "stash"} <= set(cp.parts)
    names = _store_git(store, "ls-tree", "-r", "--name-only", cp.commit).splitlines()
    assert ".env" in names and "build/out.bin" in names and "debug.log" in names
    assert sorted(p.name for p in (ws / ".git" / "objects").rglob("*")) == objects_before
    assert _user_state(repo) == user_before


async def test_a_conflicted_index_is_restored_with_its_stages(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    repo = git.Repo.init(ws, initial_branch="main")
    (ws / "f.txt").write_text("base\n")
    repo.git.add("f.txt")
    repo.git.commit("-m", "base")
    repo.git.checkout("-q", "-b", "other")
    (ws / "f.txt").write_text("theirs\n")
    repo.git.commit("-qam", "theirs")
    repo.git.checkout("-q", "main")
    (ws / "f.txt").write_text("ours\n")
    repo.git.commit("-qam", "ours")
    with pytest.raises(git.GitCommandError):
        repo.git.merge("other")
    stages = repo.git.ls_files("-s")
    assert " 3\tf.txt" in stages
    store = CheckpointStore(ws)
    cp = await store.create("mid-merge")
    repo.git.reset("-q")  # drops the stages
    assert " 3\tf.txt" not in repo.git.ls_files("-s")
    await store.restore(cp.id)
    assert repo.git.ls_files("-s") == stages


async def test_an_untracked_file_that_grows_over_the_cap_is_dropped_not_rehashed(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "log.txt").write_bytes(b"a" * 100)
    store = CheckpointStore(ws, data_dir=tmp_path / "data", cap_bytes=1000)
    small = await store.create("small")
    assert small.skipped == ()
    (ws / "log.txt").write_bytes(b"b" * 5000)
    grown = await store.create("grown")
    assert grown.skipped == (("log.txt", 5000),)
    assert _store_git(store, "ls-tree", "-r", "--name-only", grown.commit) == ""
    assert grown.files_touched == ("log.txt",)  # gone from the snapshot, and said so
    assert (ws / "log.txt").read_bytes() == b"b" * 5000  # only left out, never touched


def test_the_recoverability_line_names_kinds_counts_and_sizes() -> None:
    from harnesses.checkpoints import Recoverability

    assert Recoverability((), ()).summary() == "everything it removes is recoverable"
    mixed = Recoverability((), (("a.bin", 2_000_000), (".env.big", 500_000)), ignored_lost=1)
    assert mixed.lost_bytes == 2_500_000
    assert mixed.summary() == "2 files, 2.5 MB, are over the cap and will not be recoverable"


def test_retention_from_settings_converts_days_and_minutes_to_seconds() -> None:
    from core.settings import Settings
    from harnesses.checkpoints import retention_from_settings

    settings = Settings(checkpoint_keep_count=7, checkpoint_keep_days=2, checkpoint_min_age_minutes=5)
    retention = retention_from_settings(settings)
    assert (retention.keep_count, retention.max_age_s, retention.min_age_s) == (7, 172800.0, 300.0)
