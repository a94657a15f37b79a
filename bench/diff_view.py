"""DiffView on a 10,000-line diff: time to first paint and the longest event-loop stall.

Builds a 10,000-line Python file and a version with a change every few lines, then measures
(offscreen Qt):

* the diff build (``build_file_diff``, not part of the view's budget);
* ``set_files`` + the first paint of the rows (target < 300 ms);
* the longest gap between ticks of a 5 ms ``QTimer`` while the view scrolls through the whole
  diff a page every 16 ms, side by side then unified, with syntax lexing running (target
  < 50 ms).

It then measures the build on the app's path (issue 15, Build item 6), for dense diffs of
10,000 and 50,000 lines (a change every 12 lines: 833 and 4,167 hunks): the proposal's hunks
are computed on a worker thread (``compute_hunks``, as the editor harness does), then the
proposal goes to the real main window (the controller's ``proposalSubmitted`` signal into
``MainWindow._show_proposal``, on a scratch folder), whose ``DiffView.stream_file`` shows the
file at once while the hunks stream in from another worker.
A 5 ms ``QTimer`` heartbeat on the GUI thread gives the longest stall over the whole time.
Targets: the 50k-line diff shown in under 1 s, no stall over 50 ms.

Usage: ``python -m bench.diff_view [--lines 10000] [--build 10000,50000] [--peer]
[--only-build] [--screenshot /tmp/diff_view.png]`` (``--screenshot`` saves the widget showing
a small, realistic Python diff and exits; ``--peer`` also times difflib's ``SequenceMatcher``
grouping, the previous engine, on the 10k case; ``--only-build`` skips the paint and scroll
figures).
"""

from __future__ import annotations

import argparse
import difflib
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QElapsedTimer, QEvent, QEventLoop, QObject, QTimer
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLineEdit

from core import Agent, ScriptedModel
from core.settings import Settings
from core.tools.editor import ApplyPatchOperation
from desktop.controller import Controller
from desktop.gc_policy import install_gui_thread_gc, settle_heap
from desktop.main_window import MainWindow
from desktop.views.diff_highlight import lexer_for_path
from desktop.views.diff_model import FileDiff, build_file_diff
from desktop.views.diff_view import DiffView
from harnesses.editor.hunks import Hunk, compute_hunks
from harnesses.editor.review import Proposal
from harnesses.workspace import Workspace

_SAMPLE_OLD = '''"""Fetch and cache remote configuration."""

import json
import time
from pathlib import Path

CACHE_TTL = 300


class ConfigCache:
    """A small on-disk cache for configuration documents."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hits = 0

    def path_for(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def get(self, key: str):
        path = self.path_for(key)
        if not path.exists():
            return None
        age = time.time() - path.stat().st_mtime
        if age > CACHE_TTL:
            return None
        self.hits += 1
        return json.loads(path.read_text())

    def put(self, key: str, value) -> None:
        self.path_for(key).write_text(json.dumps(value))


def load(url, cache):
    data = cache.get(url)
    if data is None:
        data = fetch(url)
        cache.put(url, data)
    return data
'''

_SAMPLE_NEW = (
    _SAMPLE_OLD.replace("import json\n", "import json\nimport logging\n")
    .replace("CACHE_TTL = 300\n", "CACHE_TTL_S = 600\n_log = logging.getLogger(__name__)\n")
    .replace("def get(self, key: str):", "def get(self, key: str, *, ttl_s: float = CACHE_TTL_S):")
    .replace(
        "if age > CACHE_TTL:\n",
        'if age > ttl_s:\n            _log.debug("cache entry %s expired (%.0f s old)", key, age)\n',
    )
    .replace("path.read_text())", 'path.read_text(encoding="utf-8"))')
    .replace("def load(url, cache):", "def load(url: str, cache: ConfigCache) -> dict:")
    .replace("data = fetch(url)", "data = fetch(url, timeout_s=10)")
)


