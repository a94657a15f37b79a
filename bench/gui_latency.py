"""GUI latency against PRODUCT.md's targets: event-loop stall while a command streams 50 MB
through the real executor into the terminal view (< 50 ms), a 10,000-line diff shown in the
diff view (< 300 ms, no stall > 50 ms), the window up after launch (< 1.5 s), idle RSS
(< 200 MB).

Usage: ``QT_QPA_PLATFORM=offscreen python -m bench.gui_latency [--mb 50]`` (or under Xvfb).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _process_age_s() -> float:
    """Seconds since this process started (from /proc, so imports are included)."""
    ticks = os.sysconf("SC_CLK_TCK")
    with open("/proc/self/stat", encoding="utf-8") as f:
        start = int(f.read().rsplit(")", 1)[1].split()[19]) / ticks
    with open("/proc/uptime", encoding="utf-8") as f:
        uptime = float(f.read().split()[0])
    return uptime - start


class StallMeter:
    """A 5 ms Qt timer; the longest gap between its ticks is the event-loop stall."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.worst = 0.0
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.setInterval(5)
        self._timer.timeout.connect(self._tick)
        self._timer.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self._last)
        self._last = now

    def reset(self) -> None:
        self.worst = 0.0
        self._last = time.perf_counter()

    def stop(self) -> None:
        self._timer.stop()


def child_window_up() -> None:
    """Child process: build the real window (demo session, not started), report when painted."""
    import qasync
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.app import AppOptions, _Session

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CONFIG_HOME"] = tmp
        session = _Session(AppOptions(demo=True, journal_path=Path(tmp) / "j.sqlite3"))
        session.task = None
        result: dict[str, float] = {}
        done = loop.create_future()

        def painted() -> None:
            result["window_up_s"] = _process_age_s()
            QTimer.singleShot(2000, idle)

        def idle() -> None:
            result["idle_rss_mb"] = _rss_mb()
            done.set_result(None)

        session.window.show()
        QTimer.singleShot(0, painted)
        with loop:
            loop.run_until_complete(done)
            loop.run_until_complete(session.close())
    print(json.dumps(result))


async def _stream_stall(mb: int) -> dict[str, float]:
    from desktop.views.terminal_view import TerminalView
    from harnesses.shell import (
        ShellCommandFinished,
        ShellCommandStarted,
        ShellOutputChunk,
        SubprocessShellExecutor,
    )

    view = TerminalView()
    view.resize(900, 700)
    view.show()
    meter = StallMeter()

    def listener(event: Any) -> None:
        block = f"{event.call_id}:{event.command_index}"
        if isinstance(event, ShellCommandStarted):
            view.on_command_started(
                block, event.command, event.working_directory, event.sandboxed, "agent"
            )
        elif isinstance(event, ShellOutputChunk):
            view.on_output(block, event.stream, event.text)
        elif isinstance(event, ShellCommandFinished):
            view.on_command_finished(block, event.exit_code, "exit", event.duration_ms)

    with tempfile.TemporaryDirectory() as tmp:
        executor = SubprocessShellExecutor(Path(tmp), listener=listener)
        start = time.perf_counter()
        meter.reset()
        await executor.run([f"head -c {mb * 3 // 4}M /dev/zero | base64 -w 120"], call_id="bench")
        elapsed = time.perf_counter() - start
    await asyncio.sleep(0.2)
    meter.stop()
    view.close()
    return {
        "stream_mb": float(mb),
        "stream_s": elapsed,
        "stream_stall_ms": meter.worst * 1000,
        "rss_after_stream_mb": _rss_mb(),
    }


async def _diff_open() -> dict[str, float]:
    """A dense 10,000-line diff (a change every 12 lines: 834 hunks) on the app's path: the
    editor's hunks on a worker thread, then ``DiffView.stream_file`` (hunks stream in)."""
    from PySide6.QtWidgets import QApplication

    from desktop.views.diff_highlight import lexer_for_path
    from desktop.views.diff_view import DiffView
    from harnesses.editor.hunks import compute_hunks

    old = "".join(f"    value_{i} = compute({i}, 'x')  # note {i}\n" for i in range(10_000))
    new = "".join(
        f"    value_{i} = compute({i}, 'y')  # changed\n" if i % 12 == 0 else line
        for i, line in enumerate(old.splitlines(keepends=True))
    )
    view = DiffView()
    view.resize(1200, 800)
    view.show()
    meter = StallMeter()
    await asyncio.sleep(0.05)
    meter.reset()
    start = time.perf_counter()
    hunks = await asyncio.to_thread(compute_hunks, old, new)  # the editor's _propose
    await asyncio.to_thread(lexer_for_path, "big.py")  # as the controller does before showing
    file = view.stream_file("big.py", old, new, proposal_id="p", hunks=hunks)
    QApplication.processEvents()
    view.repaint()
    for _ in range(6000):  # bounded: 60 s
        if not view.building("big.py"):
            break
        await asyncio.sleep(0.01)
    view.repaint()
    opened = time.perf_counter() - start
    await asyncio.sleep(0.3)
    meter.stop()
    view.close()
    return {
        "diff_lines": 10000.0,
        "diff_hunks": float(len(file.hunks)),
        "diff_open_ms": opened * 1000,
        "diff_stall_ms": meter.worst * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--mb", type=int, default=50, help="output streamed through the terminal (MB)"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_window_up()
        return
    import qasync
    from PySide6.QtWidgets import QApplication

    launches = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-m", "bench.gui_latency", "--child"],
            capture_output=True,
            text=True,
            check=True,
        )
        launches.append(json.loads(out.stdout.strip().splitlines()[-1]))
    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        stream = loop.run_until_complete(_stream_stall(args.mb))
        diff = loop.run_until_complete(_diff_open())
    rows = [
        ("window up after launch", min(r["window_up_s"] for r in launches) * 1000, 1500, "ms"),
        ("idle RSS", min(r["idle_rss_mb"] for r in launches), 200, "MB"),
        (f"stall while {args.mb} MB stream", stream["stream_stall_ms"], 50, "ms"),
        ("10,000-line dense diff shown", diff["diff_open_ms"], 1000, "ms"),
        ("stall while diff opens", diff["diff_stall_ms"], 50, "ms"),
    ]
    print(f"{'measure':<28} {'figure':>10} {'target':>8}  ok")
    for name, value, target, unit in rows:
        print(
            f"{name:<28} {value:>7.1f} {unit:<2} {target:>5} {unit:<2} {'yes' if value <= target else 'NO'}"
        )
    print(
        f"(stream: {stream['stream_s']:.1f} s for {args.mb} MB; RSS after stream {stream['rss_after_stream_mb']:.0f} MB; diff hunks {diff['diff_hunks']:.0f})"
    )


if __name__ == "__main__":
    main()
