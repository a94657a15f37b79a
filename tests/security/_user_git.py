"""The user's side of the git-persistence tests: a HOME in tmp, a marker outside the
workspace, and the user's own plain, unsandboxed git (what planted code would hijack)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

__all__ = ["home", "marker", "user_git"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's (and Tandem's) HOME, in tmp, with no global or system git config."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return path


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """A file outside the workspace that planted code would create."""
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder / "pwned"


def user_git(cwd: Path, home: Path, *args: str, check: bool = False) -> str:
    """Run the user's own git in ``cwd`` with a clean environment (``home`` as HOME; local
    ``file://`` clones allowed) and return stdout + stderr (60 s limit)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "User",
        "GIT_AUTHOR_EMAIL": "user@example.com",
        "GIT_COMMITTER_NAME": "User",
        "GIT_COMMITTER_EMAIL": "user@example.com",
        "GIT_TERMINAL_PROMPT": "0",
        "LANG": "C",
    }
    done = subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=check,
    )
    return done.stdout + done.stderr
