"""Workspace confinement: map a model-supplied path to a real path inside the workspace."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

__all__ = ["ConfinementError", "relative_display", "resolve_in_workspace"]


class ConfinementError(ValueError):
    """A path the editor must not touch (PRODUCT.md "Safety model": Confinement).

    The message is model-visible and says why the path was refused.
    """


def _reject_git(parts: tuple[str, ...], original: str) -> None:
    if any(part.lower() == ".git" for part in parts):
        raise ConfinementError(f"Refused {original!r}: paths inside .git/ are never edited.")


def resolve_in_workspace(workspace: Path, path: str, *, follow_leaf: bool = True) -> Path:
    """Resolve ``path`` (as written by the model) to an absolute path inside ``workspace``.

    Args:
        workspace: the workspace root (need not be resolved).
        path: a workspace-relative POSIX or native path, e.g. ``"src/a.py"``.
        follow_leaf: resolve a symlink at the final component too (``True`` for reading and
            writing file content, ``False`` when the link itself is the object, e.g. delete).

    Returns:
        The absolute path to operate on; every existing parent directory has been resolved
        through symlinks and checked to stay inside the workspace.

    Raises:
        ConfinementError: for an empty, absolute or ``~`` path, a ``..`` escape, a symlink
            that leaves the workspace, or any component named ``.git``.
    """
    if not path or not path.strip():
        raise ConfinementError("Refused an empty path.")
    if "\x00" in path:
        raise ConfinementError(f"Refused {path!r}: the path contains a NUL byte.")
    normalized = path.replace("\\", "/")
    pure = PurePosixPath(normalized)
    if pure.is_absolute() or os.path.isabs(path) or (len(normalized) > 1 and normalized[1] == ":"):
        raise ConfinementError(
            f"Refused {path!r}: absolute paths are not allowed; use a path relative to the "
            "workspace root."
        )
    if normalized.startswith("~"):
        raise ConfinementError(f"Refused {path!r}: home-relative paths are not allowed.")
    _reject_git(pure.parts, path)
    root = Path(os.path.realpath(workspace))
    lexical = os.path.normpath(os.path.join(root, *pure.parts))
    if Path(lexical) == root:
        raise ConfinementError(f"Refused {path!r}: it names the workspace root, not a file.")
    if not _is_within(Path(lexical), root):
        raise ConfinementError(f"Refused {path!r}: it points outside the workspace.")
    candidate = Path(lexical)
    parent_real = Path(os.path.realpath(candidate.parent))
    if not _is_within(parent_real, root):
        raise ConfinementError(
            f"Refused {path!r}: a symlink in the path leads outside the workspace."
        )
    target = parent_real / candidate.name
    if follow_leaf:
        target = Path(os.path.realpath(target))
        if not _is_within(target, root) or target == root:
            raise ConfinementError(
                f"Refused {path!r}: it is a symlink that leads outside the workspace."
            )
    _reject_git(target.relative_to(root).parts, path)
    return target


def relative_display(workspace: Path, target: Path) -> str:
    """``target`` relative to the (resolved) workspace, POSIX-style, for messages."""
    root = Path(os.path.realpath(workspace))
    try:
        return target.relative_to(root).as_posix()
    except ValueError:
        return str(target)


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
