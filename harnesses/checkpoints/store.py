"""``CheckpointStore``: snapshots of the working tree in Tandem's own store, diff and restore."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from harnesses.vcs import GitError

from ._backend import GitBackend, store_path

__all__ = ["REF_PREFIX", "SCHEMA", "Checkpoint", "CheckpointError", "CheckpointStore"]

_log = logging.getLogger("harnesses")

REF_PREFIX = "refs/tandem/checkpoints/"
"""Namespace of the refs in the checkpoint store (never in the user's repository)."""

SCHEMA = 2
"""Version of the checkpoint metadata (the JSON line in each checkpoint commit's message).

Schema 2: the commit's tree is the working tree; its first parent (if any) is the previous
checkpoint; ``meta["parts"]`` maps each part of the snapshot to where it is stored:
``{"worktree": "tree"}``. Later parts (issue 12: the index, the stash) are added as further
parents of the checkpoint commit, recorded as ``{"index": "parent:2", "stash": "parent:3"}``,
so that they stay reachable from the checkpoint's ref and old readers ignore them.
``meta["base"]`` is the user's ``HEAD`` when the snapshot was taken (or null).
Schema 1 (no ``schema`` key): checkpoints kept under ``refs/tandem/checkpoints/`` inside the
user's repository by earlier versions; they are left where they are and not listed."""

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
        files_touched: paths that differ from the parent checkpoint (or ``HEAD``), sorted.
        kind: ``checkpoint``, or ``pre-restore`` for the automatic snapshot a restore takes.
        restored_to: for ``pre-restore``, the id of the checkpoint that was restored.
        base: the user's ``HEAD`` commit when the snapshot was taken (``None``: no repository
            or an unborn branch).
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


_Checkpoints = list[Checkpoint]
_Paths = list[str]


