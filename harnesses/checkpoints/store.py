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
from pathlib import Path
from typing import Any, TypeVar

from harnesses.vcs import GitError, run_git

from ._backend import GitBackend, store_path
from ._cap import (
    DEFAULT_CAP_BYTES,
    Recoverability,
    plan_cap,
)
from ._capture import capture_repo, parts_refs, write_back
from ._parts import commit_messages
from ._records import (
    DEFAULT_RETENTION,
    FILES_TOUCHED_KEPT,
    META_KEY,
    PARTS_PREFIX,
    REF_PREFIX,
    SCHEMA,
    Checkpoint,
    CheckpointError,
    Retention,
    meta_of,
    parse,
    parse_raw,
    retention_from_settings,
    state_meta,
)
from ._targets import removal_targets
from ._walk import beside

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

_T = TypeVar("_T")

PRUNE_GRACE = "1.hour.ago"
"""How old an unreachable loose object must be before the store's gc prunes it (``git
prune --expire``): a snapshot's new objects are unreachable from its ``write-tree`` until
its ``update-ref``, and with ``now`` another store's gc in that window pruned them while
the kept index still named them (every later ``write-tree`` failed)."""

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
        self._made: tuple[str, str] | None = None  # (commit, tree) of the last one made here

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
            *removal_targets(self._git, removes, removes_unknown, git_clean, git_clean_cwds),
        ]
        # the checkpoints are listed while the working tree is walked (git processes that
        # wait on different things: refs, and lstat/readdir over the tree)
        listing = beside(self._list)
        try:
            tree, plan = g.snapshot_tree(targets, self.cap_bytes)
            index_tree, repo_meta, keep = self._capture_parts()
        except BaseException:
            with contextlib.suppress(Exception):
                listing()  # joined before the error goes on (it shares this store)
            raise
        known = listing()
        latest = known[-1] if known else None
        previous = latest.commit if latest else None
        head_known, base = repo_meta.pop("_head", (False, None))
        if not head_known:
            base = g.user_repo.head_commit() if g.user_repo is not None else None
        delta = g.last_delta
        made_here = self._made or ("", "")
        if previous and delta and (previous, delta[0], tree) == (*made_here, delta[1]):
            # the previous checkpoint is the kept index's base: the walk knows what changed
            files = tuple(sorted(delta[2]))
        elif previous:
            touched = g.run(
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--ignore-submodules=none",  # gitlinks as entries; .gitmodules never read
                "--name-only",
                f"{previous}^{{tree}}",
                tree,
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
        message = f"{label}\n\n{META_KEY}{json.dumps(meta, separators=(',', ':'))}\n"
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
        if parse(commit, ref, message) == (created_ns, made):  # listing knows it already
            self._listed[ref] = (commit, (created_ns, made))
        self._made = (commit, tree)
        return made

    def _capture_parts(self) -> tuple[str | None, dict[str, Any], _Paths]:
        """The repository parts (:func:`capture_repo`, once more after a gc elsewhere; a
        damaged repository gives ``incomplete`` parts)."""
        g = self._git
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
        return index_tree, repo_meta, keep

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
        nested: list[str] = []
        targets = removal_targets(
            self._git, removes, removes_unknown, git_clean, git_clean_cwds, nested
        )
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
            nested=tuple(dict.fromkeys(nested)),
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
        return state_meta(g, a) == state_meta(g, b) and a.skipped == b.skipped

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
                listed[ref] = (commit, parse(commit, ref, messages[commit]))
        self._listed = listed
        return self._known()

    def _known(self) -> _Checkpoints:
        """The checkpoints of the last listing (and those made since), oldest first."""
        items = [parsed for _commit, parsed in self._listed.values() if parsed is not None]
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
        base = [
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--ignore-submodules=none",  # a .gitmodules git refuses must not stop a diff
        ]
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
            "--ignore-submodules=none",
            "-r",
            "-z",
            "--no-renames",
            f"{pre.commit}^{{tree}}",
            f"{target.commit}^{{tree}}",
        )
        removals, writes = parse_raw(raw)
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
        return meta_of(message) or {}

    def _delete(self, ids: Sequence[str]) -> None:
        g = self._git
        lines: list[str] = []
        parts = g.run("for-each-ref", "--format=%(refname)", PARTS_PREFIX)
        doomed = set(ids)
        for name in parts.splitlines():
            if name[len(PARTS_PREFIX) :].split("/", 1)[0] in doomed:
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

    def _expired(
        self, retention: Retention, now: float | None, items: _Checkpoints | None = None
    ) -> _Paths:
        """Ids retention deletes now, oldest first (see :meth:`prune`); ``items``: the
        checkpoints (``None``: listed now)."""
        if retention.keep_count < 1:
            raise CheckpointError("keep_count must be at least 1")
        now = time.time() if now is None else now
        items = self._list() if items is None else items
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
        """Automatic retention after a new checkpoint; gc once enough were deleted.

        It first works on the listing the new checkpoint was made with (the new one
        added): when that deletes nothing, nothing is listed again (what another process
        created since is seen next time; keeping more is safe). When it would delete some,
        the checkpoints are listed again and retention applied to that listing: another
        process's restore since then protects its pre-restore checkpoint's target, which
        the older listing does not know (deleting a ref that is already gone is no error).
        """
        if self.retention is None:
            return
        if not self._expired(self.retention, None, self._known()):
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
            try:
                self._gc()
                pending = 0
            except GitError as exc:
                # best effort: another process's gc at the same moment (git repack: "unable
                # to rename temporary file"); the checkpoint is made, the next one retries
                _log.warning("checkpoint store gc failed (%s); retried next time", exc.returncode)
        counter.write_text(f"{pending}\n", encoding="ascii")

    def _gc(self) -> None:
        """Drop unreachable objects: repack what is reachable, prune the rest (door)."""
        g = self._git
        g.present.clear()
        g.run("repack", "-a", "-d", "-q")
        # loose objects younger than an hour stay: another store object (or process) may
        # be between its write-tree and its update-ref, and its kept index names them
        g.run("prune", f"--expire={PRUNE_GRACE}")

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
