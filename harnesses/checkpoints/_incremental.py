"""A next checkpoint's snapshot from the kept stat cache: one walk, sizes only of what changed.

The store's index (its stat cache, :meth:`GitBackend.save_cache`) says which files changed
since the last snapshot: the walk (:func:`._walk.walk`: ``git diff-files`` and ``git ls-files
--others --exclude-standard`` side by side) against a copy of it lists the changed, removed
and new files, by git's own rules (a racily clean entry, one whose mtime is not older than
the index file's, is compared by content; the copy keeps the index file's mtime). Only those
are ``lstat``-ed for the size cap; the sizes of the others are the ones recorded last time
(their stat data still matches, size included). ``git update-index --add --remove --replace
--stdin`` then hashes only those paths (no second walk), and ``write-tree`` writes the tree.
An entry whose stat data alone changed is refreshed too, and left out of the changed paths
when its bytes still hash to its blob id (:func:`._walk.same_blob`).

Git compares whole seconds of ctime (``USE_NSEC`` is off in the usual builds) and takes
an entry whose mtime is older than the index file as clean, so a file hashed in second
*s*, then rewritten in *s* at the same size with its older mtime put back (``cp -p``,
``tar x``, ``touch -d``, a fixed build mtime) would keep git's view of it. So the kept
index's mtime is lowered to the oldest mtime among entries whose ctime falls in the second
the snapshot ran (:func:`guard_racy`): git then compares those by content next time, as
its own racy-git rule does for an entry as new as the index. The guard lasts while that
second can still see a rewrite; an mtime git cannot use for this (before 1970-01-01
00:00:01) drops the kept index instead (the next snapshot starts from an empty one).

The shortcut holds only while its assumptions do, otherwise the caller takes the full path
(:meth:`GitBackend.snapshot_tree`, which walks and sizes everything):

* the store's index file is the one this process saved (same inode, size, mtime, ctime);
* no ignored file is to be held besides the user's tracked-but-ignored ones (no ``extra``);
* the ignore rules are unchanged: the store's ``info/exclude`` text, its ``config`` file and
  every ``.gitignore`` in a folder holding an index entry have the identity they had
  (``lstat``: inode, size, mode, mtime, ctime) and none had been touched within
  :data:`RACY_NS` of that record (a rewrite in the same clock tick could keep every field).
  Which index entries the rules match depends only on those files (git reads a folder's
  ``.gitignore`` only for paths below it), so with them unchanged the ignored entries are
  still exactly the held ones, and no ``ls-files --cached --ignored`` pass is needed.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harnesses.vcs import GitError

from ._cap import CapPlan, plan_sizes
from ._nested import has_head_commit
from ._walk import Entry, same_blob, walk

if TYPE_CHECKING:
    from ._backend import GitBackend

__all__ = [
    "RACY_NS",
    "SPLIT_BYTES_PER_ENTRY",
    "SPLIT_MAX_BYTES",
    "Risk",
    "StatCache",
    "build_cache",
    "file_identity",
    "guard_racy",
    "incremental_snapshot",
    "rules_identity",
    "settled",
]

RACY_NS = 1_000_000_000
"""A rule file changed less than this long (ns) before it was recorded is not trusted."""

_GITLINK = "160000"

SPLIT_MAX_BYTES = 64 * 1024
SPLIT_BYTES_PER_ENTRY = 8
"""A snapshot's split index file (``STORE_TUNING``) larger than both ``SPLIT_MAX_BYTES``
and ``SPLIT_BYTES_PER_ENTRY`` per entry (about a tenth of the entries) is folded into a
new shared index by the next ``update-index``: git writes a new shared file on its own
only for added entries, while refreshed ones (racily clean entries, for one) stay in the
split file for good."""


def file_identity(path: str) -> tuple[int, ...] | None:
    """``(device, inode, size, mode, mtime ns, ctime ns)`` of ``path`` (not followed), or
    ``None`` when it does not exist; ``(-1,)`` when it cannot be read (never equal)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except OSError:
        return (-1,)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns)


def settled(ident: tuple[int, ...] | None, taken_ns: int) -> bool:
    """Whether an identity recorded at ``taken_ns`` proves the file unchanged later: it
    had not been touched within :data:`RACY_NS` before (``None``, no file, always does)."""
    if ident is None:
        return True
    if len(ident) < 6:
        return False
    return max(ident[4], ident[5]) < taken_ns - RACY_NS


_SLACK_NS = 50_000_000
"""File times come from the kernel's coarse clock, a tick behind ``time.time_ns()``."""


