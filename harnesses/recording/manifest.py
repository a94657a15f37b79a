"""The repository state a session starts from, and a replay checkout rebuilt from it.

The state is the ``HEAD`` commit plus the dirty files as one binary ``git diff`` against it
(tracked changes and untracked files that are not ignored, taken with a temporary index so
the user's index is never touched). A replay checkout is a new repository holding its own
copy of every object reachable from that commit (``git pack-objects --revs`` in the origin,
``git index-pack --stdin`` in the copy: no ``objects/info/alternates`` pointing back at the
origin, whose path the sandbox may hide), checked out detached at it, with the patch applied
(``git apply --binary``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from harnesses.vcs import GitError, run_git

__all__ = [
    "PATCH_CAP_BYTES",
    "RecordingError",
    "apply_in_place",
    "capture_base",
    "prepare_checkout",
    "tandem_version",
]

PATCH_CAP_BYTES = 8 * 1024 * 1024
"""Largest dirty-files patch kept in a manifest (bytes of UTF-8); a larger one is dropped
and the manifest says so (``patch_truncated``)."""

_GIT_TIMEOUT_S = 120.0


class RecordingError(Exception):
    """A recording cannot be exported, read or checked out (the message says why)."""


def tandem_version() -> str:
    """The installed Tandem's version (``importlib.metadata``), ``"unknown"`` if not installed."""
    try:
        return version("tandem")
    except PackageNotFoundError:
        return "unknown"


def capture_base(
    repo: str | os.PathLike[str], *, cap_bytes: int = PATCH_CAP_BYTES
) -> dict[str, Any]:
    """The repository's state: ``HEAD`` and its dirty files as a patch.

    Blocking (runs ``git``, bounded by a timeout). Ignored files are left out, so files such
    as ``.env`` listed in ``.gitignore`` never enter a recording.

    Args:
        repo: the repository folder (a folder outside Git gives ``git: False``).
        cap_bytes: the largest patch kept (:data:`PATCH_CAP_BYTES`).

    Returns:
        ``{"repo": str, "git": bool, "head": sha | None, "branch": str | None,
        "patch": str, "patch_bytes": int, "patch_truncated": bool}``; ``head`` is ``None``
        in a repository without commits (the patch then holds every file).
    """
    root = os.path.realpath(os.fspath(repo))
    base: dict[str, Any] = {
        "repo": root,
        "git": False,
        "head": None,
        "branch": None,
        "patch": "",
        "patch_bytes": 0,
        "patch_truncated": False,
    }
    inside = _git(root, "rev-parse", "--is-inside-work-tree", check=False)
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return base
    base["git"] = True
    head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    base["head"] = head.stdout.strip() or None if head.returncode == 0 else None
    branch = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    base["branch"] = branch.stdout.strip() or None if branch.returncode == 0 else None
    top = _git(root, "rev-parse", "--show-toplevel").stdout.strip()
    with tempfile.TemporaryDirectory(prefix="tandem-rec-") as tmp:
        index = str(Path(tmp) / "index")  # a private index: the user's is never touched
        if base["head"]:
            _git(top, "read-tree", str(base["head"]), index_file=index)
        _git(top, "add", "-A", index_file=index)
        diff = ["diff", "--cached", "--binary", "--no-color", "--no-ext-diff"]
        head_arg = [str(base["head"])] if base["head"] else []
        patch = _git(top, *diff, *head_arg, index_file=index).stdout
    size = len(patch.encode("utf-8", "surrogateescape"))
    base["patch_bytes"] = size
    if size > cap_bytes:
        base["patch_truncated"] = True
    else:
        base["patch"] = patch
    return base


def prepare_checkout(
    manifest: Mapping[str, Any],
    dest: str | os.PathLike[str],
    *,
    source: str | os.PathLike[str] | None = None,
) -> Path:
    """Rebuild the recorded state in ``dest`` (a new or empty folder) and return it.

    Args:
        manifest: an export's manifest (:func:`capture_base` fields).
        dest: where the checkout goes.
        source: a repository holding the recorded ``HEAD`` commit; default the recorded
            repository folder (``manifest["repo"]``) when it still has it.

    Raises:
        RecordingError: ``dest`` is a folder that is not empty, no repository with the
            commit, the recording was not made in Git, its patch was dropped (over the
            cap), or the patch does not apply.
    """
    target = Path(dest)
    # red team: a manifest "repo" of `/x/..` made the replay's checkout the parent of its
    # work folder (git init, checkout and patch there); only a new or empty folder is used
    if target.is_symlink() or (target.exists() and (not target.is_dir() or any(target.iterdir()))):
        raise RecordingError(f"the replay checkout {target} must be a new or empty folder")
    if not manifest.get("git"):
        raise RecordingError(
            "the session was recorded in a folder outside Git: replay it in a copy of that "
            "folder with --repo PATH"
        )
    if manifest.get("patch_truncated"):
        raise RecordingError(
            f"the recording's dirty-files patch ({manifest.get('patch_bytes')} bytes) was over "
            "the cap and is not in the file: replay it with --repo PATH on a copy of that state"
        )
    head = manifest.get("head")
    if head:
        candidates = [c for c in (source, manifest.get("repo")) if c]
        origin = next((str(c) for c in candidates if _has_commit(str(c), str(head))), None)
        if origin is None:
            where = ", ".join(str(c) for c in candidates) or "no repository given"
            raise RecordingError(
                f"commit {head} is not in {where}: pass --repo PATH (a clone that has it)"
            )
        # a self-contained copy, built from the door's own commands: a new repository that
        # holds every object reachable from the commit in its own pack (no alternates into
        # the origin, which the sandbox's private /tmp or a later deletion could hide; no
        # hard links the agent could write through), HEAD detached at the commit, its tree
        # checked out
        target.mkdir(parents=True, exist_ok=True)
        _git(str(target), "init", "--quiet", "--template=", str(target))
        _copy_objects(origin, target, str(head))
        _git(str(target), "update-ref", "--no-deref", "HEAD", str(head))
        _git(str(target), "read-tree", str(head))
        _git(str(target), "checkout-index", "--all", "--force")
    else:
        target.mkdir(parents=True, exist_ok=True)
        _git(str(target), "init", "--quiet", "--template=", str(target))
    _apply(target, str(manifest.get("patch") or ""))
    return target


