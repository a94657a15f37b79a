"""Garbage collection on the GUI thread only.

Python's automatic collector runs in whichever thread happens to allocate; when that is a
worker thread (frame decoding, ``asyncio.to_thread`` for Git), unreachable Qt objects of the
GUI thread get destroyed there ("Timers cannot be stopped from another thread", and worse).
The app therefore turns automatic collection off and collects from Qt timers on the GUI
thread: young generations often (cheap), the full heap rarely.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

__all__ = ["install_gui_thread_gc"]


def install_gui_thread_gc(
    parent: QObject, *, young_ms: int = 500, full_ms: int = 30_000
) -> list[QTimer]:
    """Disable automatic collection; collect generations 0-1 every ``young_ms`` and the whole
    heap every ``full_ms`` on the thread of ``parent`` (the GUI thread). Returns the timers."""
    gc.disable()
    young = QTimer(parent, interval=young_ms)
    young.timeout.connect(lambda: gc.collect(1))
    full = QTimer(parent, interval=full_ms)
    full.timeout.connect(gc.collect)
    young.start()
    full.start()
    return [young, full]
