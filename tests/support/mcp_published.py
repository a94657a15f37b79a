"""The published MCP servers ``scripts/install_mcp_servers.sh`` installs (issue 18 item 5)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

__all__ = ["FILESYSTEM", "GIT", "TIME", "git_repo", "need"]

_ROOT = Path(__file__).resolve().parents[2]
GIT = _ROOT / ".tools" / "mcp-python" / "bin" / "mcp-server-git"
TIME = _ROOT / ".tools" / "mcp-python" / "bin" / "mcp-server-time"
FILESYSTEM = _ROOT / ".tools" / "mcp-node" / "node_modules" / ".bin" / "mcp-server-filesystem"


def need(*servers: Path) -> None:
    """Skip unless the servers are installed (``bash scripts/install_mcp_servers.sh``)."""
    missing = [p.name for p in servers if not p.exists()]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (run scripts/install_mcp_servers.sh)")


def git_repo(path: Path, message: str = "first commit") -> Path:
    """A real git repository at ``path`` with one commit of ``a.txt``."""
    path.mkdir(parents=True, exist_ok=True)
    run = lambda *a: subprocess.run(["git", "-C", str(path), *a], check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    (path / "a.txt").write_text("alpha\n")
    run("add", "a.txt")
    run("-c", "user.name=Test", "-c", "user.email=t@example.invalid", "commit", "-qm", message)
    return path
