"""The editor's one confined writer: every file it reads, writes, deletes or moves, by dir fd."""

from __future__ import annotations

import errno
import os
import secrets
import stat
import weakref
from pathlib import Path
from types import TracebackType

from .confinement import ConfinementError, is_git_name, split_model_path

__all__ = ["ConfinedEntry", "ConfinedWorkspace", "default_file_mode"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_SYMLINKS = 40  # Linux's MAXSYMLINKS (path_resolution(7))
_NO_HARDLINK = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK})
_GONE = "its directory was removed or replaced while it was being written"


def default_file_mode() -> int:
    """Permission bits a new file gets from ``open()`` under the current umask (e.g. 0o644)."""
    umask = 0o022
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    umask = int(line.split()[1], 8)
                    break
    except OSError:
        pass
    return 0o666 & ~umask


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a fifo"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _lstat(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None


class ConfinedWorkspace:
    """The workspace root, opened once (``O_DIRECTORY|O_NOFOLLOW``), and a walker below it.

    Every path is walked component by component with ``os.open(name, O_DIRECTORY|O_NOFOLLOW,
    dir_fd=parent)``; a symlink on the way (or at the leaf, when followed) is read with
    ``readlink`` and its target walked the same way, so it is followed only while it stays
    inside the workspace and out of ``.git`` (the semantics of ``realpath`` confinement,
    without its check-then-use race: a directory swapped for a symlink mid-walk fails the
    ``O_NOFOLLOW`` open instead of being followed). Writes go through :class:`ConfinedEntry`.

    Use as a context manager or call :meth:`close`; the fd is also closed when the object is
    collected.
    """

    def __init__(self, workspace: Path) -> None:
        """Args:
        workspace: the workspace directory (symlinks in it are resolved once, here).

        Raises:
            OSError: the workspace cannot be opened as a directory.
        """
        self.root = Path(os.path.realpath(workspace))
        self._given = os.path.normpath(os.path.abspath(workspace))
        self._fd = os.open(self.root, _DIR_FLAGS)
        self._close = weakref.finalize(self, os.close, self._fd)

    def close(self) -> None:
        """Close the root fd (idempotent)."""
        self._close()

    def __enter__(self) -> ConfinedWorkspace:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def locate(self, path: str, *, follow_leaf: bool = True) -> ConfinedEntry:
        """Walk ``path`` and return an entry holding its (deepest existing) parent dir fd.

        Args:
            path: a workspace-relative path as the model wrote it (see
                :func:`~harnesses.editor.confinement.split_model_path`).
            follow_leaf: follow a symlink at the last component (content reads and writes);
                ``False`` when the link itself is the object (delete, a move's destination).

        Returns:
            A :class:`ConfinedEntry`; close it (it is a context manager).

        Raises:
            ConfinementError: the path is refused, a symlink leads outside the workspace or
                into ``.git``, a component is not a directory, or the tree changed mid-walk.
            OSError: other failures opening a directory (e.g. ``EACCES``).
        """
        if not self._close.alive:
            raise ConfinementError("Refused: the editor's workspace handle is closed.")
        parts = list(split_model_path(path))
        self._check_root(path)
        stack = [os.dup(self._fd)]
        rel: list[str] = []
        hops = 0
        try:
            while parts:
                name = parts.pop(0)
                if name == "..":
                    if not rel:
                        raise ConfinementError(
                            f"Refused {path!r}: a symlink in the path leads outside the workspace."
                        )
                    os.close(stack.pop())
                    rel.pop()
                    continue
                if is_git_name(name):
                    raise ConfinementError(
                        f"Refused {path!r}: a symlink in the path leads into .git/, which is "
                        "never edited."
                    )
                leaf = not parts
                if leaf and not follow_leaf:
                    return ConfinedEntry(self, path, stack.pop(), (), name, [*rel, name])
                info = _lstat(name, stack[-1])
                if info is not None and stat.S_ISLNK(info.st_mode):
                    hops += 1
                    if hops > _MAX_SYMLINKS:
                        raise ConfinementError(f"Refused {path!r}: too many levels of symlinks.")
                    target = _readlink(path, name, stack[-1])
                    parts[:0] = self._link_parts(path, target, stack, rel, leaf)
                    continue
                if leaf:
                    return ConfinedEntry(self, path, stack.pop(), (), name, [*rel, name])
                if info is None:
                    rest = [name, *parts]
                    if ".." in rest or any(is_git_name(part) for part in rest):
                        raise ConfinementError(
                            f"Refused {path!r}: a symlink in the path leads through a missing "
                            "directory to '..' or .git/."
                        )
                    return ConfinedEntry(
                        self, path, stack.pop(), tuple(rest[:-1]), rest[-1], rel + rest
                    )
                stack.append(_open_dir(path, name, stack[-1]))
                rel.append(name)
        finally:
            for fd in stack:
                os.close(fd)
        if rel:  # a symlink leaf whose target ends in ".." names a directory
            raise ConfinementError(f"{'/'.join(rel)} is a directory.")
        raise ConfinementError(f"Refused {path!r}: it names the workspace root, not a file.")

    def _check_root(self, path: str) -> None:
        try:
            now = os.stat(self.root)
        except OSError:
            now = None
        held = os.fstat(self._fd)
        if now is None or (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
            raise ConfinementError(
                f"Refused {path!r}: the workspace folder was moved or replaced since it was opened."
            )

    def _link_parts(
        self, path: str, target: str, stack: list[int], rel: list[str], leaf: bool
    ) -> list[str]:
        """The components a symlink's ``target`` expands to; an absolute target restarts
        the walk at the root (``stack``/``rel`` are reset in place) or is refused."""
        where = "it is a symlink that leads" if leaf else "a symlink in the path leads"
        if not target:
            raise ConfinementError(f"Refused {path!r}: {where} nowhere (empty target).")
        if target.startswith("/"):
            norm = os.path.normpath(target)
            for prefix in (str(self.root), self._given):
                if norm == prefix or norm.startswith(prefix.rstrip("/") + "/"):
                    while len(stack) > 1:
                        os.close(stack.pop())
                    rel.clear()
                    return [p for p in norm[len(prefix) :].split("/") if p not in ("", ".")]
            raise ConfinementError(f"Refused {path!r}: {where} outside the workspace.")
        return [p for p in target.split("/") if p not in ("", ".")]


def _readlink(path: str, name: str, parent: int) -> str:
    try:
        return os.readlink(name, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOENT):  # no longer a symlink: a swap mid-walk
            raise ConfinementError(
                f"Refused {path!r}: a symlink in the path was replaced while it was being resolved."
            ) from None
        raise


def _open_dir(path: str, name: str, parent: int) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfinementError(
                f"Refused {path!r}: a directory in the path was replaced by a symlink while "
                "it was being opened."
            ) from None
        if exc.errno == errno.ENOTDIR:
            now = _lstat(name, parent)
            if now is not None and stat.S_ISLNK(now.st_mode):
                raise ConfinementError(
                    f"Refused {path!r}: a directory in the path was replaced by a symlink while "
                    "it was being opened."
                ) from None
            raise ConfinementError(
                f"Refused {path!r}: {name!r} in the path is not a directory."
            ) from None
        if exc.errno == errno.ENOENT:
            raise ConfinementError(
                f"Refused {path!r}: a directory in the path disappeared while it was being opened."
            ) from None
        raise


class ConfinedEntry:
    """One located path: its parent dir fd (or deepest existing ancestor) and leaf name.

    Attributes:
        path: the canonical workspace-relative POSIX path (symlinks resolved), e.g.
            ``"src/a.py"``.
    """

    def __init__(
        self,
        tree: ConfinedWorkspace,
        asked: str,
        dir_fd: int,
        missing: tuple[str, ...],
        name: str,
        rel: list[str],
    ) -> None:
        self._asked = asked
        self._dir_fd: int | None = dir_fd
        self._missing = missing
        self._name = name
        self.path = "/".join(rel)
        self._close = weakref.finalize(self, os.close, dir_fd)
        self._seen: tuple[int, int] | None = None

    def close(self) -> None:
        """Close the held directory fd (idempotent)."""
        self._close()

    def __enter__(self) -> ConfinedEntry:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _fd(self) -> int:
        if not self._close.alive or self._dir_fd is None:
            raise ConfinementError(f"Refused {self._asked!r}: the entry is closed.")
        return self._dir_fd

    def _stat(self) -> os.stat_result | None:
        return None if self._missing else _lstat(self._name, self._fd())

    def exists(self) -> bool:
        """Whether anything (a symlink included) exists at the leaf right now."""
        return self._stat() is not None

    def read(self) -> bytes | None:
        """The leaf's bytes, a symlink leaf's target text (when it was not followed), or
        ``None`` when absent. Records the leaf's identity for :meth:`delete`.

        Raises:
            ConfinementError: the leaf is a directory, fifo, socket or device (it is opened
                ``O_NONBLOCK`` and checked after opening, so a fifo never blocks).
            OSError: other read failures.
        """
        info = self._stat()
        if info is None:
            return None
        self._seen = (info.st_dev, info.st_ino)
        if stat.S_ISLNK(info.st_mode):
            target = _readlink(self._asked, self._name, self._fd())
            return target.encode("utf-8", "surrogateescape")
        self._require_regular(info.st_mode)
        try:
            fd = os.open(self._name, _READ_FLAGS, dir_fd=self._fd())
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._race("it was replaced by a symlink while being read") from None
            raise
        try:
            opened = os.fstat(fd)
            self._require_regular(opened.st_mode)
            self._seen = (opened.st_dev, opened.st_ino)
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def mode(self) -> int | None:
        """Permission bits of the existing regular file (e.g. ``0o755``), ``None`` if absent.

        Raises:
            ConfinementError: the leaf is now a symlink or not a regular file.
        """
        info = self._stat()
        if info is None:
            return None
        if stat.S_ISLNK(info.st_mode):
            raise self._race("it was replaced by a symlink")
        self._require_regular(info.st_mode)
        return stat.S_IMODE(info.st_mode)

    def write(self, data: bytes, *, mode: int | None = None) -> None:
        """Atomically set the leaf's content: a temp file made in the held directory fd
        (``O_CREAT|O_EXCL|O_NOFOLLOW``), ``fchmod``, ``fsync``, then ``renameat`` over the
        leaf. A hard link or symlink at the leaf is replaced, never written through.

        Args:
            data: the full new content.
            mode: permission bits; by default the existing file's, else the umask default.

        Raises:
            ConfinementError: the leaf is a directory/fifo/device, or the tree changed.
            OSError: e.g. ``ENOSPC``; the temp file is removed and nothing changed.
        """
        if mode is None:
            mode = self.mode()
        try:
            dir_fd = self._parent()
            tmp = self._temp(dir_fd, data, default_file_mode() if mode is None else mode)
            try:
                os.rename(tmp, self._name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                _discard(tmp, dir_fd)
                raise
        except FileNotFoundError:
            raise self._race(_GONE) from None
        _sync_dir(dir_fd)

    def create(self, data: bytes, *, mode: int | None = None) -> None:
        """Create the leaf with ``data``, never replacing anything (``linkat`` of the temp
        file, which fails if the name exists; a checked ``renameat`` where hard links are
        unsupported).

        Raises:
            FileExistsError: something exists at the leaf.
            ConfinementError: the tree changed on the way.
            OSError: other failures; nothing is left behind.
        """
        try:
            dir_fd = self._parent()
            tmp = self._temp(dir_fd, data, default_file_mode() if mode is None else mode)
            try:
                self._link_new(tmp, dir_fd)
            except BaseException:
                _discard(tmp, dir_fd)
                raise
        except FileNotFoundError:
            raise self._race(_GONE) from None
        _discard(tmp, dir_fd)
        _sync_dir(dir_fd)

    def _link_new(self, tmp: str, dir_fd: int) -> None:
        """Give the temp file the leaf's name without replacing anything."""
        try:
            os.link(tmp, self._name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno not in _NO_HARDLINK:
                raise
            if _lstat(self._name, dir_fd) is not None:
                raise FileExistsError(errno.EEXIST, "File exists", self.path) from None
            os.rename(tmp, self._name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)

    def delete(self) -> None:
        """Remove the leaf (a symlink itself, never its target) from the held directory.

        Raises:
            ConfinementError: the leaf is a directory, or is no longer the object
                :meth:`read` saw.
            FileNotFoundError: the leaf is absent.
        """
        info = self._stat()
        if info is None:
            raise FileNotFoundError(errno.ENOENT, "No such file", self.path)
        if stat.S_ISDIR(info.st_mode):
            raise ConfinementError(f"{self.path} is a directory.")
        if self._seen is not None and (info.st_dev, info.st_ino) != self._seen:
            raise self._race("it was replaced on disk")
        os.unlink(self._name, dir_fd=self._fd())

    def move_to(self, dest: ConfinedEntry, data: bytes) -> None:
        """Move this file to ``dest`` (another located entry) with new content ``data``,
        keeping the mode: create at ``dest`` in its opened directory (no replace), then
        unlink here; if the unlink fails the created file is removed again.

        Raises:
            FileExistsError: ``dest`` exists.
            ConfinementError: either side changed on the way.
        """
        mode = self.mode()
        dest.create(data, mode=mode)
        try:
            self.delete()
        except BaseException:
            dest._undo_create()
            raise

    def _undo_create(self) -> None:
        try:
            os.unlink(self._name, dir_fd=self._fd())
        except OSError:
            pass

    def _parent(self) -> int:
        """The leaf's directory fd, creating missing parents (``mkdirat`` + ``O_NOFOLLOW``)."""
        dir_fd = self._fd()
        while self._missing:
            name = self._missing[0]
            try:
                os.mkdir(name, 0o777, dir_fd=dir_fd)
            except FileExistsError:
                pass
            child = _open_dir(self._asked, name, dir_fd)
            os.close(dir_fd)
            self._close.detach()
            self._dir_fd = dir_fd = child
            self._close = weakref.finalize(self, os.close, child)
            self._missing = self._missing[1:]
        return dir_fd

    def _temp(self, dir_fd: int, data: bytes, mode: int) -> str:
        tmp = f".{self._name[:80]}.{secrets.token_hex(6)}.tandem-tmp"
        fd = os.open(tmp, _TEMP_FLAGS, 0o600, dir_fd=dir_fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode & 0o7777)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            _discard(tmp, dir_fd)
            raise
        os.close(fd)
        return tmp

    def _require_regular(self, mode: int) -> None:
        if not stat.S_ISREG(mode):
            what = _kind(mode)
            if what == "a directory":
                raise ConfinementError(f"{self.path} is a directory.")
            raise ConfinementError(
                f"Refused {self.path!r}: it is {what}, not a regular file; it is never read "
                "or written."
            )

    def _race(self, what: str) -> ConfinementError:
        return ConfinementError(f"Refused {self._asked!r}: {what}; nothing was changed.")


def _discard(tmp: str, dir_fd: int) -> None:
    try:
        os.unlink(tmp, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


def _sync_dir(dir_fd: int) -> None:
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
