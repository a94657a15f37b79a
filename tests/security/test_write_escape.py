"""Write race and write escape: a patch never lands outside the workspace or in ``.git``.

Attack class "Write race" of issue 11: the model (or a command it started) swaps a directory
of the workspace for a symlink to a directory outside while the editor writes, or plants
symlinks, hard links, fifos and ``..``/``.git`` spellings for the editor to trip over. The
promise checked by every case: nothing outside the workspace is created, changed or deleted
(bytes, inode and mtime of every entry), ``.git`` is untouched, and the editor answers with a
clean ``failed`` result instead of raising.
"""

from __future__ import annotations

import asyncio
import ctypes
import errno
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from core.tools.editor import ApplyPatchOperation, ApplyPatchResult
from harnesses.editor import GitAwareEditor, ReviewEvent, ReviewOutcome

State = dict[str, tuple[object, ...]]

SECRET = "secret\n"


def _state(root: Path) -> State:
    """Every entry below ``root`` (root included): type, mode, inode, mtime and content."""
    out: State = {}
    for dirpath, dirs, files in os.walk(root, followlinks=False):
        for name in [".", *dirs, *files]:
            path = Path(dirpath) / name if name != "." else Path(dirpath)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                body: object = os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                body = path.read_bytes()
            else:
                body = None
            out[str(path.relative_to(root))] = (
                info.st_mode,
                info.st_ino,
                info.st_mtime_ns,
                info.st_nlink,
                body,
            )
    return out


def _file_id(path: Path) -> tuple[int, int, bytes]:
    info = path.stat()
    return info.st_ino, info.st_mtime_ns, path.read_bytes()


def op(
    kind: str, path: str, diff: str | None = None, move_to: str | None = None
) -> ApplyPatchOperation:
    return ApplyPatchOperation(type=kind, path=path, diff=diff, move_to=move_to)  # type: ignore[arg-type]


def _diff_for(kind: str) -> str | None:
    return {"create_file": "+pwned\n", "update_file": "@@\n+pwned\n"}.get(kind)


async def _call(editor: GitAwareEditor, operation: ApplyPatchOperation) -> ApplyPatchResult:
    """Run one operation to its result; the editor must answer (never raise, never hang)."""
    result = await asyncio.wait_for(getattr(editor, operation.type)(operation), timeout=20)
    assert isinstance(result, ApplyPatchResult)
    assert result.status in ("completed", "failed")
    assert "Traceback" not in (result.output or "")
    return result


