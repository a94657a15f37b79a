"""Disarm git redirections the moment a sandboxed command plants them (inotify, Linux).

The sweep after a command (``GitProtection.sweep``) removes a planted ``commondir`` or
``config.worktree`` only when the command has ended. Meanwhile the user's or an IDE's own git,
running unsandboxed, would follow ``.git/commondir`` to a config the command wrote and run its
``core.fsmonitor`` (red-team hole 2). :class:`GitWatch` watches the folders of those paths with
inotify (``IN_CREATE | IN_MOVED_TO``) while the command (or background service) runs, and
renames each one to ``<name>.disabled-by-tandem`` as soon as it appears (removing it when
the rename fails).

Remaining window: between the ``creat``/``rename`` of the planted path and the watcher's
rename (the time the kernel needs to wake this thread, typically well under a millisecond, more
on a loaded machine), a git process that happens to start in that instant can still read it.
If inotify is unavailable (``ENOSYS``, the watch limit reached) the watcher says so in
:attr:`GitWatch.notes` and only the sweep afterwards is left.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
import select
import shutil
import struct
import threading
from collections.abc import Iterable
from pathlib import Path

__all__ = ["GitWatch", "disarm_path"]

_log = logging.getLogger("harnesses")

_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_CLOEXEC = 0o2000000
_IN_NONBLOCK = 0o4000
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of NUL-padded name
_SUFFIX = ".disabled-by-tandem"

_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    return _libc


def disarm_path(path: Path) -> str | None:
    """Move a planted ``path`` aside to ``<name>.disabled-by-tandem`` (replacing an earlier
    one; removing ``path`` when it cannot be renamed). Returns the message, ``None`` when
    ``path`` does not exist."""
    if not os.path.lexists(path):
        return None
    aside = path.with_name(path.name + _SUFFIX)
    try:
        os.replace(path, aside)
        return f"removed planted {path} (kept aside as {aside.name})"
    except OSError:
        if not os.path.lexists(path):  # someone else (another watcher) moved it first
            return None
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError as exc:
        return f"could not remove planted {path}: {exc}"
    return f"removed planted {path}"


class GitWatch:
    """Watches for paths that must not appear and disarms each one the moment it does.

    Args:
        paths: absolute paths that must stay absent (``GitProtection.absent``). Their parent
            folders are watched (each must be a real folder; others are skipped).

    Attributes:
        repairs: one message per disarmed path, in order (read after :meth:`stop`).
        notes: why watching was not possible, when it was not.

    Use as ``watch = GitWatch(paths).start()`` before the command and ``watch.stop()`` after
    it; :meth:`stop` returns :attr:`repairs`. Thread-safe; ``stop`` is idempotent.
    """

    def __init__(self, paths: Iterable[Path]) -> None:
        self._names: dict[Path, set[str]] = {}
        for path in paths:
            self._names.setdefault(path.parent, set()).add(path.name)
        self.repairs: list[str] = []
        self.notes: list[str] = []
        self._fd = -1
        self._wake: tuple[int, int] | None = None
        self._wds: dict[int, Path] = {}
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """Whether the watcher thread is running."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> GitWatch:
        """Add the watches and start the watcher thread (no-op when there is nothing to watch).

        Returns:
            ``self``. Failures (no inotify, watch limit) are recorded in :attr:`notes`.
        """
        if not self._names or self._thread is not None:
            return self
        try:
            libc = _lib()
            fd = libc.inotify_init1(_IN_CLOEXEC | _IN_NONBLOCK)
        except (OSError, AttributeError) as exc:
            self.notes.append(f"inotify unavailable: {exc}")
            return self
        if fd < 0:
            self.notes.append(f"inotify unavailable: {os.strerror(ctypes.get_errno())}")
            return self
        self._fd = fd
        mask = _IN_CREATE | _IN_MOVED_TO | _IN_ONLYDIR | _IN_DONT_FOLLOW
        for folder in self._names:
            wd = libc.inotify_add_watch(fd, os.fsencode(folder), mask)
            if wd < 0:
                code = ctypes.get_errno()
                if code != errno.ENOENT and code != errno.ENOTDIR:
                    self.notes.append(f"cannot watch {folder}: {os.strerror(code)}")
                continue
            self._wds[wd] = folder
        if not self._wds:
            os.close(fd)
            self._fd = -1
            return self
        self._wake = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self._check_all()  # planted before the watches were in place
        self._thread = threading.Thread(target=self._run, name="tandem-git-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> list[str]:
        """Stop watching (drains pending events first) and return :attr:`repairs`."""
        thread = self._thread
        if thread is not None and self._wake is not None:
            os.write(self._wake[1], b"x")
            thread.join()
        with self._lock:
            if self._fd >= 0:
                self._drain()
                os.close(self._fd)
                self._fd = -1
            if self._wake is not None:
                os.close(self._wake[0])
                os.close(self._wake[1])
                self._wake = None
            self._thread = None
            return list(self.repairs)

    def _run(self) -> None:
        assert self._wake is not None
        wake = self._wake[0]
        while True:
            try:
                ready, _, _ = select.select([self._fd, wake], [], [])
            except (OSError, ValueError):
                return
            if self._fd in ready:
                with self._lock:
                    self._drain()
            if wake in ready:
                return

    def _drain(self) -> None:
        """Read every queued event and disarm what appeared (caller holds the lock)."""
        while True:
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                return
            except OSError:
                return
            if not data:
                return
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _cookie, size = _EVENT.unpack_from(data, offset)
                raw = data[offset + _EVENT.size : offset + _EVENT.size + size]
                offset += _EVENT.size + size
                if mask & _IN_Q_OVERFLOW:
                    self._check_all()
                    continue
                if mask & _IN_IGNORED:
                    self._wds.pop(wd, None)
                    continue
                folder = self._wds.get(wd)
                name = os.fsdecode(raw.rstrip(b"\0"))
                if folder is not None and name in self._names.get(folder, ()):
                    self._disarm(folder / name)

    def _check_all(self) -> None:
        for folder, names in self._names.items():
            for name in sorted(names):
                self._disarm(folder / name)

    def _disarm(self, path: Path) -> None:
        message = disarm_path(path)
        if message is not None:
            _log.warning("sandboxed command planted a git redirection: %s", message)
            self.repairs.append(message)
