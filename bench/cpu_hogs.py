"""Busy-loop processes beside a benchmark: a loaded machine, reproducibly (killed after)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

__all__ = ["start_hogs", "stop_hogs"]


def start_hogs(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` busy-loop processes (a loaded machine), stopped by :func:`stop_hogs`."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(count)]
    if hogs:
        deadline = time.monotonic() + 15  # let the load average see them (bounded)
        while os.getloadavg()[0] < count and time.monotonic() < deadline:
            time.sleep(0.5)  # the bench waits for load, not for a result
    return hogs


def stop_hogs(hogs: list[subprocess.Popen[bytes]]) -> None:
    """Kill and reap the processes of :func:`start_hogs`."""
    for hog in hogs:
        hog.kill()
    for hog in hogs:
        hog.wait()
