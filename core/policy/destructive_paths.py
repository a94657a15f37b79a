"""Where a command's path operands land on disk, for the destructive-command guard."""

from __future__ import annotations

import glob
import os
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .git_probe import git_status

__all__ = ["Places", "describe_paths"]

_GLOB = frozenset("*?[")
_MAX_GLOB = 200
_MAX_SHOWN = 3


def _dynamic(source: str) -> bool:
    """Whether a word's source spelling holds an expansion known only at run time."""
    return "$" in source or "`" in source or source.startswith("~")


@dataclass(slots=True)
class Places:
    """The directories one command may run in, and what its path operands name there.

    ``cwds`` starts as ``[workspace]``; ``None`` stands for a directory only known at run
    time, and a workspace of ``None`` means the disk cannot be consulted at all. Every
    question is answered conservatively: when in doubt a path *may exist*.

    Attributes:
        root: the workspace root (absolute), or ``None``.
        cwds: candidate working directories (absolute, or ``None`` when unknown).
    """

    root: str | None
    cwds: list[str | None] = field(default_factory=list)

    @classmethod
    def start(cls, workspace: str | os.PathLike[str] | None) -> Places:
        """Places for the first command of a line run in ``workspace``."""
        root = os.path.abspath(os.fspath(workspace)) if workspace is not None else None
        return cls(root, [root])

    def moved(self, sources: Sequence[str]) -> Places:
        """The places after ``git -C``/``env -C`` options (source spellings, in order)."""
        places = list(self.cwds)
        for raw in sources:
            text = raw.strip("'\"")
            places = [
                None
                if cwd is None or _dynamic(raw)
                else posixpath.normpath(os.path.join(cwd, text))
                for cwd in places
            ]
        return Places(self.root, places)

    def cd(self, raw: str | None, *, certain: bool) -> None:
        """Apply ``cd RAW`` (``None``: ``cd`` with no or an unreadable operand)."""
        if raw is None or _dynamic(raw) or raw == "-":
            targets: list[str | None] = [None]
        else:
            text = raw.strip("'\"")
            targets = [
                None if cwd is None else posixpath.normpath(os.path.join(cwd, text))
                for cwd in self.cwds
            ]
        known = all(t is not None and os.path.isdir(t) for t in targets)
        if certain and known and self.root is not None:
            self.cwds = list(dict.fromkeys(targets))
        else:
            self.cwds = list(dict.fromkeys([*self.cwds, *targets]))

    @property
    def known(self) -> bool:
        """Whether the disk can be consulted for every candidate directory."""
        return self.root is not None and all(c is not None for c in self.cwds)

    def exists(self, text: str, source: str = "") -> bool:
        """Whether ``text`` (a path operand, quotes removed) may name something on disk.

        Returns:
            ``False`` only when every candidate directory is known and neither the path
            nor (for a glob) any match exists; expansions (``$X``, ``~``) count as existing.
        """
        if not self.known or _dynamic(source or text):
            return True
        for cwd in self.cwds:
            assert cwd is not None
            full = os.path.join(cwd, text)
            if _GLOB & set(text) and _glob(cwd, text):
                return True
            if os.path.lexists(full):
                return True
        return False

    def is_dir(self, text: str, source: str = "") -> bool | None:
        """Whether ``text`` is an existing directory; ``None`` when that cannot be known."""
        if not self.known or _dynamic(source or text) or _GLOB & set(text):
            return None
        return any(os.path.isdir(os.path.join(c, text)) for c in self.cwds if c is not None)

    def branch_exists(self, name: str) -> bool | None:
        """Whether the branch ``refs/heads/NAME`` exists where the command runs.

        Asks ``git show-ref --verify --quiet`` in each candidate directory.

        Returns:
            ``False`` only when every directory is known and none has the branch;
            ``None`` when it cannot be told (an unknown directory, an expansion, git fails).
        """
        if not self.known or _dynamic(name) or name.startswith("-"):
            return None
        for cwd in self.cwds:
            code = _git_status(cwd, ["show-ref", "--verify", "--quiet", f"refs/heads/{name}"])
            if code != 1:
                return None if code != 0 else True
        return False

    def ignored(self, paths: Sequence[str]) -> bool | None:
        """Whether any of ``paths`` (absolute) is ignored by git, so no checkpoint of the
        working tree holds it (``git check-ignore``), or lies outside the workspace.

        Returns:
            ``True``/``False``; ``None`` when git cannot tell (no repository, git fails).
        """
        if self.root is None:
            return None
        inside = [p for p in paths if p == self.root or p.startswith(self.root + "/")]
        if len(inside) < len(paths):
            return True
        if not inside or not os.path.lexists(os.path.join(self.root, ".git")):
            return False  # not a repository: the checkpoint holds every file
        code = _git_status(self.root, ["check-ignore", "-q", "--no-index", "--", *inside])
        return True if code == 0 else False if code == 1 else None

    def resolve(self, texts: Iterable[str]) -> tuple[tuple[str, ...], bool]:
        """Absolute paths the operands name (globs expanded), for a checkpoint to capture.

        Returns:
            ``(paths, unknown)``: ``paths`` are absolute and normalised (symlinks kept) when
            the directory is known, else the operand as written; ``unknown`` is True when
            some operand could not be resolved (an expansion, an unknown directory, more
            than 200 glob matches).
        """
        out: list[str] = []
        unknown = False
        for text in texts:
            if _dynamic(text) or not self.known:
                out.append(text)
                unknown = True
                continue
            for cwd in self.cwds:
                assert cwd is not None
                full = posixpath.normpath(os.path.join(cwd, text))
                if _GLOB & set(text):
                    hits = _glob(cwd, text)
                    if len(hits) > _MAX_GLOB:
                        unknown = True
                        hits = hits[:_MAX_GLOB]
                    out.extend(posixpath.normpath(h) for h in hits)
                    if not hits:
                        out.append(full)
                else:
                    out.append(full)
        return tuple(dict.fromkeys(out)), unknown


def _git_status(cwd: str | None, args: list[str]) -> int | None:
    """Exit status of a read-only ``git ARGS`` in ``cwd`` (``None`` when it cannot run),
    asked through the harness's git door (:mod:`core.policy.git_probe`)."""
    return git_status(cwd, args)


def _glob(cwd: str, pattern: str) -> list[str]:
    """Matches of ``pattern`` relative to ``cwd`` (absolute patterns as they are), sorted."""
    full = pattern if pattern.startswith("/") else glob.escape(cwd) + "/" + pattern
    return sorted(glob.glob(full))


def describe_paths(paths: Sequence[str]) -> str:
    """Human list of paths as written: ``"a"``, ``"a and b"``, ``"a, b, c and 2 more"``."""
    shown = [p if p else "''" for p in paths]
    if len(shown) <= 1:
        return shown[0] if shown else "the files it is given"
    if len(shown) <= _MAX_SHOWN:
        return ", ".join(shown[:-1]) + " and " + shown[-1]
    return ", ".join(shown[:_MAX_SHOWN]) + f" and {len(shown) - _MAX_SHOWN} more"
