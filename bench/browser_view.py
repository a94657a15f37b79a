"""Browser view figures: screenshot latency per action, screencast fps, Qt paint rate and stalls.

Starts a ``PlaywrightComputer`` (system Chromium) on pages served from 127.0.0.1 and measures:

1. per action kind (click, double_click, type, keypress, scroll, move, drag): the action's time and
   the screenshot ``ComputerTool`` takes after it (median and p95, ms);
2. CDP screencast frames per second on an animated page, frames only counted (no painting);
3. with ``--qt``: the same screencast painted in a Qt widget (offscreen platform) under a qasync
   loop: frames painted per second and the event-loop stall (largest gap of a 10 ms timer minus
   the period, ms, and its p99).

Usage: ``python -m bench.browser_view [--reps 20] [--seconds 5] [--qt]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harnesses.browser import FrameMetadata, PlaywrightComputer

_PAGES = {
    "/form": '<input id="i" style="position:absolute;left:20px;top:20px;width:300px;height:40px">'
    '<div style="height:4000px"></div>',
    "/animated": '<div id="b" style="position:absolute;width:120px;height:120px;background:red">'
    "</div><script>let t=0;(function s(){t++;const b=document.getElementById('b');"
    "b.style.left=(t*5%800)+'px';b.style.top=(t*3%500)+'px';"
    "b.style.background='hsl('+(t*7%360)+',80%,50%)';requestAnimationFrame(s)})()</script>",
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = _PAGES.get(self.path, "")
        data = f"<!doctype html><body style='margin:0'>{body}</body>".encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def _serve() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"median {statistics.median(ordered) * 1000:6.1f} ms  p95 {p95 * 1000:6.1f} ms"


async def screenshot_latency(computer: PlaywrightComputer, base: str, reps: int) -> None:
    """Print action and follow-up screenshot times per action kind."""
    await computer.start()
    await computer.page.goto(base + "/form")
    actions: dict[str, Callable[[int], Awaitable[None]]] = {
        "click": lambda i: computer.click(100 + i % 50, 40, "left"),
        "double_click": lambda i: computer.double_click(100, 40),
        "type": lambda i: computer.type("hello"),
        "keypress": lambda i: computer.keypress(["CTRL", "A"]),
        "scroll": lambda i: computer.scroll(400, 300, 0, 40 if i % 2 else -40),
        "move": lambda i: computer.move(i % 700, i % 500),
        "drag": lambda i: computer.drag([(10, 300), (200, 320), (400, 340)]),
    }
    print("screenshot after each action (PNG, viewport", computer.dimensions, "):")
    for name, act in actions.items():
        action_s: list[float] = []
        shot_s: list[float] = []
        for i in range(reps):
            t0 = time.perf_counter()
            await act(i)
            t1 = time.perf_counter()
            await computer.screenshot()
            t2 = time.perf_counter()
            action_s.append(t1 - t0)
            shot_s.append(t2 - t1)
        print(f"  {name:13s} action {_ms(action_s)} | screenshot {_ms(shot_s)}")


async def screencast_fps(computer: PlaywrightComputer, base: str, seconds: float) -> float:
    """Frames per second delivered by the screencast on the animated page (no painting)."""
    await computer.start()
    await computer.page.goto(base + "/animated")
    count = 0

    def on_frame(data: bytes, meta: FrameMetadata) -> None:
        nonlocal count
        count += 1

    await computer.start_screencast(on_frame)
    await asyncio.sleep(0.5)  # warm-up: measurement window, not synchronisation
    start, begin = count, time.perf_counter()
    await asyncio.sleep(seconds)
    fps = (count - start) / (time.perf_counter() - begin)
    await computer.stop_screencast()
    print(f"screencast on an animated page: {fps:5.1f} frames/s delivered (JPEG, q80)")
    return fps


def qt_paint(base: str, seconds: float) -> None:
    """Paint screencast frames in a Qt widget under qasync; print paint rate and stalls."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtCore import QRect, Qt, QTimer
    from PySide6.QtGui import QImage, QPainter, QPixmap
    from PySide6.QtWidgets import QApplication, QWidget

    app = QApplication.instance() or QApplication([])

    # TODO(browser view): replace _FrameSink with desktop.views.browser_view.BrowserView (fed by
    # the same start_screencast callback) once the view exists, to measure the real widget.
    class _FrameSink(QWidget):
        """Keeps the last frame; paints it scaled with the aspect ratio kept."""

        def __init__(self) -> None:
            super().__init__()
            self.resize(900, 600)
            self.pixmap: QPixmap | None = None
            self.painted = 0
            self.decode_s: list[float] = []

        def on_frame(self, data: bytes, meta: FrameMetadata) -> None:
            t0 = time.perf_counter()
            image = QImage.fromData(data, "JPG" if meta.format == "jpeg" else "PNG")
            self.pixmap = QPixmap.fromImage(image)
            self.decode_s.append(time.perf_counter() - t0)
            self.update()

        def paintEvent(self, event: Any) -> None:
            if self.pixmap is None:
                return
            painter = QPainter(self)
            size = self.pixmap.size().scaled(self.size(), Qt.AspectRatioMode.KeepAspectRatio)
            x = (self.width() - size.width()) // 2
            y = (self.height() - size.height()) // 2
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            painter.drawPixmap(QRect(x, y, size.width(), size.height()), self.pixmap)
            painter.end()
            self.painted += 1

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    sink = _FrameSink()
    sink.show()
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.timeout.connect(tick)

    async def main() -> None:
        computer = PlaywrightComputer(dimensions=(1024, 768), throwaway=True)
        try:
            await computer.start()
            await computer.page.goto(base + "/animated")
            await computer.start_screencast(sink.on_frame)
            await asyncio.sleep(0.5)
            timer.start(10)
            last[0] = time.perf_counter()
            painted0, begin = sink.painted, time.perf_counter()
            await asyncio.sleep(seconds)
            elapsed = time.perf_counter() - begin
            timer.stop()
            await computer.stop_screencast()
            fps = (sink.painted - painted0) / elapsed
            ordered = sorted(gaps)
            p99 = ordered[int(len(ordered) * 0.99)] if ordered else 0.0
            print(
                f"Qt offscreen paint: {fps:5.1f} frames/s painted; decode "
                f"{_ms(sink.decode_s)}; event-loop stall max "
                f"{(max(gaps, default=0.01) - 0.01) * 1000:5.1f} ms, p99 gap {p99 * 1000:5.1f} ms "
                f"({len(gaps) / elapsed:5.1f} timer ticks/s)"
            )
        finally:
            await computer.close()

    with loop:
        loop.run_until_complete(main())
    sink.close()


async def _headless(reps: int, seconds: float, base: str) -> None:
    computer = PlaywrightComputer(dimensions=(1024, 768), throwaway=True)
    try:
        await screenshot_latency(computer, base, reps)
        await screencast_fps(computer, base, seconds)
    finally:
        await computer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="repetitions per action kind")
    parser.add_argument("--seconds", type=float, default=5.0, help="screencast window (s)")
    parser.add_argument("--qt", action="store_true", help="also paint frames in a Qt widget")
    args = parser.parse_args()
    with _serve() as base:
        asyncio.run(_headless(args.reps, args.seconds, base))
        if args.qt:
            qt_paint(base, args.seconds)


if __name__ == "__main__":
    main()
