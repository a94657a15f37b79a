"""Terminal view under a flood: 50 MB of coloured output through the slots, 64 KiB chunks.

A producer timer feeds one chunk per event-loop turn (as the controller does when the
executor's reads arrive) while a 5 ms timer records the gaps between its ticks. Prints the
throughput (MB/s), the longest event-loop stall (largest gap minus the 5 ms period, ms), the
99th-percentile gap, the slowest single ``on_output`` and ``flush`` calls, and the bounded
sizes at the end (model characters, document characters).

Usage: ``QT_QPA_PLATFORM=offscreen python -m bench.terminal_view [--mb 50] [--chunk-kib 64]``
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from desktop.views.terminal_view import TerminalView

ESC = "\x1b"


def _corpus(size: int, seed: int = 7) -> str:
    """About ``size`` chars of mixed output: pytest lines, logs, 256/truecolor, progress bars."""
    rnd = random.Random(seed)
    words = "alpha beta gamma delta request handled cache miss compile link module".split()
    out: list[str] = []
    n = 0
    i = 0
    while n < size:
        i += 1
        w = " ".join(rnd.choice(words) for _ in range(rnd.randint(3, 14)))
        k = rnd.random()
        if k < 0.25:
            line = f"tests/test_{i % 97}.py::test_{w[:24].replace(' ', '_')} {ESC}[32mPASSED{ESC}[0m{ESC}[32m [{i % 100:3d}%]{ESC}[0m\n"
        elif k < 0.35:
            line = f"{ESC}[1;31mE   {ESC}[0m{ESC}[31mAssertionError: {w}{ESC}[0m\n"
        elif k < 0.45:
            line = f"{ESC}[38;5;244m2026-01-0{i % 9} 12:00:{i % 60:02d}{ESC}[0m {ESC}[38;2;90;200;250mINFO{ESC}[0m {w}\n"
        elif k < 0.50:
            line = f"\r {ESC}[38;5;197m{'━' * (i % 30)}{ESC}[0m {i % 100}% eta 0:00:{i % 60:02d}"
        elif k < 0.52:
            line = "x" * rnd.randint(500, 3000) + "\n"
        else:
            line = w + "\n"
        out.append(line)
        n += len(line)
    return "".join(out)


def run(total_mb: float, chunk_kib: int) -> dict[str, float]:
    """Stream ``total_mb`` MB (10^6 chars) in ``chunk_kib`` KiB chunks; returns the figures."""
    app = QApplication.instance() or QApplication([])
    view = TerminalView()
    view.resize(1000, 800)
    view.show()
    corpus = _corpus(4_000_000)
    chunk_size = chunk_kib * 1024
    starts = list(range(0, len(corpus) - chunk_size, chunk_size))
    total = int(total_mb * 1_000_000)
    state = {"sent": 0, "i": 0}
    gaps: list[float] = []
    slow = {"on_output": 0.0, "flush": 0.0}

    original_flush = view.flush

    def timed_flush() -> None:
        t0 = time.perf_counter()
        original_flush()
        slow["flush"] = max(slow["flush"], time.perf_counter() - t0)

    view._timer.timeout.disconnect()
    view._timer.timeout.connect(timed_flush)

    view.on_command_started("flood", "cat flood.log", "/tmp", True, "agent")
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    monitor = QTimer(interval=5, timerType=Qt.TimerType.PreciseTimer)
    monitor.timeout.connect(tick)
    producer = QTimer(interval=0)
    begin = time.perf_counter()
    end = [0.0]

    def produce() -> None:
        if state["sent"] >= total:
            producer.stop()
            view.on_command_finished("flood", 0, "exit", int((time.perf_counter() - begin) * 1000))
            timed_flush()
            end[0] = time.perf_counter()
            monitor.stop()
            app.quit()
            return
        start = starts[state["i"] % len(starts)]
        state["i"] += 1
        chunk = corpus[start : start + chunk_size]
        stream = "stderr" if state["i"] % 10 == 0 else "stdout"
        t0 = time.perf_counter()
        view.on_output("flood", stream, chunk)
        slow["on_output"] = max(slow["on_output"], time.perf_counter() - t0)
        state["sent"] += len(chunk)

    producer.timeout.connect(produce)
    monitor.start()
    producer.start()
    app.exec()
    elapsed = end[0] - begin
    gaps_ms = sorted(g * 1000 for g in gaps[1:]) or [0.0]
    block = view.model.block("flood")
    return {
        "mb": state["sent"] / 1e6,
        "seconds": elapsed,
        "mb_per_s": state["sent"] / 1e6 / elapsed,
        "max_stall_ms": max(0.0, gaps_ms[-1] - 5),
        "p99_gap_ms": gaps_ms[int(len(gaps_ms) * 0.99) - 1],
        "median_gap_ms": statistics.median(gaps_ms),
        "slowest_on_output_ms": slow["on_output"] * 1000,
        "slowest_flush_ms": slow["flush"] * 1000,
        "model_chars": view.model.kept_chars(),
        "document_chars": view.output_document("flood").characterCount(),
        "omitted_lines": block.omitted_lines,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="output to stream, MB")
    parser.add_argument("--chunk-kib", type=int, default=64, help="chunk size, KiB")
    args = parser.parse_args()
    r = run(args.mb, args.chunk_kib)
    print(
        f"streamed            {r['mb']:.1f} MB in {args.chunk_kib} KiB chunks, {r['seconds']:.2f} s"
    )
    print(f"throughput          {r['mb_per_s']:.1f} MB/s")
    print(f"longest stall       {r['max_stall_ms']:.1f} ms (largest 5 ms-timer gap minus 5 ms)")
    print(f"timer gaps          median {r['median_gap_ms']:.1f} ms, p99 {r['p99_gap_ms']:.1f} ms")
    print(f"slowest on_output   {r['slowest_on_output_ms']:.1f} ms")
    print(f"slowest flush       {r['slowest_flush_ms']:.1f} ms")
    print(
        f"kept at the end     model {r['model_chars']:,} chars, document {r['document_chars']:,}"
        f" chars, {r['omitted_lines']:,} lines omitted"
    )


if __name__ == "__main__":
    main()
