"""Diff builds in a process of their own (or on worker threads), handed to the GUI thread in
time-bounded slices.

A file's build runs in a :class:`~desktop.views.diff.process.BuildProcess` (its frames are
decoded on the GUI thread a step at a time within the slice, :mod:`.decode`); a ``git diff``
text's, and a file's with ``process=False``, on a worker thread. A build splits the file's
sides into lines, then produces its hunks ``CHUNK_HUNKS`` at a time
(:func:`~desktop.views.diff.build.hunk_chunks`: git's line diff, or a proposal's hunks
converted) with their layouts. Neither touches Qt: a worker puts messages on a queue, a
process's reader thread its frames, that a ``QTimer`` on the GUI thread drains for at most
:data:`SLICE_MS` per turn of the event loop, so the window never waits for a build (issue 15,
Build item 1).
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from PySide6.QtCore import QObject, QTimer

from .build import (
    CHUNK_HUNKS,
    EditorHunk,
    HunkLayout,
    file_sections,
    hunk_chunks,
    hunk_layout,
    section_header,
    side_lines,
)
from .decode import decode_steps, syntax_sides
from .model import DiffHunk, FileDiff, HunkLines, split_lines
from .priority import (
    BUILD_NICE,
    BUILD_PROCESS_NICE,
    BUILD_SWITCH_INTERVAL_S,
    _lower_priority,
    _SwitchInterval,
)
from .process import BuildProcess, Ended
from .wire import Frame

__all__ = [
    "APPEND_MS",
    "BUILD_NICE",
    "BUILD_PROCESS_NICE",
    "HOLD_MS",
    "BUILD_SWITCH_INTERVAL_S",
    "PROCESS_RETRIES",
    "SLICE_MS",
    "UNIFIED",
    "DiffStream",
    "StreamMessage",
]

UNIFIED = "\0unified"
"""The key of a ``git diff`` text's build (never a file path: paths hold no NUL)."""

SLICE_MS = 4.0
"""GUI time spent on streamed results per event-loop turn (ms)."""
_POLL_MS = 4
HOLD_MS = 300.0
"""After a build's first chunk is shown, its later chunks wait while its worker still runs,
for at most this long from the build's start (ms); then they stream as they come.

The GUI thread and a worker running Python share the GIL: each time the GUI released it
(around most Qt calls of a paint) it waited for the worker to hand it back, and a paint of the
first screen took 20-70 ms of waiting on a quiet machine. Adding 4,000 hunks after the worker
(about 150 ms of converting them) costs the GUI the same work without that wait: the 50,000-line
diff was shown 64-119 ms sooner in six paired runs, the longest stalls alike (16-38 ms against
20-45 ms; ``bench/diff_view.py`` at load 1-1.5 on 2 cores, issue 15).
"""
APPEND_MS = 200.0
"""A process build's hunks after its first chunk are added to the view at most this often
(ms), merged: each addition repaints the rows shown (5-15 ms), and 4,167 hunks came in 42
chunks, each repainting the same first screen while the build streamed (issue 15)."""
MERGE_HUNKS = 500
"""At most this many merged hunks are added at once (adding costs the GUI about 2 µs a hunk)."""
PROCESS_RETRIES = 1
"""How many times a build process killed by a signal (a crash, the OOM killer, a stray
``kill``) is started again for the same file. The new process skips the hunks the old one
had delivered (hunk ids are positions: a rebuild gives the same ones), so each hunk is shown
once and its decision kept. An exit without a signal (it could not import, or start) is not
retried: it would fail the same way."""


def _compact(hunk: DiffHunk) -> DiffHunk:
    """``hunk`` with its lines as one :class:`~desktop.views.diff.lines.HunkLines` (a parsed
    diff's hunks hold a ``DiffLine`` per line, each tracked by the garbage collector);
    unchanged when they already are, or when their numbers do not run on as in a hunk."""
    if isinstance(hunk.lines, HunkLines):
        return hunk
    try:
        return replace(hunk, lines=HunkLines.of(hunk.lines))
    except ValueError:  # an odd parse: kept as it is, shown the same
        return hunk


@dataclass(frozen=True, slots=True)
class StreamMessage:
    """One result of a build, delivered on the GUI thread.

    Attributes:
        path: the file being built.
        kind: ``"lines"`` (``data``: ``(old, new, lines)``: the sides'
            :class:`~desktop.views.diff_highlight.SyntaxLines` and the longer side's length),
            ``"hunks"`` (``data``: ``(hunks, layouts)``), ``"done"`` (``data``: ``None``) or
            ``"error"`` (``data``: the message); for a ``git diff`` text
            (:meth:`DiffStream.start_unified`, ``path`` :data:`UNIFIED`) first ``"files"``
            (``data``: the files, without hunks yet), then each file's messages under its path.
    """

    path: str
    kind: Literal["files", "lines", "hunks", "done", "error"]
    data: Any


