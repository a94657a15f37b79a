"""A build's later chunks wait for its worker (no GIL contention with the GUI's paints)."""

from __future__ import annotations

import difflib
import threading

import pytest
from PySide6.QtCore import QObject

from desktop.unified_diff import parse_unified_diff
from desktop.views.diff import stream
from desktop.views.diff.stream import DiffStream, StreamMessage


def _file_diff(path: str, lines: int, every: int) -> str:
    old = [f"line {i}\n" for i in range(lines)]
    new = [f"changed {i}\n" if i % every == 0 else line for i, line in enumerate(old)]
    body = "".join(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}"))
    return f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n{body}"


@pytest.mark.parametrize("hold_ms", [60_000.0, 0.0])
def test_later_chunks_wait_for_the_worker_then_all_arrive_in_order(
    qtbot, monkeypatch, hold_ms: float
) -> None:
    monkeypatch.setattr(stream, "HOLD_MS", hold_ms)
    text = _file_diff("big.py", 2_500, 10) + _file_diff("small.py", 20, 5)
    blocked, go = threading.Event(), threading.Event()

    def parse(section: str) -> list:
        if "small.py" in section and "@@" in section:  # the second file: the worker waits
            blocked.set()
            assert go.wait(30)
        return parse_unified_diff(section)

    owner = QObject()
    got: list[StreamMessage] = []

    def deliver(message: StreamMessage) -> None:
        got.append(message)
        if message.kind == "files":
            builds.claim([f.path for f in message.data])

    builds = DiffStream(owner, deliver)
    try:
        builds.start_unified(text, parse)
        assert blocked.wait(30)  # big.py's 3 chunks are queued; the worker is still running

        def hunks() -> list[int]:
            return [len(m.data[0]) for m in got if m.kind == "hunks" and m.path == "big.py"]

        qtbot.waitUntil(lambda: bool(hunks()), timeout=10_000)
        builds._drain()
        builds._drain()
        assert hunks() == ([100] if hold_ms else [100, 100, 50])
        go.set()
        assert builds.wait(30)
        qtbot.waitUntil(lambda: not builds.building(stream.UNIFIED), timeout=10_000)
        assert hunks() == [100, 100, 50]
        big = [m.kind for m in got if m.path == "big.py"]
        assert big == ["hunks", "hunks", "hunks", "lines", "done"]
        ids = [h.id for m in got if m.kind == "hunks" and m.path == "big.py" for h in m.data[0]]
        assert ids == list(range(1, 251))
    finally:
        go.set()
        builds.wait(30)