def _editor(ws: Path, mode: str) -> GitAwareEditor:
    """An editor; in review mode every proposal is accepted as soon as it is queued."""
    editor = GitAwareEditor(ws, mode=mode)  # type: ignore[arg-type]
    if mode == "review":

        def accept(event: ReviewEvent) -> None:
            if event.type == "submitted":
                editor.queue.resolve(event.proposal.id, ReviewOutcome.accept_all(event.proposal))

        editor.queue.add_listener(accept)
    return editor


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """A git workspace full of traps, and the outside directory they point at."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (outside / "a.txt").write_text("a\n")
    (outside / "hard.txt").write_text("hard\n")
    ws.mkdir()
    git.Repo.init(ws).close()
    (ws / "src.txt").write_text("source\n")
    (ws / "dir").mkdir()
    (ws / "dir" / "a.txt").write_text("a\n")
    (ws / "sub").mkdir()
    links = {
        "escape": str(outside),
        "rel_escape": "../outside",
        "hop1": "hop2",
        "hop2": str(outside),
        "up": "..",
        "inner": "sub/../../outside",
        "leak.txt": str(outside / "secret.txt"),
        "rel_leak.txt": "../outside/secret.txt",
        "chain.txt": "leak.txt",
        "dangle.txt": str(outside / "new.txt"),
        "rootlink": "/",
        "hooks": ".git/hooks",
        "cfg": ".git/config",
        "gitdir": ".git",
    }
    for name, target in links.items():
        (ws / name).symlink_to(target)
    os.mkfifo(ws / "pipe")
    os.mkfifo(ws / "dir" / "pipe2")
    os.link(outside / "hard.txt", ws / "hl.txt")
    return ws, outside


def _assert_refused(
    result: ApplyPatchResult, before: tuple[State, State], ws: Path, outside: Path
) -> None:
    assert result.status == "failed"
    assert "nothing was" in (result.output or "").lower()
    assert _state(outside) == before[1], "something outside the workspace changed"
    assert _state(ws) == before[0], "a refused operation changed the workspace"


ESCAPES = [
    pytest.param("create_file", "escape/new.txt", None, id="abs-dir-link-create"),
    pytest.param("create_file", "escape/a.txt", None, id="abs-dir-link-overwrite"),
    pytest.param("update_file", "escape/a.txt", None, id="abs-dir-link-update"),
    pytest.param("delete_file", "escape/a.txt", None, id="abs-dir-link-delete"),
    pytest.param("create_file", "escape/deep/er/new.txt", None, id="abs-dir-link-mkdir-parents"),
    pytest.param("create_file", "rel_escape/new.txt", None, id="rel-dir-link-create"),
    pytest.param("update_file", "rel_escape/a.txt", None, id="rel-dir-link-update"),
    pytest.param("create_file", "hop1/new.txt", None, id="chained-dir-links"),
    pytest.param("create_file", "up/outside/new.txt", None, id="dotdot-dir-link"),
    pytest.param("create_file", "inner/new.txt", None, id="link-through-subdir-dotdot"),
    pytest.param("create_file", "rootlink{outside}/new.txt", None, id="link-to-slash"),
    pytest.param("update_file", "escape\\a.txt", None, id="backslash-separator"),
    pytest.param("update_file", "leak.txt", None, id="abs-leaf-link-update"),
    pytest.param("update_file", "rel_leak.txt", None, id="rel-leaf-link-update"),
    pytest.param("create_file", "leak.txt", None, id="leaf-link-create-over"),
    pytest.param("update_file", "chain.txt", None, id="leaf-link-chain"),
    pytest.param("create_file", "dangle.txt", None, id="dangling-leaf-link-create"),
    pytest.param("update_file", "src.txt", "escape/moved.txt", id="move-dest-abs-dir-link"),
    pytest.param("update_file", "src.txt", "rel_escape/moved.txt", id="move-dest-rel-dir-link"),
    pytest.param("update_file", "src.txt", "escape/newdir/moved.txt", id="move-dest-link-mkdir"),
    pytest.param("update_file", "src.txt", "hop1/moved.txt", id="move-dest-chained-link"),
    pytest.param("update_file", "src.txt", "dangle.txt", id="move-dest-dangling-leaf-link"),
    pytest.param("update_file", "src.txt", "leak.txt", id="move-dest-leaf-link"),
    pytest.param("update_file", "escape/a.txt", "stolen.txt", id="move-source-abs-dir-link"),
    pytest.param("update_file", "rel_escape/a.txt", "stolen.txt", id="move-source-rel-dir-link"),
    pytest.param("update_file", "leak.txt", "stolen.txt", id="move-source-leaf-link"),
    pytest.param("update_file", "hop1/secret.txt", "stolen.txt", id="move-source-chained-link"),
]


@pytest.mark.parametrize("mode", ["immediate", "review"])
@pytest.mark.parametrize(("kind", "path", "move_to"), ESCAPES)
async def test_symlinks_never_carry_a_write_outside(
    world: tuple[Path, Path], mode: str, kind: str, path: str, move_to: str | None
) -> None:
    ws, outside = world
    path = path.format(outside=str(outside))
    before = (_state(ws), _state(outside))
    result = await _call(_editor(ws, mode), op(kind, path, _diff_for(kind), move_to))
    _assert_refused(result, before, ws, outside)
    assert not (outside / "new.txt").exists()
    assert not (ws / "stolen.txt").exists()
    assert SECRET not in (result.output or "")


def _passwd_line() -> str:
    return Path("/etc/passwd").read_text().splitlines()[0]


@pytest.mark.parametrize(
    ("link", "target", "path"),
    [
        pytest.param("passwd", "/etc/passwd", "passwd", id="abs-leaf-link"),
        pytest.param("etc", "/etc", "etc/passwd", id="abs-dir-link"),
        pytest.param("p", "../" * 12 + "etc/passwd", "p", id="relative-dotdots"),
        pytest.param("e", "../" * 12 + "etc", "e/passwd", id="relative-dotdots-dir"),
    ],
)
async def test_symlink_to_etc_passwd(
    world: tuple[Path, Path], link: str, target: str, path: str
) -> None:
    # the diff rewrites the first line with itself: an escape would replace /etc/passwd with
    # identical bytes (new inode and mtime, content intact), so the test is harmless if broken
    ws, outside = world
    (ws / link).symlink_to(target)
    passwd = _file_id(Path("/etc/passwd"))
    line = _passwd_line()
    before = (_state(ws), _state(outside))
    for mode in ("immediate", "review"):
        result = await _call(_editor(ws, mode), op("update_file", path, f"@@\n-{line}\n+{line}\n"))
        _assert_refused(result, before, ws, outside)
        assert line not in (result.output or "")
    assert _file_id(Path("/etc/passwd")) == passwd


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        pytest.param("create_file", "../x.txt", id="parent"),
        pytest.param("create_file", "dir/../../x.txt", id="down-then-up"),
        pytest.param("create_file", "./../x.txt", id="dot-then-up"),
        pytest.param("create_file", "..\\x.txt", id="backslash-up"),
        pytest.param("create_file", "dir/./../../x.txt", id="dot-inside"),
        pytest.param("create_file", "dir/sub/../../../x.txt", id="missing-dirs-then-up"),
        pytest.param("create_file", "dir/..", id="names-the-root"),
        pytest.param("create_file", "..", id="bare-dotdot"),
        pytest.param("update_file", "../outside/a.txt", id="update-sibling"),
        pytest.param("delete_file", "../outside/a.txt", id="delete-sibling"),
        pytest.param("update_file", "dir/../dir/a.txt", id="up-and-back-inside"),
        pytest.param("create_file", "{abs}", id="absolute"),
        pytest.param("create_file", "//{abs}", id="double-slash-absolute"),
        pytest.param("create_file", "~/x.txt", id="home"),
        pytest.param("create_file", "C:/x.txt", id="drive-letter"),
        pytest.param("create_file", "dir/a.txt\x00../../x.txt", id="nul-byte"),
    ],
)
async def test_dotdot_and_absolute_forms_are_refused(
    world: tuple[Path, Path], kind: str, path: str
) -> None:
    ws, outside = world
    tmp = ws.parent
    path = path.format(abs=str(tmp / "x.txt"))
    before = (_state(ws), _state(outside))
    listing = sorted(os.listdir(tmp))
    result = await _call(_editor(ws, "immediate"), op(kind, path, _diff_for(kind)))
    _assert_refused(result, before, ws, outside)
    assert sorted(os.listdir(tmp)) == listing
    assert not (tmp / "x.txt").exists()


@pytest.mark.parametrize(
    ("kind", "path", "move_to"),
    [
        pytest.param("update_file", ".git/config", None, id="lower"),
        pytest.param("update_file", ".GIT/config", None, id="upper"),
        pytest.param("create_file", ".Git/hooks/x", None, id="title-case-hook"),
        pytest.param("create_file", "sub/.gIt/config", None, id="nested-mixed-case"),
        pytest.param("create_file", ".git/hooks/pre-commit", None, id="hook"),
        pytest.param("delete_file", ".git/HEAD", None, id="delete-head"),
        pytest.param("delete_file", ".git", None, id="delete-gitdir"),
        pytest.param("create_file", ".git./hooks/pre-commit", None, id="ntfs-trailing-dot"),
        pytest.param("create_file", "git~1/hooks/pre-commit", None, id="ntfs-short-name"),
        pytest.param("create_file", ".g\u200cit/hooks/pre-commit", None, id="hfs-ignorable"),
        pytest.param("create_file", "hooks/pre-commit", None, id="dir-link-into-hooks"),
        pytest.param("update_file", "cfg", None, id="leaf-link-to-config"),
        pytest.param("create_file", "gitdir/hooks/post-checkout", None, id="dir-link-to-gitdir"),
        pytest.param("update_file", "src.txt", ".GIT/hooks/post-checkout", id="move-into-git"),
        pytest.param("update_file", "src.txt", "hooks/post-merge", id="move-into-hooks-link"),
    ],
)
async def test_git_dir_in_any_spelling_is_refused(
    world: tuple[Path, Path], kind: str, path: str, move_to: str | None
) -> None:
    ws, outside = world
    gitdir = _state(ws / ".git")
    before = (_state(ws), _state(outside))
    diff = "@@\n+[core]\n+\tfsmonitor = touch /tmp/pwned\n" if kind == "update_file" else None
    diff = diff or _diff_for(kind)
    result = await _call(_editor(ws, "immediate"), op(kind, path, diff, move_to))
    _assert_refused(result, before, ws, outside)
    assert _state(ws / ".git") == gitdir
    assert ".git" in (result.output or "")


def _unblock(fifo: Path) -> None:
    """If a reader is stuck on the fifo, open the write end so it returns (test hygiene)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


