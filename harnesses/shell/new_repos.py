"""Git repositories a sandboxed command creates inside the workspace, found and neutralised.

Bubblewrap cannot refuse the creation of one name (``.git``) in a writable tree, so a command
can always ``git init sub``, ``git clone . copy``, ``git submodule add``, ``git worktree add``
or lay out ``x/.git/{HEAD,objects,refs}`` by hand and put hooks, ``core.fsmonitor``, filters
or an ``include.path`` in *that* repository; the user's own git runs them later, unsandboxed.
The defence is in two halves (PRODUCT.md "Sandbox"; issue 11):

* **before** each command every git dir in the workspace, nested ones included, is found by a
  full walk and protected like the main one (``git_paths``: pinned, ``config``/``hooks``/
  ``info`` read-only), so what existed cannot be changed, and a repository created by one
  command is read-only to the next;
* **after** each command (exit, timeout or cancellation) the walk runs again, and every git
  dir that was not protected during the command (compared by device and inode, so a
  ``mv sub/.git`` plus a new one is new) is neutralised *as data*: files in ``hooks/``
  are renamed ``<name>.disabled-by-tandem`` (``*.sample`` kept), and ``config`` /
  ``config.worktree`` are rewritten keeping only keys known to be data (an allow-list:
  a new git version's new code-running key is dropped, not kept). The original config is
  kept beside it as ``config.disabled-by-tandem``. An ordinary ``git init`` config is left
  byte-for-byte alone.

The walk has to visit every directory (a repository can be created anywhere, node_modules
included), so it is cached: a directory whose ``(dev, inode, ctime, mtime)`` is unchanged
since it was listed is not listed again (creating, removing or renaming an entry changes the
directory's ctime, which no unprivileged process can set back). A listing is trusted only
when the directory's ctime is older than :data:`_TRUST_AGE_NS` at listing time, so a change in
the same clock tick as the listing cannot hide. Cost: one ``lstat`` per directory, plus a
listing of the changed ones (see ``bench/sandbox_cleanup.py``).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DISABLED_SUFFIX",
    "TreeIndex",
    "index_for",
    "looks_like_git_dir",
    "neutralise_git_dir",
    "parse_config",
    "sanitise_config",
]

DISABLED_SUFFIX = ".disabled-by-tandem"
_MARKERS = frozenset({".git", "HEAD", "commondir"})
#: Listings of directories changed more recently than this (ns) are redone on the next scan.
_TRUST_AGE_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class _Listing:
    key: tuple[int, int, int, int]
    subdirs: tuple[str, ...]
    markers: tuple[str, ...]
    trusted: bool


class TreeIndex:
    """Cached walk of one tree that reports the folders holding ``.git``/``HEAD``/``commondir``.

    Attributes:
        listed: directories listed (``scandir``) by the last :meth:`scan`.
        visited: directories visited (``lstat``) by the last :meth:`scan`.
    """

    def __init__(self) -> None:
        self._dirs: dict[str, _Listing] = {}
        self._lock = threading.Lock()
        self.listed = 0
        self.visited = 0

    def scan(self, root: Path) -> list[tuple[Path, tuple[str, ...]]]:
        """Every folder under ``root`` (itself included) with a git marker, and its markers.

        Symlinks are not followed (what they point to inside ``root`` is walked anyway).
        """
        with self._lock:
            now = time.time_ns()
            fresh: dict[str, _Listing] = {}
            found: list[tuple[Path, tuple[str, ...]]] = []
            stack = [str(root)]
            listed = 0
            while stack:
                path = stack.pop()
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if not stat.S_ISDIR(info.st_mode):
                    continue
                key = (info.st_dev, info.st_ino, info.st_ctime_ns, info.st_mtime_ns)
                entry = self._dirs.get(path)
                if entry is None or not entry.trusted or entry.key != key:
                    entry = _list(path, key, trusted=info.st_ctime_ns < now - _TRUST_AGE_NS)
                    listed += 1
                fresh[path] = entry
                if entry.markers:
                    found.append((Path(path), entry.markers))
                prefix = path + "/" if not path.endswith("/") else path
                stack.extend([prefix + name for name in entry.subdirs])
            self._dirs = fresh
            self.listed, self.visited = listed, len(fresh)
            return found


def _list(path: str, key: tuple[int, int, int, int], *, trusted: bool) -> _Listing:
    subdirs: list[str] = []
    markers: list[str] = []
    try:
        with os.scandir(path) as entries:
            for item in entries:
                if item.name in _MARKERS:
                    markers.append(item.name)
                try:
                    if item.is_dir(follow_symlinks=False):
                        subdirs.append(item.name)
                except OSError:
                    continue
    except OSError:
        return _Listing(key, (), (), trusted=False)
    return _Listing(key, tuple(subdirs), tuple(markers), trusted)


_INDEXES: dict[Path, TreeIndex] = {}
_INDEXES_LOCK = threading.Lock()


def index_for(workspace: Path) -> TreeIndex:
    """The process-wide :class:`TreeIndex` of ``workspace``."""
    with _INDEXES_LOCK:
        index = _INDEXES.get(workspace)
        if index is None:
            index = _INDEXES[workspace] = TreeIndex()
        return index


def looks_like_git_dir(folder: Path) -> bool:
    """Whether git would take ``folder`` as a git dir (setup.c ``is_git_directory``): a
    ``HEAD``, and a ``commondir`` or ``objects/`` and ``refs/``."""
    if not os.path.lexists(folder / "HEAD"):
        return False
    if (folder / "commondir").is_file():
        return True
    return (folder / "objects").is_dir() and (folder / "refs").is_dir()


# ---------------------------------------------------------------------------------------------
# Config as data


def parse_config(path: Path) -> list[tuple[str, str | None]] | None:
    """``(key, value)`` pairs of one config file, read by git as data (through the git door:
    ``git config --file X --no-includes --list -z``); ``None`` when git cannot parse it."""
    from harnesses.vcs.runner import GitError, run_git

    try:
        done = run_git(
            ["config", "--file", str(path), "--no-includes", "-z", "--list"],
            cwd=Path("/"),
            check=False,
            timeout_s=10,
        )
    except GitError:
        return None
    if done.returncode != 0:
        return None
    pairs: list[tuple[str, str | None]] = []
    for item in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if not item:
            continue
        key, newline, value = item.partition("\n")
        pairs.append((key, value if newline else None))
    return pairs


def _split_key(key: str) -> tuple[str, str | None, str]:
    section, _, rest = key.partition(".")
    sub, dot, variable = rest.rpartition(".")
    return section.lower(), (sub if dot else None), variable.lower()


_ANY = frozenset({"*"})
#: Keys without a subsection kept in a new repository's config (``*``: every variable).
_KEEP_PLAIN: dict[str, frozenset[str]] = {
    "core": frozenset(
        {
            "repositoryformatversion",
            "filemode",
            "bare",
            "logallrefupdates",
            "ignorecase",
            "precomposeunicode",
            "symlinks",
            "autocrlf",
            "eol",
            "safecrlf",
            "quotepath",
            "abbrev",
            "compression",
            "sparsecheckout",
            "sparsecheckoutcone",
            "checkstat",
            "trustctime",
            "commentchar",
            "whitespace",
            "worktree",  # kept only when it stays inside the workspace (below)
        }
    ),
    "extensions": _ANY,
    "user": _ANY,
    "author": _ANY,
    "committer": _ANY,
    "init": frozenset({"defaultbranch"}),
    "branch": frozenset({"autosetupmerge", "autosetuprebase", "sort"}),
    "pull": frozenset({"rebase", "ff"}),
    "push": frozenset({"default", "autosetupremote", "followtags"}),
    "fetch": frozenset({"prune", "prunetags", "writecommitgraph"}),
    "i18n": _ANY,
}
#: Keys with a subsection (``remote.<name>.url``) kept in a new repository's config.
_KEEP_SUB: dict[str, frozenset[str]] = {
    "remote": frozenset(
        {"url", "pushurl", "fetch", "push", "mirror", "tagopt", "prune", "skipdefaultupdate"}
    ),
    "branch": frozenset({"remote", "merge", "rebase", "pushremote", "description"}),
    "submodule": frozenset({"url", "active", "branch", "fetchrecursesubmodules", "ignore"}),
}
_RUNNING_URL_PREFIXES = ("ext::", "fd::")


def _keep(key: str, value: str | None, gitdir: Path, workspace: Path) -> bool:
    section, sub, variable = _split_key(key)
    allowed = (_KEEP_PLAIN if sub is None else _KEEP_SUB).get(section)
    if allowed is None or (allowed is not _ANY and variable not in allowed):
        return False
    if section == "core" and variable == "worktree":
        if value is None:
            return False
        target = Path(os.path.normpath(gitdir / os.path.expanduser(value)))
        return target == workspace or workspace in target.parents
    if section == "remote" and variable in ("url", "pushurl") and value is not None:
        return not value.lower().startswith(_RUNNING_URL_PREFIXES)
    return True


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return escaped.replace("\n", "\\n").replace("\t", "\\t")


def _render(pairs: Iterable[tuple[str, str | None]]) -> str:
    lines: list[str] = []
    current: tuple[str, str | None] | None = None
    for key, value in pairs:
        section, sub, variable = _split_key(key)
        if (section, sub) != current:
            current = (section, sub)
            lines.append(f"[{section}]" if sub is None else f'[{section} "{_quote(sub)}"]')
        lines.append(f"\t{variable}" if value is None else f'\t{variable} = "{_quote(value)}"')
    return "\n".join(lines) + "\n"


def sanitise_config(path: Path, gitdir: Path, workspace: Path) -> list[str]:
    """Drop every key of ``path`` that is not known to be data; returns the dropped key names
    (the file is untouched when none). The original is kept as ``<name>.disabled-by-tandem``.
    A config git cannot parse is replaced by a minimal one (``["<unparsable>"]``)."""
    if not path.is_file() or path.is_symlink():
        return []
    pairs = parse_config(path)
    if pairs is None:
        kept: list[tuple[str, str | None]] = [("core.repositoryformatversion", "0")]
        dropped = ["<unparsable>"]
    else:
        kept = [(k, v) for k, v in pairs if _keep(k, v, gitdir, workspace)]
        dropped = list(dict.fromkeys(k for k, v in pairs if (k, v) not in kept))
        if not dropped:
            return []
    os.replace(path, path.with_name(path.name + DISABLED_SUFFIX))
    temporary = path.with_name(f".{path.name}.tandem-{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write(_render(kept))
    os.replace(temporary, path)
    return dropped


def _aside(path: Path) -> Path:
    target = path.with_name(path.name + DISABLED_SUFFIX)
    n = 1
    while os.path.lexists(target):
        n += 1
        target = path.with_name(f"{path.name}{DISABLED_SUFFIX}.{n}")
    os.replace(path, target)
    return target


def disable_entries(folder: Path) -> list[str]:
    """Rename every entry of ``folder`` (a hooks dir) but ``*.sample`` and already disabled
    ones to ``<name>.disabled-by-tandem``; returns the names renamed."""
    renamed: list[str] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return renamed
    for name in names:
        if name.endswith(".sample") or DISABLED_SUFFIX in name:
            continue
        try:
            _aside(folder / name)
        except OSError:
            continue
        renamed.append(name)
    return renamed


def neutralise_git_dir(gitdir: Path, workspace: Path) -> list[str]:
    """Disable the code-execution paths of a git dir the command created; one message each."""
    shown = _display(gitdir, workspace)
    messages: list[str] = []
    hooks = gitdir / "hooks"
    if os.path.islink(hooks) or (os.path.lexists(hooks) and not hooks.is_dir()):
        _aside(hooks)
        messages.append(f"Tandem disabled the hooks link in the new repository {shown}")
    elif hooks.is_dir():
        renamed = disable_entries(hooks)
        if renamed:
            count = f"{len(renamed)} hook{'s' if len(renamed) != 1 else ''}"
            messages.append(
                f"Tandem disabled {count} in the new repository {shown}: {', '.join(renamed)} "
                f"(renamed to <name>{DISABLED_SUFFIX})"
            )
    for name in ("config", "config.worktree"):
        path = gitdir / name
        if os.path.islink(path):
            _aside(path)
            messages.append(f"Tandem disabled the linked {name} of the new repository {shown}")
            continue
        dropped = sanitise_config(path, gitdir, workspace)
        if dropped:
            messages.append(
                f"Tandem removed settings that can run code from {shown}/{name}: "
                f"{', '.join(dropped)} (original kept as {name}{DISABLED_SUFFIX})"
            )
    return messages


def _display(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix() or "."
    except ValueError:
        return str(path)
