"""Blocking git plumbing for checkpoints: the per-workspace store and its private indexes.

Every workspace's checkpoints live in a bare repository of their own under Tandem's data
dir (``<data>/checkpoints/<name>-<hash>.git``), with the workspace as its work tree. The
store keeps its own objects (no alternates into the user's repository, so ``git gc``,
``rm -rf .git`` or ``mv .git`` in the workspace cannot lose a checkpoint) and its own index
as a stat cache (a checkpoint hashes only what changed since the last one). The user's
repository is only read, through :mod:`harnesses.vcs`: its ``HEAD`` tree (what the first
checkpoint's ``files_touched`` is relative to), its tracked-but-ignored paths (kept in
snapshots, as git keeps them tracked) and its ``info/exclude`` (as ignore rules). All git
runs go through the door (:func:`harnesses.vcs.run_git`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from harnesses.vcs import GitError, UserRepo, find_repo, run_git

from ._cap import CapPlan, exclude_pattern, plan_cap
from ._incremental import StatCache, build_cache, file_identity, incremental_snapshot, settled
from ._nested import has_head_commit

__all__ = ["ATTRIBUTES", "CHECKPOINT_IDENTITY", "GitBackend", "store_path"]

CHECKPOINT_IDENTITY = ("Tandem Checkpoints", "checkpoints@tandem.invalid")
"""Author and committer of checkpoint commits (independent of the user's git identity)."""

ATTRIBUTES = "* !filter !diff !merge -text !eol -ident !working-tree-encoding\n"
"""The store's ``info/attributes``: it has the highest precedence (``git help attributes``),
so no ``.gitattributes`` line in the workspace can name a filter, a diff driver, an EOL or
encoding conversion for snapshots and restores: both are byte for byte."""


STORE_TUNING = (("core.splitIndex", "true"), ("splitIndex.sharedIndexExpire", "now"))
"""The stat cache's index files are split (``git help update-index``, "SPLIT INDEX"): the
entries live in a shared ``sharedindex.<id>`` file in the store and a snapshot's index
file holds only what changed since, so the two index writes of a next checkpoint
(``update-index``, then ``write-tree`` keeping the cache tree) write a few KB rather than
the whole index (about 80 bytes an entry). A new shared file (the first snapshot's, or a
split part folded back, see ``_incremental.SPLIT_MAX_BYTES``) deletes the older ones at
once (``sharedIndexExpire=now``), so the store holds one or two; another process's copy of
the kept index that named a deleted one fails to read, and its snapshot takes the full path.
Only the stat cache's chain (:meth:`GitBackend.temp_index` with ``seed``) is split: a
throwaway index (the user's index captured, a restore's) would leave a shared file each."""


def store_path(workspace: Path, data_dir: Path | None) -> Path:
    """Where ``workspace``'s checkpoint store lives.

    Args:
        workspace: the workspace (resolved).
        data_dir: the checkpoints directory; ``None`` = ``platformdirs.user_data_dir("tandem")
            / "checkpoints"``.

    Returns:
        ``<data_dir>/<folder name>-<16 hex of sha256(path)>.git``.
    """
    if data_dir is None:
        import platformdirs

        data_dir = Path(platformdirs.user_data_dir("tandem")) / "checkpoints"
    data_dir = Path(os.path.realpath(data_dir))
    digest = hashlib.sha256(str(workspace).encode()).hexdigest()[:16]
    return data_dir / f"{workspace.name or 'root'}-{digest}.git"


class _Memo:
    """Results of deterministic git runs (same input, same object id), a few kept.

    Callers check that the object is still in the store (``GitBackend.present``) before
    reusing one, since a garbage collection clears that set.
    """

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._items: dict[tuple[str, bytes], str] = {}

    def get(self, key: tuple[str, bytes]) -> str | None:
        return self._items.get(key)

    def set(self, key: tuple[str, bytes], value: str) -> None:
        self._items.pop(key, None)
        while len(self._items) >= self._size:
            self._items.pop(next(iter(self._items)))
        self._items[key] = value


class GitBackend:
    """Runs the door's git for one workspace against its checkpoint store.

    Attributes:
        workspace: the work tree (resolved).
        git_dir: the store (a bare repository outside the workspace, unless ``data_dir``
            is inside it, in which case it is excluded from snapshots).
        user_repo: the user's repository when the workspace is its top level, else ``None``.
        present: object ids known to be in the store (copied there by an earlier
            checkpoint), so a checkpoint copies and checks only the user's new blobs;
            cleared when the store is garbage-collected.
        last_delta: after :meth:`snapshot_tree`, ``(base tree, tree, changed paths)`` when
            the snapshot was taken from the kept index (``changed``: what differs between
            the two trees, see :func:`._incremental.incremental_snapshot`), else ``None``.
    """

    def __init__(self, workspace: Path, data_dir: Path | None) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.user_repo: UserRepo | None = find_repo(self.workspace)
        self.git_dir = store_path(self.workspace, data_dir)
        self.present: set[str] = set()
        self.memo = _Memo()
        self.exclude_text = ""
        self._cache: StatCache | None = None
        self.last_delta: tuple[str, str, frozenset[str]] | None = None
        #: the user's refs last read: ((git dir, their files' identities), when, state)
        self.refs_memo: tuple[tuple[Path, object], int, Any] | None = None
        self._index_memo: tuple[tuple[str, object], int, tuple[str, ...]] | None = None
        #: the repository lookup's inputs when it was made, and whether they had settled
        self._repo_seen: tuple[tuple[tuple[int, ...] | None, ...] | None, bool] = (None, False)
        self._split: set[Path] = set()  # the stat cache chain's index files (STORE_TUNING)
        self._init_store()

    @property
    def in_repo(self) -> bool:
        """Whether the workspace is the top level of a (non-bare) git repository."""
        return self.user_repo is not None

    def _init_store(self) -> None:
        store = self.git_dir
        if not (store / "HEAD").exists():
            store.parent.mkdir(parents=True, exist_ok=True)
            fmt = self.user_repo.object_format if self.user_repo else "sha1"
            run_git(
                ["init", "-q", "--bare", "--template=", f"--object-format={fmt}", str(store)],
                cwd=store.parent,
            )
            (store / "tandem-workspace").write_text(str(self.workspace) + "\n", encoding="utf-8")
        self.refresh_rules()

    def refresh_rules(self, skip: Sequence[str] = ()) -> None:
        """(Re)write the store's ``info/attributes`` and ``info/exclude`` if they differ.

        The exclude file holds Tandem's own paths and, as plain ignore patterns, the user's
        ``info/exclude`` (read as data; ignore patterns run nothing).

        Args:
            skip: relative paths left out of the next snapshot (over the size cap), as
                anchored, escaped patterns, so ``git add`` never reads them.
        """
        lines = ["/.tandem/"]
        with contextlib.suppress(ValueError):
            rel = self.git_dir.parent.relative_to(self.workspace).as_posix()
            lines.append(f"/{rel}/")
        if self.user_repo is not None:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                user = (self.user_repo.git_dir / "info" / "exclude").read_text(encoding="utf-8")
                lines.extend(user.splitlines())
        self.exclude_text = "\n".join(lines) + "\n"
        lines.extend(p for p in (exclude_pattern(rel) for rel in skip) if p)
        self._write_if_changed(self.git_dir / "info" / "exclude", "\n".join(lines) + "\n")
        self._write_if_changed(self.git_dir / "info" / "attributes", ATTRIBUTES)

    @staticmethod
    def _write_if_changed(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            if path.read_text(encoding="utf-8") == text and not path.is_symlink():
                return
        tmp = path.with_name(path.name + ".tandem-tmp")
        tmp.unlink(missing_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)

    # -- running git --------------------------------------------------------------------

    def run(
        self,
        *args: str,
        index: Path | None = None,
        stdin: bytes | None = None,
        strip: bool = True,
        identity: bool = False,
    ) -> str:
        """Run ``git <args>`` in the store (work tree = the workspace); return stdout (text).

        Raises:
            harnesses.vcs.GitError: non-zero exit.
        """
        extra: dict[str, str] = {}
        if identity:
            name, email = CHECKPOINT_IDENTITY
            extra = {
                "GIT_AUTHOR_NAME": name,
                "GIT_AUTHOR_EMAIL": email,
                "GIT_COMMITTER_NAME": name,
                "GIT_COMMITTER_EMAIL": email,
            }
        out = run_git(
            args,
            cwd=self.workspace,
            git_dir=self.git_dir,
            work_tree=self.workspace,
            index_file=index,
            extra_env=extra,
            stdin=stdin,
            tuning=STORE_TUNING if index is not None and index in self._split else (),
        ).text
        return out.rstrip("\n") if strip else out

    def rev(self, spec: str) -> str | None:
        """The object name ``spec`` resolves to in the store, or ``None``."""
        result = run_git(
            ["rev-parse", "--verify", "--quiet", spec],
            cwd=self.workspace,
            git_dir=self.git_dir,
            check=False,
        )
        return (result.text.strip() or None) if result.returncode == 0 else None

    @contextlib.contextmanager
    def temp_index(self, *, seed: bool) -> Iterator[Path]:
        """A private index file; with ``seed`` it starts as a copy of the store's stat cache.

        The copy keeps the file's mtime: git compares entry mtimes with it to spot "racily
        clean" entries, and a fresh mtime would make a same-size edit within the same second
        look unchanged. The file lives in the store (``tandem-index-<hex>``), so keeping it
        is a rename; it is removed on exit unless :meth:`save_cache` kept it.
        """
        index = self.git_dir / f"tandem-index-{uuid.uuid4().hex}"
        try:
            if seed:
                self._split.add(index)  # the stat cache's chain: written split
                with contextlib.suppress(FileNotFoundError):
                    shutil.copy2(self.git_dir / "index", index)
            yield index
        finally:
            self._split.discard(index)
            index.unlink(missing_ok=True)
            Path(f"{index}.lock").unlink(missing_ok=True)

    def save_cache(self, index: Path) -> None:
        """Keep ``index`` (a :meth:`temp_index` file) as the store's stat cache (moved)."""
        if index.exists():
            os.replace(index, self.git_dir / "index")

    def snapshot_tree(
        self, extra: Sequence[str] = (), cap_bytes: int | None = None
    ) -> tuple[str, CapPlan]:
        """Write the working tree (tracked + untracked, ignoring ignored files) as a tree.

        "Tracked" includes paths the user's index tracks although ignore rules match them.

        Args:
            extra: relative paths of ignored files to hold as well (what a destructive
                command would remove).
            cap_bytes: cap on untracked + ``extra`` bytes (``None``: no cap); the files over
                it are skipped (never read) and reported.

        Returns:
            ``(tree object name in the store, the cap plan)``.
        """
        started_ns = time.time_ns()
        cache, self._cache = self._cache, None
        self.last_delta = None
        if cache is not None and not extra:
            self.refresh_rules()
            done = incremental_snapshot(self, cache, 1 << 62 if cap_bytes is None else cap_bytes)
            if done is not None:
                tree, plan, self._cache, changed = done
                if cache.tree:
                    self.last_delta = (cache.tree, tree, changed)
                return tree, plan
        repos: list[str] = []
        untracked = self.untracked(repos)
        known = set(untracked) | (self.user_tracked() if extra else set())
        extra_files = [p for p in dict.fromkeys(extra) if p not in known]
        plan = plan_cap(
            self.workspace,
            [*untracked, *extra_files],
            cap_bytes if cap_bytes is not None else 1 << 62,
        )
        skip = [rel for rel, _ in plan.skipped]
        # a nested repository with no commit cannot be a gitlink (``add`` refuses it): out
        unborn = [p for p in repos if not has_head_commit(os.path.join(self.workspace, p))]
        self.refresh_rules([*skip, *unborn])
        keep = self.tracked_ignored_files()
        keep |= {rel for rel, _ in plan.included if rel in set(extra_files)}
        with self.temp_index(seed=True) as index:
            try:
                tree = self._add_all(index, index.exists(), skip, keep)
            except GitError:
                # an unreadable cache, one naming a lost shared index file, or entries whose
                # objects a gc elsewhere pruned: from an empty index (everything hashed again)
                index.unlink(missing_ok=True)
                tree = self._add_all(index, False, skip, keep)
            fresh = build_cache(self, index, plan, keep, started_ns, tree)
            self.save_cache(index)
        if skip or unborn:
            self.refresh_rules()
        if fresh is not None:
            fresh.exclude_text = self.exclude_text
            fresh.index_identity = file_identity(os.fspath(self.git_dir / "index"))
            self._cache = fresh
        return tree, plan

    def _add_all(self, index: Path, seeded: bool, skip: list[str], keep: set[str]) -> str:
        """The full path's ``add -A`` into ``index`` (``seeded``: a copy of the kept index),
        the held ignored files adjusted; returns the ``write-tree`` of it.

        A seeded copy's gitlinks are taken out first and added anew: ``add -A`` asks a
        nested repository it already knows whether its work tree is dirty by starting
        ``git status`` inside it, where the door's settings do not name its drivers (its
        filters would run), and keeps one whose ``.git`` vanished; a new one's ``HEAD`` is
        read in-process.

        Raises:
            harnesses.vcs.GitError: git failed (the caller starts again from empty).
        """
        if seeded:
            staged = self.run("ls-files", "-s", "-z", index=index, strip=False)
            links = [r.partition("\t")[2] for r in staged.split("\0") if r.startswith("160000 ")]
            if links:
                self.paths_stdin(["update-index", "--force-remove"], links, index)
            if skip:
                self._pathspec_run(["rm", "--cached", "-f", "-q", "--ignore-unmatch"], skip, index)
        self.run("add", "-A", "--", ".", index=index)
        # ``add -A`` into an empty index adds no ignored file; a seeded one may hold files
        # force-added last time, or that the ignore rules now match
        ignored = (
            self.run("ls-files", "-z", "--cached", "--ignored", "--exclude-standard", index=index)
            if seeded
            else ""
        )
        drop = [p for p in ignored.split("\0") if p and p not in keep]
        if drop:
            self._pathspec_run(["rm", "--cached", "-f", "-q"], drop, index)
        if keep:
            self._pathspec_run(["add", "-f"], sorted(keep), index)
        return self.run("write-tree", index=index)

    def _no_user_index(self) -> bool:
        """Whether the user's repository has no index file (nothing tracked: a fresh
        ``git init``), so the questions about tracked paths need no git run."""
        return self.user_repo is None or not os.path.lexists(self.user_repo.git_dir / "index")

    def user_tracked(self) -> set[str]:
        """Paths in the user's index (empty without a repository)."""
        return {record.partition("\t")[2] for record in self.user_index_records()}

    def user_index_records(self) -> list[str]:
        """The user's index as ``git ls-files -s -z`` records (``"<mode> <id> <stage>\\t
        <path>"``; ``[]`` without a repository or an index file).

        The listing is reused while the index file is provably the one listed: git writes
        it through a lock file renamed into place, and the file has the identity (inode,
        size, mode, mtime, ctime) it had, none of it within :data:`._incremental.RACY_NS`
        of the listing. A symbolic link at ``index`` is listed every time (git reads its
        target, which may change while the link stays).
        """
        if self.user_repo is None or self._no_user_index():
            return []
        path = os.fspath(self.user_repo.git_dir / "index")
        taken = time.time_ns()
        seen = file_identity(path)
        memo = self._index_memo
        if memo is not None and memo[0] == (path, seen) and settled(seen, memo[1]):
            return list(memo[2])
        out = run_git(
            ["ls-files", "-s", "-z"],
            cwd=self.workspace,
            git_dir=self.user_repo.git_dir,
            work_tree=self.workspace,
        ).text
        records = [r for r in out.split("\0") if r]
        self._index_memo = None
        # a symbolic link's identity says nothing about the file git reads through it
        regular = seen is not None and len(seen) == 6 and stat.S_ISREG(seen[3])
        if regular and file_identity(path) == seen:
            self._index_memo = ((path, seen), taken, tuple(records))
        return records

    def refresh_repo(self) -> None:
        """Look the user's repository up again (``.git`` may have been removed or recreated).

        The lookup (two git processes) is skipped while what it depends on provably did not
        change: ``<workspace>/.git``, the git dir it names and that git dir's ``config``
        have the identity (inode, size, mode, mtime, ctime) they had at the last lookup,
        and none of them had been touched within a second of it (see
        :data:`._incremental.RACY_NS`).
        """
        now = time.time_ns()
        seen = self._repo_identity()
        if seen is not None and seen == self._repo_seen[0] and self._repo_seen[1]:
            return
        self.user_repo = find_repo(self.workspace)
        after = self._repo_identity()
        steady = after is not None and all(settled(ident, now) for ident in after)
        self._repo_seen = (after if after == seen else None, steady)

    def _repo_identity(self) -> tuple[tuple[int, ...] | None, ...] | None:
        dotgit = os.fspath(self.workspace / ".git")
        idents = [file_identity(dotgit)]
        if self.user_repo is not None:
            git_dir = os.fspath(self.user_repo.git_dir)
            idents += [file_identity(git_dir), file_identity(os.path.join(git_dir, "config"))]
            if idents[1] is None:
                return None
        return tuple(idents)

    def untracked(self, nested: list[str] | None = None) -> list[str]:
        """Files git would call untracked (not in the user's index, not ignored).

        Without a user repository every non-ignored file is untracked. The untracked
        nested repositories (``git add`` records each as a gitlink) are appended to
        ``nested`` (relative paths, no trailing ``/``).
        """
        self.refresh_rules()
        if self.user_repo is None:
            with self.temp_index(seed=False) as index:
                out = self.run("ls-files", "-z", "--others", "--exclude-standard", index=index)
        else:
            out = run_git(
                ["ls-files", "-z", "--others", "--exclude-standard"],
                cwd=self.workspace,
                git_dir=self.user_repo.git_dir,
                work_tree=self.workspace,
            ).text
        prefixes = self.tandem_prefixes()
        listed = [p for p in out.split("\0") if p and not p.startswith(prefixes)]
        if nested is not None:  # "sub/": a nested repository
            nested.extend(p.rstrip("/") for p in listed if p.endswith("/"))
        return [p for p in listed if not p.endswith("/")]

    def tandem_prefixes(self) -> tuple[str, ...]:
        """Relative folder prefixes (``"x/"``) of Tandem's own files inside the workspace."""
        tandem = [".tandem/"]
        with contextlib.suppress(ValueError):
            tandem.append(self.git_dir.parent.relative_to(self.workspace).as_posix() + "/")
        return tuple(tandem)

    def paths_stdin(self, cmd: list[str], paths: list[str], index: Path) -> None:
        """``git <cmd> -z --stdin`` with ``paths`` (NUL-terminated) on stdin, on ``index``."""
        payload = "".join(p + "\0" for p in paths).encode("utf-8", "surrogateescape")
        self.run(*cmd, "-z", "--stdin", index=index, stdin=payload)

    def _pathspec_run(self, cmd: list[str], paths: list[str], index: Path) -> None:
        payload = "\0".join(paths).encode("utf-8", "surrogateescape")
        self.run(*cmd, "--pathspec-from-file=-", "--pathspec-file-nul", index=index, stdin=payload)

    def tracked_ignored_files(self) -> set[str]:
        """User-tracked paths matching ignore rules that exist as files inside the workspace."""
        if self.user_repo is None or self._no_user_index():
            return set()
        keep: set[str] = set()
        for rel in self.user_repo.tracked_ignored():
            path = self.workspace / rel
            parent = Path(os.path.realpath(path.parent))
            inside = parent == self.workspace or self.workspace in parent.parents
            if inside and parent == path.parent and os.path.lexists(path) and not path.is_dir():
                keep.add(rel)
        return keep

    def base_listing(self) -> tuple[str | None, dict[str, tuple[str, str]]]:
        """The user's ``HEAD`` commit and its tree listing (``{}`` without a repository)."""
        if self.user_repo is None:
            return None, {}
        head = self.user_repo.head_commit()
        return head, (self.user_repo.tree_listing(head) if head else {})

    def tree_listing(self, tree: str) -> dict[str, tuple[str, str]]:
        """A store tree's blobs: ``path -> (mode, object id)``."""
        listing: dict[str, tuple[str, str]] = {}
        for record in self.run("ls-tree", "-r", "-z", tree).split("\0"):
            if record:
                header, _, path = record.partition("\t")
                mode, _kind, oid = header.split(" ")
                listing[path] = (mode, oid)
        return listing
