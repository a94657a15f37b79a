"""Checkpoint records: the dataclasses, the metadata schema and its parsing from commits."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ._backend import GitBackend

__all__ = [
    "DEFAULT_RETENTION",
    "FILES_TOUCHED_KEPT",
    "META_KEY",
    "PARTS_PREFIX",
    "REF_PREFIX",
    "SCHEMA",
    "Checkpoint",
    "CheckpointError",
    "Retention",
    "meta_of",
    "parse",
    "parse_raw",
    "retention_from_settings",
    "state_meta",
]

REF_PREFIX = "refs/tandem/checkpoints/"
"""Namespace of the refs in the checkpoint store (never in the user's repository)."""
PARTS_PREFIX = "refs/tandem/parts/"

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

META_KEY = "tandem-checkpoint: "
"""What starts the metadata line (JSON) of a checkpoint commit's message."""
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


def meta_of(message: str) -> dict[str, Any] | None:
    meta: Any = None
    for line in message.splitlines():
        if line.startswith(META_KEY):
            try:
                meta = json.loads(line[len(META_KEY) :])
            except ValueError:
                meta = None
    return meta if isinstance(meta, dict) else None


def state_meta(g: GitBackend, cp: Checkpoint) -> tuple[object, ...]:
    """What besides the tree makes two checkpoints' states equal (index, refs, stash)."""
    message = g.run("cat-file", "commit", cp.commit).partition("\n\n")[2]
    meta = meta_of(message) or {}
    index = g.rev(f"{cp.commit}^1^{{tree}}") if "index" in cp.parts else None
    keys = ("head", "refs", "stash_log", "index_unmerged", "extra")
    return (index, *(json.dumps(meta.get(k), sort_keys=True) for k in keys))


def parse(commit: str, ref: str, message: str) -> tuple[int, Checkpoint] | None:
    label, _, rest = message.partition("\n")
    meta = meta_of(rest)
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


def parse_raw(raw: str) -> tuple[list[str], list[tuple[str, bool]]]:
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
