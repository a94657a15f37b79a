"""Nested repositories inside the workspace: what a checkpoint can and cannot hold of them.

A folder with its own ``.git`` (a folder or a ``gitdir:`` file) is a nested repository. A
snapshot holds it as a gitlink: the commit its ``HEAD`` names, not its files, its history
or its uncommitted work (git never descends into it). One whose ``HEAD`` names no commit yet
(a fresh ``git init``) cannot even be a gitlink: ``git add`` refuses it ("does not have a
commit checked out"), so the snapshot leaves it out. Both are read from the repository's
files here, as git's own gitlink lookup does (no git process starts inside it, where the
door's settings would not hold).
"""

from __future__ import annotations

import os
import re

__all__ = ["has_head_commit", "is_nested_repository"]

_OBJECT_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def is_nested_repository(folder: str) -> bool:
    """Whether ``folder`` (not followed if a link) holds a ``.git`` folder or file."""
    return not os.path.islink(folder) and os.path.lexists(os.path.join(folder, ".git"))


def _git_dir(folder: str) -> str | None:
    dot_git = os.path.join(folder, ".git")
    if os.path.isdir(dot_git) and not os.path.islink(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8") as f:
            line = f.readline().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(folder, line.removeprefix("gitdir:").strip()))


def has_head_commit(folder: str) -> bool:
    """Whether the nested repository at ``folder`` has a ``HEAD`` that names a commit id
    (a loose or packed ref, or a detached id); ``True`` when it cannot be told from its
    files (a reftable repository, an unreadable ``HEAD``: git then decides)."""
    git_dir = _git_dir(folder)
    if git_dir is None:
        return True
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as f:
            head = f.read().strip()
    except (OSError, UnicodeDecodeError):
        return True
    if not head.startswith("ref:"):
        return bool(_OBJECT_ID.fullmatch(head))
    ref = head.removeprefix("ref:").strip()
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as f:
            common = os.path.normpath(os.path.join(git_dir, f.read().strip()))
    except (OSError, UnicodeDecodeError):
        pass
    if os.path.isdir(os.path.join(common, "reftable")):
        return True
    for base in dict.fromkeys((git_dir, common)):
        try:
            with open(os.path.join(base, ref), encoding="utf-8") as f:
                if _OBJECT_ID.fullmatch(f.read().strip()):
                    return True
        except (OSError, UnicodeDecodeError):
            pass
    try:
        with open(os.path.join(common, "packed-refs"), encoding="utf-8") as f:
            return any(line.rstrip("\n").endswith(f" {ref}") for line in f)
    except (OSError, UnicodeDecodeError):
        return False
