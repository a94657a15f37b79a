"""Browser view figures: screenshot latency per action, screencast fps, Qt paint rate and stalls.

Starts a ``PlaywrightComputer`` (system Chromium) on pages served from 127.0.0.1 and measures:

1. per action kind (click, double_click, type, keypress, scroll, move, drag): the action's time and
   the screenshot ``ComputerTool`` takes after it (median and p95, ms);
2. CDP screencast frames per second on an animated page, frames only counted (no painting);
3. with ``--qt``: the real ``desktop.views.browser_view.BrowserView`` fed by a
   ``BrowserSession`` (offscreen platform, qasync loop): frames painted per second on the animated
   page (and frames received/decoded/dropped), the event-loop stall while painting (largest gap of
   a 10 ms timer minus the period, ms, and its p99 gap), then each action through
   ``GatedComputer`` with the screenshot after it while the view is live.

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


async def _time_actions(
    actions: dict[str, Callable[[int], Awaitable[None]]],
    screenshot: Callable[[], Awaitable[str]],
    reps: int,
    *,
    width: int,
) -> None:
    """Run each action ``reps`` times, each followed by a screenshot; print both timings."""
    for name, act in actions.items():
        action_s: list[float] = []
        shot_s: list[float] = []
        for i in range(reps):
            t0 = time.perf_counter()
            await act(i)
            t1 = time.perf_counter()
            await screenshot()
            t2 = time.perf_counter()
            action_s.append(t1 - t0)
            shot_s.append(t2 - t1)
        print(f"  {name:{width}s} action {_ms(action_s)} | screenshot {_ms(shot_s)}")


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
    await _time_actions(actions, computer.screenshot, reps, width=13)


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


def _gaps_summary(gaps: list[float], period_s: float) -> str:
    ordered = sorted(gaps)
    p99 = ordered[int(len(ordered) * 0.99)] if ordered else 0.0
    stall = max(0.0, (ordered[-1] if ordered else period_s) - period_s)
    return f"event-loop stall max {stall * 1000:5.1f} ms, p99 timer gap {p99 * 1000:5.1f} ms"


def qt_view(base: str, seconds: float, reps: int) -> None:
    """Run the real ``BrowserView`` (offscreen) under qasync and print its figures.

    1. frames painted per second on the animated page, with the session's received, decoded
       and dropped frame counts, and the event-loop stall (a 10 ms timer's largest gap minus
       the period, and its p99 gap);
    2. with the view live, each agent action through ``GatedComputer`` (as ``ComputerTool``
       drives it) and the screenshot after it (median and p95, ms), with the stall meanwhile.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.browser_session import BrowserSession
    from desktop.views.browser_view import BrowserView
    from harnesses.browser.gated import ActionGate, GatedComputer

    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    period_s = 0.010
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.timeout.connect(tick)

    def measure_from_now() -> None:
        gaps.clear()
        last[0] = time.perf_counter()
        if not timer.isActive():
            timer.start(int(period_s * 1000))

    async def main() -> None:
        computer = PlaywrightComputer(dimensions=(1024, 768), throwaway=True)
        gate = ActionGate()
        agent = GatedComputer(computer, gate)
        session = BrowserSession(computer, gate)
        view = BrowserView(session)
        view.resize(1000, 820)
        view.show()
        try:
            await computer.start()
            await computer.page.goto(base + "/animated")
            first = asyncio.Event()
            view.framePainted.connect(first.set)
            session.start()
            await asyncio.wait_for(first.wait(), 30)
            await asyncio.sleep(0.5)  # warm-up: measurement window, not synchronisation
            measure_from_now()
            painted0, received0 = view.frames_painted, session.frames_received
            decoded0, dropped0 = session.frames_decoded, session.frames_dropped
            begin = time.perf_counter()
            await asyncio.sleep(seconds)
            elapsed = time.perf_counter() - begin
            stall = _gaps_summary(gaps, period_s)
            rect = view.canvas.frame_rect()
            print(
                f"BrowserView (offscreen, frame {rect.width():.0f}x{rect.height():.0f} px): "
                f"{(view.frames_painted - painted0) / elapsed:5.1f} frames/s painted of "
                f"{(session.frames_received - received0) / elapsed:5.1f} received "
                f"({(session.frames_decoded - decoded0) / elapsed:5.1f} decoded off the GUI "
                f"thread, {session.frames_dropped - dropped0} dropped unseen); {stall} "
                f"({len(gaps) / elapsed:5.1f} timer ticks/s)"
            )

            await computer.page.goto(base + "/form")
            actions: dict[str, Callable[[int], Awaitable[None]]] = {
                "click": lambda i: agent.click(100 + i % 50, 40, "left"),
                "type": lambda i: agent.type("hello"),
                "keypress": lambda i: agent.keypress(["CTRL", "A"]),
                "scroll": lambda i: agent.scroll(400, 300, 0, 40 if i % 2 else -40),
                "drag": lambda i: agent.drag([(10, 300), (200, 320), (400, 340)]),
            }
            print("with the view live, through GatedComputer (action | screenshot after it):")
            measure_from_now()
            await _time_actions(actions, agent.screenshot, reps, width=9)
            print(
                f"  while acting: {_gaps_summary(gaps, period_s)}; "
                f"{len(view.log_entries())} actions logged"
            )
            timer.stop()
        finally:
            await session.close()
            await computer.close()
            view.close()

    with loop:
        loop.run_until_complete(main())
    asyncio.set_event_loop(None)


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
    parser.add_argument(
        "--qt", action="store_true", help="also measure the real BrowserView (offscreen Qt)"
    )
    args = parser.parse_args()
    with _serve() as base:
        asyncio.run(_headless(args.reps, args.seconds, base))
        if args.qt:
            qt_view(base, args.seconds, args.reps)


if __name__ == "__main__":
    main()