@pytest.mark.parametrize(
    ("kind", "path", "move_to"),
    [
        pytest.param("update_file", "pipe", None, id="update"),
        pytest.param("create_file", "pipe", None, id="create-over"),
        pytest.param("delete_file", "pipe", None, id="delete"),
        pytest.param("update_file", "dir/pipe2", None, id="nested"),
        pytest.param("update_file", "pipe", "moved.txt", id="move-source"),
    ],
)
async def test_fifo_leaf_is_refused_without_hanging(
    world: tuple[Path, Path], kind: str, path: str, move_to: str | None
) -> None:
    ws, outside = world
    before = (_state(ws), _state(outside))
    started = time.monotonic()
    try:
        result = await _call(_editor(ws, "immediate"), op(kind, path, _diff_for(kind), move_to))
    finally:
        _unblock(ws / path)
    assert time.monotonic() - started < 5
    _assert_refused(result, before, ws, outside)
    assert "fifo" in (result.output or "")


@pytest.mark.parametrize(
    ("kind", "path", "move_to", "reason"),
    [
        pytest.param("update_file", "dir", None, "is a directory", id="update"),
        pytest.param("create_file", "dir", None, "is a directory", id="create-over"),
        pytest.param("delete_file", "dir", None, "is a directory", id="delete"),
        pytest.param("update_file", "dir/", None, "is a directory", id="trailing-slash"),
        pytest.param("update_file", "src.txt", "dir", "already exists", id="move-onto"),
        pytest.param("create_file", ".", None, "workspace root", id="dot-root"),
    ],
)
async def test_directory_leaf_is_refused(
    world: tuple[Path, Path], kind: str, path: str, move_to: str | None, reason: str
) -> None:
    ws, outside = world
    before = (_state(ws), _state(outside))
    result = await _call(_editor(ws, "immediate"), op(kind, path, _diff_for(kind), move_to))
    _assert_refused(result, before, ws, outside)
    assert reason in (result.output or "")


