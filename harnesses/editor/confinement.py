"""Workspace confinement: which model-supplied paths the editor may touch at all."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

__all__ = [
    "CodePaths",
    "ConfinementError",
    "code_paths",
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


@dataclass(frozen=True, slots=True)
class CodePaths:
    """Places inside the workspace that git turns into code run outside the sandbox.

    Attributes:
        hook_dirs: ``core.hooksPath`` folders (from the repository's config, the user's
            global/system config, or a file they include), absolute, both as configured and
            resolved; husky 9's ``.husky/_`` brings ``.husky`` too (its ``_/h`` runs
            ``.husky/<hook>`` with ``sh``, executable or not).
        config_files: included config files (``include.path``/``includeIf.*.path``) inside the
            workspace: whatever they say, git obeys (``core.fsmonitor``, hooks, filters).
        git_dirs: git dirs inside the workspace that are not named ``.git`` (bare
            repositories, linked-worktree dirs): their ``hooks/`` and ``config`` run code.
        notes: what could not be read (reported; does not refuse anything by itself).
    """

    hook_dirs: tuple[Path, ...] = ()
    config_files: tuple[Path, ...] = ()
    git_dirs: tuple[Path, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def reason(self, workspace: Path, rel: str) -> str | None:
        """Why writing the workspace-relative ``rel`` (canonical, as
        :class:`~harnesses.editor.confined.ConfinedEntry` gives it) plants code git runs,
        else ``None``; also a refusal when the path cannot be resolved (a race). The
        message is model-visible. Never raises."""
        target = Path(os.path.normpath(Path(workspace) / rel))
        try:
            places = {target, Path(os.path.realpath(target))}
        except OSError:  # a folder on the way changed while it was resolved: fail closed
            return (
                f"Refused {rel!r}: a folder on its path changed while Tandem checked whether "
                "git runs code from it."
            )
        for folder in self.hook_dirs:
            if any(_under(p, folder) for p in places):
                return (
                    f"Refused {rel!r}: it is in the repository's hooks folder "
                    f"{relative_display(workspace, folder)!r} (core.hooksPath); git runs those "
                    "files outside the sandbox on the user's next commit."
                )
        for file in self.config_files:
            if file in places:
                return (
                    f"Refused {rel!r}: git includes it as configuration (include.path), so "
                    "what it says (hooks, core.fsmonitor, filters) runs outside the sandbox."
                )
        for gitdir in self.git_dirs:
            if any(_under(p, gitdir) for p in places):
                return (
                    f"Refused {rel!r}: it is inside the git dir "
                    f"{relative_display(workspace, gitdir)!r}, whose hooks and config git runs "
                    "outside the sandbox."
                )
        return None


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _pointer(file: Path, base: Path) -> Path | None:
    """The path a ``gitdir: X`` file or a ``commondir`` file names (relative to ``base``)."""
    try:
        line = (file.read_text("utf-8", "replace").splitlines() or [""])[0].strip()
    except OSError:
        return None
    if line.startswith("gitdir:"):
        line = line[len("gitdir:") :].strip()
    if not line:
        return None
    return Path(os.path.normpath(base / line))


def _top_configs(top: Path) -> list[tuple[Path, Path | None]]:
    """The config files git reads for the work tree ``top`` (its git dir's ``config`` and
    ``config.worktree``, and its common dir's ``config``), paired with ``top``; the git dir
    may be outside the workspace (a workspace that is a subfolder of a repository)."""
    dotgit = top / ".git"
    gitdir = dotgit if dotgit.is_dir() else _pointer(dotgit, top) if dotgit.is_file() else None
    if gitdir is None:
        return []
    found = [(gitdir / "config", top), (gitdir / "config.worktree", top)]
    if (gitdir / "commondir").is_file():
        common = _pointer(gitdir / "commondir", gitdir)
        if common is not None:
            found.append((common / "config", top))
    return [(f, t) for f, t in found if f.is_file()]


def code_paths(workspace: Path) -> CodePaths:
    """Find the :class:`CodePaths` of ``workspace`` by reading files as data (no repository
    code runs): git dirs through :func:`harnesses.shell.git_paths.find_git_protection`
    (nested ones included), hooks folders and includes through
    :func:`harnesses.shell.user_git_config.config_targets` over the user's config
    (:func:`~harnesses.shell.user_git_config.user_config_files`, ``GIT_CONFIG_GLOBAL``
    included) and every repository's config. Nothing is created.

    Raises:
        OSError: a file could not be read (callers fail closed).
    """
    from harnesses.shell.git_paths import find_git_protection
    from harnesses.shell.user_git_config import config_targets, user_config_files

    ws = Path(os.path.realpath(workspace))
    prot = find_git_protection(ws, create_missing=False, nested=True, user_config=False)
    repo_files: list[tuple[Path, Path | None]] = []
    for gitdir in prot.git_dirs:
        top = gitdir.parent if gitdir.name == ".git" else None
        for name in ("config", "config.worktree"):
            if (gitdir / name).is_file():
                repo_files.append((gitdir / name, top))
    for top in prot.tops:
        repo_files += [pair for pair in _top_configs(top) if pair not in repo_files]
    targets = config_targets(
        ws, user_files=user_config_files(), repo_files=repo_files, tops=prot.tops
    )
    hooks: list[Path] = []
    for folder in targets.hook_dirs:
        hooks += [folder, Path(os.path.realpath(folder))]
        if folder.name == "_" and folder.parent.name == ".husky":
            hooks.append(folder.parent)  # husky 9: `_/h` runs `.husky/<hook>`
    files: list[Path] = []
    for file in targets.files:
        files += [file, Path(os.path.realpath(file))]
    bare: list[Path] = []
    for gitdir in prot.git_dirs:
        if any(is_git_name(part) for part in gitdir.parts):
            continue  # `.git` paths are refused by split_model_path already
        if gitdir == ws:  # a bare repository opened as the workspace: its code entries
            bare += [ws / "hooks", ws / "info"]
            files += [ws / name for name in ("config", "config.worktree", "commondir")]
        else:
            bare.append(gitdir)
    return CodePaths(
        tuple(dict.fromkeys(hooks)),
        tuple(dict.fromkeys(files)),
        tuple(bare),
        tuple(targets.notes + prot.notes),
    )
