"""What a destructive command could lose: the destructive guard's verdict on one command."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Harm"]


@dataclass(frozen=True, slots=True)
class Harm:
    """What one simple command could destroy that HEAD cannot bring back.

    Attributes:
        reason: a phrase completing "it …", naming what could be lost, e.g.
            ``"discards uncommitted changes to src/main.py"`` or
            ``"deletes untracked and ignored files (git clean -x)"``.
        certain: ``True`` when the guard knows the command destroys content;
            ``False`` when it cannot analyse the command (inline interpreter code, an
            alias, ``eval``, a program name computed at run time): *possibly* destructive.
        removes: files and folders it deletes or overwrites, absolute when the workspace
            is known (globs expanded, symlinks not resolved), else as written. A checkpoint
            captures them even when they are ignored (within its size cap).
        removes_unknown: what it removes is only known at run time (``xargs rm``,
            ``find -exec rm``, inline code, an unknown directory): a checkpoint should
            cover everything it could reach, ignored files included, within the cap.
        git_clean: the arguments after ``git clean`` when the command is one, so a
            checkpoint can run ``git clean -n`` with them to list what it would delete;
            ``None`` otherwise.
        refs: refs it deletes or moves (``"refs/stash"``, ``"refs/heads/feature"``,
            ``"stash@{0}"``) as written; a checkpoint keeps every ref under ``refs/``.
    """

    reason: str
    certain: bool = True
    removes: tuple[str, ...] = ()
    removes_unknown: bool = False
    git_clean: tuple[str, ...] | None = None
    refs: tuple[str, ...] = ()