@pytest.mark.parametrize(
    ("kind", "move_to"),
    [
        pytest.param("update_file", None, id="update"),
        pytest.param("create_file", None, id="create-over"),
        pytest.param("update_file", "moved.txt", id="move"),
        pytest.param("delete_file", None, id="delete"),
    ],
)
async def test_hard_link_to_outside_file_is_replaced_not_written_through(
    world: tuple[Path, Path], kind: str, move_to: str | None
) -> None:
    ws, outside = world
    hard = _file_id(outside / "hard.txt")
    before_out = _state(outside)
    result = await _call(_editor(ws, "immediate"), op(kind, "hl.txt", _diff_for(kind), move_to))
    assert result.status == "completed", result.output
    assert _file_id(outside / "hard.txt") == hard
    assert {k: v[4] for k, v in _state(outside).items()} == {k: v[4] for k, v in before_out.items()}
    landed = ws / (move_to or "hl.txt")
    if kind == "delete_file":
        assert not landed.exists()
    else:
        assert landed.read_text().startswith("pwned")
        assert landed.stat().st_ino != hard[0]


SWAPS = [
    pytest.param("update_file", "dir/a.txt", None, "@@\n+pwned\n", id="update"),
    pytest.param("create_file", "dir/new.txt", None, "+pwned\n", id="create"),
    pytest.param("create_file", "dir/a.txt", None, "+pwned\n", id="overwrite"),
    pytest.param("delete_file", "dir/a.txt", None, None, id="delete"),
    pytest.param("update_file", "dir/a.txt", "b.txt", "@@\n+pwned\n", id="move-out-of"),
    pytest.param("update_file", "src.txt", "dir/b.txt", "@@\n+pwned\n", id="move-into"),
]


