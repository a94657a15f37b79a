"""DiffView on a 10,000-line diff: time to first paint and the longest event-loop stall.

Builds a 10,000-line Python file and a version with a change every few lines, then measures
(offscreen Qt):

* the diff build (``build_file_diff``, not part of the view's budget);
* ``set_files`` + the first paint of the rows (target < 300 ms);
* the longest gap between ticks of a 5 ms ``QTimer`` while the view scrolls through the whole
  diff a page every 16 ms, side by side then unified, with syntax lexing running (target
  < 50 ms).

Usage: ``python -m bench.diff_view [--lines 10000] [--screenshot /tmp/diff_view.png]``
(``--screenshot`` saves the widget showing a small, realistic Python diff and exits).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from typing import TypeVar

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QLineEdit, QListView

from desktop.views.diff_model import FileDiff, build_file_diff
from desktop.views.diff_view import DiffView

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
    viewport = _child(view, QListView, "diffRows").viewport()
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
    rows = _child(view, QListView, "diffRows")
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
    _child(view, QListView, "diffRows").scrollToTop()
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
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.freeze() after loading each diff (as an application may after start-up)",
    )
    args = parser.parse_args()
    if args.screenshot:
        screenshot(args.screenshot)
        return
    app = _app()
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
    if args.gc_freeze:
        print("gc.freeze() after each diff is loaded")
    print(f"diff: {args.lines} lines, {len(diff.hunks)} hunks, {rows} diff lines")
    print(f"build_file_diff: {build_ms:.1f} ms (outside the view)")
    for label, files in (("modified file", [diff]), ("created file", [created])):
        paints = []
        for _ in range(args.repeat):
            view.set_files([])
            app.processEvents()
            paints.append(_first_paint_ms(app, view, files))
        if args.gc_freeze:
            gc.collect()
            gc.freeze()
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


if __name__ == "__main__":
    main()
