"""Garbage collection on the GUI thread only.

Python's automatic collector runs in whichever thread happens to allocate; when that is a
worker thread (frame decoding, ``asyncio.to_thread`` for Git), unreachable Qt objects of the
GUI thread get destroyed there ("Timers cannot be stopped from another thread", and worse).
The app therefore turns automatic collection off and collects from Qt timers on the GUI
thread: young generations often (cheap), the full heap rarely. Once the window is up, what
start-up built (Qt wrappers, pygments lexers, the openai types) is collected once and frozen
(``gc.freeze``), so later full passes scan only what the session made since, and do not
stall the GUI for the size of the whole heap (issue 15: the diff view's stalls were GC passes).
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

__all__ = ["install_gui_thread_gc", "settle_heap"]


def settle_heap() -> None:
    """Collect everything once, then move the survivors to the permanent generation
    (``gc.freeze``): later collections no longer scan them."""
    gc.collect()
    gc.freeze()


def install_gui_thread_gc(
    parent: QObject, *, young_ms: int = 500, full_ms: int = 30_000, settle_ms: int | None = 3_000
) -> list[QTimer]:
    """Disable automatic collection; collect generations 0-1 every ``young_ms`` and the whole
    heap every ``full_ms`` on the thread of ``parent`` (the GUI thread); ``settle_ms`` after
    start (``None``: never) run :func:`settle_heap` once. Returns the timers."""
    gc.disable()
    if settle_ms is not None:
        QTimer.singleShot(settle_ms, parent, settle_heap)
    young = QTimer(parent, interval=young_ms)
    young.timeout.connect(lambda: gc.collect(1))
    full = QTimer(parent, interval=full_ms)
    full.timeout.connect(gc.collect)
    young.start()
    full.start()
    return [young, full]