@pytest.mark.parametrize(("kind", "path", "move_to", "diff"), SWAPS)
async def test_dir_swapped_for_symlink_while_in_review(
    world: tuple[Path, Path], kind: str, path: str, move_to: str | None, diff: str | None
) -> None:
    ws, outside = world
    editor = GitAwareEditor(ws, mode="review")
    queued: asyncio.Queue[ReviewEvent] = asyncio.Queue()
    editor.queue.add_listener(lambda event: queued.put_nowait(event))
    task = asyncio.create_task(_call(editor, op(kind, path, diff, move_to)))
    event = await asyncio.wait_for(queued.get(), timeout=20)
    # the attack: while the user looks at the diff, the dir becomes a link to outside,
    # where a file with the same bytes waits
    (ws / "dir").rename(ws / "dir.real")
    (ws / "dir").symlink_to(outside)
    before = (_state(ws), _state(outside))
    editor.queue.resolve(event.proposal.id, ReviewOutcome.accept_all(event.proposal))
    result = await task
    _assert_refused(result, before, ws, outside)
    assert "symlink" in (result.output or "")


# -- the race: a real thread swaps the directory while the editor writes ------------------

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange() -> Callable[[Path, Path], None]:
    libc = ctypes.CDLL(None, use_errno=True)
    fn = libc.renameat2

    def swap(a: Path, b: Path) -> None:
        if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))

    return swap


class _Swapper(threading.Thread):
    """Keeps turning ``ws/d`` into a symlink to outside and back (bounded in count and time).

    ``renameat2-exchange`` swaps ``d`` with the symlink ``d_link`` atomically, so ``d`` always
    exists; ``rename-pair`` moves the dir aside and the link in with two renames (and moves
    aside a ``d`` the editor created in the gap, so the race goes on).
    """

    def __init__(self, ws: Path, how: str, limit: int = 5_000_000, seconds: float = 60) -> None:
        super().__init__(daemon=True)
        self.d, self.other, self.hold = ws / "d", ws / "d_link", ws / "d_hold"
        self.how, self.limit, self.deadline = how, limit, time.monotonic() + seconds
        self.stop = threading.Event()
        self.swaps = 0
        self.strays = 0
        self.swap = _exchange() if how == "renameat2-exchange" else None

    def run(self) -> None:
        while not self.stop.is_set() and self.swaps < self.limit:
            if time.monotonic() > self.deadline:
                break
            try:
                if self.swap is not None:
                    self.swap(self.d, self.other)
                elif self.d.is_symlink():
                    os.rename(self.d, self.other)
                    self._into(self.hold, self.d)
                else:
                    os.rename(self.d, self.hold)
                    self._into(self.other, self.d)
                self.swaps += 1
            except OSError:
                continue

    def _into(self, src: Path, dst: Path) -> None:
        try:
            os.rename(src, dst)
        except OSError:  # the editor created a new ``d`` in the gap: set it aside
            os.rename(dst, dst.with_name(f"stray_{self.strays}"))
            self.strays += 1
            os.rename(src, dst)

    def finish(self) -> None:
        """Stop the thread and wait for it (bounded)."""
        self.stop.set()
        self.join(timeout=30)
        assert not self.is_alive()


