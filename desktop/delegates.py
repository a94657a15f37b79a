"""Optional delegate tools of Tandem's agent (shared by the window and ``tandem run``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import harnesses.codex  # registers the Codex CLI process for codex_tool
from core import codex_tool
from harnesses.workspace import Workspace

__all__ = ["codex_delegate"]

_SANDBOX = {"read-only": "read-only", "full": "danger-full-access"}


def codex_delegate(
    workspace: Workspace,
    *,
    codex_path: Path | None = None,
    on_stream: Callable[[Any], Any] | None = None,
) -> Any | None:
    """A ``codex`` tool working in ``workspace`` (Codex's sandbox follows the approval mode),
    or ``None`` when the Codex CLI is not installed (``harnesses.codex.codex_install_hint()``)."""
    override = str(codex_path) if codex_path else None
    if harnesses.codex.find_codex_binary(override) is None:
        return None
    return codex_tool(
        sandbox_mode=_SANDBOX.get(str(workspace.mode), "workspace-write"),
        working_directory=str(workspace.root),
        skip_git_repo_check=True,
        on_stream=on_stream,
        codex_options={"codex_path_override": override} if override else None,
    )
