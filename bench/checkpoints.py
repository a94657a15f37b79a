"""Checkpoint cost: a 400 MB untracked file (skipped by the cap vs copied), and 10x growth.

Prints, in seconds (best of N), the time of one checkpoint (working tree + index + refs +
stash) in a repository with an edited file:

* without the big file; with a 400 MB untracked file under the default 100 MiB cap (skipped
  and reported); and with the cap raised above it (what copying it costs); the ratios;
* for a repository of F files and one of 10xF files (same history shape): first checkpoint,
  next checkpoint after one edit, and the store's size on disk;
* with 200 branches and an annotated tag (the refs part: tips recorded, objects copied
  once);
* for repositories of ``--kinds-files`` (10,000) files that are tracked, untracked (a fresh
  ``git init``) and a plain folder (no git): the first checkpoint, the next one after one
  edit, beside ``git add -A`` into a fresh index and again after the same edit (the peer:
  what git itself pays), the commit message's size, listing 50 checkpoints, and the git
  processes the last "next" checkpoint started (commands plus config listings, from
  :func:`harnesses.vcs.door_counters`).

Target (issue 15, Done means): an untracked-heavy checkpoint under 2x ``git add -A`` (first
against the fresh ``git add -A``, next against the repeated one).

Usage: ``python -m bench.checkpoints [--runs 3] [--files 500] [--kinds-files 10000]
[--real-write] [--only-kinds] [--kinds tracked,untracked,plain]`` (``--real-write`` writes
the 400 MB instead of a sparse file; ``--only-kinds`` runs the last part alone, ``--kinds``
picks its repositories).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from harnesses.checkpoints import CheckpointStore

BIG = 400 * 1024 * 1024


def _git(ws: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b.invalid",
    }
    subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)


def _repo(ws: Path, files: int) -> None:
    ws.mkdir(parents=True)
    _git(ws, "init", "-q", "-b", "main")
    for n in range(files):
        d = ws / f"pkg{n % 20}"
        d.mkdir(exist_ok=True)
        (d / f"mod{n}.py").write_text(f"# module {n}\n" + "x = 1\n" * 40)
    _git(ws, "add", "-A")
    _git(ws, "commit", "-q", "-m", "initial")
    (ws / "pkg0" / "mod0.py").write_text("stashed\n")
    _git(ws, "stash", "push", "-q", "-m", "wip")
    (ws / "pkg1" / "mod1.py").write_text("staged\n")
    _git(ws, "add", "pkg1/mod1.py")
    (ws / "notes.txt").write_text("untracked\n")


async def _best(store: CheckpointStore, ws: Path, runs: int) -> float:
    best = float("inf")
    for n in range(runs):
        (ws / "pkg2" / "mod2.py").write_text(f"edit {n} {time.time_ns()}\n")
        start = time.perf_counter()
        await store.create("bench")
        best = min(best, time.perf_counter() - start)
    return best


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


async def _big_file(tmp: Path, runs: int, files: int, real: bool) -> None:
    ws = tmp / "big"
    _repo(ws, files)
    store = CheckpointStore(ws, data_dir=tmp / "data-big")
    await store.create("warm")
    without = await _best(store, ws, runs)
    with open(ws / "dataset.bin", "wb") as f:
        if real:
            chunk = os.urandom(1 << 20)
            for _ in range(BIG >> 20):
                f.write(chunk)
        else:
            f.truncate(BIG)
    skipped = await _best(store, ws, runs)
    cp = (await store.list())[-1]
    copying = CheckpointStore(ws, data_dir=tmp / "data-copy", cap_bytes=2 * BIG)
    await copying.create("warm")  # hashes the 400 MB once
    start = time.perf_counter()
    await CheckpointStore(ws, data_dir=tmp / "data-copy2", cap_bytes=2 * BIG).create("copy")
    first_copy = time.perf_counter() - start
    print(f"repository: {files} files, {'random' if real else 'sparse'} 400 MiB untracked file")
    print(f"  checkpoint without the file          {without:7.3f} s")
    print(f"  with it, skipped by the 100 MiB cap  {skipped:7.3f} s  ratio {skipped / without:.2f}")
    print(
        f"  with it, copied (cap raised), first  {first_copy:7.3f} s  ratio {first_copy / without:.2f}"
    )
    print(f"  reported skipped: {cp.skipped}")
    print(f"  store size with the skip: {_size(store.location) / 1e6:.1f} MB")


async def _growth(tmp: Path, runs: int, files: int) -> None:
    print("10x growth (first checkpoint, next after one edit, store size):")
    base: tuple[float, float] | None = None
    for count in (files, files * 10):
        ws = tmp / f"grow{count}"
        _repo(ws, count)
        store = CheckpointStore(ws, data_dir=tmp / f"data-grow{count}")
        start = time.perf_counter()
        await store.create("first")
        first = time.perf_counter() - start
        nxt = await _best(store, ws, runs)
        ratio = "" if base is None else f"  x{first / base[0]:.1f} / x{nxt / base[1]:.1f}"
        base = base or (first, nxt)
        size = _size(store.location) / 1e6
        print(f"  {count:6d} files: first {first:7.3f} s, next {nxt:7.3f} s, {size:6.1f} MB{ratio}")


async def _many_refs(tmp: Path, runs: int, files: int, branches: int) -> None:
    ws = tmp / "refs"
    _repo(ws, files)
    for n in range(branches):  # each branch tip: one commit of its own on top of HEAD
        _git(ws, "update-ref", f"refs/heads/b{n}", "HEAD")
    _git(ws, "tag", "-a", "-m", "release", "v1")
    store = CheckpointStore(ws, data_dir=tmp / "data-refs")
    start = time.perf_counter()
    await store.create("first")
    first = time.perf_counter() - start
    nxt = await _best(store, ws, runs)
    print(
        f"{branches} branches + an annotated tag ({files} files): first {first:.3f} s, next {nxt:.3f} s"
    )


TARGET_RATIO = 2.0


def _plain_git(ws: Path, index: Path, git_dir: Path, *args: str) -> float:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(ws),
        "GIT_INDEX_FILE": str(index),
    }
    start = time.perf_counter()
    subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def _tree(ws: Path, files: int, kind: str) -> None:
    ws.mkdir(parents=True)
    if kind != "plain":
        _git(ws, "init", "-q", "-b", "main")
    for n in range(files):
        d = ws / f"pkg{n % 50}"
        d.mkdir(exist_ok=True)
        (d / f"mod{n}.py").write_text(f"# module {n}\n" + "x = 1\n" * 40)
    if kind == "tracked":
        _git(ws, "add", "-A")
        _git(ws, "commit", "-q", "-m", "initial")


async def _kinds(tmp: Path, runs: int, files: int, kinds: tuple[str, ...]) -> None:
    print(
        f"{files} files: checkpoint vs git add -A (s; best of {runs} for 'next', each next "
        "checkpoint timed beside one repeated add -A; 'pair' = median of those ratios)"
    )
    print(
        "  kind        first  add -A fresh  ratio    next  add -A again  ratio   pair  msg KB"
        "  list50  git procs/next"
    )
    for kind in kinds:
        ws = tmp / f"kind-{kind}"
        _tree(ws, files, kind)
        store = CheckpointStore(ws, data_dir=tmp / f"data-kind-{kind}")  # the app's retention
        start = time.perf_counter()
        first = await store.create("first")
        first_s = time.perf_counter() - start
        bare = tmp / f"peer-{kind}.git"
        subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True, capture_output=True)
        index = tmp / f"peer-{kind}.index"
        fresh = _plain_git(ws, index, bare, "add", "-A")
        nxt = again = float("inf")
        pairs: list[float] = []
        spawned = -1
        for n in range(runs):  # interleaved, so the machine's load drifts alike for both
            (ws / "pkg1" / "mod1.py").write_text(f"edit {n} {time.time_ns()}\n")
            counted = _door_processes()
            start = time.perf_counter()
            await store.create("next")
            ours = time.perf_counter() - start
            after = _door_processes()
            spawned = after - counted if after >= 0 else -1
            (ws / "pkg1" / "mod1.py").write_text(f"peer {n} {time.time_ns()}\n")
            peer = _plain_git(ws, index, bare, "add", "-A")
            nxt, again = min(nxt, ours), min(again, peer)
            pairs.append(ours / peer)
        message = _message_size(store, first.commit)
        for n in range(50 - runs - 1):
            (ws / "pkg3" / "mod3.py").write_text(f"more {n}\n")
            await store.create("more")
        start = time.perf_counter()
        listed = await CheckpointStore(ws, data_dir=tmp / f"data-kind-{kind}").list()
        cold = time.perf_counter() - start
        print(
            f"  {kind:10s} {first_s:6.2f}  {fresh:12.2f}  {first_s / fresh:5.2f}  {nxt:6.3f}"
            f"  {again:12.3f}  {nxt / again:5.1f}  {statistics.median(pairs):5.1f}"
            f"  {message / 1000:6.1f}  {cold:6.3f}  {spawned:14d}  ({len(listed)} listed,"
            f" load {_load()})"
        )
    print(
        f"  target: untracked first/fresh and next/again under {TARGET_RATIO}x "
        "(a checkpoint also records the index, refs and stash; a next one sizes only the "
        "files its kept stat cache lists as changed; the first 'next' after the store's "
        "creation takes the full path)"
    )


def _load() -> str:
    """The 1-minute load average (the machine is shared: read figures beside it)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


