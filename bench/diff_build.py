"""The build cases of ``bench.diff_view``: a dense diff through the app's main window, timed.

A 5 ms heartbeat on the GUI thread gives the longest stall and the GUI thread's own CPU per
gap; paint counters per widget give how often the diff view, its toolbar and its rows were
repainted during a build (issue 15).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QAbstractItemView, QApplication, QFrame, QToolButton, QWidget

from core import Agent, ScriptedModel
from core.settings import Settings
from core.tools.editor import ApplyPatchOperation
from desktop.controller import Controller
from desktop.main_window import MainWindow
from desktop.views.diff_highlight import lexer_for_path
from desktop.views.diff_view import DiffView
from harnesses.editor.hunks import Hunk, compute_hunks
from harnesses.editor.review import Proposal
from harnesses.workspace import Workspace

__all__ = [
    "Heartbeat",
    "PaintCounter",
    "Window",
    "build_case",
    "child",
    "dense_texts",
    "report",
    "wait",
]


def _app() -> QApplication:
    app = QApplication.instance()
    return app if isinstance(app, QApplication) else QApplication([])


class PaintCounter(QObject):
    """Counts paint events of the widgets it filters (``whole``: of a whole rect)."""

    def __init__(self) -> None:
        super().__init__()
        self.paints = 0
        self.whole = 0  # paints of the watched widget's whole rect
        self.on = True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self.on:
            self.paints += 1
            if isinstance(event, QPaintEvent) and isinstance(watched, QWidget):
                self.whole += event.rect().contains(watched.rect())
        return False


class _BuildPaints:
    """Paint events during one build, per widget: the diff view (whole-rect paints), the
    toolbar's buttons and the rows' viewport; the bench's own ``repaint()`` calls are left
    out (:meth:`forced`)."""

    def __init__(self, view: DiffView) -> None:
        toolbar = view.findChild(QFrame, "diffToolbar")
        assert toolbar is not None
        self._watched: dict[str, list[tuple[QWidget, PaintCounter]]] = {
            "view": [(view, PaintCounter())],
            "buttons": [(b, PaintCounter()) for b in toolbar.findChildren(QToolButton)],
            "rows": [(child(view, QAbstractItemView, "diffRows").viewport(), PaintCounter())],
        }
        for pairs in self._watched.values():
            for widget, counter in pairs:
                widget.installEventFilter(counter)

    def forced(self, paint: Callable[[], None]) -> None:
        """Run the bench's own ``paint`` without counting it."""
        self._switch(False)
        try:
            paint()
        finally:
            self._switch(True)

    def _switch(self, on: bool) -> None:
        for pairs in self._watched.values():
            for _widget, counter in pairs:
                counter.on = on

    def stop(self) -> dict[str, float]:
        """Remove the counters; ``view_whole``, ``buttons`` (the most of one button) and
        ``rows`` paint counts."""
        out = {
            "view_whole": float(self._watched["view"][0][1].whole),
            "buttons": float(max((c.paints for _w, c in self._watched["buttons"]), default=0)),
            "rows": float(self._watched["rows"][0][1].paints),
        }
        for pairs in self._watched.values():
            for widget, counter in pairs:
                widget.removeEventFilter(counter)
        return out


_T = TypeVar("_T", bound=QObject)


def child(view: DiffView, kind: type[_T], name: str) -> _T:
    found = view.findChild(kind, name)
    assert found is not None, name
    return found


def dense_texts(lines: int, every: int = 12) -> tuple[str, str]:
    """A ``lines``-line Python file and a version with a change every ``every`` lines."""
    old = "".join(f"    value_{i} = compute({i}, 'x')  # note {i}\n" for i in range(lines))
    new = "".join(
        f"    value_{i} = compute({i}, 'y')  # changed\n" if i % every == 0 else line
        for i, line in enumerate(old.splitlines(keepends=True))
    )
    return old, new


class Heartbeat:
    """A 5 ms timer on the GUI thread: the longest gap between its ticks is the worst stall.

    It also keeps the most CPU time the GUI thread itself used between two ticks
    (``worst_cpu``, s): the part of a stall that is the GUI's own work, without the time it
    waited for the GIL or for a core on a loaded machine.
    """

    def __init__(self) -> None:
        self.worst = 0.0
        self.worst_cpu = 0.0
        self.phase = ""
        self.worst_in: dict[str, float] = {}  # phase -> its longest gap (s)
        self._last = time.perf_counter()
        self._last_cpu = time.thread_time()
        self._timer = QTimer()
        self._timer.setInterval(5)
        self._timer.timeout.connect(self._tick)
        self._timer.start()

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.worst = max(self.worst, now - self._last)
        self.worst_in[self.phase] = max(self.worst_in.get(self.phase, 0.0), now - self._last)
        self.worst_cpu = max(self.worst_cpu, cpu - self._last_cpu)
        self._last, self._last_cpu = now, cpu

    def stop(self) -> float:
        """Stop; the longest gap (ms)."""
        self._tick()
        self._timer.stop()
        return self.worst * 1000


def wait(app: QApplication, done: Callable[[], bool], timeout_s: float = 120.0) -> None:
    """Run the event loop until ``done()`` (checked every 2 ms, bounded)."""
    loop = QEventLoop()
    check = QTimer()
    check.setInterval(2)
    deadline = time.perf_counter() + timeout_s
    check.timeout.connect(lambda: loop.quit() if done() or time.perf_counter() > deadline else None)
    check.start()
    if not done():
        loop.exec()
    check.stop()