class _PaintCounter(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.paints = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.paints += 1
        return False


_T = TypeVar("_T", bound=QObject)


def _child(view: DiffView, kind: type[_T], name: str) -> _T:
    found = view.findChild(kind, name)
    assert found is not None, name
    return found


def _app() -> QApplication:
    app = QApplication.instance()
    return app if isinstance(app, QApplication) else QApplication([])


def big_texts(lines: int) -> tuple[str, str]:
    """A ``lines``-line Python module and a version with a change every 9 lines."""
    old_lines = []
    for i in range(lines):
        if i % 12 == 0:
            old_lines.append(f"def handler_{i}(request, *, retries=3):\n")
        elif i % 12 == 1:
            old_lines.append(f'    """Handle request number {i} and return its payload."""\n')
        else:
            old_lines.append(f"    value_{i} = compute(request, {i}, 'mode-a')  # step {i}\n")
    new_lines = [
        line.replace("'mode-a'", "'mode-b'").replace("compute(", "compute_fast(")
        if i % 9 == 4
        else line
        for i, line in enumerate(old_lines)
    ]
    return "".join(old_lines), "".join(new_lines)


def _first_paint_ms(app: QApplication, view: DiffView, files: list[FileDiff]) -> float:
    viewport = _child(view, QAbstractItemView, "diffRows").viewport()
    counter = _PaintCounter()
    viewport.installEventFilter(counter)
    start = time.perf_counter()
    view.set_files(files)
    while counter.paints == 0:
        app.processEvents()
    elapsed = (time.perf_counter() - start) * 1000
    viewport.removeEventFilter(counter)
    return elapsed


def _scroll_stalls(app: QApplication, view: DiffView) -> tuple[float, float, int]:
    """Scroll to the bottom a page every 16 ms; return (max gap, median gap, ticks)."""
    rows = _child(view, QAbstractItemView, "diffRows")
    bar = rows.verticalScrollBar()
    bar.setValue(0)
    gaps: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.nsecsElapsed()]

    def tick() -> None:
        now = clock.nsecsElapsed()
        gaps.append((now - last[0]) / 1e6)
        last[0] = now

    def scroll() -> None:
        bar.setValue(bar.value() + bar.pageStep())

    ticker, scroller = QTimer(), QTimer()
    ticker.setInterval(5)
    ticker.timeout.connect(tick)
    scroller.setInterval(16)
    scroller.timeout.connect(scroll)
    ticker.start()
    scroller.start()
    while bar.value() < bar.maximum():
        app.processEvents()
    for _ in range(10):  # a few more frames at the bottom
        app.processEvents()
    ticker.stop()
    scroller.stop()
    return max(gaps), statistics.median(gaps), len(gaps)


def screenshot(path: str) -> None:
    """Save the view showing a small realistic Python diff to ``path`` (PNG)."""
    app = _app()
    files = [
        build_file_diff("src/config/cache.py", _SAMPLE_OLD, _SAMPLE_NEW, proposal_id="p1"),
        build_file_diff(
            "src/config/__init__.py",
            None,
            '"""Configuration."""\n\nfrom .cache import ConfigCache\n\n__all__ = ["ConfigCache"]\n',
            proposal_id="p2",
        ),
        build_file_diff(
            "tests/test_legacy.py", "def test_old():\n    assert True\n", None, proposal_id="p3"
        ),
    ]
    view = DiffView(files)
    view.resize(1400, 820)
    view.show()
    view.accept_current()  # hunk 1 accepted, hunk 2 current
    view.comment_current()  # comment on hunk 2 through the inline field
    comment = _child(view, QLineEdit, "hunkComment")
    comment.setText("Keep CACHE_TTL as an alias for one release")
    comment.returnPressed.emit()
    _child(view, QAbstractItemView, "diffRows").scrollToTop()
    deadline = time.perf_counter() + 2
    while time.perf_counter() < deadline:  # let syntax lexing finish
        app.processEvents()
    view.grab().save(path)
    print(f"saved {path}")


