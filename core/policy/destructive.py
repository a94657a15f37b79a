"""The destructive-command guard: commands that can lose work ask first and take a checkpoint."""

from __future__ import annotations

import fnmatch
import posixpath
import re

from .command_parser import Segment
from .wrappers import program_name

__all__ = ["BUILD_DIRS", "destructive_reason", "inside_build_dir"]

# fmt: off
BUILD_DIRS = frozenset(
    {
        "node_modules", "dist", "build", "target", "out", ".next", ".nuxt", ".svelte-kit",
        ".turbo", ".parcel-cache", ".angular", ".gradle", ".pytest_cache", "__pycache__",
        ".venv", ".mypy_cache", ".ruff_cache", ".tox", ".nox", ".hypothesis", ".eggs",
        "coverage", "htmlcov", ".coverage", ".ipynb_checkpoints", "*.egg-info",
    }
)
# fmt: on
"""Folder names whose contents are rebuilt by tools, so deleting them loses no work."""

_ALWAYS = {
    "dd": "overwrites raw data",
    "shred": "destroys file contents",
    "truncate": "cuts files short",
    "wipefs": "erases file-system signatures",
    "mke2fs": "formats a file system",
}


def _short_flags(args: tuple[str, ...]) -> set[str]:
    """Letters of short-option clusters (``-rf`` → ``{"r", "f"}``) before a ``--``."""
    letters: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            letters.update(arg[1:])
    return letters


def _long(args: tuple[str, ...], *names: str) -> bool:
    for arg in args:
        if arg == "--":
            return False
        if arg.split("=", 1)[0] in names:
            return True
    return False


def _operands(args: tuple[str, ...]) -> list[str]:
    """Non-option arguments (everything after ``--`` counts)."""
    out: list[str] = []
    after_dashes = False
    for arg in args:
        if after_dashes:
            out.append(arg)
        elif arg == "--":
            after_dashes = True
        elif not arg.startswith("-") or arg == "-":
            out.append(arg)
    return out


def inside_build_dir(path: str) -> bool:
    """Whether ``path`` lies inside (or is) a build/cache folder such as ``node_modules``.

    The path must be literal enough to judge: no ``..``, no ``$`` or backtick expansion, not
    the root. ``build/*`` and ``packages/*/node_modules`` count; ``*`` and ``src`` do not.
    """
    text = path.strip()
    if not text or "$" in text or "`" in text or text in ("/", "~", "~/"):
        return False
    parts = [p for p in posixpath.normpath(text).split("/") if p and p != "."]
    if ".." in text.split("/"):
        return False
    return any(fnmatch.fnmatchcase(part, d) for part in parts for d in BUILD_DIRS)


def _git_reason(args: tuple[str, ...]) -> str | None:
    if not args:
        return None
    sub, rest = args[0], args[1:]
    flags = _short_flags(rest)
    ops = _operands(rest)
    if sub == "reset" and _long(rest, "--hard", "--merge", "--keep"):
        return "discards uncommitted changes"
    if sub == "checkout":
        if "--" in rest or "f" in flags or _long(rest, "--force", "--ours", "--theirs"):
            return "overwrites files in the working tree"
        if flags & {"b", "B"} or _long(rest, "--orphan", "--detach"):
            return None
        if len(ops) > 1 or any(o in (".", "..", ":/") or o.startswith("./") for o in ops):
            return "overwrites files in the working tree"
        if any(re.search(r"[*?\[]", o) for o in ops):
            return "overwrites files in the working tree"
        return None
    if sub == "restore":
        staged = "S" in flags or _long(rest, "--staged")
        worktree = "W" in flags or _long(rest, "--worktree")
        return None if staged and not worktree else "discards changes in the working tree"
    if sub == "switch" and ("f" in flags or _long(rest, "--force", "--discard-changes")):
        return "discards changes in the working tree"
    if sub == "clean" and not ("n" in flags or _long(rest, "--dry-run")):
        return "deletes untracked files"
    if sub == "push" and (
        "f" in flags
        or "d" in flags
        or _long(rest, "--force", "--force-with-lease", "--force-if-includes", "--delete")
        or _long(rest, "--mirror", "--prune")
        or any(o.startswith("+") or o.startswith(":") for o in ops)
    ):
        return "rewrites or deletes remote history"
    if sub == "branch" and (
        "D" in flags
        or (("d" in flags or _long(rest, "--delete")) and ("f" in flags or _long(rest, "--force")))
    ):
        return "deletes a branch that may hold unmerged work"
    if sub == "stash" and ops[:1] in (["drop"], ["clear"]):
        return "deletes stashed work"
    if sub == "rm" and ("f" in flags or _long(rest, "--force")):
        return "deletes files with local changes"
    if sub == "reflog" and ops[:1] in (["expire"], ["delete"]):
        return "drops the history used to recover work"
    return None


def destructive_reason(segment: Segment) -> str | None:
    """Why a simple command can lose work, or ``None`` when it cannot.

    Covers (PRODUCT.md "Destructive-command guard"): ``git reset --hard``, ``git checkout``
    of paths (``-- <path>``, ``.``, ``-f``), ``git restore`` unless only ``--staged``,
    ``git switch -f``, ``git clean`` (except ``-n``), force/delete/mirror ``git push``,
    ``git branch -D``, ``git stash drop|clear``, ``git rm -f``, ``git reflog expire``,
    recursive ``rm`` unless every path is inside a build folder (:data:`BUILD_DIRS`),
    ``find … -delete``, ``dd``, ``mkfs*``, ``wipefs``, ``chmod/chown/chgrp -R``,
    ``truncate`` and ``shred``.

    Returns:
        A short phrase such as ``"deletes untracked files"``.
    """
    argv = segment.argv
    if not argv:
        return None
    name = program_name(argv[0])
    args = argv[1:]
    if name == "git":
        return _git_reason(args)
    if name == "rm":
        if "r" in (flags := _short_flags(args)) or "R" in flags or _long(args, "--recursive"):
            paths = _operands(args)
            if segment.hidden_args or not paths or not all(inside_build_dir(p) for p in paths):
                return "deletes files recursively"
        return None
    if name == "find" and "-delete" in args:
        return "deletes the files it finds"
    if name in _ALWAYS:
        return _ALWAYS[name]
    if name.startswith("mkfs"):
        return "formats a file system"
    if name in ("chmod", "chown", "chgrp") and (
        "R" in _short_flags(args) or _long(args, "--recursive")
    ):
        return "changes permissions or owners recursively"
    return None