class Window:
    """The app's main window on a scratch folder, for the build cases (the app's path: the
    controller's ``proposalSubmitted`` signal into ``MainWindow._show_proposal``)."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="tandem-bench-diff-")
        root = Path(self._dir.name)
        (root / "repo").mkdir()
        workspace = Workspace(root / "repo", mode="ask", data_dir=root / "data")
        model = ScriptedModel([])
        self.controller = Controller(
            workspace, lambda ws: Agent(name="Tandem", model=model, tools=ws.tools())
        )
        self.window = MainWindow(self.controller, Settings())
        self.window.resize(1440, 900)
        self.window.show()
        self.view: DiffView = self.window.diff_view
        self._shown: str | None = None

    def propose(self, path: str, old: str, new: str, hunks: list[Hunk]) -> None:
        """Submit a proposal as the controller does (the previous one's review ended)."""
        lexing = threading.Thread(target=lexer_for_path, args=(path,))  # as the controller does
        lexing.start()
        wait(_app(), lambda: not lexing.is_alive())  # awaited: the event loop keeps running
        lexing.join()
        if self._shown is not None:
            self.window._close_proposal(self._shown)
        self._shown = f"bench-{time.monotonic_ns()}"
        proposal = Proposal(
            id=self._shown,
            operation=ApplyPatchOperation(type="update_file", path=path, diff=""),
            path=path,
            move_to=None,
            old_text=old,
            new_text=new,
            hunks=tuple(hunks),
            created_at=time.time(),
            base_fingerprint=None,
        )
        self.controller.proposalSubmitted.emit(proposal)

    def close(self) -> None:
        """Close the window and remove the scratch folder."""
        self.window.close()
        self._dir.cleanup()


def build_case(
    app: QApplication, shell: Window, lines: int, path: str = "process"
) -> dict[str, float]:
    """One dense diff on the app's path: editor hunks on a worker (as the editor harness makes
    them), then the proposal into ``MainWindow._show_proposal`` (``DiffView.stream_file``).

    ``path``: ``"process"`` (the app's: the view builds in a process of its own) or
    ``"thread"`` (the view's build on a worker thread of the GUI process, the previous way).
    """
    old, new = dense_texts(lines)
    view = shell.view
    view._stream._process = path == "process"
    app.processEvents()
    paints = _BuildPaints(view)
    heart = Heartbeat()
    heart.phase = "editor"
    start = time.perf_counter()
    result: list[list[Hunk]] = []
    worker = threading.Thread(target=lambda: result.append(compute_hunks(old, new)))
    worker.start()
    wait(app, lambda: bool(result))
    worker.join()
    hunked = time.perf_counter()
    heart.phase = "view"
    shell.propose("pkg/dense.py", old, new, result[0])
    diff = view.current_file()
    assert diff is not None and diff.path == "pkg/dense.py"
    paints.forced(view.repaint)
    listed = time.perf_counter()
    wait(app, lambda: bool(diff.hunks))
    paints.forced(view.repaint)
    first = time.perf_counter()
    wait(app, lambda: not view.building("pkg/dense.py"))
    paints.forced(view.repaint)
    end = time.perf_counter()
    stall = heart.stop()
    return {
        **paints.stop(),
        "hunks": float(len(diff.hunks)),
        "hunks_ms": (hunked - start) * 1000,
        "listed_ms": (listed - start) * 1000,
        "first_ms": (first - start) * 1000,
        "shown_ms": (end - start) * 1000,
        "stall_ms": stall,
        "editor_stall_ms": heart.worst_in.get("editor", 0.0) * 1000,
        "view_stall_ms": heart.worst_in.get("view", 0.0) * 1000,
        "cpu_ms": heart.worst_cpu * 1000,
        "load": os.getloadavg()[0],
    }


def _span(runs: list[dict[str, float]], key: str) -> str:
    values = [r[key] for r in runs]
    return f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"


def report(lines: int, path: str, runs: list[dict[str, float]], hogs: int) -> None:
    """Print one build case's medians (ranges) over its runs."""
    loads = [r["load"] for r in runs]
    print(
        f"build {lines:,} lines / {runs[0]['hunks']:.0f} hunks, view build in a {path}"
        f"{f', {hogs} CPU hogs beside' if hogs else ''} ({len(runs)} runs, median (range)): "
        f"editor hunks {_span(runs, 'hunks_ms')} ms, listed {_span(runs, 'listed_ms')} ms, "
        f"first hunks {_span(runs, 'first_ms')} ms, all shown {_span(runs, 'shown_ms')} ms "
        f"(target < 1000 ms for 50k); longest GUI stall {_span(runs, 'stall_ms')} ms "
        f"(target < 50 ms): while the editor's hunks are made {_span(runs, 'editor_stall_ms')}"
        f" ms, while the view builds {_span(runs, 'view_stall_ms')} ms; the GUI thread's own "
        f"CPU per gap {_span(runs, 'cpu_ms')} ms; paints during the build (the bench's own "
        f"repaints left out): the whole diff view {_span(runs, 'view_whole')}, a toolbar "
        f"button {_span(runs, 'buttons')}, the rows {_span(runs, 'rows')}; load average "
        f"{min(loads):.2f}-"
        f"{max(loads):.2f} on {os.cpu_count()} cores"
    )
