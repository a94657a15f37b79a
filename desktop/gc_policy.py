"""The GUI thread's share of the interpreter: garbage collection on it only, and the GIL back soon.

Python's automatic collector runs in whichever thread happens to allocate; when that is a
worker thread (frame decoding, ``asyncio.to_thread`` for Git), unreachable Qt objects of the
GUI thread get destroyed there ("Timers cannot be stopped from another thread", and worse).
The app therefore turns automatic collection off and collects from Qt timers on the GUI
thread: young generations often (cheap), the full heap rarely. Once the window is up, what
start-up built (Qt wrappers, pygments lexers, the openai types) is collected once and frozen
(``gc.freeze``), so later full passes scan only what the session made since, and do not
stall the GUI for the size of the whole heap (issue 15: the diff view's stalls were GC passes;
a diff's hunks now keep a few tracked objects each, not one per line:
``desktop.views.diff.lines``).

A worker running Python (the editor harness's ``compute_hunks`` in ``asyncio.to_thread``, a
journal scrub) keeps the GIL until the interpreter's switch interval runs out each time the
GUI thread asks for it back; at CPython's default (5 ms) the GUI thread waited up to 43 ms
within one 5 ms heartbeat while ``compute_hunks`` diffed 50,000 lines, 2-15 ms at 0.5-1 ms
(``bench/diff_view.py``'s load, issue 15). The app runs at :data:`GUI_SWITCH_INTERVAL_S`.
"""

from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QObject, QTimer

__all__ = [
    "GUI_SWITCH_INTERVAL_S",
    "collect_deep",
    "collect_recent",
    "install_gui_thread_gc",
    "settle_heap",
]

GUI_SWITCH_INTERVAL_S = 0.001
"""The interpreter's thread switch interval for the app's lifetime (s; CPython's default is
0.005). A diff build lowers it further while it streams
(``desktop.views.diff.stream.BUILD_SWITCH_INTERVAL_S``)."""


def settle_heap() -> None:
    """Collect everything once, then move the survivors to the permanent generation
    (``gc.freeze``): later collections no longer scan them."""
    gc.collect()
    gc.freeze()


def collect_recent() -> None:
    """Collect every generation but the permanent one, then freeze the survivors: the next
    pass scans only what was made since. Garbage among frozen objects waits for
    :func:`collect_deep`."""
    gc.collect()
    gc.freeze()


def collect_deep() -> None:
    """The whole heap, frozen objects included (``gc.unfreeze``), then freeze the survivors."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def install_gui_thread_gc(
    parent: QObject,
    *,
    young_ms: int = 500,
    full_ms: int = 30_000,
    deep_ms: int = 600_000,
    settle_ms: int | None = 3_000,
    switch_interval_s: float | None = GUI_SWITCH_INTERVAL_S,
) -> list[QTimer]:
    """Disable automatic collection and collect on the thread of ``parent`` (the GUI thread):
    generations 0-1 every ``young_ms``; every ``full_ms`` all but the frozen objects, whose
    survivors are then frozen (:func:`collect_recent`); every ``deep_ms`` the whole heap
    (:func:`collect_deep`); ``settle_ms`` after start (``None``: never) :func:`settle_heap`.

    Why the freezing: a full pass scans every tracked object, so its stall grows with the
    session (issue 15): 28 ms at 1,000 conversation entries and 94 ms at 3,000 (37,592 and
    109,804 tracked objects, this machine), every ``full_ms``. Freezing what survived makes
    each pass scan only the objects made since the last one; the deep pass, which still
    grows with the heap, runs twenty times less often and frees cycles that died frozen.

    Args:
        parent: a QObject of the GUI thread owning the timers (the application).
        young_ms: interval of the young collections (ms).
        full_ms: interval of the collections of everything not frozen (ms).
        deep_ms: interval of the whole-heap collections (ms).
        settle_ms: delay of the one :func:`settle_heap` (ms), or ``None``.
        switch_interval_s: ``sys.setswitchinterval`` for the process (s, > 0), or ``None`` to
            leave it as it is.

    Returns:
        The young, full and deep timers (keep them alive).

    Raises:
        ValueError: ``switch_interval_s`` is not positive.
    """
    if switch_interval_s is not None:
        if switch_interval_s <= 0:
            raise ValueError(f"switch_interval_s must be > 0, got {switch_interval_s}")
        sys.setswitchinterval(switch_interval_s)
    gc.disable()
    if settle_ms is not None:
        QTimer.singleShot(settle_ms, parent, settle_heap)
    young = QTimer(parent, interval=young_ms)
    young.timeout.connect(lambda: gc.collect(1))
    full = QTimer(parent, interval=full_ms)
    full.timeout.connect(collect_recent)
    deep = QTimer(parent, interval=deep_ms)
    deep.timeout.connect(collect_deep)
    for timer in (young, full, deep):
        timer.start()
    return [young, full, deep]
