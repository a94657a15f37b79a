"""Replay checkout cost: a self-contained copy of the recorded commit (issue 16, replay under /tmp).

Prints, in seconds (best of N), the time :func:`harnesses.recording.prepare_checkout` takes to
rebuild a recorded state (HEAD + a small dirty patch) in a new folder, for a generated
repository of F files and C commits, beside the peer ``git clone --no-local --no-checkout``
plus ``git checkout`` of the same commit (what git itself pays to copy the objects it needs)
and the pack's size. No alternates are left in the copy (the sandbox's private ``/tmp``
would hide them).

Target: under 2x the peer clone.

Usage: ``python -m bench.replay_checkout [--runs 3] [--files 2000] [--commits 20]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from harnesses.recording import capture_base, prepare_checkout

_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=_ENV, check=True, capture_output=True)


def _repo(root: Path, files: int, commits: int) -> Path:
    repo = root / "origin"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for c in range(commits):
        for n in range(files):
            if c == 0 or n % commits == c:
                folder = repo / f"pkg{n % 40}"
                folder.mkdir(exist_ok=True)
                body = "".join(f"v{n}_{i} = {i * n + c}\n" for i in range(40))
                (folder / f"mod{n}.py").write_text(f"# commit {c}\n{body}")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"c{c}")
    (repo / "pkg0" / "mod0.py").write_text("# dirty\n")
    return repo


def _best(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--commits", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        root = Path(tmp)
        origin = _repo(root, args.files, args.commits)
        manifest = {"git": True, **capture_base(origin)}
        count = iter(range(10**6))

        def ours() -> None:
            dest = root / f"ours{next(count)}"
            prepare_checkout(manifest, dest)
            assert not (dest / ".git" / "objects" / "info" / "alternates").exists()
            shutil.rmtree(dest)

        def peer() -> None:
            dest = root / f"peer{next(count)}"
            _git(root, "clone", "-q", "--no-local", "--no-checkout", str(origin), str(dest))
            _git(dest, "checkout", "-q", "--detach", str(manifest["head"]))
            shutil.rmtree(dest)

        mine, theirs = _best(ours, args.runs), _best(peer, args.runs)
        probe = root / "probe"
        prepare_checkout(manifest, probe)
        pack = sum(p.stat().st_size for p in (probe / ".git" / "objects" / "pack").glob("*.pack"))
    print(f"repository: {args.files} files, {args.commits} commits; pack {pack / 1e6:.2f} MB")
    print(f"prepare_checkout (own pack, no alternates): {mine:.3f} s")
    print(f"peer git clone --no-local + checkout:       {theirs:.3f} s")
    ratio = mine / theirs if theirs else float("inf")
    print(f"ratio: {ratio:.2f}x (target: under 2x) {'OK' if ratio < 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
