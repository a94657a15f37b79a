"""``CheckpointStore``: snapshots of the working tree in Tandem's own store, diff and restore."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from harnesses.vcs import GitError, run_git

from ._backend import GitBackend, store_path
from ._cap import (
    DEFAULT_CAP_BYTES,
    Recoverability,
    clean_dry_run_args,
    expand_targets,
    parse_clean_output,
    plan_cap,
)
from ._capture import capture_repo, parts_refs, write_back
from ._parts import commit_messages

__all__ = [
    "DEFAULT_CAP_BYTES",
    "FILES_TOUCHED_KEPT",
    "DEFAULT_RETENTION",
    "REF_PREFIX",
    "SCHEMA",
    "Checkpoint",
    "retention_from_settings",
    "CheckpointError",
    "CheckpointStore",
    "Recoverability",
    "Retention",
]

_log = logging.getLogger("harnesses")

REF_PREFIX = "refs/tandem/checkpoints/"
"""Namespace of the refs in the checkpoint store (never in the user's repository)."""
_PARTS_PREFIX = "refs/tandem/parts/"

SCHEMA = 2
"""Version of the checkpoint metadata (the JSON line in each checkpoint commit's message).

Schema 2: the commit's tree is the working tree (tracked, untracked within the size cap,
and the ignored files a destructive command would remove: ``meta["extra"]``); what the cap
left out is ``meta["skipped"]`` (``[[path, bytes], ...]``). ``meta["parts"]`` maps each part
of the snapshot to where it is stored: ``{"worktree": "tree", "index": "parent:1",
"refs": "meta", "stash": "meta"}``. The index is a commit (no parents) whose tree is the
user's stage-0 index entries (unmerged ones are ``meta["index_unmerged"]``, raw ``ls-files
-s`` records); refs are ``meta["refs"]`` (``name -> id``) and ``meta["head"]``; the stash is
``meta["stash_log"]``, the raw lines of ``logs/refs/stash``. The objects they name are in the
store, kept reachable by ``refs/tandem/parts/<id>/<n>``. A checkpoint no longer has the
previous one as a parent (``meta["previous"]`` names it), so deleting old checkpoints lets
gc prune their objects. ``meta["base"]`` is the user's ``HEAD`` when the snapshot was taken
(or null). Checkpoints written before the index part (``parts == {"worktree": "tree"}``,
first parent = previous checkpoint) are read the same way; their restores leave the index,
refs and stash alone.
Schema 1 (no ``schema`` key): checkpoints kept under ``refs/tandem/checkpoints/`` inside the
user's repository by earlier versions; they are left where they are and not listed."""

FILES_TOUCHED_KEPT = 100
"""At most this many paths of ``files_touched`` are kept in a checkpoint's commit message
(``meta["files_touched_count"]`` says how many there were), so a first checkpoint of a
10,000-file folder has a short message and listing stays cheap."""

_T = TypeVar("_T")
_META_KEY = "tandem-checkpoint: "
_GITLINK = "160000"


class CheckpointError(Exception):
    """A checkpoint operation failed (unknown id, git failure, nothing to undo...)."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One snapshot of the working tree.

    Attributes:
        id: short unique id (``YYYYmmddTHHMMSS-xxxxxx``, UTC).
        ref: the private ref holding it, ``refs/tandem/checkpoints/<id>``.
        commit: the commit's object name (40 hex).
        created_at: creation time, seconds since the epoch.
        turn: the agent turn it precedes, if given.
        label: human-readable label.
        files_touched: paths that differ from the previous checkpoint (or ``HEAD``), sorted;
            at most :data:`FILES_TOUCHED_KEPT` of them (the first ones).
        kind: ``checkpoint``, or ``pre-restore`` for the automatic snapshot a restore takes.
        restored_to: for ``pre-restore``, the id of the checkpoint that was restored.
        base: the user's ``HEAD`` commit when the snapshot was taken (``None``: no repository
            or an unborn branch).
        skipped: ``(path, bytes)`` of untracked/ignored files left out by the size cap: not
            recoverable from this checkpoint.
        parts: what the checkpoint holds (``worktree``, and ``index``/``refs``/``stash`` in a
            repository) and where (see :data:`SCHEMA`).
        files_touched_count: how many paths differ (``len(files_touched)`` unless it was
            cut to :data:`FILES_TOUCHED_KEPT`).
    """

    id: str
    ref: str
    commit: str
    created_at: float
    turn: int | None
    label: str
    files_touched: tuple[str, ...]
    kind: Literal["checkpoint", "pre-restore"] = "checkpoint"
    restored_to: str | None = None
    base: str | None = None
    skipped: tuple[tuple[str, int], ...] = ()
    parts: tuple[str, ...] = ("worktree",)
    files_touched_count: int = 0


@dataclass(frozen=True, slots=True)
class Retention:
    """How long checkpoints are kept (``Settings.checkpoint_keep_*``).

    Attributes:
        keep_count: the newest this many are kept (at least 1).
        max_age_s: older ones are deleted (seconds).
        min_age_s: younger ones are never deleted (seconds).
        gc_every: garbage-collect the store once this many were deleted.
    """

    keep_count: int = 200
    max_age_s: float = 30 * 86400.0
    min_age_s: float = 3600.0
    gc_every: int = 10


DEFAULT_RETENTION = Retention()
"""The retention a store applies unless told otherwise (Settings defaults)."""


def retention_from_settings(settings: Any) -> Retention:
    """The :class:`Retention` of ``settings`` (a ``core.settings.Settings``): its
    ``checkpoint_keep_count``, ``checkpoint_keep_days`` (days) and
    ``checkpoint_min_age_minutes`` (minutes), in the store's units (seconds)."""
    return Retention(
        keep_count=settings.checkpoint_keep_count,
        max_age_s=settings.checkpoint_keep_days * 86400.0,
        min_age_s=settings.checkpoint_min_age_minutes * 60.0,
    )


_Checkpoints = list[Checkpoint]
_Paths = list[str]


class CheckpointStore:
    """Checkpoints of one workspace (PRODUCT.md "Safety model": Checkpoints).

    A snapshot covers tracked and untracked files (untracked ones within the size cap,
    :attr:`Checkpoint.skipped` names the rest), the ignored files a destructive command
    would remove (same cap), the user's index (staged content), refs and stash with its
    reflog; it is built with a temporary index (``GIT_INDEX_FILE``) and only reads the
    user's repository. The commits live in a bare repository of the workspace's own
    under ``data_dir`` (:attr:`location`), outside the workspace and with its own objects:
    nothing the agent does to the workspace's ``.git`` (``update-ref -d``, ``gc --prune``,
    ``rm -rf .git``) reaches them. Only :meth:`restore` writes to the user's repository
    (index, refs, stash). All git runs go through :mod:`harnesses.vcs` (no hooks, filters,
    fsmonitor, textconv...). Retention (:class:`Retention`) runs after each new checkpoint.
    Checkpoints are read back from the store's refs, so they survive a restart. All methods
    run git off the event loop (``asyncio.to_thread``).
    """

    def __init__(
        self,
        workspace: Path,
        *,
        data_dir: Path | None = None,
        cap_bytes: int = DEFAULT_CAP_BYTES,
        retention: Retention | None = DEFAULT_RETENTION,
    ) -> None:
        """Args:
        workspace: the directory to snapshot.
        data_dir: where checkpoint stores live; defaults to the platform data dir
            (``<user data>/tandem/checkpoints``).
        cap_bytes: cap on the untracked + ignored bytes one checkpoint copies (bytes;
            ``Settings.checkpoint_cap_bytes``, 100 MiB by default).
        retention: applied after each new checkpoint (``None``: keep everything; an
            explicit :meth:`prune` still works).

        Raises:
            ValueError: ``workspace`` is not a directory, or ``cap_bytes`` is negative.
        """
        if cap_bytes < 0:
            raise ValueError("cap_bytes must not be negative")
        self.cap_bytes = cap_bytes
        self.retention = retention
        workspace = Path(workspace)
        if not workspace.is_dir():
            raise ValueError(f"workspace {str(workspace)!r} is not a directory")
        self.workspace = Path(os.path.realpath(workspace))
        self._data_dir = data_dir
        self._backend: GitBackend | None = None
        self._lock = threading.Lock()
        #: ref -> (commit, (created_ns, checkpoint) or None): listing parses only new refs
        self._listed: dict[str, tuple[str, tuple[int, Checkpoint] | None]] = {}
        self._index_commits: dict[str, str] = {}  # index tree -> its container commit

    @property
    def location(self) -> Path:
        """The store's path (``<data_dir>/<name>-<hash>.git``; created on first use)."""
        return store_path(self.workspace, self._data_dir)

    # -- public async API -----------------------------------------------------------------

    async def create(
        self,
        label: str,
        *,
        turn: int | None = None,
        removes: Sequence[str] = (),
        removes_unknown: bool = False,
        git_clean: Sequence[Sequence[str]] = (),
        git_clean_cwds: Sequence[str | None] = (),
    ) -> Checkpoint:
        """Snapshot the working tree, index, refs and stash now.

        Args:
            label: shown in the checkpoint list.
            turn: the agent turn it precedes.
            removes: what a destructive command removes (``Decision.removes``: files or
                folders, relative to the workspace or absolute); the ignored files among
                them are held too (within the cap).
            removes_unknown: what it removes is only known at run time
                (``Decision.removes_unknown``): every ignored file of the workspace is held,
                within the cap.
            git_clean: the arguments after ``git clean`` of each clean about to run
                (``Decision.git_clean``); the files ``git clean -n`` with the same
                selecting options lists are held too (options not understood: ``-d -x``).
            git_clean_cwds: the directory each of ``git_clean`` runs in (absolute, or
                relative to the workspace; ``cd src && git clean ..``, ``git -C src clean``),
                ``None`` when only known at run time; missing entries: the workspace. The
                dry run runs there; when the directory is unknown, outside the workspace or
                the listing fails, the widest listing (every untracked and ignored file of
                the workspace, ``git clean -n -d -x``) is held instead, within the cap.

        Returns:
            The new checkpoint; :attr:`Checkpoint.skipped` says what the cap left out.

        Raises:
            CheckpointError: git failed.
        """
        return await self._call(
            self._create_retained, label, turn, removes, removes_unknown, git_clean, git_clean_cwds
        )

    async def recoverability(
        self,
        removes: Sequence[str] = (),
        removes_unknown: bool = False,
        git_clean: Sequence[Sequence[str]] = (),
        git_clean_cwds: Sequence[str | None] = (),
    ) -> Recoverability:
        """What a checkpoint before a destructive command would make recoverable.

        Args:
            removes, removes_unknown, git_clean, git_clean_cwds: as for :meth:`create`.

        Returns:
            The :class:`Recoverability` (its ``summary()`` is the approval prompt's line,
            e.g. "2 ignored files, 1.3 GB, are over the cap and will not be recoverable").
        """
        return await self._call(
            self._recoverability, removes, removes_unknown, git_clean, git_clean_cwds
        )

    async def prune(
        self,
        *,
        keep_count: int = 200,
        max_age_s: float = 30 * 86400.0,
        min_age_s: float = 3600.0,
        now: float | None = None,
    ) -> list[str]:
        """Apply retention, then garbage-collect the store (unreferenced objects are pruned).

        A checkpoint is deleted when it is older than ``max_age_s`` or not among the newest
        ``keep_count``, except the latest, the latest ``pre-restore`` (needed for undo), and
        any younger than ``min_age_s``.

        Args:
            keep_count: how many checkpoints to keep (at least 1).
            max_age_s, min_age_s: ages in seconds.
            now: the time, seconds since the epoch (default: now).

        Returns:
            The ids deleted, oldest first.
        """
        return await self._call(self._prune, keep_count, max_age_s, min_age_s, now)

    async def ensure(self, label: str, *, turn: int | None = None) -> Checkpoint:
        """The latest checkpoint if the working tree still equals it, else a new one."""
        return await self._call(self._ensure, label, turn)

    async def unheld(self, paths: Sequence[str]) -> _Paths:
        """The existing files among ``paths`` whose current content the latest checkpoint
        does not hold (ignored files, files created or changed since): what a write that
        deletes or overwrites them would lose for good (issue 12, red-team finding 8).

        Args:
            paths: files relative to the workspace (POSIX).

        Returns:
            The subset, in order; missing files are left out. Any doubt (no checkpoint
            yet, git failing, an unreadable file) counts as not held.
        """
        return await self._call(self._unheld, list(paths))

    async def list(self) -> _Checkpoints:
        """All checkpoints, oldest first."""
        return await self._call(self._list)

    async def get(self, checkpoint_id: str) -> Checkpoint:
        """The checkpoint with this id.

        Raises:
            CheckpointError: unknown id.
        """
        return await self._call(self._get, checkpoint_id)

    async def diff(self, a: str | Checkpoint, b: str | Checkpoint | None = None) -> str:
        """Unified diff (``git diff`` format) from checkpoint ``a`` to ``b``.

        Args:
            a: checkpoint (or id) for the old side.
            b: checkpoint (or id) for the new side; ``None`` = the current working tree.

        Returns:
            The diff text; ``""`` when they are equal.
        """
        return await self._call(self._diff, a, b, False)

    async def files_changed(self, a: str | Checkpoint, b: str | Checkpoint | None = None) -> _Paths:
        """Paths that differ between ``a`` and ``b`` (``None`` = working tree), sorted."""
        out = await self._call(self._diff, a, b, True)
        return sorted(p for p in out.split("\0") if p)

    async def restore(self, checkpoint: str | Checkpoint) -> str:
        """Make the working tree, index, refs and stash equal to ``checkpoint``.

        A ``pre-restore`` checkpoint of the current state is taken first (holding also the
        ignored files at paths the snapshot needs), so the restore can be undone exactly
        with :meth:`undo_restore`. Files created since the snapshot are removed, modified
        and deleted ones are written back byte for byte (mode, symlinks), files that became
        ignored since included; other ignored files are left alone. The user's index is
        rewritten with ``read-tree``, refs with ``update-ref`` (refs created since are kept),
        the stash and its reflog entry by entry; a removed ``.git`` is recreated (shallow at
        the checkpoint's ref tips). An ignored file in the way that the pre-restore
        checkpoint could not hold (over the cap) is left alone (logged).

        Returns:
            The id of the pre-restore checkpoint.

        Raises:
            CheckpointError: unknown checkpoint or git failure.
        """
        return await self._call(self._restore, checkpoint)

    async def undo_restore(self) -> str:
        """Undo the latest restore by restoring its pre-restore checkpoint.

        Returns:
            The id of the new pre-restore checkpoint (calling again redoes the restore).

        Raises:
            CheckpointError: no restore has been made.
        """
        return await self._call(self._undo_restore)

    # -- plumbing -------------------------------------------------------------------------

    async def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.to_thread(self._locked, fn, *args)

    def _locked(self, fn: Callable[..., _T], *args: Any) -> _T:
        with self._lock:
            try:
                if self._backend is None:
                    self._backend = GitBackend(self.workspace, self._data_dir)
                return fn(*args)
            except GitError as exc:
                raise CheckpointError(str(exc)) from exc

    @property
    def _git(self) -> GitBackend:
        assert self._backend is not None
        return self._backend

    def _create(
        self,
        label: str,
        turn: int | None,
        kind: str,
        restored_to: str | None,
        removes: Sequence[str] = (),
        removes_unknown: bool = False,
        git_clean: Sequence[Sequence[str]] = (),
        extra: Sequence[str] = (),
        git_clean_cwds: Sequence[str | None] = (),
    ) -> Checkpoint:
        g = self._git
        g.refresh_repo()
        targets = [
            *extra,
            *self._removal_targets(removes, removes_unknown, git_clean, git_clean_cwds),
        ]
        tree, plan = g.snapshot_tree(targets, self.cap_bytes)
        try:
            try:
                index_tree, repo_meta, keep = capture_repo(g)
            except GitError:
                g.present.clear()  # the store lost an object (gc elsewhere): copy all again
                index_tree, repo_meta, keep = capture_repo(g)
        except GitError as exc:
            # a damaged repository: still keep the working tree (better than nothing)
            _log.warning("checkpoint: index/refs/stash not captured (%s)", exc.returncode)
            index_tree, keep = None, []
            repo_meta = {"incomplete": ["index", "refs", "stash"]}
        latest = self._latest()
        previous = latest.commit if latest else None
        head_known, base = repo_meta.pop("_head", (False, None))
        if not head_known:
            base = g.user_repo.head_commit() if g.user_repo is not None else None
        if previous:
            touched = g.run(
                "diff-tree", "-r", "-z", "--no-renames", "--name-only", f"{previous}^{{tree}}", tree
            )
            files = tuple(sorted(p for p in touched.split("\0") if p))
        else:
            # relative to the user's HEAD, by comparing (mode, blob id) per path
            base, base_listing = g.base_listing()
            mine = g.tree_listing(tree)
            files = tuple(
                sorted(
                    p
                    for p in mine.keys() | base_listing.keys()
                    if mine.get(p) != base_listing.get(p)
                )
            )
        created_ns = time.time_ns()
        now = created_ns / 1e9
        cid = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + "-" + uuid.uuid4().hex[:6]
        parts: dict[str, str] = {"worktree": "tree"}
        parents: list[str] = []
        if index_tree is not None:
            index_commit = self._index_commits.get(index_tree)
            if index_commit is None or index_commit not in g.present:
                index_commit = g.run(
                    "commit-tree",
                    "--no-gpg-sign",
                    index_tree,
                    "-F",
                    "-",
                    stdin=b"tandem checkpoint index\n",
                    identity=True,
                )
                # the same staged content next time: the same container commit (it stays
                # reachable as long as a checkpoint names it; gc clears ``present``)
                self._index_commits = {index_tree: index_commit}
                g.present.add(index_commit)
            parents.append(index_commit)
            parts.update({"index": "parent:1", "refs": "meta", "stash": "meta"})
        extra_held = sorted({rel for rel, _ in plan.included} & set(targets)) if targets else []
        meta = {
            "schema": SCHEMA,
            "id": cid,
            "created_ns": created_ns,
            "turn": turn,
            "kind": kind,
            "restored_to": restored_to,
            "files_touched": list(files[:FILES_TOUCHED_KEPT]),
            "files_touched_count": len(files),
            "base": base,
            "parts": parts,
            "previous": latest.id if latest else None,
            "extra": extra_held,
            "skipped": [[rel, size] for rel, size in plan.skipped],
            **repo_meta,
        }
        message = f"{label}\n\n{_META_KEY}{json.dumps(meta, separators=(',', ':'))}\n"
        args = ["commit-tree", "--no-gpg-sign", tree, "-F", "-"]
        for parent in parents:
            args[3:3] = ["-p", parent]
        try:
            commit = g.run(*args, stdin=message.encode("utf-8"), identity=True)
        except GitError:
            if not parents:
                raise
            # a reused index commit (or the index tree, the config blob) was pruned by
            # another process's gc: copy the repository parts again and make it again
            g.present.clear()
            self._index_commits = {}
            index_tree, _again, keep = capture_repo(g)
            fresh_index = g.run(
                "commit-tree",
                "--no-gpg-sign",
                str(index_tree),
                "-F",
                "-",
                stdin=b"tandem checkpoint index\n",
                identity=True,
            )
            args[args.index(parents[0])] = fresh_index
            commit = g.run(*args, stdin=message.encode("utf-8"), identity=True)
        ref = REF_PREFIX + cid
        # one transaction: the parts' refs and the checkpoint's (which must not exist yet)
        parts_refs(g, cid, keep, also=f"create {ref} {commit}\n")
        made = Checkpoint(
            id=cid,
            ref=ref,
            commit=commit,
            created_at=now,
            turn=turn,
            label=label,
            files_touched=files[:FILES_TOUCHED_KEPT],
            kind="pre-restore" if kind == "pre-restore" else "checkpoint",
            restored_to=restored_to,
            base=base,
            skipped=plan.skipped,
            parts=tuple(parts),
            files_touched_count=len(files),
        )
        if _parse(commit, ref, message) == (created_ns, made):  # listing knows it already
            self._listed[ref] = (commit, (created_ns, made))
        return made

    def _create_retained(
        self,
        label: str,
        turn: int | None,
        removes: Sequence[str],
        removes_unknown: bool,
        git_clean: Sequence[Sequence[str]],
        git_clean_cwds: Sequence[str | None] = (),
    ) -> Checkpoint:
        made = self._create(
            label,
            turn,
            "checkpoint",
            None,
            removes,
            removes_unknown,
            git_clean,
            git_clean_cwds=git_clean_cwds,
        )
        self._retain()
        return made

    def _removal_targets(
        self,
        removes: Sequence[str],
        removes_unknown: bool,
        git_clean: Sequence[Sequence[str]],
        git_clean_cwds: Sequence[str | None] = (),
    ) -> _Paths:
        g = self._git
        found = expand_targets(self.workspace, removes)
        root = str(self.workspace)
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
                found.extend(expand_targets(self.workspace, ["."]))
                break
            listed = None if cwd is None else self._clean_listing(args, Path(cwd))
            if listed is None:  # unknown directory or a listing error: the widest listing
                if widest:
                    continue
                widest = True
                listed = self._clean_listing(clean_dry_run_args(None), self.workspace)
                if listed is None:  # not even that: every file of the workspace, capped
                    found.extend(expand_targets(self.workspace, ["."]))
                    continue
            found.extend(expand_targets(self.workspace, listed))
        return list(dict.fromkeys(found))

    def _clean_listing(self, args: Sequence[str], cwd: Path) -> _Paths | None:
        """What ``git clean <args>`` (a dry run) lists when run in ``cwd``, as absolute
        paths; ``None`` when ``cwd`` is not inside the workspace or git fails (a pathspec
        outside the repository, a missing folder)."""
        g = self._git
        assert g.user_repo is not None
        full = Path(os.path.normpath(cwd if cwd.is_absolute() else self.workspace / cwd))
        if full != self.workspace and self.workspace not in full.parents:
            return None
        if not full.is_dir():
            return None
        try:
            out = run_git(
                ["clean", *args],
                cwd=full,
                git_dir=g.user_repo.git_dir,
                work_tree=self.workspace,
            ).text
        except GitError as exc:
            _log.warning("checkpoint: git clean -n in %s failed (%s)", full, exc.returncode)
            return None
        return [os.path.join(full, p.rstrip("/")) for p in parse_clean_output(out)]

    def _unheld(self, paths: Sequence[str]) -> _Paths:
        latest = self._latest()
        out: _Paths = []
        for rel in paths:
            full = self.workspace / rel
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if latest is None or not self._holds(latest.commit, rel, full, st):
                out.append(rel)
        return out

    def _holds(self, commit: str, rel: str, full: Path, st: os.stat_result) -> bool:
        """Whether ``commit``'s tree has ``rel`` with the bytes (or link target) on disk."""
        try:
            entry = self._git.run("ls-tree", "-z", commit, "--", rel, strip=False)
            header, _, name = entry.rstrip("\0").partition("\t")
            if name != rel:
                return False
            mode, kind, oid = header.split(" ")
            if kind != "blob":
                return False
            if stat.S_ISLNK(st.st_mode):
                held = self._git.run("cat-file", "blob", oid, strip=False)
                return mode == "120000" and held == os.readlink(full)
            if not stat.S_ISREG(st.st_mode) or mode == "120000":
                return False
            data = run_git(
                ["cat-file", "blob", oid], cwd=self.workspace, git_dir=self._git.git_dir
            ).stdout
            return data == full.read_bytes()
        except (GitError, OSError, ValueError):
            return False

    def _recoverability(
        self,
        removes: Sequence[str],
        removes_unknown: bool,
        git_clean: Sequence[Sequence[str]],
        git_clean_cwds: Sequence[str | None] = (),
    ) -> Recoverability:
        g = self._git
        g.refresh_repo()
        targets = self._removal_targets(removes, removes_unknown, git_clean, git_clean_cwds)
        untracked = g.untracked()
        known = set(untracked) | g.user_tracked()
        targets = [t for t in targets if t not in known or t in set(untracked)]
        candidates = [*untracked, *(t for t in targets if t not in set(untracked))]
        plan = plan_cap(self.workspace, candidates, self.cap_bytes)
        wanted = set(targets)
        ignored = set(targets) - set(untracked)
        lost = tuple(item for item in plan.skipped if item[0] in wanted)
        return Recoverability(
            covered=tuple(item for item in plan.included if item[0] in wanted),
            lost=lost,
            ignored_lost=sum(1 for rel, _ in lost if rel in ignored),
        )

    def _ensure(self, label: str, turn: int | None) -> Checkpoint:
        latest = self._latest()
        new = self._create(label, turn, "checkpoint", None)
        if latest is not None and self._same(latest, new):
            self._delete([new.id])
            return latest
        self._retain()
        return new

    def _same(self, a: Checkpoint, b: Checkpoint) -> bool:
        g = self._git
        if g.rev(f"{a.commit}^{{tree}}") != g.rev(f"{b.commit}^{{tree}}"):
            return False
        return _state_meta(g, a) == _state_meta(g, b) and a.skipped == b.skipped

    def _list(self) -> _Checkpoints:
        """All checkpoints, oldest first: the refs are listed (names and ids only) and only
        the commits not seen before are read (one ``cat-file --batch``)."""
        out = self._git.run("for-each-ref", "--format=%(objectname) %(refname)", REF_PREFIX)
        current: dict[str, str] = {}
        for line in out.splitlines():
            commit, _, ref = line.partition(" ")
            if ref:
                current[ref] = commit
        fresh = [c for r, c in current.items() if self._listed.get(r, ("",))[0] != c]
        messages = commit_messages(self._git.git_dir, self.workspace, fresh) if fresh else {}
        listed: dict[str, tuple[str, tuple[int, Checkpoint] | None]] = {}
        for ref, commit in current.items():
            known = self._listed.get(ref)
            if known is not None and known[0] == commit:
                listed[ref] = known
            elif commit in messages:
                listed[ref] = (commit, _parse(commit, ref, messages[commit]))
        self._listed = listed
        items = [parsed for _commit, parsed in listed.values() if parsed is not None]
        items.sort(key=lambda pair: (pair[0], pair[1].id))
        return [cp for _, cp in items]

    def _latest(self) -> Checkpoint | None:
        items = self._list()
        return items[-1] if items else None

    def _get(self, checkpoint: str | Checkpoint) -> Checkpoint:
        cid = checkpoint.id if isinstance(checkpoint, Checkpoint) else checkpoint
        cid = cid.removeprefix(REF_PREFIX)
        for item in self._list():
            if item.id == cid:
                return item
        raise CheckpointError(f"unknown checkpoint {cid!r}")

    def _tree_of(self, checkpoint: str | Checkpoint | None) -> str:
        if checkpoint is None:
            return self._git.snapshot_tree((), self.cap_bytes)[0]
        return f"{self._get(checkpoint).commit}^{{tree}}"

    def _diff(self, a: str | Checkpoint, b: str | Checkpoint | None, names: bool) -> str:
        left, right = self._tree_of(a), self._tree_of(b)
        base = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames"]
        if names:
            return self._git.run(*base, "--name-only", "-z", left, right)
        return self._git.run(*base, left, right, strip=False)

    def _restore(self, checkpoint: str | Checkpoint) -> str:
        target = self._get(checkpoint)
        g = self._git
        target_meta = self._meta(target)
        needed = [
            p
            for p in g.tree_listing(f"{target.commit}^{{tree}}")
            if os.path.lexists(self.workspace / p)
        ]
        undone: dict[str, Any] = {}
        if target.kind == "pre-restore" and target.restored_to:
            # undo: the ignored files the undone restore wrote go too (and come back on redo)
            with contextlib.suppress(CheckpointError):
                undone = self._meta(self._get(target.restored_to))
                needed += [
                    p for p in undone.get("extra") or [] if os.path.lexists(self.workspace / p)
                ]
        pre = self._create(
            f"before restore to {target.id}", None, "pre-restore", target.id, extra=needed
        )
        unsafe = {rel for rel, _ in pre.skipped}
        raw = g.run(
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            f"{pre.commit}^{{tree}}",
            f"{target.commit}^{{tree}}",
        )
        removals, writes = _parse_raw(raw)
        for rel in removals:
            self._remove(rel)
        safe_writes = [rel for rel, _added in writes if self._may_write(rel, rel in unsafe)]
        if safe_writes:
            g.refresh_rules()  # no smudge filter, no EOL conversion: byte for byte
            with g.temp_index(seed=False) as index:
                g.run("read-tree", f"{target.commit}^{{tree}}", index=index)
                payload = "\0".join(safe_writes).encode("utf-8", "surrogateescape")
                g.run("checkout-index", "-f", "-z", "--stdin", index=index, stdin=payload)
        if "index" in target.parts:
            index_tree = g.run("rev-parse", f"{target.commit}^1^{{tree}}")
            write_back(
                g,
                {**target_meta, "_pre_restore_id": pre.id},
                index_tree,
                target.id,
                dict(undone.get("refs") or {}),
            )
        elif target_meta.get("repo", "absent") is None:
            write_back(g, target_meta, None, target.id)
        return pre.id

    def _undo_restore(self) -> str:
        for item in reversed(self._list()):
            if item.kind == "pre-restore":
                return self._restore(item)
        raise CheckpointError("there is no restore to undo")

    def _meta(self, checkpoint: Checkpoint) -> dict[str, Any]:
        message = self._git.run("cat-file", "commit", checkpoint.commit).partition("\n\n")[2]
        return _meta_of(message) or {}

    def _delete(self, ids: Sequence[str]) -> None:
        g = self._git
        lines: list[str] = []
        parts = g.run("for-each-ref", "--format=%(refname)", _PARTS_PREFIX)
        doomed = set(ids)
        for name in parts.splitlines():
            if name[len(_PARTS_PREFIX) :].split("/", 1)[0] in doomed:
                lines.append(f"delete {name}\n")
        lines.extend(f"delete {REF_PREFIX}{cid}\n" for cid in ids)
        if lines:
            g.run("update-ref", "--stdin", stdin="".join(lines).encode())

    def _prune(
        self, keep_count: int, max_age_s: float, min_age_s: float, now: float | None
    ) -> _Paths:
        doomed = self._expired(Retention(keep_count, max_age_s, min_age_s), now)
        self._delete(doomed)
        self._gc()
        return doomed

    def _expired(self, retention: Retention, now: float | None) -> _Paths:
        """Ids retention deletes now, oldest first (see :meth:`prune`)."""
        if retention.keep_count < 1:
            raise CheckpointError("keep_count must be at least 1")
        now = time.time() if now is None else now
        items = self._list()
        if not items:
            return []
        protected = {items[-1].id}
        pres = [c for c in items if c.kind == "pre-restore"]
        if pres:
            protected.add(pres[-1].id)
            if pres[-1].restored_to:
                protected.add(pres[-1].restored_to)  # redo after an undo
        doomed: list[str] = []
        for n, item in enumerate(reversed(items)):
            age = now - item.created_at
            if item.id in protected or age < retention.min_age_s:
                continue
            if n >= retention.keep_count or age > retention.max_age_s:
                doomed.append(item.id)
        doomed.reverse()
        return doomed

    def _retain(self) -> None:
        """Automatic retention after a new checkpoint; gc once enough were deleted."""
        if self.retention is None:
            return
        doomed = self._expired(self.retention, None)
        if not doomed:
            return
        self._delete(doomed)
        counter = self._git.git_dir / "tandem-gc-pending"
        try:
            pending = int(counter.read_text(encoding="ascii").strip() or 0)
        except (OSError, ValueError):
            pending = 0
        pending += len(doomed)
        if pending >= self.retention.gc_every:
            self._gc()
            pending = 0
        counter.write_text(f"{pending}\n", encoding="ascii")

    def _gc(self) -> None:
        """Drop unreachable objects: repack what is reachable, prune the rest (door)."""
        g = self._git
        g.present.clear()
        g.run("repack", "-a", "-d", "-q")
        g.run("prune", "--expire=now")

    # -- file-level helpers ---------------------------------------------------------------

    def _inside(self, rel: str) -> Path | None:
        """The path for ``rel`` if its parent resolves inside the workspace, else ``None``."""
        parts = Path(rel).parts
        if not parts or any(p in ("..", ".git") for p in parts):
            return None
        path = self.workspace / rel
        parent = Path(os.path.realpath(path.parent))
        if parent != self.workspace and self.workspace not in parent.parents:
            return None
        return parent / path.name

    def _remove(self, rel: str) -> None:
        path = self._inside(rel)
        if path is None or not os.path.lexists(path):
            return
        if path.is_dir() and not path.is_symlink():
            return  # a snapshot entry is never a directory; leave real directories alone
        os.unlink(path)
        parent = path.parent
        while parent != self.workspace and self.workspace in parent.parents:
            try:
                parent.rmdir()  # only succeeds when empty
            except OSError:
                break
            parent = parent.parent

    def _may_write(self, rel: str, unsafe: bool) -> bool:
        """Whether restore may (over)write ``rel``.

        ``unsafe`` means the pre-restore checkpoint could not hold the file there (over the
        cap), so it is left alone.
        """
        path = self._inside(rel)
        if path is None:
            _log.warning("checkpoint restore: skipped a path outside the workspace")
            return False
        if path.is_dir() and not path.is_symlink():
            _log.warning("checkpoint restore: a directory is in the way of a snapshot file")
            return False
        if unsafe and os.path.lexists(path):
            _log.warning("checkpoint restore: left a file over the cap in place of a snapshot file")
            return False
        return True


def _meta_of(message: str) -> dict[str, Any] | None:
    meta: Any = None
    for line in message.splitlines():
        if line.startswith(_META_KEY):
            try:
                meta = json.loads(line[len(_META_KEY) :])
            except ValueError:
                meta = None
    return meta if isinstance(meta, dict) else None


def _state_meta(g: GitBackend, cp: Checkpoint) -> tuple[object, ...]:
    """What besides the tree makes two checkpoints' states equal (index, refs, stash)."""
    message = g.run("cat-file", "commit", cp.commit).partition("\n\n")[2]
    meta = _meta_of(message) or {}
    index = g.rev(f"{cp.commit}^1^{{tree}}") if "index" in cp.parts else None
    keys = ("head", "refs", "stash_log", "index_unmerged", "extra")
    return (index, *(json.dumps(meta.get(k), sort_keys=True) for k in keys))


def _parse(commit: str, ref: str, message: str) -> tuple[int, Checkpoint] | None:
    label, _, rest = message.partition("\n")
    meta = _meta_of(rest)
    if meta is None:
        return None
    created_ns = int(meta.get("created_ns") or 0)
    turn = meta.get("turn")
    kind: Literal["checkpoint", "pre-restore"] = (
        "pre-restore" if meta.get("kind") == "pre-restore" else "checkpoint"
    )
    restored = meta.get("restored_to")
    base = meta.get("base")
    files = meta.get("files_touched") or []
    count = meta.get("files_touched_count")
    skipped_raw = meta.get("skipped") or []
    skipped = tuple(
        (str(item[0]), int(item[1]))
        for item in skipped_raw
        if isinstance(item, list) and len(item) == 2
    )
    parts = meta.get("parts") or {"worktree": "tree"}
    return created_ns, Checkpoint(
        id=ref.removeprefix(REF_PREFIX),
        ref=ref,
        commit=commit,
        created_at=created_ns / 1e9,
        turn=turn if isinstance(turn, int) else None,
        label=label,
        files_touched=tuple(str(f) for f in files) if isinstance(files, list) else (),
        kind=kind,
        restored_to=restored if isinstance(restored, str) else None,
        base=base if isinstance(base, str) else None,
        skipped=skipped,
        parts=tuple(str(k) for k in parts) if isinstance(parts, dict) else ("worktree",),
        files_touched_count=count
        if isinstance(count, int) and count >= 0
        else (len(files) if isinstance(files, list) else 0),
    )


def _parse_raw(raw: str) -> tuple[list[str], list[tuple[str, bool]]]:
    """Split ``diff-tree -r -z`` raw output into paths to remove and (path, added) to write."""
    removals: list[str] = []
    writes: list[tuple[str, bool]] = []
    fields = raw.split("\0")
    i = 0
    while i + 1 < len(fields):
        header, path = fields[i], fields[i + 1]
        i += 2
        if not header.startswith(":"):
            continue
        _src_mode, dst_mode, _a, _b, status = header[1:].split(" ")
        if status.startswith("D"):
            removals.append(path)
        elif dst_mode != _GITLINK:
            writes.append((path, status.startswith("A")))
    return removals, writes
