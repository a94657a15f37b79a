"""Capture and write back the repository parts of a checkpoint: index, refs, stash, config.

Capture only reads the user's repository (``ls-files``, ``for-each-ref``, ``cat-file``,
``pack-objects --stdout``, and the raw ``logs/refs/stash`` and ``config`` files as data);
everything is written into the checkpoint store. Write-back (a restore) copies the objects
the user's repository lacks, then sets refs with ``update-ref``, ``HEAD`` with
``symbolic-ref``, the stash and its reflog entry by entry (same committer, date and
message, so ``git stash list`` shows the same entries), and the index with ``read-tree``
into the user's index file. All through the door.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from harnesses.vcs import find_repo, run_git

from . import _parts
from ._backend import GitBackend
from ._incremental import settled

__all__ = ["capture_repo", "parts_refs", "write_back"]

_GITLINK = "160000"
_RECREATED = "tandem-recreated-git"
#: A restore that re-initialised a half-removed ``.git`` in place records here what was left.
_REMNANT = "tandem-repaired-git.json"


def capture_repo(g: GitBackend) -> tuple[str | None, dict[str, Any], list[str]]:
    """Copy the user's index, ref tips and stash entries into the store.

    Returns:
        ``(index tree or None, meta fields, object ids to keep reachable)``; all empty
        without a user repository.
    """
    repo = g.user_repo
    if repo is None:
        return None, {"repo": None}, []
    ws, store = g.workspace, g.git_dir
    merged: list[str] = []
    unmerged: list[str] = []
    blobs: list[str] = []
    for record in g.user_index_records():  # none without an index file (a fresh git init)
        header = record.partition("\t")[0]
        mode, oid, stage = header.split(" ")
        (merged if stage == "0" else unmerged).append(record)
        if mode != _GITLINK:
            blobs.append(oid)
    fresh = [oid for oid in blobs if oid not in g.present]  # the rest: copied earlier
    _parts.copy_objects(repo.git_dir, store, ws, fresh)
    payload = ("\0".join(merged) + "\0").encode("utf-8", "surrogateescape")
    index_tree = g.memo.get(("index", payload))
    if index_tree is None or index_tree not in g.present:
        # the same stage-0 records always make the same tree: written once per content
        with g.temp_index(seed=False) as index:
            if merged:
                g.run("update-index", "-z", "--index-info", index=index, stdin=payload)
            index_tree = g.run("write-tree", index=index)  # fails if a blob is missing
        g.memo.set(("index", payload), index_tree)
        g.present.add(index_tree)
    g.present.update(fresh)

    state = _read_refs(g, repo.git_dir)
    need = _parts.missing(store, ws, state.commits)
    objects = _parts.closure(repo.git_dir, ws, need) if need else []
    tags = [oid for name, oid in state.refs.items() if oid not in state.commits]
    _parts.copy_objects(repo.git_dir, store, ws, [*objects, *tags])
    _parts.write_shallow(store, ws, need)
    keep = [*state.commits, *tags, *blobs_of(unmerged)]
    config_blob = None
    with contextlib.suppress(OSError):
        data = (repo.git_dir / "config").read_bytes()
        config_blob = g.memo.get(("config", data))
        if config_blob is None or config_blob not in g.present:
            config_blob = g.run("hash-object", "-w", "--stdin", stdin=data)
            g.memo.set(("config", data), config_blob)
            g.present.add(config_blob)
        keep.append(config_blob)
    meta = {
        "repo": {"object_format": repo.object_format, "config": config_blob},
        "head": state.head,
        "refs": state.refs,
        "stash_log": state.stash_log,
        "index_unmerged": unmerged,
        "index_exists": (repo.git_dir / "index").exists(),
        "_head": (state.head_known, state.head_commit),
    }
    return index_tree, meta, keep


def _read_refs(g: GitBackend, git_dir: Path) -> _parts.RefsState:
    """:func:`._parts.read_refs`, or a copy of the last read while the files it reads are
    provably unchanged (:func:`._parts.refs_identity`, settled at the last read)."""
    taken = time.time_ns()
    seen = _parts.refs_identity(git_dir)
    memo = g.refs_memo
    if (
        seen is not None
        and memo is not None
        and memo[0] == (git_dir, seen)
        and all(settled(ident, memo[1]) for _, ident in seen)
    ):
        state = memo[2]
    else:
        state = _parts.read_refs(git_dir, g.workspace)
        g.refs_memo = None
        if seen is not None and _parts.refs_identity(git_dir) == seen:
            g.refs_memo = ((git_dir, seen), taken, state)
    return dataclasses.replace(
        state,
        refs=dict(state.refs),
        stash_log=list(state.stash_log),
        commits=list(state.commits),
    )


def blobs_of(records: list[str]) -> list[str]:
    """Blob ids of ``ls-files -s`` records (gitlinks left out)."""
    out = []
    for record in records:
        mode, oid, _stage = record.partition("\t")[0].split(" ")
        if mode != _GITLINK:
            out.append(oid)
    return out


def parts_refs(g: GitBackend, cid: str, keep: list[str], also: str = "") -> None:
    """Keep ``keep`` reachable in the store under ``refs/tandem/parts/<cid>/<n>``.

    Args:
        g: the backend; cid: the checkpoint id; keep: object ids.
        also: more ``update-ref --stdin`` lines for the same transaction (all or nothing).
    """
    lines = "".join(
        f"update refs/tandem/parts/{cid}/{n} {oid}\n" for n, oid in enumerate(dict.fromkeys(keep))
    )
    if lines or also:
        g.run("update-ref", "-m", "tandem checkpoint", "--stdin", stdin=(lines + also).encode())


def write_back(
    g: GitBackend,
    meta: dict[str, Any],
    index_tree: str | None,
    target_id: str,
    undone: dict[str, str] | None = None,
) -> None:
    """Make the user's repository hold ``meta``'s refs, stash and ``index_tree`` again.

    Refs created since the checkpoint are kept, except, on an undo, those the undone
    restore recreated (``undone``: ``name -> id`` it set), when they still point there.
    A checkpoint taken without a repository (``meta["repo"]`` null) removes a ``.git``
    only when an earlier restore recreated it (that restore is being undone).
    """
    ws, store = g.workspace, g.git_dir
    repo_meta = meta.get("repo")
    marker = store / _RECREATED
    if repo_meta is None:
        if "repo" in meta and (ws / ".git").is_dir() and not (ws / ".git").is_symlink():
            if _undo_repair(store, ws / ".git", target_id):
                g.user_repo = None
            elif marker.exists() and marker.read_text(encoding="utf-8").strip() == target_id:
                shutil.rmtree(ws / ".git")
                marker.unlink()
                g.user_repo = None
        return
    repo = find_repo(ws)
    if repo is None:
        dotgit = ws / ".git"
        remnant = _remnant(dotgit)
        if os.path.lexists(dotgit) and remnant is None:
            raise _parts_error("the workspace's .git is not a repository git can open")
        fmt = str(repo_meta.get("object_format") or "sha1")
        if remnant is not None:  # e.g. the sandbox kept config and hooks of an rm -rf .git
            _record_repair(store, dotgit, remnant, meta.get("_pre_restore_id", ""))
        run_git(["init", "-q", "--template=", f"--object-format={fmt}", str(ws)], cwd=ws)
        config = repo_meta.get("config")
        if config:
            data = run_git(["cat-file", "blob", config], cwd=ws, git_dir=store).stdout
            (dotgit / "config").write_bytes(data)
        repo = find_repo(ws)
        if repo is None:
            raise _parts_error("could not recreate the repository")
        if remnant is None:
            marker.write_text(meta.get("_pre_restore_id", "") + "\n", encoding="utf-8")
    g.user_repo = repo
    git_dir = repo.git_dir
    refs: dict[str, str] = dict(meta.get("refs") or {})
    commits: list[str] = []
    entries = [line.split(" ", 2)[1] for line in meta.get("stash_log") or []]
    table = _parts.parents_of(store, ws, entries)
    for entry in entries:
        commits.append(entry)
        commits.extend(table.get(entry, []))
    commits.extend(oid for oid in refs.values())
    head = meta.get("head")
    if head and not str(head).startswith("ref: "):
        commits.append(head)
    need = _parts.missing(git_dir, ws, commits)
    objects: list[str] = []
    for oid in need:
        kind = run_git(["cat-file", "-t", oid], cwd=ws, git_dir=store).text.strip()
        objects.extend(_parts.closure(store, ws, [oid]) if kind == "commit" else [oid])
    if index_tree:
        objects.append(index_tree)
        objects.extend(_parts.tree_objects(store, ws, index_tree))
    objects.extend(blobs_of(list(meta.get("index_unmerged") or [])))
    _parts.copy_objects(store, git_dir, ws, objects)
    _parts.write_shallow(git_dir, ws, [c for c in need if _is_commit(store, ws, c)])

    current = _parts.read_refs(git_dir, ws)
    updates = [
        f"update {name} {oid}\n"
        for name, oid in sorted(refs.items())
        if name != "refs/stash" and current.refs.get(name) != oid
    ]
    updates += [
        f"delete {name} {oid}\n"
        for name, oid in sorted((undone or {}).items())
        if name not in refs and name != "refs/stash" and current.refs.get(name) == oid
    ]
    if updates:
        run_git(["update-ref", "--stdin"], cwd=ws, git_dir=git_dir, stdin="".join(updates).encode())
    if head and head != current.head:
        if str(head).startswith("ref: "):
            run_git(["symbolic-ref", "HEAD", head[5:]], cwd=ws, git_dir=git_dir)
        else:
            run_git(["update-ref", "--no-deref", "HEAD", head], cwd=ws, git_dir=git_dir)
    _parts.write_stash(git_dir, ws, list(meta.get("stash_log") or []), refs.get("refs/stash"))
    if index_tree is not None:
        _write_index(g, git_dir, index_tree, meta)


def _write_index(g: GitBackend, git_dir: Path, tree: str, meta: dict[str, Any]) -> None:
    ws = g.workspace
    now = run_git(["ls-files", "-s", "-z"], cwd=ws, git_dir=git_dir, work_tree=ws).text
    wanted_unmerged = list(meta.get("index_unmerged") or [])
    records = [r for r in now.split("\0") if r]
    current_unmerged = [r for r in records if r.partition("\t")[0].split(" ")[2] != "0"]
    with g.temp_index(seed=False) as index:
        merged = [r for r in records if r not in current_unmerged]
        if merged:
            payload = ("\0".join(merged) + "\0").encode("utf-8", "surrogateescape")
            g.run("update-index", "-z", "--index-info", index=index, stdin=payload)
        same = g.run("write-tree", "--missing-ok", index=index) == tree
    if same and current_unmerged == wanted_unmerged:
        return
    if not meta.get("index_exists", True) and not wanted_unmerged and not _tree_entries(g, tree):
        (git_dir / "index").unlink(missing_ok=True)
        return
    run_git(["read-tree", tree], cwd=ws, git_dir=git_dir, index_file=git_dir / "index")
    if wanted_unmerged:
        payload = ("\0".join(wanted_unmerged) + "\0").encode("utf-8", "surrogateescape")
        run_git(
            ["update-index", "-z", "--index-info"],
            cwd=ws,
            git_dir=git_dir,
            work_tree=ws,
            stdin=payload,
        )


def _tree_entries(g: GitBackend, tree: str) -> bool:
    return bool(g.run("ls-tree", tree))


def _is_commit(store: Path, ws: Path, oid: str) -> bool:
    return run_git(["cat-file", "-t", oid], cwd=ws, git_dir=store).text.strip() == "commit"


def _parts_error(message: str) -> Exception:
    from .store import CheckpointError

    return CheckpointError(message)


def _remnant(dotgit: Path) -> list[str] | None:
    """The entries of a ``.git`` folder that git cannot open (no ``HEAD`` or no objects: what
    ``rm -rf .git`` leaves when the sandbox pins the folder and keeps ``config`` and
    ``hooks`` read-only), or ``None`` when ``dotgit`` is not such a folder."""
    if dotgit.is_symlink() or not dotgit.is_dir():
        return None
    names = sorted(entry.name for entry in os.scandir(dotgit))
    if "HEAD" in names and "objects" in names:
        return None  # a repository git refuses for another reason: not ours to touch
    return names


def _record_repair(store: Path, dotgit: Path, names: list[str], target_id: str) -> None:
    """Remember what a half-removed ``.git`` held before a restore re-initialises it in
    place, so that undoing the restore leaves exactly that again."""
    config = dotgit / "config"
    record = {
        "target": target_id,
        "entries": names,
        "config": config.read_bytes().hex() if config.is_file() else None,
    }
    (store / _REMNANT).write_text(json.dumps(record), encoding="utf-8")


def _undo_repair(store: Path, dotgit: Path, target_id: str) -> bool:
    """Undo an in-place re-initialisation recorded by :func:`_record_repair` when
    ``target_id`` is the state it replaced: what the restore added goes, the remnant's own
    entries stay, its ``config`` gets its bytes back. Returns whether it did."""
    path = store / _REMNANT
    if not path.is_file():
        return False
    record = json.loads(path.read_text(encoding="utf-8"))
    if record.get("target") != target_id:
        return False
    kept = set(record.get("entries") or [])
    for entry in os.scandir(dotgit):
        if entry.name not in kept:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
    config = record.get("config")
    if config is not None:
        (dotgit / "config").write_bytes(bytes.fromhex(config))
    path.unlink()
    return True
