"""The code-execution paths of a workspace's git dirs, found by file reads (PRODUCT.md "Sandbox").

Git runs what its git dir tells it to: ``config`` (``core.fsmonitor``, filters, aliases,
``core.hooksPath``...), ``config.worktree``, ``hooks/``, ``info/attributes``, and it takes its
common dir (hence config and hooks) from a ``commondir`` file (gitrepository-layout(5)). A
sandboxed command may write objects, refs and the index (``git add``/``git commit`` work) but
none of those. Discovery never runs git: it reads ``.git`` files, ``commondir`` files and
``.gitmodules`` the way ``git rev-parse`` finds them (setup.c), so repository config cannot
run code here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["GitProtection", "disarm_planted", "find_git_protection"]

#: Entries of a git dir that decide what code git runs (created when missing, like git init).
_CODE_DIRS = ("hooks", "info")
#: Files that redirect or configure git when present.
_CODE_FILES = ("config", "config.worktree", "commondir", "gitdir")
_WORKTREE_CONFIG = re.compile(
    rb"^\s*worktreeconfig\s*(?:=\s*(?:true|yes|on|1)\s*)?(?:[#;].*)?$", re.I | re.M
)
_GITMODULE_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.M)
_MAX_MODULE_DEPTH = 8


@dataclass(slots=True)
class GitProtection:
    """How the sandbox protects the git dirs inside a writable workspace.

    Attributes:
        git_dirs: every git dir found under the workspace (common, worktree and module dirs).
        pins: git dirs bound onto themselves (read-write) so they cannot be renamed or removed.
        read_only: files and folders bound read-only on top (``config``, ``hooks``...), and
            ``.git`` files (``gitdir: ...``) in the workspace.
        absent: paths that must not exist when the command ends (``commondir`` of a main
            git dir: one planted there would redirect git to a config the command wrote; a
            missing ``config.worktree``).
        links: symlinked protected entries and their link text; a link cannot be pinned, so
            it is put back after the command if it changed.
        notes: what could not be analysed (reported, and protected as far as possible).
        workspace: set when the whole workspace was walked for nested git dirs
            (``nested=True``); then :meth:`sweep` also neutralises git dirs the command
            created (:mod:`harnesses.shell.new_repos`).
        identities: ``(st_dev, st_ino)`` of every git dir protected during the command.
        watched: paths outside git dirs that config makes into code (``core.hooksPath``
            folders, included config files), with their ``(st_dev, st_ino)``; one replaced
            during the command (its parent renamed away and a new one made) is disabled.
        tops: work-tree tops of the repositories found (for relative ``core.hooksPath``).
        disarmed: messages for redirections git never writes itself that were found when
            the protection was planned and renamed to ``<name>.disabled-by-tandem`` before
            anything followed them (``disarm=True``; see :func:`disarm_planted`).
    """

    git_dirs: list[Path] = field(default_factory=list)
    pins: list[Path] = field(default_factory=list)
    read_only: list[Path] = field(default_factory=list)
    absent: list[Path] = field(default_factory=list)
    links: dict[Path, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    workspace: Path | None = None
    identities: set[tuple[int, int]] = field(default_factory=set)
    watched: dict[Path, tuple[int, int] | None] = field(default_factory=dict)
    tops: list[Path] = field(default_factory=list)
    disarmed: list[str] = field(default_factory=list)

    def sweep(self) -> list[str]:
        """Undo what a finished command planted: remove :attr:`absent` paths it created and put
        changed :attr:`links` back. Call only when no process of the command is left.

        Returns:
            One message per repair (``"removed planted .../commondir"``), empty when none.
        """
        repairs: list[str] = []
        for path in self.absent:
            if os.path.lexists(path):
                _remove(path)
                repairs.append(f"removed planted {path}")
        for path, text in self.links.items():
            try:
                current: str | None = os.readlink(path)
            except OSError:
                current = None
            if current != text:
                if os.path.lexists(path):
                    _remove(path)
                os.symlink(text, path)
                repairs.append(f"restored link {path} -> {text}")
        if self.workspace is not None:
            repairs += self._neutralise_new(self.workspace)
        return repairs

    def _neutralise_new(self, ws: Path) -> list[str]:
        from .new_repos import disable_entries, neutralise_git_dir

        repairs: list[str] = []
        now = find_git_protection(ws, create_missing=False, nested=True, user_config=False)
        for gitdir in now.git_dirs:
            if _identity(gitdir) not in self.identities:
                repairs += neutralise_git_dir(gitdir, ws)
        for path, before in self.watched.items():
            current = _identity(path)
            if current is None or current == before:
                continue
            if path.is_dir() and not path.is_symlink():
                renamed = disable_entries(path)
                if renamed:
                    repairs.append(
                        f"Tandem disabled {', '.join(renamed)} in the replaced hooks folder "
                        f"{path} (renamed to <name>.disabled-by-tandem)"
                    )
            else:
                from .new_repos import DISABLED_SUFFIX

                os.replace(path, path.with_name(path.name + DISABLED_SUFFIX))
                repairs.append(f"Tandem disabled the replaced config file {path}")
        return repairs


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        import shutil

        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _read_pointer(file: Path, prefix: str) -> Path | None:
    """The path in a ``gitdir: X`` style file (relative to the file's folder), or ``None``."""
    try:
        text = file.read_text("utf-8", "replace")
    except OSError:
        return None
    line = text.splitlines()[0].strip() if text.strip() else ""
    if prefix:
        if not line.startswith(prefix):
            return None
        line = line[len(prefix) :].strip()
    if not line:
        return None
    target = Path(line)
    return Path(os.path.normpath(target if target.is_absolute() else file.parent / target))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _legit_commondir(gitdir: Path) -> bool:
    """Whether ``gitdir/commondir`` is one git itself writes: only ``git worktree add`` does,
    in ``<common>/worktrees/<name>/commondir``, pointing back at ``<common>`` (``../..``).
    A ``commondir`` in a main ``.git``, a bare repository or a module's git dir is planted."""
    if gitdir.parent.name != "worktrees" or os.path.islink(gitdir / "commondir"):
        return False
    target = _read_pointer(gitdir / "commondir", "")
    if target is None:
        return False
    return os.path.realpath(target) == os.path.realpath(gitdir.parent.parent)


class _Finder:
    def __init__(self, workspace: Path, create_missing: bool, disarm: bool = False) -> None:
        self.ws = workspace
        self.create = create_missing
        self.disarm = disarm
        self.out = GitProtection()
        self._done: set[Path] = set()

    def dotgit(self, dotgit: Path, depth: int = 0) -> None:
        """Protect a ``.git`` entry (dir or ``gitdir:`` file) and the git dirs it leads to."""
        if os.path.islink(dotgit):
            self.out.links[dotgit] = os.readlink(dotgit)
        if _within(dotgit.parent, self.ws) or _within(self.ws, dotgit.parent):
            if dotgit.parent not in self.out.tops:
                self.out.tops.append(dotgit.parent)
        if dotgit.is_file():
            if _within(dotgit, self.ws):
                self.out.read_only.append(dotgit)
            target = _read_pointer(dotgit, "gitdir:")
            if target is None:
                self.out.notes.append(f"{dotgit} does not say where its git dir is")
                return
            self.git_dir(target, depth)
        elif dotgit.is_dir():
            self.git_dir(dotgit, depth)

    def git_dir(self, gitdir: Path, depth: int) -> None:
        real = Path(os.path.realpath(gitdir))
        if real in self._done or not real.is_dir():
            return
        self._done.add(real)
        inside = _within(real, self.ws)
        if inside and self.disarm:
            self._disarm_planted(real)
        if inside:
            self.out.git_dirs.append(real)
            self.out.pins.append(real)
            self._entries(real)
        common_file = real / "commondir"
        if common_file.is_file():
            common = _read_pointer(common_file, "")
            if common is not None:
                self.git_dir(common, depth)
            else:
                self.out.notes.append(f"{common_file} is unreadable")
        elif inside:
            self.out.absent.append(real / "commondir")
        for sub in ("worktrees", "modules"):
            self._children(real / sub, depth)

    def _disarm_planted(self, gitdir: Path) -> None:
        """Rename what git never writes into ``gitdir`` (a planted ``commondir`` or an inert
        ``config.worktree``) to ``<name>.disabled-by-tandem`` before anything follows it."""
        from .git_watch import disarm_path

        common = gitdir / "commondir"
        if os.path.lexists(common) and not _legit_commondir(gitdir):
            message = disarm_path(common)
            if message:
                self.out.disarmed.append(message)
        worktree_config = gitdir / "config.worktree"
        if os.path.lexists(worktree_config) and not self._worktree_config_on(gitdir):
            message = disarm_path(worktree_config)
            if message:
                self.out.disarmed.append(message)

    def _entries(self, gitdir: Path) -> None:
        is_worktree_dir = (gitdir / "commondir").is_file()
        for name in _CODE_DIRS:
            entry = gitdir / name
            if not os.path.lexists(entry) and self.create and not is_worktree_dir:
                entry.mkdir(mode=0o755, exist_ok=True)
            self._protect(entry)
        for name in _CODE_FILES:
            entry = gitdir / name
            if name == "config.worktree" and not os.path.lexists(entry) and self.create:
                if self._worktree_config_on(gitdir):
                    entry.touch(mode=0o644)
            if name == "config.worktree" and not os.path.lexists(entry):
                # ignored while extensions.worktreeConfig is off, but `git sparse-checkout
                # init` turns it on later: one planted now must not wait for that
                self.out.absent.append(entry)
            self._protect(entry)

    def _protect(self, entry: Path) -> None:
        if not os.path.lexists(entry):
            return
        if os.path.islink(entry):
            self.out.links[entry] = os.readlink(entry)
            real = Path(os.path.realpath(entry))
            if os.path.exists(real) and _within(real, self.ws):
                self.out.read_only.append(real)
            return
        self.out.read_only.append(entry)

    def _worktree_config_on(self, gitdir: Path) -> bool:
        config = gitdir / "config"
        common = (
            _read_pointer(gitdir / "commondir", "") if (gitdir / "commondir").is_file() else None
        )
        if common is not None:
            config = common / "config"
        try:
            return bool(_WORKTREE_CONFIG.search(config.read_bytes()))
        except OSError:
            return True  # cannot tell: protect

    def _children(self, folder: Path, depth: int) -> None:
        if depth > _MAX_MODULE_DEPTH or not folder.is_dir() or folder.is_symlink():
            return
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            return
        for entry in entries:
            if not entry.is_dir() or entry.is_symlink():
                continue
            if (entry / "HEAD").exists() or (entry / "commondir").exists():
                self.git_dir(entry, depth + 1)
            else:  # module names may contain slashes: modules/a/b
                self._children(entry, depth + 1)

    def worktree(self, top: Path, depth: int = 0) -> None:
        """Protect the ``.git`` files of submodules checked out under ``top`` (``.gitmodules``)."""
        if depth > _MAX_MODULE_DEPTH:
            return
        try:
            text = (top / ".gitmodules").read_text("utf-8", "replace")
        except OSError:
            return
        for match in _GITMODULE_PATH.finditer(text):
            sub = Path(os.path.normpath(top / match.group(1).strip('"')))
            if not _within(sub, self.ws) or sub == top:
                continue
            dotgit = sub / ".git"
            if os.path.lexists(dotgit):
                self.dotgit(dotgit, depth + 1)
                self.worktree(sub, depth + 1)


def _looks_like_git_dir(folder: Path) -> bool:
    """Whether ``folder`` is itself a git dir (``HEAD``, ``objects/``, ``refs/``), as setup.c's
    ``is_git_directory`` checks."""
    return (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir() and (folder / "refs").is_dir()
    )


def find_git_protection(
    workspace: Path,
    *,
    create_missing: bool = True,
    nested: bool = False,
    user_config: bool = True,
    disarm: bool = False,
) -> GitProtection:
    """Find the git dirs a command in ``workspace`` could write and what to protect in them.

    The repository is found like ``git rev-parse --git-dir``: the nearest ``.git`` in the
    workspace or above it (a ``gitdir:`` file is followed, then its ``commondir``). Git dirs
    outside the workspace are already read-only in the sandbox and only followed for the
    ones they contain; linked worktrees (``worktrees/*``) and submodules (``modules/**``, and
    the ``.git`` files listed by ``.gitmodules``) are included.

    Args:
        workspace: the resolved workspace folder.
        create_missing: create a missing ``hooks/`` or ``info/`` (as ``git init`` does) and an
            empty ``config.worktree`` when ``extensions.worktreeConfig`` may be on, so they
            can be bound read-only without bwrap creating mount points in the workspace.
        nested: also walk the whole workspace (cached, :mod:`harnesses.shell.new_repos`) for
            every other git dir (nested, bare, cloned, ``.git`` files) and protect them too,
            remember what was protected so :meth:`GitProtection.sweep` neutralises the git
            dirs a command creates, and (with ``user_config``) protect the ``core.hooksPath``
            folders and included config files that the user's global/system config or a
            repository's config points at inside the workspace.
        disarm: before following or protecting a git dir inside the workspace, rename a
            ``commondir`` git would never have written there and a ``config.worktree`` git
            ignores (``extensions.worktreeConfig`` off) to ``<name>.disabled-by-tandem``
            (listed in :attr:`GitProtection.disarmed`): a redirection planted by a process
            no sweep saw (a background service, a crash) is not followed, let alone protected.

    Returns:
        The :class:`GitProtection` (empty when there is no repository).
    """
    ws = Path(os.path.realpath(workspace))
    finder = _Finder(ws, create_missing, disarm)
    if _looks_like_git_dir(ws):  # a bare repository opened as the workspace
        finder.git_dir(ws, 0)
    else:
        for folder in (ws, *ws.parents):
            dotgit = folder / ".git"
            if os.path.lexists(dotgit):
                finder.dotgit(dotgit)
                finder.worktree(folder)
                break
    if not nested:
        return finder.out
    from .new_repos import index_for, looks_like_git_dir

    for folder, markers in index_for(ws).scan(ws):
        if ".git" in markers:
            finder.dotgit(folder / ".git")
        if ("HEAD" in markers or "commondir" in markers) and looks_like_git_dir(folder):
            finder.git_dir(folder, 0)
    out = finder.out
    out.workspace = ws
    if user_config:
        _protect_config_targets(out, ws, create_missing)
    out.identities = {i for i in map(_identity, out.pins) if i is not None}
    return out


def disarm_planted(workspace: Path | str) -> list[str]:
    """The start-up sweep: neutralise git redirections planted while no sweep could run.

    Git never writes a ``commondir`` into a main git dir (only ``git worktree add`` writes
    one, in ``worktrees/<name>/``), nor uses a ``config.worktree`` while
    ``extensions.worktreeConfig`` is off; one found there was planted (by a background
    service whose sweep never ran, or a command running when Tandem crashed or its window was
    closed) and would make the user's next ``git status`` run code from a config the agent
    wrote. Each is renamed to ``<name>.disabled-by-tandem`` (kept for inspection, inert).

    Reads files only and never runs git. Covers the repository the workspace belongs to
    (its git dir, its linked worktrees' and its modules' git dirs inside the workspace).

    Args:
        workspace: the workspace folder.

    Returns:
        One message per file renamed (``"removed planted /w/.git/commondir (kept aside as
        commondir.disabled-by-tandem)"``), empty when nothing was planted. Logged too.
    """
    import logging

    found = find_git_protection(Path(workspace), create_missing=False, disarm=True)
    for message in found.disarmed:
        logging.getLogger("harnesses").warning("start-up sweep: %s", message)
    return list(found.disarmed)


def _protect_config_targets(out: GitProtection, ws: Path, create: bool) -> None:
    from .user_git_config import config_targets, user_config_files

    repo_files = []
    for gitdir in out.git_dirs:
        top = gitdir.parent if gitdir.name == ".git" else None
        for name in ("config", "config.worktree"):
            if (gitdir / name).is_file():
                repo_files.append((gitdir / name, top))
    targets = config_targets(
        ws, user_files=user_config_files(), repo_files=repo_files, tops=out.tops
    )
    out.notes += targets.notes
    for folder in targets.hook_dirs:
        if not os.path.lexists(folder) and create:
            try:
                folder.mkdir(mode=0o755, parents=True, exist_ok=True)
            except OSError as exc:
                out.notes.append(f"cannot create the hooks folder {folder}: {exc}")
        _protect_target(out, folder, ws)
    for file in targets.files:
        if not os.path.lexists(file) and create:
            try:
                file.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
                file.touch(mode=0o644)
            except OSError as exc:
                out.notes.append(f"cannot create the included config {file}: {exc}")
        _protect_target(out, file, ws)


def _protect_target(out: GitProtection, path: Path, ws: Path) -> None:
    if not os.path.lexists(path):
        out.watched[path] = None
        return
    if os.path.islink(path):
        out.links[path] = os.readlink(path)
        real = Path(os.path.realpath(path))
        if os.path.exists(real) and _within(real, ws) and real not in out.read_only:
            out.read_only.append(real)
        return
    if path not in out.read_only:
        out.read_only.append(path)
    out.watched[path] = _identity(path)
