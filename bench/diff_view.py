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

The view builds in a process of its own (``--paths process``, the app's); ``--paths
process,thread`` also times the build on a worker thread of the GUI process (the previous
way), the two interleaved run by run. The longest stall is split by phase: while the editor's
hunks are made (a thread of the GUI process, as the harness does) and while the view builds.
``--hog N`` runs N busy-loop processes beside the bench (a loaded machine; killed after).

Usage: ``python -m bench.diff_view [--lines 10000] [--build 10000,50000] [--peer]
[--only-build] [--paths process,thread] [--hog 2] [--screenshot /tmp/diff_view.png]``
(``--screenshot`` saves the widget showing a small, realistic Python diff and exits;
``--peer`` also times difflib's ``SequenceMatcher`` grouping, the previous engine, on the 10k
case; ``--only-build`` skips the paint and scroll figures).
"""

from __future__ import annotations

import argparse
import difflib
import os
import statistics
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QLineEdit,
)

from bench.cpu_hogs import start_hogs, stop_hogs
from bench.diff_build import (
    Heartbeat,
    PaintCounter,
    Window,
    build_case,
    child,
    dense_texts,
    report,
    wait,
)
from bench.diff_samples import SAMPLE_NEW, SAMPLE_OLD
from desktop.gc_policy import install_gui_thread_gc, settle_heap
from desktop.views.diff import stream as diff_stream
from desktop.views.diff_model import FileDiff, build_file_diff
from desktop.views.diff_view import DiffView
from harnesses.editor.hunks import compute_hunks


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
    viewport = child(view, QAbstractItemView, "diffRows").viewport()
    counter = PaintCounter()
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
    rows = child(view, QAbstractItemView, "diffRows")
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
        build_file_diff("src/config/cache.py", SAMPLE_OLD, SAMPLE_NEW, proposal_id="p1"),
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
    comment = child(view, QLineEdit, "hunkComment")
    comment.setText("Keep CACHE_TTL as an alias for one release")
    comment.returnPressed.emit()
    child(view, QAbstractItemView, "diffRows").scrollToTop()
    deadline = time.perf_counter() + 2
    while time.perf_counter() < deadline:  # let syntax lexing finish
        app.processEvents()
    view.grab().save(path)
    print(f"saved {path}")


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
        "--paths",
        default="process",
        help="the view's build paths to time, interleaved run by run: process,thread",
    )
    parser.add_argument(
        "--hog", type=int, default=0, help="busy-loop processes beside the bench (load)"
    )
    parser.add_argument(
        "--nice",
        type=int,
        default=None,
        help="a build process's nice value (default: the app's, stream.BUILD_PROCESS_NICE)",
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
    shell = Window()
    app.processEvents()
    if args.nice is not None:
        diff_stream.BUILD_PROCESS_NICE = args.nice
    print(
        f"nice values: a build process {diff_stream.BUILD_PROCESS_NICE}, "
        f"a build thread {diff_stream.BUILD_NICE}"
    )
    paths = [p for p in args.paths.split(",") if p]
    hogs = start_hogs(args.hog)
    try:
        idle = []
        for _ in range(3):  # the floor: what this load does to an idle GUI thread
            heart, start = Heartbeat(), time.perf_counter()
            wait(app, lambda start=start: time.perf_counter() - start > 2)
            idle.append(heart.stop())
        print(
            f"idle GUI thread, 3 x 2 s{f', {args.hog} CPU hogs beside' if args.hog else ''}: "
            f"longest heartbeat gap {', '.join(f'{g:.0f}' for g in idle)} ms; load average "
            f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
        )
        for lines in (int(n) for n in args.build.split(",") if n):
            runs: dict[str, list[dict[str, float]]] = {p: [] for p in paths}
            for _ in range(args.repeat):  # A, B, A, B...: the same load for both
                for path in paths:
                    if not args.gc_auto:
                        settle_heap()
                    runs[path].append(build_case(app, shell, lines, path))
            for path in paths:
                report(lines, path, runs[path], args.hog)
    finally:
        stop_hogs(hogs)
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
