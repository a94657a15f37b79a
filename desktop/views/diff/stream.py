"""Diff builds on worker threads, handed to the GUI thread in time-bounded slices.

A build splits the file's sides into lines, then produces its hunks ``CHUNK_HUNKS`` at a
time (:func:`~desktop.views.diff.build.hunk_chunks`: git's line diff, or a proposal's hunks
converted) with their layouts. The worker never touches Qt: it puts messages on a queue that a
``QTimer`` on the GUI thread drains for at most :data:`SLICE_MS` per turn of the event loop, so
the window never waits for a build (issue 15, Build item 1).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from PySide6.QtCore import QObject, QTimer

from .build import EditorHunk, HunkLayout, hunk_chunks, hunk_layout
from .model import split_lines

__all__ = ["SLICE_MS", "DiffStream", "StreamMessage"]

SLICE_MS = 8.0
"""GUI time spent on streamed results per event-loop turn (ms)."""
_POLL_MS = 4


@dataclass(frozen=True, slots=True)
class StreamMessage:
    """One result of a build, delivered on the GUI thread.

    Attributes:
        path: the file being built.
        kind: ``"lines"`` (``data``: ``(old lines, new lines)`` without terminators),
            ``"hunks"`` (``data``: ``(hunks, layouts)``), ``"done"`` (``data``: ``None``) or
            ``"error"`` (``data``: the message).
    """

    path: str
    kind: Literal["lines", "hunks", "done", "error"]
    data: Any


class DiffStream:
    """Runs diff builds on daemon threads; one live build per path (a new one replaces it).

    Args:
        parent: the QObject owning the drain timer (the view).
        deliver: called on the GUI thread with each :class:`StreamMessage` of a live build.
    """

    def __init__(self, parent: QObject, deliver: Callable[[StreamMessage], None]) -> None:
        self._deliver = deliver
        self._queue: queue.SimpleQueue[tuple[int, StreamMessage]] = queue.SimpleQueue()
        self._live: dict[str, int] = {}
        self._threads: dict[int, threading.Thread] = {}
        self._next = 0
        self._timer = QTimer(parent)
        self._timer.setInterval(_POLL_MS)
        self._timer.timeout.connect(self._drain)

    def start(
        self,
        path: str,
        old: str | None,
        new: str | None,
        *,
        hunks: Sequence[EditorHunk] | None = None,
    ) -> None:
        """Build ``path``'s diff in the background (``hunks``: a proposal's, to convert)."""
        self._next += 1
        token = self._live[path] = self._next
        thread = threading.Thread(
            target=self._work,
            args=(token, path, old, new, hunks),
            name=f"tandem-diff-{token}",
            daemon=True,
        )
        self._threads[token] = thread
        thread.start()
        self._timer.start()

    def cancel(self, path: str) -> None:
        """Forget the build of ``path`` (its worker stops at its next chunk)."""
        self._live.pop(path, None)

    def building(self, path: str) -> bool:
        """Whether a build of ``path`` has not delivered its end yet."""
        return path in self._live

    def wait(self, timeout_s: float = 30.0) -> bool:
        """Join every worker (bounded); for shutdown and tests. Returns whether all ended."""
        deadline = time.monotonic() + timeout_s
        for thread in list(self._threads.values()):
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self._threads.values())

    def _work(
        self,
        token: int,
        path: str,
        old: str | None,
        new: str | None,
        hunks: Sequence[EditorHunk] | None,
    ) -> None:
        put = self._queue.put
        try:
            sides = tuple([ln.rstrip("\r\n") for ln in split_lines(t or "")] for t in (old, new))
            put((token, StreamMessage(path, "lines", sides)))
            for batch in hunk_chunks(path, old, new, hunks=hunks):
                if self._live.get(path) != token:
                    return
                layouts: list[HunkLayout] = [hunk_layout(h) for h in batch]
                put((token, StreamMessage(path, "hunks", (batch, layouts))))
            put((token, StreamMessage(path, "done", None)))
        except Exception as exc:  # bad input or git failure: shown, nothing lost
            put((token, StreamMessage(path, "error", f"{type(exc).__name__}: {exc}")))

    def _drain(self) -> None:
        started = time.perf_counter()
        while (time.perf_counter() - started) * 1000 < SLICE_MS:
            try:
                token, message = self._queue.get_nowait()
            except queue.Empty:
                break
            if self._live.get(message.path) != token:
                continue
            if message.kind in ("done", "error"):
                del self._live[message.path]
            self._deliver(message)
        for token, thread in list(self._threads.items()):
            if not thread.is_alive():
                del self._threads[token]
        if not self._threads and self._queue.empty():
            self._timer.stop()