_CLEAN = (
    "Refused",
    "symlink",
    "changed on disk",
    "does not exist",
    "deleted on disk",
    "created on disk",
    "already exists",
    "now exists",
)


@pytest.mark.parametrize(
    ("how", "link", "mode"),
    [
        pytest.param("renameat2-exchange", "absolute", "immediate", id="exchange-abs-link"),
        pytest.param("renameat2-exchange", "relative", "immediate", id="exchange-rel-link"),
        pytest.param("renameat2-exchange", "absolute", "review", id="exchange-review-mode"),
        pytest.param("rename-pair", "absolute", "immediate", id="rename-pair-abs-link"),
    ],
)
async def test_race_dir_swapped_for_symlink_during_writes(
    tmp_path: Path, how: str, link: str, mode: str
) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    rounds, max_rounds = 25, 120  # at least 25 rounds of 7 operations, more until both
    names = ["a.txt", "u.txt"] + [  # outcomes (landed, refused) were seen
        f"{stem}_{i}.txt" for i in range(max_rounds) for stem in ("del", "mv", "out")
    ]
    for where in (ws / "d", outside):
        where.mkdir(parents=True)
        for name in names:  # the outside mirrors d, so an escaped write would succeed
            (where / name).write_text("ping\n")
    for i in range(max_rounds):
        (ws / f"root_{i}.txt").write_text("root\n")
    (ws / "d_link").symlink_to(outside if link == "absolute" else Path("../outside"))
    before = _state(outside)
    top = sorted(os.listdir(tmp_path))
    editor = _editor(ws, mode)
    swapper = _Swapper(ws, how)
    results: list[ApplyPatchResult] = []
    swapper.start()
    try:
        for i in range(max_rounds):
            if i >= rounds and _both_seen(results) and swapper.swaps > 0:
                break
            for operation in (
                op("create_file", f"d/new_{i}.txt", "+pwned\n"),
                op("create_file", "d/a.txt", "+pwned\n"),
                op("update_file", "d/u.txt", f"@@\n+pwned {i}\n"),
                op("delete_file", f"d/del_{i}.txt"),
                op("update_file", f"d/mv_{i}.txt", "@@\n+pwned\n", f"d/mv_{i}.moved.txt"),
                op("update_file", f"root_{i}.txt", "@@\n+pwned\n", f"d/in_{i}.txt"),
                op("update_file", f"d/out_{i}.txt", "@@\n+pwned\n", f"out_{i}.txt"),
            ):
                results.append(await _call(editor, operation))
    finally:
        swapper.finish()
    assert _state(outside) == before, "a write escaped through the swapped directory"
    assert sorted(os.listdir(tmp_path)) == top
    failures = [r.output or "" for r in results if r.status == "failed"]
    unclean = [text for text in failures if not any(mark in text for mark in _CLEAN)]
    assert unclean == []
    assert swapper.swaps > 0
    assert _both_seen(results), "the race never hit both states of the directory"


def _both_seen(results: list[ApplyPatchResult]) -> bool:
    """The race was real: some writes hit the symlink and were refused, some landed."""
    refused = any(r.status == "failed" and "symlink" in (r.output or "") for r in results)
    return refused and any(r.status == "completed" for r in results)


def test_renameat2_exchange_is_available(tmp_path: Path) -> None:
    """The race above needs an atomic exchange; fail loudly rather than skip it."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.symlink_to(a)
    _exchange()(a, b)
    assert a.is_symlink() and b.is_dir() and not b.is_symlink()
    with pytest.raises(OSError) as info:
        _exchange()(tmp_path / "missing", a)
    assert info.value.errno == errno.ENOENT
