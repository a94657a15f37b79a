"""Workspace confinement: which model-supplied paths the editor may touch at all."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

__all__ = [
    "ConfinementError",
    "is_git_name",
    "relative_display",
    "resolve_in_workspace",
    "split_model_path",
]

# Code points HFS+ ignores in names (git's is_hfs_dotgit list) and the NTFS 8.3 short name
# of ".git": either spelling would reach the git dir on those file systems.
_IGNORABLE = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")


class ConfinementError(ValueError):
    """A path the editor must not touch (PRODUCT.md "Safety model": Confinement).

    Raised for absolute, ``..`` and ``.git`` paths, symlinks that leave the workspace, leaves
    that are not regular files, and races (a directory swapped for a symlink while a write is
    in progress). The message is model-visible and says why the path was refused.
    """


def is_git_name(name: str) -> bool:
    """Whether one path component names a git dir: ``.git`` in any case, and the spellings
    NTFS (trailing dots/spaces, ``git~1``) and HFS+ (ignorable code points) fold onto it.

    Source: git's ``is_ntfs_dotgit``/``is_hfs_dotgit`` checks (``path.c``, ``utf8.c``).
    """
    folded = _IGNORABLE.sub("", name).rstrip(" .").lower()
    return folded in (".git", "git~1")


def split_model_path(path: str) -> tuple[str, ...]:
    """Validate a model-supplied path and split it into workspace-relative components.

    Args:
        path: a workspace-relative POSIX (or backslash-separated) path, e.g. ``"src/a.py"``.

    Returns:
        The components, without empty and ``.`` parts, e.g. ``("src", "a.py")``.

    Raises:
        ConfinementError: for an empty, absolute, drive-letter or ``~`` path, a NUL byte,
            any ``..`` component, the workspace root itself, or a ``.git`` component.
    """
    if not path or not path.strip():
        raise ConfinementError("Refused an empty path.")
    if "\x00" in path:
        raise ConfinementError(f"Refused {path!r}: the path contains a NUL byte.")
    normalized = path.replace("\\", "/")
    if (
        PurePosixPath(normalized).is_absolute()
        or os.path.isabs(path)
        or (len(normalized) > 1 and normalized[1] == ":")
    ):
        raise ConfinementError(
            f"Refused {path!r}: absolute paths are not allowed; use a path relative to the "
            "workspace root."
        )
    if normalized.startswith("~"):
        raise ConfinementError(f"Refused {path!r}: home-relative paths are not allowed.")
    raw = normalized.split("/")
    if any(is_git_name(part) for part in raw):
        raise ConfinementError(f"Refused {path!r}: paths inside .git/ are never edited.")
    if ".." in raw:
        lexical = os.path.normpath(normalized)
        if lexical == ".":
            raise ConfinementError(f"Refused {path!r}: it names the workspace root, not a file.")
        if lexical == ".." or lexical.startswith("../"):
            raise ConfinementError(f"Refused {path!r}: it points outside the workspace.")
        raise ConfinementError(
            f"Refused {path!r}: '..' components are not allowed; name the file without them."
        )
    parts = tuple(part for part in raw if part not in ("", "."))
    if not parts:
        raise ConfinementError(f"Refused {path!r}: it names the workspace root, not a file.")
    return parts


def resolve_in_workspace(workspace: Path, path: str, *, follow_leaf: bool = True) -> Path:
    """Where ``path`` lands inside ``workspace`` right now (for display and checks only).

    The editor never writes by the returned pathname: it writes through
    :class:`~harnesses.editor.confined.ConfinedWorkspace`, which re-walks the path with
    directory fds. This helper walks the same way and reports the result.

    Args:
        workspace: the workspace root (need not be resolved).
        path: a workspace-relative path as the model wrote it.
        follow_leaf: resolve a symlink at the final component too (``False`` when the link
            itself is the object, e.g. delete).

    Returns:
        ``realpath(workspace) / <canonical relative path>``.

    Raises:
        ConfinementError: see :func:`split_model_path` and
            :meth:`~harnesses.editor.confined.ConfinedWorkspace.locate`.
    """
    from .confined import ConfinedWorkspace

    with ConfinedWorkspace(workspace) as tree, tree.locate(path, follow_leaf=follow_leaf) as entry:
        return tree.root / entry.path


def relative_display(workspace: Path, target: Path) -> str:
    """``target`` relative to the (resolved) workspace, POSIX-style, for messages."""
    root = Path(os.path.realpath(workspace))
    try:
        return target.relative_to(root).as_posix()
    except ValueError:
        return str(target)