class CheckpointStore:
    """Checkpoints of one workspace (PRODUCT.md "Safety model": Checkpoints).

    A snapshot covers tracked and untracked files and leaves out ignored ones; it is built
    with a temporary index (``GIT_INDEX_FILE``), so the user's index, stash, ``HEAD`` and
    branches are never touched. The commits live in a bare repository of the workspace's own
    under ``data_dir`` (:attr:`location`), outside the workspace and with its own objects:
    nothing the agent does to the workspace's ``.git`` (``update-ref -d``, ``gc --prune``,
    ``rm -rf .git``) reaches them, and the user's repository is never written to. All git
    runs go through :mod:`harnesses.vcs` (no hooks, filters, fsmonitor, textconv...).
    Checkpoints are read back from the store's refs, so they survive a restart. All methods
    run git off the event loop (``asyncio.to_thread``).
    """

    def __init__(self, workspace: Path, *, data_dir: Path | None = None) -> None:
        """Args:
        workspace: the directory to snapshot.
        data_dir: where checkpoint stores live; defaults to the platform data dir
            (``<user data>/tandem/checkpoints``).

        Raises:
            ValueError: ``workspace`` is not a directory.
        """
        workspace = Path(workspace)
        if not workspace.is_dir():
            raise ValueError(f"workspace {str(workspace)!r} is not a directory")
        self.workspace = Path(os.path.realpath(workspace))
        self._data_dir = data_dir
        self._backend: GitBackend | None = None
        self._lock = threading.Lock()

    @property
    def location(self) -> Path:
        """The store's path (``<data_dir>/<name>-<hash>.git``; created on first use)."""
        return store_path(self.workspace, self._data_dir)

    # -- public async API -----------------------------------------------------------------

    async def create(self, label: str, *, turn: int | None = None) -> Checkpoint:
        """Snapshot the working tree now.

        Returns:
            The new checkpoint (its parent is the previous checkpoint, or ``HEAD``).

        Raises:
            CheckpointError: git failed.
        """
        return await self._call(self._create, label, turn, "checkpoint", None)

    async def ensure(self, label: str, *, turn: int | None = None) -> Checkpoint:
        """The latest checkpoint if the working tree still equals it, else a new one."""
        return await self._call(self._ensure, label, turn)

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
        """Make the working tree equal to ``checkpoint`` (ignored files and ``.git`` untouched).

        A ``pre-restore`` checkpoint of the current state is taken first, so the restore can
        be undone with :meth:`undo_restore`. Files created since the snapshot are removed,
        modified and deleted ones are written back byte for byte (with their mode). An
        ignored file at a path the snapshot needs is left alone (logged).

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
        tree: str | None = None,
    ) -> Checkpoint:
        g = self._git
        if tree is None:
            tree = g.snapshot_tree()
        latest = self._latest()
        parent = latest.commit if latest else None
        base, base_listing = g.base_listing()
        if parent:
            touched = g.run(
                "diff-tree", "-r", "-z", "--no-renames", "--name-only", f"{parent}^{{tree}}", tree
            )
            files = tuple(sorted(p for p in touched.split("\0") if p))
        else:
            # relative to the user's HEAD, by comparing (mode, blob id) per path
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
        meta = {
            "schema": SCHEMA,
            "id": cid,
            "created_ns": created_ns,
            "turn": turn,
            "kind": kind,
            "restored_to": restored_to,
            "files_touched": list(files),
            "base": base,
            "parts": {"worktree": "tree"},
        }
        message = f"{label}\n\n{_META_KEY}{json.dumps(meta, separators=(',', ':'))}\n"
        args = ["commit-tree", "--no-gpg-sign", tree, "-F", "-"]
        if parent:
            args[3:3] = ["-p", parent]
        commit = g.run(*args, stdin=message.encode("utf-8"), identity=True)
        ref = REF_PREFIX + cid
        g.run("update-ref", "-m", "tandem checkpoint", ref, commit, "")
        return Checkpoint(
            id=cid,
            ref=ref,
            commit=commit,
            created_at=now,
            turn=turn,
            label=label,
            files_touched=files,
            kind="pre-restore" if kind == "pre-restore" else "checkpoint",
            restored_to=restored_to,
            base=base,
        )

    def _ensure(self, label: str, turn: int | None) -> Checkpoint:
        tree = self._git.snapshot_tree()
        latest = self._latest()
        if latest is not None and self._git.rev(f"{latest.commit}^{{tree}}") == tree:
            return latest
        return self._create(label, turn, "checkpoint", None, tree)

    def _list(self) -> _Checkpoints:
        out = self._git.run(
            "for-each-ref", "--format=%(objectname)%00%(refname)%00%(contents)%1e", REF_PREFIX
        )
        items: list[tuple[int, Checkpoint]] = []
        for record in out.split("\x1e"):
            record = record.lstrip("\n")
            if not record:
                continue
            commit, ref, message = record.split("\0", 2)
            parsed = _parse(commit, ref, message)
            if parsed is not None:
                items.append(parsed)
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
            return self._git.snapshot_tree()
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
        pre = self._create(f"before restore to {target.id}", None, "pre-restore", target.id)
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
        safe_writes = [rel for rel, added in writes if self._may_write(rel, added)]
        if safe_writes:
            g.refresh_rules()  # no smudge filter, no EOL conversion: byte for byte
            with g.temp_index(seed=False) as index:
                g.run("read-tree", f"{target.commit}^{{tree}}", index=index)
                payload = "\0".join(safe_writes).encode("utf-8", "surrogateescape")
                g.run("checkout-index", "-f", "-z", "--stdin", index=index, stdin=payload)
        return pre.id

    def _undo_restore(self) -> str:
        for item in reversed(self._list()):
            if item.kind == "pre-restore":
                return self._restore(item)
        raise CheckpointError("there is no restore to undo")

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

    def _may_write(self, rel: str, added: bool) -> bool:
        """Whether restore may (over)write ``rel``.

        ``added`` means the current snapshot has no such path; a file there anyway is not
        covered by the pre-restore checkpoint (it is ignored), so it is left alone.
        """
        path = self._inside(rel)
        if path is None:
            _log.warning("checkpoint restore: skipped a path outside the workspace")
            return False
        if path.is_dir() and not path.is_symlink():
            _log.warning("checkpoint restore: a directory is in the way of a snapshot file")
            return False
        if added and os.path.lexists(path):
            _log.warning("checkpoint restore: left an ignored file in place of a snapshot file")
            return False
        return True


def _parse(commit: str, ref: str, message: str) -> tuple[int, Checkpoint] | None:
    label, _, rest = message.partition("\n")
    meta: dict[str, object] | None = None
    for line in rest.splitlines():
        if line.startswith(_META_KEY):
            try:
                meta = json.loads(line[len(_META_KEY) :])
            except ValueError:
                meta = None
    if not isinstance(meta, dict):
        return None
    created_ns = int(meta.get("created_ns") or 0)  # type: ignore[call-overload]
    turn = meta.get("turn")
    kind: Literal["checkpoint", "pre-restore"] = (
        "pre-restore" if meta.get("kind") == "pre-restore" else "checkpoint"
    )
    restored = meta.get("restored_to")
    base = meta.get("base")
    files = meta.get("files_touched") or []
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
