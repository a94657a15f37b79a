"""The environment of the checkpoint tests: git isolated from the user's config, and rule
files taken as settled at once (shared by the checkpoint suites' autouse fixtures)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

__all__ = ["fresh_tree", "isolate_git", "settle_rules"]

SETTLED_NS = -(10**12)
"""``RACY_NS`` for "every reading is settled at once": no waiting out the 1 s window."""


def isolate_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, identity: bool = True) -> None:
    """No global or system git config (an empty one that asks for an identity), no
    ``GIT_DIR``/``GIT_WORK_TREE``/``GIT_INDEX_FILE`` from outside; with ``identity``, an
    author and committer for the tests' own commits."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("[user]\n\tuseConfigOnly = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(key, raising=False)
    if identity:
        for role in ("AUTHOR", "COMMITTER"):
            monkeypatch.setenv(f"GIT_{role}_NAME", "Test Author")
            monkeypatch.setenv(f"GIT_{role}_EMAIL", "author@example.invalid")


def settle_rules(monkeypatch: pytest.MonkeyPatch, racy_ns: int = SETTLED_NS) -> None:
    """Rule, config, ref and index files count as settled ``racy_ns`` after a change (the
    kept stat cache and the reused readings at once); git's own racy-git rules for file
    contents are untouched."""
    from harnesses.checkpoints import _incremental
    from harnesses.vcs import runner

    monkeypatch.setattr(_incremental, "RACY_NS", racy_ns)
    monkeypatch.setattr(runner, "_RACY_NS", racy_ns)


def fresh_tree(ws: Path, tmp_path: Path, force: tuple[str, ...] = (), drop: str = "") -> str:
    """The tree a fresh ``git add -A`` (then ``add -f`` of ``force``, ``rm --cached`` of
    ``drop``) of ``ws`` writes into an independent repository (the checkpoints' oracle)."""
    oracle = tmp_path / "oracle.git"
    if not oracle.exists():
        _git(["init", "-q", "--bare", str(oracle)])
    index = tmp_path / "oracle-index"
    index.unlink(missing_ok=True)
    env = {"GIT_DIR": str(oracle), "GIT_WORK_TREE": str(ws), "GIT_INDEX_FILE": str(index)}
    _git(["-c", "core.autocrlf=false", "add", "-A"], env, ws)
    if force:
        _git(["add", "-f", "--", *force], env, ws)
    if drop:
        _git(["rm", "-q", "--cached", "--", drop], env, ws)
    return _git(["write-tree"], env, ws)


def _git(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    merged = {**os.environ, **(env or {})}
    out = subprocess.run(["git", *args], check=True, capture_output=True, cwd=cwd, env=merged)
    return out.stdout.decode("utf-8", "surrogateescape").strip()