def dense_texts(lines: int, every: int = 12) -> tuple[str, str]:
    """A ``lines``-line Python file and a version with a change every ``every`` lines."""
    old = "".join(f"    value_{i} = compute({i}, 'x')  # note {i}\n" for i in range(lines))
    new = "".join(
        f"    value_{i} = compute({i}, 'y')  # changed\n" if i % every == 0 else line
        for i, line in enumerate(old.splitlines(keepends=True))
    )
    return old, new


class _Heartbeat:
    """A 5 ms timer on the GUI thread: the longest gap between its ticks is the worst stall.

    It also keeps the most CPU time the GUI thread itself used between two ticks
    (``worst_cpu``, s): the part of a stall that is the GUI's own work, without the time it
    waited for the GIL or for a core on a loaded machine.
    """

    def __init__(self) -> None:
        self.worst = 0.0
        self.worst_cpu = 0.0
        self._last = time.perf_counter()
        self._last_cpu = time.thread_time()
        self._timer = QTimer()
        self._timer.setInterval(5)
        self._timer.timeout.connect(self._tick)
        self._timer.start()

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.worst = max(self.worst, now - self._last)
        self.worst_cpu = max(self.worst_cpu, cpu - self._last_cpu)
        self._last, self._last_cpu = now, cpu

    def stop(self) -> float:
        """Stop; the longest gap (ms)."""
        self._tick()
        self._timer.stop()
        return self.worst * 1000


def _wait(app: QApplication, done: Callable[[], bool], timeout_s: float = 120.0) -> None:
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


class _Window:
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
        _wait(_app(), lambda: not lexing.is_alive())  # awaited: the event loop keeps running
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


