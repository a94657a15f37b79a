"""Small blocking file helpers for the editor: fingerprints, reads and atomic writes."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "default_file_mode", "fingerprint", "read_bytes"]


def fingerprint(data: bytes | None) -> str | None:
    """sha256 hex digest of ``data``; ``None`` for an absent file."""
    return None if data is None else hashlib.sha256(data).hexdigest()


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or ``None`` if it does not exist.

    Raises:
        IsADirectoryError: ``path`` is a directory.
        OSError: other read failures.
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def default_file_mode() -> int:
    """Permission bits a new file gets from ``open()`` under the current umask."""
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


def atomic_write(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same directory + ``os.replace``).

    Args:
        path: destination; its parent directories are created when missing.
        data: the full new content (bytes).
        mode: permission bits for the result; by default the existing file's bits, or the
            umask default for a new file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = default_file_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tandem-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
