"""Read-only questions about the user's repository, asked through the git door.

Nothing here writes to the user's repository: only ``rev-parse``, ``symbolic-ref``,
``ls-tree`` and ``ls-files`` run against it (plus :func:`init_with_commit`, which creates a
new repository, for the demo). Discovery never walks above the folder it is given
(``GIT_CEILING_DIRECTORIES``), like ``git.Repo(folder)`` without parent search.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .runner import GitError, GitResult, run_git

__all__ = ["UserRepo", "current_branch", "enclosing_top_level", "find_repo", "init_with_commit"]


@dataclass(frozen=True, slots=True)
class UserRepo:
    """A non-bare repository whose top level is a given folder.

    Attributes:
        git_dir: absolute git dir (``.git``, or what a ``.git`` file points to).
        top_level: the work tree's top level (the folder itself, resolved).
        object_format: ``sha1`` or ``sha256``.
    """

    git_dir: Path
    top_level: Path
    object_format: str

    def head_commit(self) -> str | None:
        """The commit ``HEAD`` names, or ``None`` (unborn branch)."""
        result = self._run("rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        if result.returncode != 0:
            return None
        return result.text.strip() or None

    def tree_listing(self, commit: str) -> dict[str, tuple[str, str]]:
        """Every blob/link/gitlink of ``commit``'s tree: ``path -> (mode, object id)``."""
        out = self._run("ls-tree", "-r", "-z", "--full-tree", commit).text
        listing: dict[str, tuple[str, str]] = {}
        for record in out.split("\0"):
            if not record:
                continue
            header, _, path = record.partition("\t")
            mode, _kind, oid = header.split(" ")
            listing[path] = (mode, oid)
        return listing

    def tracked_ignored(self) -> list[str]:
        """Paths in the user's index that its ignore rules would ignore (tracked anyway)."""
        out = self._run(
            "ls-files", "-z", "--cached", "--ignored", "--exclude-standard", work_tree=True
        ).text
        return [p for p in out.split("\0") if p]

    def _run(self, *args: str, check: bool = True, work_tree: bool = False) -> GitResult:
        return run_git(
            args,
            cwd=self.top_level,
            git_dir=self.git_dir,
            work_tree=self.top_level if work_tree else None,
            check=check,
        )


def _ceiling(folder: Path) -> dict[str, str]:
    return {"GIT_CEILING_DIRECTORIES": str(folder.parent)}


def find_repo(folder: Path) -> UserRepo | None:
    """The repository whose top level is ``folder``, or ``None``.

    ``None`` for a plain folder, a subdirectory of a repository, a bare repository, or a
    repository git refuses (unreadable config, dubious ownership).
    """
    folder = Path(os.path.realpath(folder))
    try:
        out = run_git(
            ["rev-parse", "--absolute-git-dir", "--show-object-format", "--show-toplevel"],
            cwd=folder,
            extra_env=_ceiling(folder),
        ).text
    except (GitError, OSError):
        return None
    lines = out.splitlines()
    if len(lines) != 3 or Path(os.path.realpath(lines[2])) != folder:
        return None
    return UserRepo(Path(lines[0]), folder, lines[1])


def enclosing_top_level(folder: Path) -> Path | None:
    """The top level of the work tree ``folder`` lies in (``git rev-parse --show-toplevel``,
    searching upwards as git does), or ``None``.

    Unlike :func:`find_repo`, discovery walks above ``folder``: this is how ``tandem run``
    started in ``proj/tests`` finds ``proj`` (issue 16; Codex and Claude Code treat the git
    top level as the project root). ``None`` outside a work tree, in a bare repository or
    ``.git`` folder, or when git refuses the repository (dubious ownership).
    """
    folder = Path(os.path.realpath(folder))
    try:
        out = run_git(["rev-parse", "--show-toplevel"], cwd=folder, check=False)
    except (GitError, OSError, ValueError):
        return None
    top = out.text.strip()
    if out.returncode != 0 or not top:
        return None
    return Path(os.path.realpath(top))


def current_branch(folder: Path) -> str | None:
    """The branch checked out in the repository at ``folder`` (the window's badge).

    Returns:
        The short branch name; ``None`` when detached, not a repository, or git fails.
    """
    folder = Path(os.path.realpath(folder))
    try:
        result = run_git(
            ["symbolic-ref", "--quiet", "--short", "HEAD"],
            cwd=folder,
            extra_env=_ceiling(folder),
            check=False,
        )
    except (GitError, OSError, ValueError):
        return None
    name = result.text.strip()
    return name if result.returncode == 0 and name else None


def init_with_commit(
    folder: Path, message: str, *, identity: tuple[str, str], branch: str = "main"
) -> str:
    """Make ``folder`` a new repository whose first commit holds all its files.

    Args:
        folder: an existing directory without ``.git``.
        message: the commit message.
        identity: ``(name, email)`` of author and committer.
        branch: the initial branch.

    Returns:
        The commit's object name.

    Raises:
        GitError: git failed.
    """
    folder = Path(os.path.realpath(folder))
    name, email = identity
    who = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }
    run_git(["init", "-q", "--template=", f"--initial-branch={branch}", str(folder)], cwd=folder)
    git_dir = folder / ".git"
    run_git(["add", "-A", "--", "."], cwd=folder, git_dir=git_dir, work_tree=folder)
    tree = run_git(["write-tree"], cwd=folder, git_dir=git_dir).text.strip()
    commit = run_git(
        ["commit-tree", "--no-gpg-sign", tree, "-F", "-"],
        cwd=folder,
        git_dir=git_dir,
        extra_env=who,
        stdin=message.encode("utf-8"),
    ).text.strip()
    run_git(["update-ref", "HEAD", commit, ""], cwd=folder, git_dir=git_dir)
    return commit