def _door_processes() -> int:
    """Git processes the door started so far (commands + config listings); -1: unknown."""
    try:
        from harnesses.vcs import door_counters
    except ImportError:  # an older door without the counter
        return -1
    counts = door_counters()
    return counts["runs"] + counts["listings"]


def _message_size(store: CheckpointStore, commit: str) -> int:
    out = subprocess.run(
        ["git", "--git-dir", str(store.location), "cat-file", "commit", commit],
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"},
    ).stdout
    return len(out)


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--real-write", action="store_true")
    parser.add_argument("--kinds-files", type=int, default=10_000)
    parser.add_argument("--only-kinds", action="store_true")
    parser.add_argument(
        "--kinds", default="tracked,untracked,plain", help="comma-separated kinds to run"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tandem-bench-") as tmp:
        os.environ["XDG_DATA_HOME"] = str(Path(tmp) / "xdg")
        if args.kinds_files:
            kinds = tuple(k for k in args.kinds.split(",") if k)
            asyncio.run(_kinds(Path(tmp), args.runs, args.kinds_files, kinds))
        if args.only_kinds:
            return
        asyncio.run(_big_file(Path(tmp), args.runs, args.files, args.real_write))
        asyncio.run(_growth(Path(tmp), args.runs, args.files))
        asyncio.run(_many_refs(Path(tmp), args.runs, args.files, 200))


if __name__ == "__main__":
    main()
