"""What the window and ``tandem run`` build the same way from the settings (issue 16, Build
item 2: "it reads the same settings"): the workspace and the saved approval rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.errors import UserError
from core.policy import DEFAULT_RULES, Rule, RuleStore, suggest_rules
from core.settings import Settings
from harnesses.checkpoints import retention_from_settings
from harnesses.vcs import enclosing_top_level
from harnesses.workspace import Workspace

__all__ = ["always_allow_rules", "describe_rules", "project_root", "saved_rules", "workspace_for"]


def project_root(folder: Path) -> Path:
    """The folder a workspace opened on ``folder`` uses as its root.

    Inside a Git work tree it is the repository's top level (``proj`` for ``proj/tests``),
    as Codex and Claude Code take the git top level for the project root: otherwise the
    sandbox would hide the parent's ``.git`` and git would say "Not a git repository"
    (issue 16). Found through the git door (:func:`harnesses.vcs.enclosing_top_level`).
    A top level that is the home folder or ``/`` (a dotfiles repository) is not taken:
    the workspace would be the whole home, so ``folder`` itself stays the root.

    Args:
        folder: the folder the user started in.

    Returns:
        The resolved root (``folder`` resolved, outside a repository).
    """
    here = folder.resolve()
    top = enclosing_top_level(here)
    if top is None or top == here:
        return here
    if top in (Path.home().resolve(), Path("/")):
        return here
    return top


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
    started_in: Path | None = None,
) -> Workspace:
    """A :class:`harnesses.workspace.Workspace` on ``folder`` with the settings' approval
    mode, sandbox switch and paths, checkpoint cap and retention, and the wait for input of
    commands; ``mode`` and ``sandbox_enabled`` override the settings (flags). Callers pass
    :func:`project_root` of the folder the user started in, and that folder as
    ``started_in`` (the ``AGENTS.md`` files are read down to it); commands start at the root
    (the workspace has no separate working directory)."""
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
        started_in=started_in,
    )
    workspace.executor.input_wait_s = settings.shell_input_wait_seconds or None
    return workspace


def always_allow_rules(command: str, workspace: Workspace) -> list[Rule]:
    """The rules *Always allow* adds for ``command``: one per simple command of the line that
    neither the workspace's rules nor the built-in read-only ones allow, so that the same
    line runs without a prompt next time (``cd app && python -m pytest -q | tee log``
    gives ``python -m pytest *`` and ``tee log`` exactly; ``cd`` and ``tail`` need none).
    A destructive command only gets its exact text (:func:`core.policy.suggest_rules`,
    judged in the workspace). Empty when nothing can be suggested (a here-document, a
    program name computed at run time): the button is then off.

    Args:
        command: the one command of the shell call the prompt is about.
        workspace: its rules and root.

    Returns:
        New rules (``source="user"``), in the order their commands appear.
    """
    return suggest_rules(command, [*workspace.rules, *DEFAULT_RULES], workspace=workspace.root)


def describe_rules(rules: list[Rule]) -> str:
    """What ``rules`` match, for the prompt: ``"any `git diff …` command"``, or several
    joined with ``"; "``."""
    return "; ".join(rule.description for rule in rules)
