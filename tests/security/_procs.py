"""Process probes for the spawn tests: find processes by a unique marker in their argv."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable

__all__ = ["alive_with", "marker_seconds", "poll", "spawn_env"]


def marker_seconds() -> str:
    """A unique ``sleep`` duration (about 60 s) that marks one test's processes in their argv."""
    n = uuid.uuid4().int
    return f"{600 + n % 300}.{n % 10**9:09d}"


def alive_with(marker: str) -> list[int]:
    """Pids of live (non-zombie) processes whose command line contains ``marker``."""
    needle = marker.encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if needle in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def poll(predicate: Callable[[], bool], timeout_s: float = 2.0) -> bool:
    """Poll ``predicate`` until it holds or ``timeout_s`` passes (bounded, for kernel events)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def spawn_env() -> dict[str, str]:
    """A copy of this process's environment (for child processes of the tests)."""
    return dict(os.environ)