def build_case(app: QApplication, shell: _Window, lines: int) -> dict[str, float]:
    """One dense diff on the app's path: editor hunks on a worker (as the editor harness makes
    them), then the proposal into ``MainWindow._show_proposal`` (``DiffView.stream_file``)."""
    old, new = dense_texts(lines)
    view = shell.view
    app.processEvents()
    heart = _Heartbeat()
    start = time.perf_counter()
    result: list[list[Hunk]] = []
    worker = threading.Thread(target=lambda: result.append(compute_hunks(old, new)))
    worker.start()
    _wait(app, lambda: bool(result))
    worker.join()
    hunked = time.perf_counter()
    shell.propose("pkg/dense.py", old, new, result[0])
    diff = view.current_file()
    assert diff is not None and diff.path == "pkg/dense.py"
    view.repaint()
    listed = time.perf_counter()
    _wait(app, lambda: bool(diff.hunks))
    view.repaint()
    first = time.perf_counter()
    _wait(app, lambda: not view.building("pkg/dense.py"))
    view.repaint()
    end = time.perf_counter()
    stall = heart.stop()
    return {
        "hunks": float(len(diff.hunks)),
        "hunks_ms": (hunked - start) * 1000,
        "listed_ms": (listed - start) * 1000,
        "first_ms": (first - start) * 1000,
        "shown_ms": (end - start) * 1000,
        "stall_ms": stall,
        "cpu_ms": heart.worst_cpu * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best is kept)")
    parser.add_argument("--screenshot", metavar="PNG")
    parser.add_argument("--build", default="10000,50000", help="dense sizes for the build")
    parser.add_argument("--peer", action="store_true", help="time difflib on the 10k case")
    parser.add_argument(
        "--only-build", action="store_true", help="only the build cases (no paint/scroll part)"
    )
    parser.add_argument(
        "--gc-auto",
        action="store_true",
        help="keep Python's automatic GC (not the app's policy: desktop.gc_policy)",
    )
    args = parser.parse_args()
    if args.screenshot:
        screenshot(args.screenshot)
        return
    app = _app()
    if not args.gc_auto:  # the app's own policy: GC on the GUI thread, start-up heap frozen
        install_gui_thread_gc(app, settle_ms=None)
    old, new = big_texts(args.lines)
    start = time.perf_counter()
    diff = build_file_diff("pkg/handlers.py", old, new, proposal_id="bench")
    build_ms = (time.perf_counter() - start) * 1000
    created = build_file_diff("pkg/generated.py", None, new, proposal_id="bench-new")
    view = DiffView()
    view.resize(1400, 900)
    view.show()
    app.processEvents()
    rows = sum(len(h.lines) for h in diff.hunks)
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(
        "GC: "
        + ("automatic" if args.gc_auto else "the app's (desktop.gc_policy)")
        + f"; switch interval {sys.getswitchinterval() * 1000:.1f} ms"
    )
    print(f"diff: {args.lines} lines, {len(diff.hunks)} hunks, {rows} diff lines")
    print(f"build_file_diff: {build_ms:.1f} ms (outside the view)")
    for label, files in (
        () if args.only_build else (("modified file", [diff]), ("created file", [created]))
    ):
        paints = []
        for _ in range(args.repeat):
            view.set_files([])
            app.processEvents()
            paints.append(_first_paint_ms(app, view, files))
        if not args.gc_auto:
            settle_heap()  # as the app does once it is up
        print(
            f"{label}: set_files + first paint: best {min(paints):.1f} ms, "
            f"worst {max(paints):.1f} ms (target < 300 ms)"
        )
        for unified in (False, True):
            view.set_unified(unified)
            runs = [_scroll_stalls(app, view) for _ in range(args.repeat)]
            worst = [r[0] for r in runs]
            mode = "unified" if unified else "side by side"
            print(
                f"{label}, {mode}: scrolling a page per 16 ms to the bottom: longest stall "
                f"best {min(worst):.1f} ms, worst {max(worst):.1f} ms; median tick gap "
                f"{statistics.median(r[1] for r in runs):.1f} ms (target < 50 ms)"
            )
        view.set_unified(False)
    view.close()
    shell = _Window()
    app.processEvents()
    for lines in (int(n) for n in args.build.split(",") if n):
        if not args.gc_auto:
            settle_heap()
        runs = [build_case(app, shell, lines) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["shown_ms"])
        worst_stall = max(r["stall_ms"] for r in runs)
        print(
            f"build {lines:,} lines / {best['hunks']:.0f} hunks on the app's path: "
            f"editor hunks {best['hunks_ms']:.0f} ms, file listed {best['listed_ms']:.0f} ms, "
            f"first hunks {best['first_ms']:.0f} ms, all shown best {best['shown_ms']:.0f} ms "
            f"(worst {max(r['shown_ms'] for r in runs):.0f}; target < 1000 ms for 50k); "
            f"longest GUI stall {min(r['stall_ms'] for r in runs):.1f}-{worst_stall:.1f} ms "
            f"(target < 50 ms; of it the GUI thread's own CPU at most "
            f"{min(r['cpu_ms'] for r in runs):.1f}-{max(r['cpu_ms'] for r in runs):.1f} ms); "
            f"load average {os.getloadavg()[0]:.2f}"
        )
    shell.close()
    if args.peer:
        old, new = dense_texts(10_000)
        a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
        start = time.perf_counter()
        groups = list(difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_grouped_opcodes(3))
        peer_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        ours = compute_hunks(old, new)
        ours_ms = (time.perf_counter() - start) * 1000
        print(
            f"peer (previous engine) difflib on 10,000 lines: {peer_ms:.0f} ms for "
            f"{len(groups)} hunks; git engine compute_hunks {ours_ms:.0f} ms for {len(ours)} "
            f"({peer_ms / max(ours_ms, 0.001):.1f}x)"
        )


if __name__ == "__main__":
    main()
