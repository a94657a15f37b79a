"""The window's first run: the longest GUI stall from Send to the end, first and second run.

Opens the research demo's window offscreen (scripted model, hosted activity, a sub-agent),
waits 3 s (the start-up warm-up runs meanwhile, unless ``--no-warmup``), then runs the task
twice in the same window, answering the MCP approval after 50 ms, and prints the longest gap
between ticks of a 5 ms timer during each run (target < 50 ms; the first run used to freeze
for ~0.5 s while pydantic built the ``openai`` stream models).

Usage: ``python -m bench.first_run [--no-warmup]``
"""

from __future__ import annotations

import argparse
import asyncio
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-warmup", action="store_true", help="skip the start-up warm-up")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    from desktop import app as desktop_app
    from desktop.demo import build_demo_agent

    session = desktop_app._Session(desktop_app.AppOptions(demo=True, scenario="research"))
    session.window.show()
    if not args.no_warmup:
        loop.run_in_executor(None, desktop_app._prewarm_lexers)
    worst = [0.0]
    clock = QElapsedTimer()
    clock.start()

    def tick() -> None:
        worst[0] = max(worst[0], float(clock.restart()))

    timer = QTimer(interval=5)
    timer.timeout.connect(tick)
    finished = asyncio.Event()
    session.controller.runningChanged.connect(lambda running: running or finished.set())
    session.controller.approvalRequested.connect(
        lambda _request: QTimer.singleShot(50, session.window.approvals.allow_once)
    )

    async def runs() -> None:
        await asyncio.sleep(3)
        for number in (1, 2):
            if number == 2:  # the same window, a fresh scripted model
                session.controller.set_agent_factory(
                    lambda ws: build_demo_agent(ws, delay_s=0.4, scenario="research")[0]
                )
            finished.clear()
            worst[0] = 0.0
            clock.restart()
            timer.start()
            session.controller.submit(session.task or "")
            await asyncio.wait_for(finished.wait(), 60)
            timer.stop()
            label = "without warm-up" if args.no_warmup else "with warm-up"
            print(f"run {number} ({label}): worst GUI stall {worst[0]:.0f} ms (target < 50)")
        await session.close()

    with loop:
        loop.run_until_complete(runs())


if __name__ == "__main__":
    main()
