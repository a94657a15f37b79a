"""What the window and ``tandem run`` build the same way from the settings (issue 16, Build
item 2: "it reads the same settings"): the workspace and the saved approval rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.errors import UserError
from core.policy import RuleStore
from core.settings import Settings
from harnesses.checkpoints import retention_from_settings
from harnesses.workspace import Workspace

__all__ = ["saved_rules", "workspace_for"]


def saved_rules(settings: Settings) -> tuple[list[Any], str | None]:
    """The user's saved approval rules (``Settings.rules_path``) and the error reading them
    (``None`` when read; the rules are then ``[]``)."""
    try:
        return list(RuleStore(settings.rules_path).list()), None
    except UserError as exc:
        return [], str(exc)


def workspace_for(
    settings: Settings,
    folder: Path,
    *,
    mode: str | None = None,
    rules: list[Any] | None = None,
    sandbox_enabled: bool | None = None,
    data_dir: Path | None = None,
) -> Workspace:
    """A :class:`harnesses.workspace.Workspace` on ``folder`` with the settings' approval
    mode, sandbox switch and paths, checkpoint cap and retention, and the wait for input of
    commands; ``mode`` and ``sandbox_enabled`` override the settings (flags)."""
    workspace = Workspace(
        folder,
        mode=mode or str(settings.approval_mode),
        rules=rules or [],
        sandbox_enabled=settings.sandbox_enabled if sandbox_enabled is None else sandbox_enabled,
        data_dir=data_dir,
        hidden_paths=settings.sandbox_hidden_paths,
        shown_paths=settings.sandbox_shown_paths,
        checkpoint_cap_bytes=settings.checkpoint_cap_bytes,
        checkpoint_retention=retention_from_settings(settings),
    )
    workspace.executor.input_wait_s = settings.shell_input_wait_seconds or None
    return workspace
