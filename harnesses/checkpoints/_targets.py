"""What a destructive command would remove, known before it runs (``git clean -n`` dry runs)."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path

from harnesses.vcs import GitError, run_git

from ._backend import GitBackend
from ._cap import clean_dry_run_args, expand_targets, parse_clean_output

__all__ = ["removal_targets"]

_log = logging.getLogger("harnesses")


def removal_targets(
    g: GitBackend,
    removes: Sequence[str],
    removes_unknown: bool,
    git_clean: Sequence[Sequence[str]],
    git_clean_cwds: Sequence[str | None] = (),
    nested: list[str] | None = None,
) -> list[str]:
    """The absolute paths a destructive command removes, as far as known beforehand.

    Args:
        g: the backend (its workspace and the user's repository).
        removes: files or folders (``Decision.removes``), relative or absolute.
        removes_unknown: only known at run time: the widest ``git clean`` listing.
        git_clean: the arguments after ``git clean`` of each clean about to run.
        git_clean_cwds: the directory each runs in (``None``: only known at run time).
        nested: receives the nested repositories among what it removes (relative paths,
            see :func:`._cap.expand_targets`).

    Returns:
        Unique paths, in order (see :meth:`.store.CheckpointStore.create` for the rules:
        a listing that cannot be made gives the widest one, or every file).
    """
    found = expand_targets(g.workspace, removes, nested)
    root = str(g.workspace)
    cwds = list(git_clean_cwds)
    cleans: list[tuple[list[str], str | None]] = [
        (clean_dry_run_args(list(args)), cwds[i] if i < len(cwds) else root)
        for i, args in enumerate(git_clean)
    ]
    if removes_unknown:
        cleans.append((clean_dry_run_args(None), root))
    widest = False
    for args, cwd in cleans:
        if g.user_repo is None:
            found.extend(expand_targets(g.workspace, ["."], nested))
            break
        listed = None if cwd is None else _clean_listing(g, args, Path(cwd))
        if listed is None:  # unknown directory or a listing error: the widest listing
            if widest:
                continue
            widest = True
            listed = _clean_listing(g, clean_dry_run_args(None), g.workspace)
            if listed is None:  # not even that: every file of the workspace, capped
                found.extend(expand_targets(g.workspace, ["."], nested))
                continue
        found.extend(expand_targets(g.workspace, listed, nested))
    return list(dict.fromkeys(found))


def _clean_listing(g: GitBackend, args: Sequence[str], cwd: Path) -> list[str] | None:
    """What ``git clean <args>`` (a dry run) lists when run in ``cwd``, as absolute
    paths; ``None`` when ``cwd`` is not inside the workspace or git fails (a pathspec
    outside the repository, a missing folder)."""
    assert g.user_repo is not None
    full = Path(os.path.normpath(cwd if cwd.is_absolute() else g.workspace / cwd))
    if full != g.workspace and g.workspace not in full.parents:
        return None
    if not full.is_dir():
        return None
    try:
        out = run_git(
            ["clean", *args],
            cwd=full,
            git_dir=g.user_repo.git_dir,
            work_tree=g.workspace,
        ).text
    except GitError as exc:
        _log.warning("checkpoint: git clean -n in %s failed (%s)", full, exc.returncode)
        return None
    return [os.path.join(full, p.rstrip("/")) for p in parse_clean_output(out)]
