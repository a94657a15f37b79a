"""The cost of finding new repositories around each sandboxed command, on a 20k-file workspace.

Builds a git workspace of about 20,000 files (``src/`` and a ``node_modules/``-like tree, a
nested repository among them) and prints, in milliseconds:

* the git-dir discovery before a command without the workspace walk (what ran before) and with
  it, cold (first command: every directory listed) and warm (cached: one ``lstat`` per
  directory);
* the sweep after a command (the second walk, the comparison, the repairs) when nothing
  changed and after a command that touched files in 100 directories;
* the whole sandboxed ``true`` through the executor, with and without the walk.

Usage: ``python -m bench.sandbox_cleanup [--files 20000] [--runs 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harnesses.shell import SubprocessShellExecutor, git_paths, new_repos


def _build(root: Path, files: int) -> int:
    """Make the workspace; returns the number of directories."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)
    dirs = 0
    per_dir = 10
    for n in range(files // per_dir):
        top = "src" if n % 2 else "node_modules"
        folder = root / top / f"pkg{n // 20}" / f"d{n % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        dirs += 1
        for k in range(per_dir):
            (folder / f"f{k}.txt").write_text("x\n")
    subprocess.run(["git", "init", "-q", str(root / "src/pkg3")], check=True, env=env)
    return sum(1 for _ in os.walk(root))


def _time(run: Callable[[], object], runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), max(times)


def _line(label: str, figures: tuple[float, float]) -> None:
    print(f"  {label:<58} median {figures[0]:7.2f} ms   max {figures[1]:7.2f} ms")


async def _executor_true(ws: Path, runs: int) -> tuple[float, float]:
    executor = SubprocessShellExecutor(ws, sandbox="workspace-write")
    await executor.run(["true"])
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await executor.run(["true"])
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tandem-bench-", dir="/var/tmp") as tmp:
        ws = Path(os.path.realpath(tmp)) / "ws"
        dirs = _build(ws, args.files)
        print(f"workspace: {args.files} files, {dirs} directories")
        _line(
            "discovery without the walk (before)",
            _time(lambda: git_paths.find_git_protection(ws), args.runs),
        )
        new_repos._INDEXES.clear()
        cold = _time(lambda: git_paths.find_git_protection(ws, nested=True), 1)
        _line("discovery with the walk, cold (first command)", cold)
        time.sleep(2.1)  # let the tree's ctimes age past the trust window
        git_paths.find_git_protection(ws, nested=True)
        _line(
            "discovery with the walk, warm (cached)",
            _time(lambda: git_paths.find_git_protection(ws, nested=True), args.runs),
        )
        index = new_repos.index_for(ws)
        print(f"    (warm scan: {index.visited} directories visited, {index.listed} listed)")
        protection = git_paths.find_git_protection(ws, nested=True)
        _line("sweep after a command, nothing changed", _time(protection.sweep, args.runs))
        touched = [ws / "src" / f"pkg{n}" / "d1" for n in range(100 // 1)]

        def touch_then_sweep() -> None:
            for folder in touched:
                (folder / "new.txt").touch()
                (folder / "new.txt").unlink()
            protection.sweep()

        touch = _time(touch_then_sweep, args.runs)
        _line("sweep after a command that touched 100 directories", touch)
        print(f"    (that sweep listed {index.listed} directories)")
        with_walk = asyncio.run(_executor_true(ws, args.runs))
        original = git_paths.GitProtection._neutralise_new
        plain = git_paths.find_git_protection

        def without_walk(workspace: Path, **kwargs: object) -> git_paths.GitProtection:
            return plain(workspace, create_missing=bool(kwargs.get("create_missing", True)))

        import harnesses.shell.sandbox as sandbox

        sandbox.find_git_protection = without_walk  # type: ignore[assignment]
        try:
            before = asyncio.run(_executor_true(ws, args.runs))
        finally:
            sandbox.find_git_protection = plain
            git_paths.GitProtection._neutralise_new = original  # type: ignore[method-assign]
        _line("executor: sandboxed `true`, before (no walk)", before)
        _line("executor: sandboxed `true`, with walk + sweep", with_walk)
        print(f"  added per command: {with_walk[0] - before[0]:+.2f} ms (median)")


if __name__ == "__main__":
    main()
