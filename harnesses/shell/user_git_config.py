"""Workspace paths that the user's own git config makes into code (PRODUCT.md "Sandbox").

The user's global and system config (``~/.gitconfig``, ``$XDG_CONFIG_HOME/git/config``,
``/etc/gitconfig``, or ``GIT_CONFIG_GLOBAL``/``GIT_CONFIG_SYSTEM``) and a protected
repository's own ``config`` can point into the workspace: ``core.hooksPath`` (a hooks folder
the agent could fill) and ``include.path``/``includeIf.<cond>.path`` (a config file the agent
could write, which then says anything). Those files are read as data, through the git door
(``git config --file X --no-includes --list``), includes followed by hand (every
``includeIf`` counted as matching, since the user's git may match it), and the targets inside
the workspace are reported so the sandbox binds them read-only. A relative ``core.hooksPath``
is relative to each work tree's top, as git runs hooks there.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .new_repos import parse_config

__all__ = ["ConfigTargets", "config_targets", "user_config_files"]

_MAX_INCLUDE_DEPTH = 10
_CACHE: dict[tuple[str, int, int, int, int], list[tuple[str, str | None]] | None] = {}


@dataclass(slots=True)
class ConfigTargets:
    """What config files point at inside the workspace.

    Attributes:
        hook_dirs: ``core.hooksPath`` folders inside the workspace.
        files: included config files inside the workspace.
        notes: what could not be read.
    """

    hook_dirs: list[Path] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def user_config_files(env: Mapping[str, str] | None = None) -> list[Path]:
    """The system and global config files the user's git reads (as git decides them)."""
    env = os.environ if env is None else env
    home = env.get("HOME", "")
    files: list[Path] = []
    if not env.get("GIT_CONFIG_NOSYSTEM"):
        files.append(Path(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    if env.get("GIT_CONFIG_GLOBAL"):
        files.append(Path(env["GIT_CONFIG_GLOBAL"]))
    else:
        xdg = env.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else "")
        if xdg:
            files.append(Path(xdg) / "git" / "config")
        if home:
            files.append(Path(home) / ".gitconfig")
    return files


def _read(path: Path) -> list[tuple[str, str | None]] | None:
    try:
        info = os.stat(path)
    except OSError:
        return []
    key = (str(path), info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size)
    if key not in _CACHE:
        if len(_CACHE) > 256:
            _CACHE.clear()
        _CACHE[key] = parse_config(path)
    return _CACHE[key]


def _expand(value: str, home: str) -> str:
    if value == "~" or value.startswith("~/"):
        return home + value[1:]
    return value


def _inside(path: Path, workspace: Path) -> bool:
    return path == workspace or workspace in path.parents


def config_targets(
    workspace: Path,
    *,
    user_files: Iterable[Path],
    repo_files: Iterable[tuple[Path, Path | None]] = (),
    tops: Iterable[Path] = (),
    env: Mapping[str, str] | None = None,
) -> ConfigTargets:
    """Find the hooks folders and include files inside ``workspace`` that config points at.

    Args:
        workspace: the resolved workspace.
        user_files: system and global config files (:func:`user_config_files`); a relative
            ``core.hooksPath`` in them is resolved against every one of ``tops``.
        repo_files: a repository's ``config`` and the top of its work tree (``None``: bare).
        tops: the work-tree tops of the repositories in or above the workspace.
        env: for ``HOME`` (``~`` in paths).
    """
    env = os.environ if env is None else env
    home = env.get("HOME", "")
    out = ConfigTargets()
    top_list = list(tops)
    seen: set[Path] = set()

    def visit(path: Path, bases: list[Path], depth: int) -> None:
        path = Path(os.path.normpath(path))
        if path in seen or depth > _MAX_INCLUDE_DEPTH:
            return
        seen.add(path)
        if _inside(Path(os.path.realpath(path)), workspace) and depth > 0:
            out.files.append(path)
        pairs = _read(path)
        if pairs is None:
            out.notes.append(f"{path} cannot be parsed")
            return
        for key, value in pairs:
            if value is None:
                continue
            section, _, variable = key.lower().partition(".")
            variable = variable.rpartition(".")[2]
            if section in ("include", "includeif") and variable == "path" and value:
                target = Path(_expand(value, home))
                visit(target if target.is_absolute() else path.parent / target, bases, depth + 1)
            elif section == "core" and variable == "hookspath" and value:
                target = Path(_expand(value, home))
                candidates = [target] if target.is_absolute() else [b / target for b in bases]
                for candidate in candidates:
                    candidate = Path(os.path.normpath(candidate))
                    if _inside(candidate, workspace) and candidate not in out.hook_dirs:
                        out.hook_dirs.append(candidate)

    for file in user_files:
        visit(file, top_list, 0)
    for file, top in repo_files:
        visit(file, [top] if top is not None else [file.parent], 0)
    return out