class DiffStream:
    """Runs diff builds on daemon threads (at :data:`BUILD_NICE`, below the GUI thread); one
    live build per path (a new one replaces it).

    Args:
        parent: the QObject owning the drain timer (the view); its end stops every build.
        deliver: called on the GUI thread with each :class:`StreamMessage` of a live build.
        process: build a file's diff in a process of its own
            (:class:`~desktop.views.diff.process.BuildProcess`; one that cannot start ends the
            build with an error); ``False``: on a worker thread.
    """

    def __init__(
        self,
        parent: QObject,
        deliver: Callable[[StreamMessage], None],
        *,
        process: bool = True,
    ) -> None:
        self._deliver = deliver
        self._queue: queue.SimpleQueue[tuple[int, StreamMessage]] = queue.SimpleQueue()
        self._live: dict[str, int] = {}
        self._threads: dict[int, threading.Thread] = {}
        self._held: deque[tuple[int, Any]] = deque()  # messages, frames or their decoding
        self._first_shown: set[int] = set()  # builds whose first hunks were delivered
        self._started: dict[int, float] = {}  # build token -> perf_counter at its start (s)
        self._next = 0
        self._timer = QTimer(parent)
        self._timer.setInterval(_POLL_MS)
        self._timer.timeout.connect(self._drain)
        self._interval = _SwitchInterval()
        self._delivering = 0
        self._process = process
        self._procs: dict[int, BuildProcess] = {}
        self._inbox: queue.SimpleQueue[tuple[int, Frame | Ended]] = queue.SimpleQueue()
        self._paths: dict[int, str] = {}  # token -> path of a process build
        self._merged: dict[int, tuple[list[DiffHunk], list[HunkLayout]]] = {}
        self._appended: dict[int, float] = {}  # token -> perf_counter of its last hunks (s)
        # a process build's inputs (to start it again after a crash) and its attempt number
        self._inputs: dict[int, tuple[str | None, str | None, Sequence[EditorHunk] | None]] = {}
        self._attempt: dict[int, int] = {}
        self._upto: dict[str, int] = {}  # path -> the last hunk id a process build delivered
        parent.destroyed.connect(self._interval.release)  # a view closed mid-build
        parent.destroyed.connect(self.stop)

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
        if self._process:
            self._upto.pop(path, None)
            self._spawn(token, path, (old, new, hunks))
            return
        thread = threading.Thread(
            target=self._work,
            args=(token, path, old, new, hunks),
            name=f"tandem-diff-{token}",
            daemon=True,
        )
        self._threads[token] = thread
        self._started[token] = time.perf_counter()
        self._interval.hold()
        thread.start()
        self._timer.start()

    def _spawn(
        self,
        token: int,
        path: str,
        inputs: tuple[str | None, str | None, Sequence[EditorHunk] | None],
        attempt: int = 0,
    ) -> None:
        """Start ``path``'s build process under ``token`` (started by its own thread:
        nothing here waits for fork/exec)."""
        old, new, hunks = inputs
        self._procs[token] = BuildProcess(
            token, path, old, new, hunks, self._inbox, nice=BUILD_PROCESS_NICE
        )
        self._paths[token] = path
        self._inputs[token] = inputs
        self._attempt[token] = attempt
        self._timer.start()

    def _retry(self, token: int, ended: Ended) -> bool:
        """Start a killed build process again (see :data:`PROCESS_RETRIES`); whether it was."""
        path = self._paths.get(token)
        attempt = self._attempt.get(token, 0)
        inputs = self._inputs.get(token)
        if (
            path is None
            or inputs is None
            or self._live.get(path) != token
            or ended.status is None
            or ended.status >= 0
            or attempt >= PROCESS_RETRIES
        ):
            return False
        self._flush(token)  # what it had delivered comes first; the new one skips it
        self._next += 1
        self._live[path] = self._next
        self._spawn(self._next, path, inputs, attempt + 1)
        return True

    def _unseen(self, message: StreamMessage) -> StreamMessage | None:
        """A process build's hunks less those delivered before it was started again."""
        hunks, layouts = message.data
        upto = self._upto.get(message.path, 0)
        if hunks and hunks[0].id <= upto:
            pairs = [(h, lay) for h, lay in zip(hunks, layouts, strict=True) if h.id > upto]
            if not pairs:
                return None
            hunks, layouts = [h for h, _ in pairs], [lay for _, lay in pairs]
            message = StreamMessage(message.path, "hunks", (hunks, layouts))
        if hunks:
            self._upto[message.path] = hunks[-1].id
        return message

    def start_unified(self, text: str, parse: Callable[[str], list[FileDiff]]) -> None:
        """Parse ``git diff`` output in the background (replacing an earlier such build).

        The worker splits ``text`` into files (``build.file_sections``), delivers them all at
        once (``"files"``: parsed from their headers, hunks empty), then parses each file's
        section with ``parse`` and streams its hunks, layouts and lines under its path. The
        receiver of ``"files"`` calls :meth:`claim` once it shows them.

        Args:
            text: the diff text (``git diff`` or ``diff -u`` format).
            parse: the parser, text to files (``desktop.unified_diff.parse_unified_diff``).
        """
        self._next += 1
        token = self._live[UNIFIED] = self._next
        thread = threading.Thread(
            target=self._work_unified,
            args=(token, text, parse),
            name=f"tandem-diff-{token}",
            daemon=True,
        )
        self._threads[token] = thread
        self._started[token] = time.perf_counter()
        self._interval.hold()
        thread.start()
        self._timer.start()

    def claim(self, paths: Sequence[str]) -> None:
        """While a ``"files"`` message is delivered: its files' messages are now expected."""
        for path in paths:
            self._live[path] = self._delivering

    def cancel(self, path: str) -> None:
        """Forget the build of ``path`` (its process is killed; a worker thread stops at its
        next chunk)."""
        token = self._live.pop(path, None)
        process = self._procs.get(token) if token is not None else None
        if process is not None:
            process.kill()

    def stop(self) -> None:
        """Cancel every build (the view is closing): kill their processes, forget them all."""
        for process in self._procs.values():
            process.kill()
        self._live.clear()

    def processes(self, timeout_s: float = 10.0) -> list[int]:
        """The process ids of the builds whose processes may still run, each waited for
        until started (bounded, s; for tests)."""
        pids = [p.wait_started(timeout_s) for p in self._procs.values() if p.alive()]
        return [pid for pid in pids if pid is not None]

    def building(self, path: str) -> bool:
        """Whether a build of ``path`` has not delivered its end yet."""
        return path in self._live

    def wait(self, timeout_s: float = 30.0) -> bool:
        """Join every worker (bounded); for shutdown and tests. Returns whether all ended."""
        deadline = time.monotonic() + timeout_s
        for thread in list(self._threads.values()):
            thread.join(max(0.0, deadline - time.monotonic()))
        for process in list(self._procs.values()):
            process.join(max(0.0, deadline - time.monotonic()))
        threads = any(t.is_alive() for t in self._threads.values())
        return not threads and not any(p.alive() for p in self._procs.values())

    def _work(
        self,
        token: int,
        path: str,
        old: str | None,
        new: str | None,
        hunks: Sequence[EditorHunk] | None,
    ) -> None:
        put = self._queue.put
        _lower_priority()
        try:
            sides = [[ln.rstrip("\r\n") for ln in split_lines(t or "")] for t in (old, new)]
            put((token, StreamMessage(path, "lines", syntax_sides(path, *sides))))
            for batch in hunk_chunks(path, old, new, hunks=hunks):
                if self._live.get(path) != token:
                    return
                layouts: list[HunkLayout] = [hunk_layout(h) for h in batch]
                put((token, StreamMessage(path, "hunks", (batch, layouts))))
            put((token, StreamMessage(path, "done", None)))
        except Exception as exc:  # bad input or git failure: shown, nothing lost
            put((token, StreamMessage(path, "error", f"{type(exc).__name__}: {exc}")))

    def _work_unified(self, token: int, text: str, parse: Callable[[str], list[FileDiff]]) -> None:
        put = self._queue.put
        _lower_priority()
        try:
            sections = file_sections(text)
            listed: list[FileDiff] = []
            seen: set[str] = set()
            for header in (section_header(section) for section in sections):
                for file in parse(header) if header else []:
                    if file.path not in seen:
                        seen.add(file.path)
                        listed.append(FileDiff(file.path, None, None, [], None, file.status))
            put((token, StreamMessage(UNIFIED, "files", listed)))
            done: set[str] = set()
            for section in sections:
                for file in parse(section):
                    if self._live.get(UNIFIED) != token:
                        return
                    if file.path not in seen or file.path in done:
                        continue
                    done.add(file.path)
                    for first in range(0, len(file.hunks), CHUNK_HUNKS):
                        batch = [_compact(h) for h in file.hunks[first : first + CHUNK_HUNKS]]
                        layouts = [hunk_layout(h) for h in batch]
                        put((token, StreamMessage(file.path, "hunks", (batch, layouts))))
                    sides = syntax_sides(
                        file.path, side_lines(file, "old"), side_lines(file, "new")
                    )
                    put((token, StreamMessage(file.path, "lines", sides)))
                    put((token, StreamMessage(file.path, "done", None)))
            put((token, StreamMessage(UNIFIED, "done", None)))
        except Exception as exc:  # an unparseable text: shown, nothing lost
            put((token, StreamMessage(UNIFIED, "error", f"{type(exc).__name__}: {exc}")))

    def _drain(self) -> None:
        started = time.perf_counter()
        while True:  # take everything queued (cheap), deliver what is due
            try:
                self._held.append(self._queue.get_nowait())
            except queue.Empty:
                break
        while True:  # a build process's frames, still bytes (decoded in steps below)
            try:
                self._held.append(self._inbox.get_nowait())
            except queue.Empty:
                break
        while self._held and (time.perf_counter() - started) * 1000 < SLICE_MS:
            token, held = self._held[0]
            if not isinstance(held, StreamMessage):
                path = self._paths.get(token)
                if path is None or self._live.get(path) != token:
                    self._held.popleft()  # a cancelled build's: never decoded
                    continue
                if isinstance(held, Ended) and self._retry(token, held):
                    self._held.popleft()
                    continue
                if not isinstance(held, Iterator):
                    held = decode_steps(path, held)
                    self._held[0] = (token, held)
                result = next(held)
                if result is None:
                    continue  # one step done; the next within the slice if time is left
                held = StreamMessage(path, *result)
                self._held[0] = (token, held)
            message = held
            if message.kind == "hunks" and token in self._first_shown and self._holding(token):
                break  # the worker is about to finish: the rest after it (see HOLD_MS)
            self._held.popleft()
            if self._live.get(message.path) != token:
                continue
            if message.kind == "hunks" and token in self._procs:
                unseen = self._unseen(message)
                if unseen is None:
                    continue  # all delivered by the process it replaces
                message = unseen
            if message.kind == "hunks" and token in self._procs and token in self._first_shown:
                self._merge(token, message)  # added with the next ones (see APPEND_MS)
                continue
            self._flush(token)  # the hunks merged so far come before this message
            if message.kind == "hunks":
                self._first_shown.add(token)
                if token in self._procs:
                    self._appended[token] = time.perf_counter()
            if message.kind in ("done", "error"):
                del self._live[message.path]
            self._delivering = token
            self._deliver(message)
        now = time.perf_counter()
        for token in [t for t, at in self._appended.items() if (now - at) * 1000 >= APPEND_MS]:
            self._flush(token)
        for token, thread in list(self._threads.items()):
            if not thread.is_alive():
                del self._threads[token]
                self._started.pop(token, None)
        live = set(self._live.values())
        for token, process in list(self._procs.items()):
            if not process.alive() and token not in live:
                del self._procs[token]
                self._paths.pop(token, None)
                self._inputs.pop(token, None)
                self._attempt.pop(token, None)
                self._merged.pop(token, None)
                self._appended.pop(token, None)
        self._first_shown.intersection_update({*self._threads, *self._procs})
        if not self._threads:
            self._interval.release()
            if self._queue.empty() and not self._held and not self._procs:
                self._timer.stop()

    def _merge(self, token: int, message: StreamMessage) -> None:
        hunks, layouts = message.data
        merged = self._merged.get(token)
        if merged is None:
            self._merged[token] = (list(hunks), list(layouts))
        else:
            merged[0].extend(hunks)
            merged[1].extend(layouts)
        if len(self._merged[token][0]) >= MERGE_HUNKS:
            self._flush(token)  # a bigger addition would be one long unit of GUI work

    def _flush(self, token: int) -> None:
        """Deliver the hunks merged for ``token`` (if its build is still live)."""
        merged = self._merged.pop(token, None)
        path = self._paths.get(token)
        self._appended[token] = time.perf_counter()
        if merged is None or path is None or self._live.get(path) != token:
            return
        self._delivering = token
        self._deliver(StreamMessage(path, "hunks", merged))

    def _holding(self, token: int) -> bool:
        """Whether a build's later chunks wait: its worker runs, for less than HOLD_MS."""
        thread = self._threads.get(token)
        if thread is None or not thread.is_alive():
            return False
        return (time.perf_counter() - self._started.get(token, 0.0)) * 1000 < HOLD_MS