Risk = dict[str, tuple[int, int]]
"""Entries a same-second rewrite could hide: ``path -> (mtime ns, ctime second)``."""


def _risk(risk: Risk, rel: str, st: os.stat_result, started_ns: int) -> None:
    """Add ``rel`` to ``risk`` when a rewrite could keep git's view of it: a regular file
    whose ctime falls in the second the snapshot ran (or later); else drop it."""
    if stat.S_ISREG(st.st_mode) and st.st_ctime_ns >= (started_ns - _SLACK_NS) // 10**9 * 10**9:
        risk[rel] = (st.st_mtime_ns, st.st_ctime_ns // 10**9)
    else:
        risk.pop(rel, None)


def guard_racy(index: Path, risk: Risk) -> bool:
    """Lower ``index``'s mtime to the oldest second among ``risk``'s mtimes (see the
    module doc) when that is an earlier second than its own (in the same one git already
    compares those entries by content).

    Args:
        index: the snapshot index about to be kept.
        risk: the entries at risk (:data:`Risk`).

    Returns:
        ``False`` when git could not use that mtime (before 1 s after the epoch, where git
        turns its racy check off): the caller must not keep ``index``.
    """
    if not risk:
        return True
    floor = min(mtime for mtime, _ in risk.values()) // 10**9 * 10**9
    if floor < 10**9:
        return False
    st = os.stat(index)
    if floor < st.st_mtime_ns // 10**9 * 10**9:  # git compares whole seconds
        os.utime(index, ns=(st.st_atime_ns, floor))
    return True


def rules_identity(workspace: Path, dirs: Iterable[str]) -> dict[str, tuple[int, ...] | None]:
    """``folder -> identity of its .gitignore`` (``""``: the top level), see
    :func:`file_identity`."""
    base = os.fspath(workspace)
    return {d: file_identity(os.path.join(base, d, ".gitignore")) for d in dirs}


def _parents(rel: str) -> list[str]:
    out = [""]
    head, sep, _tail = rel.rpartition("/")
    while sep:
        out.append(head)
        head, sep, _tail = head.rpartition("/")
    return out


@dataclass(slots=True)
class StatCache:
    """What this process knows about the store's kept index (valid while it is unchanged).

    Attributes:
        index_identity: :func:`file_identity` of ``<store>/index`` when it was saved.
        sizes: every non-gitlink entry of the index -> its size in bytes on disk.
        gitlinks: the gitlink entries (nested repositories).
        held_ignored: entries the ignore rules match (the user's tracked-but-ignored
            files held, and ignored files held for a destructive command).
        exclude_text: the store's ``info/exclude`` the rules were evaluated with.
        config_identity: :func:`file_identity` of the store's ``config``.
        dirs: every folder holding an entry (and their parents), ``""`` included.
        rules: :func:`rules_identity` over ``dirs``.
        rules_taken_ns: when ``rules`` was recorded (``time.time_ns()``).
        tree: the tree the index was written as (``write-tree`` just before it was saved;
            ``""``: not known).
        racy: the entries :func:`guard_racy` guarded the kept index for (:data:`Risk`).
    """

    index_identity: tuple[int, ...] | None
    sizes: dict[str, int]
    gitlinks: set[str]
    held_ignored: frozenset[str]
    exclude_text: str
    config_identity: tuple[int, ...] | None
    dirs: set[str] = field(default_factory=set)
    rules: dict[str, tuple[int, ...] | None] = field(default_factory=dict)
    rules_taken_ns: int = 0
    tree: str = ""
    racy: Risk = field(default_factory=dict)

    def rules_trusted(self, workspace: Path, exclude_text: str, config: str) -> bool:
        """Whether the ignore rules are provably the ones recorded (see the module doc)."""
        if exclude_text != self.exclude_text:
            return False
        now_config = file_identity(config)
        if now_config != self.config_identity or not settled(now_config, self.rules_taken_ns):
            return False
        taken = self.rules_taken_ns
        if not all(settled(ident, taken) for ident in self.rules.values()):
            return False
        return rules_identity(workspace, self.rules) == self.rules

    def record_rules(self, workspace: Path, taken_ns: int) -> None:
        """Record the rule files' identities for :attr:`dirs` as of ``taken_ns``."""
        self.rules = rules_identity(workspace, self.dirs)
        self.rules_taken_ns = taken_ns


def build_cache(
    g: GitBackend,
    index: Path,
    plan: CapPlan,
    held: Iterable[str],
    started_ns: int,
    tree: str = "",
) -> StatCache | None:
    """The :class:`StatCache` of a freshly written snapshot index (the full path's end).

    Args:
        g: the backend; index: the snapshot's index file (before it is saved).
        plan: the cap plan it was built with (its sizes are reused).
        held: the ignored entries it holds.
        started_ns: when the snapshot started (rule files touched since are not trusted).
        tree: the tree ``index`` was written as.

    Every entry is ``lstat``-ed: the ones a same-second rewrite could hide are guarded
    (:func:`guard_racy`, applied to ``index``).

    Returns:
        The cache, or ``None`` when the index cannot be listed, or must not be kept (then
        it and the store's kept index are removed).
    """
    try:
        out = g.run("ls-files", "-z", "-s", index=index, strip=False)
    except GitError:
        return None
    known = dict(plan.included)
    base = os.fspath(g.workspace) + os.sep
    sizes: dict[str, int] = {}
    gitlinks: set[str] = set()
    dirs: set[str] = {""}
    risk: Risk = {}
    for record in out.split("\0"):
        if not record:
            continue
        header, _, rel = record.partition("\t")
        dirs.update(_parents(rel))
        if header.startswith(_GITLINK):
            gitlinks.add(rel)
            continue
        size = known.get(rel)
        try:
            st = os.lstat(base + rel)
        except OSError:
            size = 0 if size is None else size
        else:
            size = st.st_size if size is None else size
            _risk(risk, rel, st, started_ns)
        sizes[rel] = size
    if not guard_racy(index, risk):  # not kept: the next snapshot starts from empty
        index.unlink(missing_ok=True)
        (g.git_dir / "index").unlink(missing_ok=True)
        return None
    cache = StatCache(
        index_identity=None,
        sizes=sizes,
        gitlinks=gitlinks,
        held_ignored=frozenset(held),
        exclude_text=g.exclude_text,
        config_identity=file_identity(os.fspath(g.git_dir / "config")),
        dirs=dirs,
        tree=tree,
        racy=risk,
    )
    cache.record_rules(g.workspace, started_ns)
    return cache


def incremental_snapshot(
    g: GitBackend, cache: StatCache, cap_bytes: int
) -> tuple[str, CapPlan, StatCache, frozenset[str]] | None:
    """The snapshot tree from the kept index and what changed since (see the module doc).

    Args:
        g: the backend (rules already refreshed without skip patterns).
        cache: what the last snapshot left.
        cap_bytes: the size cap (bytes) on untracked files.

    Returns:
        ``(tree, plan, the new cache, changed)``, or ``None`` when the shortcut does not
        apply or git refused it (the caller then takes the full path). ``changed`` holds
        the paths whose entry differs between ``cache.tree`` and ``tree``, what
        ``git diff-tree -r --name-only`` would list: the walk lists every path whose
        index entry ``update-index`` may change, those whose stat data alone changed are
        kept out when their bytes still hash to the recorded blob id (same mode, same
        size), and ``write-tree`` writes the index as it is. A path that appears, vanishes
        or is rewritten between the walk and that check may be listed in error (a race,
        reported as touched); only a file rewritten and then put back to its old bytes in
        that window could be missed.
    """
    ws = g.workspace
    started_ns = time.time_ns()
    if file_identity(os.fspath(g.git_dir / "index")) != cache.index_identity:
        return None
    if not cache.rules_trusted(ws, g.exclude_text, os.fspath(g.git_dir / "config")):
        return None
    tracked = g.user_tracked()
    keep = g.tracked_ignored_files()
    sizes = dict(cache.sizes)
    gitlinks = set(cache.gitlinks)
    dirs = set(cache.dirs)
    base = os.fspath(ws) + os.sep
    prefixes = g.tandem_prefixes()
    if any(not os.path.lexists(f"{base}{rel}/.git") for rel in gitlinks):
        return None  # a nested repository's .git vanished: git would keep its gitlink
    with g.temp_index(seed=True) as index:
        if not index.exists():
            return None
        try:
            entries, others = walk(g, index)
        except (GitError, ValueError):
            return None
        update: list[str] = []
        fresh: set[str] = set()
        unsure: dict[str, Entry] = {}  # only the stat data may have changed
        risk = {  # a guard holds while its second (or the one before) can see a rewrite
            rel: seen for rel, seen in cache.racy.items() if seen[1] >= started_ns // 10**9 - 1
        }
        listed: dict[str, Entry | None] = {entry.path: entry for entry in entries}
        for rel in others:
            listed.setdefault(rel, None)
        for name, entry in listed.items():
            if name.startswith(prefixes):
                continue
            rel = name.rstrip("/")
            if name.endswith("/") and not has_head_commit(base + rel):
                continue  # a nested repository with no commit: not a gitlink yet, left out
            update.append(rel)
            try:
                st = os.lstat(base + rel)
            except OSError:  # removed (or its folder became a file)
                sizes.pop(rel, None)
                gitlinks.discard(rel)
                continue
            if stat.S_ISDIR(st.st_mode):  # a nested repository (gitlink), or a file
                sizes.pop(rel, None)  # that became a folder (update-index drops it)
                if entry is not None and entry.new_mode == _GITLINK and rel not in gitlinks:
                    # a file that became a nested repository: update-index removes the
                    # file's entry at the first mention, adds the gitlink at the second
                    update.append(rel)
                    gitlinks.add(rel)
                elif name.endswith("/") or rel in gitlinks:
                    gitlinks.add(rel)
                continue
            gitlinks.discard(rel)
            if entry is not None and entry.maybe_same and st.st_size == sizes.get(rel):
                unsure[rel] = entry
            sizes[rel] = st.st_size
            fresh.add(rel)
            _risk(risk, rel, st, started_ns)
        for rel in keep - cache.held_ignored:  # newly tracked-but-ignored: held from now on
            if rel not in fresh:
                try:
                    st = os.lstat(base + rel)
                except OSError:
                    continue
                sizes[rel] = st.st_size
                _risk(risk, rel, st, started_ns)
                update.append(rel)
        held = frozenset(keep)
        drop = [rel for rel in cache.held_ignored - held if rel in sizes]
        for rel in drop:  # held last time, no longer to be: out of the snapshot
            sizes.pop(rel, None)
        cand = (
            {rel: size for rel, size in sizes.items() if rel not in tracked and rel not in held}
            if tracked or held
            else sizes
        )
        if sum(cand.values()) <= cap_bytes:  # all fit (the usual case): no sizes sorted
            plan = CapPlan(tuple(cand.items()), (), cap_bytes)
        else:
            plan = plan_sizes([(size, rel) for rel, size in cand.items()], cap_bytes)
        skip = {rel for rel, _ in plan.skipped}
        drop += [rel for rel in skip if rel in cache.sizes]  # grew past the cap: dropped
        gone = set(drop) | skip
        update = [rel for rel in update if rel not in gone]
        for rel in skip:
            sizes.pop(rel, None)
        for rel in update:
            dirs.update(_parents(rel))
        try:
            if update:
                # sorted: a file that became a folder comes before the files below it (its
                # entry removed first; once ``--replace`` has dropped it, ``update-index``
                # refuses the folder)
                update.sort()
                cmd = ["update-index", "--add", "--remove", "--replace"]
                if index.stat().st_size > max(SPLIT_MAX_BYTES, SPLIT_BYTES_PER_ENTRY * len(sizes)):
                    cmd.append("--split-index")  # every entry back into a new shared index
                g.paths_stdin(cmd, update, index)
            if drop:
                g.paths_stdin(["update-index", "--force-remove"], drop, index)
            tree = g.run("write-tree", index=index)
        except GitError:
            return None
        # hashed after update-index: a file rewritten in between is named (a change is
        # never missed for a race; only a rewrite back to the old bytes could be)
        same = {rel for rel, entry in unsure.items() if same_blob(base + rel, entry)}
        changed = frozenset(
            rel
            for rel in (*(rel for rel in update if rel not in same), *drop)
            if rel in sizes or rel in gitlinks or rel in cache.sizes or rel in cache.gitlinks
        )
        if not guard_racy(index, risk):
            (g.git_dir / "index").unlink(missing_ok=True)  # next time: from an empty index
            return None
        g.save_cache(index)
    new = StatCache(
        index_identity=file_identity(os.fspath(g.git_dir / "index")),
        sizes=sizes,
        gitlinks=gitlinks,
        held_ignored=held,
        exclude_text=cache.exclude_text,
        config_identity=cache.config_identity,
        dirs=dirs,
        rules={**cache.rules, **rules_identity(ws, dirs - cache.dirs)},
        rules_taken_ns=cache.rules_taken_ns,
        tree=tree,
        racy=risk,
    )
    if dirs != cache.dirs:
        new.rules_taken_ns = min(cache.rules_taken_ns, started_ns)
    return tree, plan, new, changed
