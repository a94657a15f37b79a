"""A repository that holds every kind of work an agent could lose, and its exact state.

Shared by the Trust II modules (issue 12): uncommitted, staged-only, untracked, ignored
(``.env``, ``build/``) and stashed (two entries, one with an untracked file) content, plus
history behind HEAD and a second branch; :func:`state` reads back the working tree, the index
(with the staged blobs), the stash (with each entry's diff), HEAD and the branches.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.security._python import SANDBOX_PYTHON

__all__ = ["CASES", "ENV", "git", "git_env", "make_repo", "sh", "state"]

ENV = ".env"


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Plain git for the test's own commands: no user config, an identity for commits."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("[user]\n\tuseConfigOnly = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_OPTIONAL_LOCKS", "0")
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(key, raising=False)
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test User")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "user@example.invalid")


def git(ws: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", *args], cwd=ws, capture_output=True, text=True, check=False, timeout=60
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {args}: {done.stderr}")
    return done.stdout


def sh(ws: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=ws, check=True, timeout=60)


def make_repo(ws: Path) -> None:
    """Committed files, two stash entries, staged-only, uncommitted, untracked, ignored."""
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "src").mkdir()
    (ws / "src" / "main.py").write_text("print('v1')\n")
    (ws / "src" / "util.py").write_text("def util():\n    return 1\n")
    (ws / "README.md").write_bytes(b"# Project\r\ncrlf kept\r\n")
    (ws / "run.sh").write_text("#!/bin/sh\necho run\n")
    (ws / "run.sh").chmod(0o755)
    os.symlink("README.md", ws / "readme-link")
    (ws / ".gitignore").write_text(".env\n*.log\nbuild/\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "initial")
    (ws / "src" / "util.py").write_text("def util():\n    return 2\n")
    git(ws, "commit", "-q", "-am", "second commit")  # history behind HEAD
    git(ws, "branch", "feature")
    (ws / "README.md").write_bytes(b"# Project\r\nfirst stash\r\n")
    git(ws, "stash", "push", "-q", "-m", "first idea")
    (ws / "src" / "util.py").write_text("def util():\n    return 'second stash'\n")
    (ws / "stash-untracked.txt").write_text("stashed untracked\n")
    git(ws, "stash", "push", "-q", "-u", "-m", "second idea")
    # staged-only: the index holds a version that is neither HEAD nor the working tree
    (ws / "src" / "main.py").write_text("print('staged only')\n")
    git(ws, "add", "src/main.py")
    (ws / "src" / "main.py").write_text("print('staged only')\nprint('and unstaged')\n")
    (ws / "src" / "added.py").write_text("ADDED = 1\n")
    git(ws, "add", "src/added.py")
    (ws / "README.md").write_bytes(b"# Project\r\nuncommitted edit\r\n")
    (ws / "notes.txt").write_bytes(b"untracked \x00\xff bytes\n")
    (ws / "src" / "scratch.py").write_text("untracked = True\n")
    (ws / ENV).write_text("API_TOKEN=never-lose-me\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.bin").write_bytes(bytes(range(256)))


def worktree(ws: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every entry but ``.git``: path -> (kind, bytes or link target, mode bits)."""
    out: dict[str, tuple[str, bytes, int]] = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        if Path(dirpath) == ws:
            dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in [*filenames, *(d for d in dirnames if (Path(dirpath) / d).is_symlink())]:
            path = Path(dirpath) / name
            rel = path.relative_to(ws).as_posix()
            mode = stat.S_IMODE(path.lstat().st_mode)
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path).encode(), 0)
            else:
                out[rel] = ("file", path.read_bytes(), mode)
    return out


def is_repo(ws: Path) -> bool:
    """Whether ``ws`` is still a usable repository (a half-removed ``.git`` is not)."""
    done = subprocess.run(
        ["git", "rev-parse", "--git-dir"], cwd=ws, capture_output=True, check=False, timeout=60
    )
    return (ws / ".git").exists() and done.returncode == 0


def index_state(ws: Path) -> tuple[str, dict[str, bytes]]:
    if not is_repo(ws):
        return "<no repository>", {}
    listing = git(ws, "ls-files", "-s")
    blobs = {}
    for line in listing.splitlines():
        oid = line.split()[1]
        blobs[oid] = subprocess.run(
            ["git", "cat-file", "blob", oid], cwd=ws, capture_output=True, check=True
        ).stdout
    return listing, blobs


def stash_state(ws: Path) -> list[tuple[str, str, str]]:
    if not is_repo(ws):
        return []
    entries = []
    for line in git(ws, "stash", "list").splitlines():
        name = line.split(":", 1)[0]
        diff = git(ws, "diff", "--binary", f"{name}^1", name)
        untracked = git(ws, "show", "--format=", "--binary", f"{name}^3", check=False)
        entries.append((line, diff, untracked))
    return entries


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


def state(ws: Path) -> dict[str, object]:
    listing, blobs = index_state(ws)
    return {
        "worktree": worktree(ws),
        "index": listing,
        "staged blobs": blobs,
        "stash": stash_state(ws),
        "stash reflog": _read(ws / ".git" / "logs" / "refs" / "stash"),
        "head": (
            git(ws, "symbolic-ref", "-q", "HEAD", check=False) + git(ws, "rev-parse", "HEAD")
            if is_repo(ws)
            else None
        ),
        "branches": git(ws, "for-each-ref", "refs/heads") if is_repo(ws) else None,
    }


PY_RMTREE = f"{SANDBOX_PYTHON} -c \"import shutil; shutil.rmtree('src')\""

# (id, command, what the policy says it removes: removes, removes_unknown, git_clean)
CASES = [
    ("git-checkout-file", "git checkout src/main.py", ([], False, [])),
    ("git-checkout-dot", "git checkout .", ([], False, [])),
    ("git-restore-staged-worktree", "git restore --staged --worktree .", ([], False, [])),
    ("git-reset", "git reset -q", ([], False, [])),
    ("git-reset-hard", "git reset -q --hard", ([], False, [])),
    ("git-clean-fdx-dotenv", "git clean -fdxq", ([], True, [["-fdxq"]])),
    ("git-stash-clear", "git stash clear", ([], False, [])),
    ("git-update-ref-d-stash", "git update-ref -d refs/stash", ([], False, [])),
    ("rm-rf-src", "rm -rf src", (["src"], False, [])),
    ("mv-over-file", "mv README.md src/main.py", (["src/main.py", "README.md"], False, [])),
    ("find-delete", "find . -name '*.py' -not -path './.git/*' -delete", ([], True, [])),
    ("rm-rf-dot-git", "rm -rf .git", ([".git"], False, [])),
    ("python-inline-rmtree", PY_RMTREE, ([], True, [])),
    ("rm-dotenv", "rm .env", ([".env"], False, [])),
    ("git-branch-D", "git branch -q -D feature", ([], False, [])),
    ("git-stash-drop-older-entry", "git stash drop -q 'stash@{1}'", ([], False, [])),
    ("git-switch-f-detach", "git switch -q -f --detach HEAD~1", ([], False, [])),
]
