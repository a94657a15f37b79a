"""The walk of a next checkpoint: what changed since the kept index, in two listings at once.

Two git listings against the kept index run side by side, since each is bound by a
different system call:

* ``git diff-files -z --ignore-submodules=dirty`` (raw output) names every entry whose
  ``lstat`` data no longer matches the index (modified, deleted, type-changed), with its
  recorded mode and blob id. It ``lstat``-s the entries from git's parallel preload threads
  (``core.preloadIndex``), and compares by content the racily clean ones (an entry whose
  mtime is not older than the index file's), as git's racy-git rule does. Nested
  repositories (gitlinks) count as changed when their ``HEAD`` moved; their work trees are
  not looked at (no git process starts inside them).
* ``git ls-files -z --others --exclude-standard`` names the new files, by git's ignore
  rules (``readdir`` only).

Unlike ``ls-files --modified``, ``diff-files`` names an entry whose stat data changed
while its content did not (``touch``, a rewrite with the same bytes). Those entries still
go to ``update-index`` (so their stat data is refreshed and they are not named again), and
:func:`same_blob` tells them apart from real changes afterwards: the store's
``info/attributes`` turns every conversion off, so an entry's blob id is the hash of the
file's bytes (a symbolic link's: its target) as they are on disk.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from ._backend import GitBackend

__all__ = ["Entry", "beside", "same_blob", "walk"]

_T = TypeVar("_T")

_CHUNK = 1 << 20
_REGULAR = frozenset({"100644", "100755"})
_SYMLINK = "120000"


@dataclass(frozen=True, slots=True)
class Entry:
    """One record of ``git diff-files --raw``.

    Attributes:
        path: the entry's path (relative to the work tree).
        old_mode: its mode in the index (octal text, ``"100644"``).
        new_mode: the mode its file has now (``"000000"``: gone).
        old_id: its blob id in the index.
        status: ``M`` (modified), ``D`` (deleted), ``T`` (type changed), ``U`` (unmerged).
    """

    path: str
    old_mode: str
    new_mode: str
    old_id: str
    status: str

    @property
    def maybe_same(self) -> bool:
        """Whether only the stat data may have changed (same mode, a file or a link)."""
        return (
            self.status == "M"
            and self.old_mode == self.new_mode
            and (self.old_mode in _REGULAR or self.old_mode == _SYMLINK)
        )


def _parse(out: str) -> list[Entry]:
    """The records of ``diff-files -z`` raw output (``:<mode> <mode> <id> <id> <X>\\0<path>``)."""
    fields = out.split("\0")
    entries: list[Entry] = []
    for n in range(0, len(fields) - 1, 2):
        head, path = fields[n], fields[n + 1]
        parts = head.removeprefix(":").split(" ")
        if len(parts) != 5 or not path:
            raise ValueError(f"unexpected diff-files record {head!r}")
        old_mode, new_mode, old_id, _new_id, status = parts
        entries.append(Entry(path, old_mode, new_mode, old_id, status[:1]))
    return entries


def beside(fn: Callable[[], _T]) -> Callable[[], _T]:
    """Start ``fn`` on a thread now; the returned call waits for it and gives its result
    (or raises what it raised). Call it on every path (``finally``): the thread shares
    the caller's objects."""
    box: list[_T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=run, name="tandem-checkpoint-beside", daemon=True)
    thread.start()

    def result() -> _T:
        thread.join()
        if failed:
            raise failed[0]
        return box[0]

    return result


def walk(g: GitBackend, index: Path) -> tuple[list[Entry], list[str]]:
    """The entries whose stat data changed and the new files, against ``index``.

    Returns:
        ``(entries, others)``: the ``diff-files`` records (see :class:`Entry`) and the
        paths ``ls-files --others`` lists (a nested repository as ``"dir/"``).

    Raises:
        harnesses.vcs.GitError: either listing failed.
        ValueError: ``diff-files`` printed a record this parser does not know.
    """
    others = beside(
        lambda: g.run("ls-files", "-z", "--others", "--exclude-standard", index=index, strip=False)
    )
    try:
        raw = g.run("diff-files", "-z", "--ignore-submodules=dirty", index=index, strip=False)
    finally:
        listed = others()
    return _parse(raw), [p for p in listed.split("\0") if p]


def same_blob(path: str, entry: Entry) -> bool:
    """Whether the file at ``path`` hashes to ``entry.old_id`` with ``entry.old_mode``'s
    kind (git's blob id: SHA-1, or SHA-256 for a 64-digit id, over ``blob <size>\\0`` and
    the bytes). ``False`` when it cannot be read or changes while it is read."""
    digest = hashlib.sha1 if len(entry.old_id) == 40 else hashlib.sha256
    try:
        if entry.old_mode == _SYMLINK:
            target = os.readlink(os.fsencode(path))
            h = digest(b"blob %d\0" % len(target))
            h.update(target)
            return h.hexdigest() == entry.old_id
        # not followed, never blocking: a file swapped for a link or a FIFO since the
        # listing is no match (and nothing outside the work tree is read)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return False
            size = st.st_size
            h = digest(b"blob %d\0" % size)
            seen = 0
            while chunk := f.read(_CHUNK):
                seen += len(chunk)
                h.update(chunk)
    except OSError:
        return False
    return seen == size and h.hexdigest() == entry.old_id
