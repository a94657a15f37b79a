"""Crash a window process: start a scenario module, wait for its ``SESSION ...`` line, SIGKILL it.

The crash-recovery tests (a session survives, keeps its approval mode, its reviews and its
state) each run a real window in a child process, offscreen, and kill it at the moment the
scenario prints its first line (the journal has flushed what it had by then).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["ROOT", "kill_at_session_line"]

ROOT = Path(__file__).resolve().parents[2]


def kill_at_session_line(
    module: str, args: Sequence[str | Path], *, after_kill: Callable[[], None] | None = None
) -> list[str]:
    """Run ``python -m module args...`` and SIGKILL it once it prints its first line.

    Args:
        module: the scenario module (``tests.desktop.app_scenario``...), run from the repo root
            with ``QT_QPA_PLATFORM=offscreen``.
        args: its arguments.
        after_kill: called after the kill (also when the child failed), before the child's
            pipes close: e.g. to let an orphaned command end.

    Returns:
        The first line's words (``["SESSION", session_id, ...]``).

    Raises:
        AssertionError: the first line is not ``SESSION ...`` (its stderr is the message), or
            the child did not die of the SIGKILL within 30 s.
    """
    child = subprocess.Popen(
        [sys.executable, "-m", module, *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    try:
        line = child.stdout.readline() if child.stdout else ""
        assert line.startswith("SESSION "), child.stderr.read() if child.stderr else ""
        os.kill(child.pid, signal.SIGKILL)  # the crash
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if after_kill is not None:
            after_kill()
        if child.poll() is None:
            child.kill()
            child.wait()
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    return line.split()
