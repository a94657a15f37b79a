"""The priority of diff builds: the build thread's nice value and switch interval, and the
build process's nice value (issue 15: the GUI thread must get a core and the GIL back
quickly while a build runs). No Qt."""

from __future__ import annotations

import os
import sys
import threading

__all__ = ["BUILD_NICE", "BUILD_PROCESS_NICE", "BUILD_SWITCH_INTERVAL_S"]

BUILD_SWITCH_INTERVAL_S = 0.0005
"""The interpreter's thread switch interval while a build runs (s; CPython's default is 0.005).

A worker converting hunks holds the GIL, and the GUI thread gives it up around most Qt calls
(a row's paint makes a dozen); each time it waits up to one switch interval to get it back, so
at the default a paint of the first screen took 100 ms and more while a build ran (issue 15).
"""


BUILD_NICE = 10
"""The nice value of a build's worker thread (Linux; the GUI thread stays at the process's).

On a loaded machine the GUI thread waits for a core more than for anything else: with the
worker at the same priority, the longest heartbeat gaps while a 50,000-line diff streamed were
64-237 ms (six runs), of them 20-40 ms the GUI's own work; with the worker at nice 10,
37-105 ms, the diff shown 3-340 ms later (median 75 ms; ``bench/diff_view.py``, load 4-4.5
on 2 cores, issue 15).
"""


BUILD_PROCESS_NICE = 5
"""The nice value of a build process (Linux/macOS; the GUI keeps its own).

A process competes for a core as a whole task, where a thread shared its process's share: at
nice 10 beside two busy processes (load 4.5 on 2 cores) the 50,000-line build took 5-6 s to
show; at 5, 2.2 s, the longest stalls alike (94 against 96-99 ms; at 0, 1.9 s and 110 ms;
``bench/diff_view.py --hog 2 --nice N``, issue 15).
"""


def _lower_priority() -> None:
    """Lower the calling thread's CPU priority to :data:`BUILD_NICE` (Linux only: there the
    nice value belongs to the thread, ``setpriority(2)``; elsewhere it would be the
    process's). A refusal leaves it as it was."""
    if sys.platform != "linux":
        return
    tid = threading.get_native_id()
    try:
        if os.getpriority(os.PRIO_PROCESS, tid) < BUILD_NICE:
            os.setpriority(os.PRIO_PROCESS, tid, BUILD_NICE)
    except OSError:  # a sandbox may refuse it: the build runs at the GUI's priority
        pass


class _SwitchInterval:
    """Lowers ``sys.setswitchinterval`` while at least one build is live, then restores it."""

    def __init__(self) -> None:
        self._saved: float | None = None

    def hold(self) -> None:
        if self._saved is None:
            self._saved = sys.getswitchinterval()
            sys.setswitchinterval(min(self._saved, BUILD_SWITCH_INTERVAL_S))

    def release(self) -> None:
        if self._saved is not None:
            sys.setswitchinterval(self._saved)
            self._saved = None
