"""Small helpers shared inside core: the sync-or-async callback adapter and private-file writes."""

from __future__ import annotations

import contextlib
import inspect
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["maybe_await", "write_private_file"]


async def maybe_await(value: Any) -> Any:
    """``value`` awaited when it is awaitable (user callbacks may be sync or async)."""
    return await value if inspect.isawaitable(value) else value


def write_private_file(path: Path, text: str) -> None:
    """Replace ``path`` atomically with ``text`` (UTF-8), mode 0600: a temp file in the same
    folder is written, fsynced and ``os.replace``d, then the folder is fsynced, so a crash
    leaves the old or the new file, never a torn one. The folder is created (0700) if needed.

    Raises:
        OSError: the folder or file cannot be written (the temp file is removed).
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