def apply_in_place(manifest: Mapping[str, Any], repo: str | os.PathLike[str]) -> list[str]:
    """Prepare ``repo`` (the user's ``--repo PATH``) for a replay; returns warnings.

    When ``repo`` is at the recorded ``HEAD`` with no changes, the recorded patch is applied
    there; otherwise it is used as it is and the warnings say how it differs.

    Raises:
        RecordingError: the patch does not apply.
    """
    root = os.path.realpath(os.fspath(repo))
    current = capture_base(root)
    if not current["git"]:
        return [f"{root} is not a Git repository: replaying in it as it is"]
    warnings: list[str] = []
    if manifest.get("head") and current["head"] != manifest.get("head"):
        warnings.append(
            f"{root} is at {current['head'] or 'no commit'}, the recording at "
            f"{manifest.get('head')}: replaying on it as it is"
        )
    elif current["patch"] or current["patch_truncated"]:
        warnings.append(f"{root} has changes of its own: the recorded patch is not applied")
    elif manifest.get("patch_truncated"):
        warnings.append("the recording's patch was over the cap and is not in the file")
    else:
        _apply(Path(root), str(manifest.get("patch") or ""))
    return warnings


def _apply(target: Path, patch: str) -> None:
    if not patch:
        return
    done = _git(
        str(target), "apply", "--binary", "--whitespace=nowarn", "-", stdin=patch, check=False
    )
    if done.returncode != 0:
        raise RecordingError(
            f"the recorded patch does not apply in {target}: {done.stderr.strip()[:400]} "
            "(a secret redacted from the patch changes the lines it touches)"
        )


def _copy_objects(origin: str, target: Path, head: str) -> None:
    """Copy every object reachable from ``head`` in ``origin`` into ``target``'s own pack.

    ``--window=0``: no new delta search (the origin's deltas are reused as they are), so the
    copy costs about its I/O (bench/replay_checkout.py)."""
    try:
        pack = run_git(
            ["pack-objects", "--revs", "--stdout", "--quiet", "--window=0"],
            cwd=Path(origin),
            stdin=f"{head}\n".encode("ascii"),
            timeout_s=_GIT_TIMEOUT_S,
        ).stdout
        run_git(
            ["index-pack", "--stdin"],
            cwd=target,
            stdin=pack,
            timeout_s=_GIT_TIMEOUT_S,
        )
    except (GitError, ValueError, OSError) as exc:
        raise RecordingError(f"copying commit {head} from {origin} failed: {exc}") from exc


def _has_commit(repo: str, sha: str) -> bool:
    if not os.path.isdir(repo):
        return False
    return _git(repo, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0


class _Done:
    """A git run's outcome with text output (what the callers here read)."""

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def _git(
    cwd: str,
    *args: str,
    index_file: str | None = None,
    stdin: str | None = None,
    check: bool = True,
) -> _Done:
    """``git <args>`` through Tandem's one git door (:func:`harnesses.vcs.run_git`: no
    hooks, filters, drivers or aliases of the repository run)."""
    try:
        done = run_git(
            list(args),
            cwd=Path(cwd),
            index_file=Path(index_file) if index_file else None,
            stdin=stdin.encode("utf-8", "surrogateescape") if stdin is not None else None,
            check=False,
            timeout_s=_GIT_TIMEOUT_S,
        )
    except (GitError, ValueError, OSError) as exc:
        raise RecordingError(f"git {args[0]} failed in {cwd}: {exc}") from exc
    result = _Done(done.returncode, done.text, done.stderr.decode("utf-8", "replace"))
    if check and done.returncode != 0:
        raise RecordingError(f"git {args[0]} failed in {cwd}: {result.stderr.strip()[:400]}")
    return result
