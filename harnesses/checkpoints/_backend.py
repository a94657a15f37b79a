"""Blocking Git plumbing for checkpoints: which git dir, and commands with a private index."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import git

__all__ = ["CHECKPOINT_IDENTITY", "GitBackend"]

CHECKPOINT_IDENTITY = ("Tandem Checkpoints", "checkpoints@tandem.invalid")
"""Author and committer of checkpoint commits (independent of the user's git identity)."""


class GitBackend:
    """Runs git for one workspace, either in its own repository or in a shadow git dir.

    In-repo mode (the workspace is the top level of a non-bare repository): objects and the
    private refs go into the user's repository; the user's index is only ever *read* (copied
    as a stat cache). Shadow mode (anything else): a bare repository under ``data_dir`` with
    the workspace as its work tree; the shadow keeps its own index cache.
    """

    def __init__(self, workspace: Path, data_dir: Path | None) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.in_repo = False
        git_dir: Path | None = None
        with contextlib.suppress(git.InvalidGitRepositoryError, git.NoSuchPathError):
            repo = git.Repo(self.workspace)
            top = repo.working_tree_dir
            if not repo.bare and top and Path(os.path.realpath(top)) == self.workspace:
                git_dir = Path(os.path.realpath(repo.git_dir))
                self.in_repo = True
            repo.close()
        if git_dir is None:
            git_dir = self._shadow(data_dir)
        self.git_dir = git_dir
        self._git = git.Git(str(self.workspace))

    def _shadow(self, data_dir: Path | None) -> Path:
        if data_dir is None:
            import platformdirs

            data_dir = Path(platformdirs.user_data_dir("tandem")) / "checkpoints"
        data_dir = Path(os.path.realpath(data_dir))
        digest = hashlib.sha256(str(self.workspace).encode()).hexdigest()[:16]
        shadow = data_dir / f"{self.workspace.name or 'root'}-{digest}.git"
        if not (shadow / "HEAD").exists():
            shadow.parent.mkdir(parents=True, exist_ok=True)
            git.Repo.init(shadow, bare=True).close()
            (shadow / "tandem-workspace").write_text(str(self.workspace) + "\n", encoding="utf-8")
        exclude = shadow / "info" / "exclude"
        exclude.parent.mkdir(parents=True, exist_ok=True)
        lines = ["/.tandem/"]
        with contextlib.suppress(ValueError):
            rel = data_dir.relative_to(self.workspace).as_posix()
            lines.append(f"/{rel}/")
        wanted = "\n".join(lines) + "\n"
        if not exclude.exists() or exclude.read_text(encoding="utf-8") != wanted:
            exclude.write_text(wanted, encoding="utf-8")
        return shadow

    # -- running git --------------------------------------------------------------------

    def env(self, index: Path | None = None) -> dict[str, str]:
        """Environment for one git command (explicit git dir, work tree, identity)."""
        name, email = CHECKPOINT_IDENTITY
        env = {
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.workspace),
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
        }
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        return env

    def run(
        self,
        *args: str,
        index: Path | None = None,
        stdin: bytes | None = None,
        strip: bool = True,
    ) -> str:
        """Run ``git <args>`` and return its stdout (text).

        Raises:
            git.GitCommandError: non-zero exit.
        """
        env = self.env(index)
        if stdin is None:
            out = self._git.execute(["git", *args], env=env, strip_newline_in_stdout=strip)
        else:
            with tempfile.TemporaryFile() as fh:
                fh.write(stdin)
                fh.seek(0)
                out = self._git.execute(
                    ["git", *args], env=env, istream=fh, strip_newline_in_stdout=strip
                )
        return str(out)

    def rev(self, spec: str) -> str | None:
        """The object name ``spec`` resolves to, or ``None``."""
        try:
            return self.run("rev-parse", "--verify", "--quiet", spec) or None
        except git.GitCommandError:
            return None

    @contextlib.contextmanager
    def temp_index(self, *, seed: bool) -> Iterator[Path]:
        """A private index file; with ``seed`` it starts as a copy of the stat cache.

        The cache is the user's index in in-repo mode (read only, never written) and the
        shadow's own ``index`` in shadow mode. The copy keeps the file's mtime: git compares
        entry mtimes with it to spot "racily clean" entries, and a fresh mtime would make a
        same-size edit within the same second look unchanged.
        """
        tmp_dir = Path(tempfile.mkdtemp(prefix="tandem-index-"))
        index = tmp_dir / "index"
        try:
            if seed:
                source = self.git_dir / "index"
                with contextlib.suppress(FileNotFoundError):
                    shutil.copy2(source, index)
            yield index
        finally:
            shutil.rmtree(tmp_dir, ignore_errors=True)

    def save_cache(self, index: Path) -> None:
        """Keep ``index`` as the shadow's stat cache (shadow mode only)."""
        if self.in_repo or not index.exists():
            return
        dest = self.git_dir / "index"
        tmp = self.git_dir / "index.tandem-tmp"
        shutil.copy2(index, tmp)
        os.replace(tmp, dest)

    def snapshot_tree(self) -> str:
        """Write the working tree (tracked + untracked, ignoring ignored files) as a tree.

        Returns:
            The tree's object name.
        """
        with self.temp_index(seed=True) as index:
            try:
                self.run("add", "-A", "--", ".", index=index)
            except git.GitCommandError:
                # an unreadable cache (e.g. a split index): start from an empty index
                index.unlink(missing_ok=True)
                self.run("add", "-A", "--", ".", index=index)
            if not self.in_repo:
                ignored = self.run(
                    "ls-files", "-z", "--cached", "--ignored", "--exclude-standard", index=index
                )
                paths = [p for p in ignored.split("\0") if p]
                if paths:
                    self.run(
                        "rm",
                        "--cached",
                        "-q",
                        "--pathspec-from-file=-",
                        "--pathspec-file-nul",
                        index=index,
                        stdin="\0".join(paths).encode("utf-8", "surrogateescape"),
                    )
            tree = self.run("write-tree", index=index)
            self.save_cache(index)
        return tree
