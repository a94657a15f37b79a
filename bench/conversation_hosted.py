"""ConversationView under hosted activity: time per card and the longest event-loop stall.

Measures, offscreen, what the window does while a run shows hosted activity (the signals the
controller sends, replayed directly into the view):

* a research-like transcript: ``--cards`` rounds of web search (5 sources), code interpreter
  (code streamed in 20 pieces, then 40 lines of output), an MCP call, a tool search and an
  assistant message with citations: ms per round;
* one generated image of 1024 x 1024 px (random pixels, a ~3 MB PNG) shown inline, and three
  partial images before it: ms to show each;
* a sub-agent run of ``--nested`` entries streamed into its card, then folded: total ms;
* over all of it, the longest gap between ticks of a 5 ms ``QTimer`` (target < 50 ms, the
  product's stall budget).

Usage: ``python -m bench.conversation_hosted [--cards 40] [--nested 300]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QElapsedTimer, QIODevice, QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from desktop.activity import CardBody, Link
from desktop.views.conversation_view import ConversationView


class _StallMeter:
    """The longest gap (ms) between ticks of a 5 ms timer while the event loop runs."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._clock = QElapsedTimer()
        self._clock.start()
        self._timer = QTimer(interval=5)
        self._timer.timeout.connect(self._tick)
        self._timer.start()

    def _tick(self) -> None:
        self.worst = max(self.worst, float(self._clock.restart()))

    def phase(self) -> float:
        """The worst stall since the last call (and start a new phase)."""
        worst, self.worst = self.worst, 0.0
        self._clock.restart()
        return worst


def _pump(app: QApplication, ms: int = 10) -> None:
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        app.processEvents()


def _png(size: int) -> bytes:
    image = QImage(os.urandom(size * size * 4), size, size, QImage.Format.Format_RGB32).copy()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=40, help="rounds of hosted cards")
    parser.add_argument("--nested", type=int, default=300, help="entries in the sub-agent run")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    view = ConversationView()
    view.resize(720, 900)
    view.show()
    _pump(app, 50)
    image = _png(1024)  # made before measuring: encoding it is not the view's work
    meter = _StallMeter()
    links = [Link(f"Source {i}", f"https://example.org/page/{i}") for i in range(5)]
    code = "\n".join(f"value_{i} = compute({i}) * 2  # step {i}" for i in range(30))
    output = "".join(f"line {i}: {i * 3.14159:.5f}\n" for i in range(40))

    rounds: list[float] = []
    for n in range(args.cards):
        started = time.perf_counter()
        view.add_tool_card(f"ws{n}", "web_search", f"query number {n}", "web")
        view.update_tool_card(f"ws{n}", "completed", 900, "5 sources")
        view.set_tool_body(f"ws{n}", CardBody(links=links))
        view.add_tool_card(f"ci{n}", "code_interpreter", "value_0 = compute(0)", "cntr")
        for piece in range(1, 21):
            view.set_tool_body(
                f"ci{n}", CardBody(code=code[: len(code) * piece // 20], expanded=True)
            )
            _pump(app, 1)
        view.set_tool_body(f"ci{n}", CardBody(code=code, output=output, expanded=True))
        view.update_tool_card(f"ci{n}", "completed", 1200, "40 lines of output")
        view.add_tool_card(f"mcp{n}", "mcp", 'read_page(page="intro")', "MCP server wiki")
        view.set_tool_body(f"mcp{n}", CardBody(output="Intro page text\n" * 50))
        view.update_tool_card(f"mcp{n}", "completed", 300, "Intro page text")
        view.add_tool_card(f"ts{n}", "tool_search", "currency helpers", "in pricing")
        view.set_tool_body(f"ts{n}", CardBody(lines=["pricing.round_money", "pricing.convert"]))
        view.update_tool_card(f"ts{n}", "completed", 5, "loaded pricing.round_money")
        view.finish_assistant_message(
            f"m{n}", f"Answer **{n}** with `code` and a list:\n\n- one\n- two"
        )
        view.set_citations(f"m{n}", links[:2])
        _pump(app, 5)
        rounds.append((time.perf_counter() - started) * 1000)

    stalls = {"rounds": meter.phase()}
    image_ms: list[float] = []
    view.add_tool_card("ig", "image_generation", "a chart", "")
    for _ in range(4):  # three partial images, then the final one
        started = time.perf_counter()
        view.set_tool_body("ig", CardBody(images=[image], expanded=True))
        view.settle()
        image_ms.append((time.perf_counter() - started) * 1000)
        _pump(app, 20)

    stalls["image"] = meter.phase()
    started = time.perf_counter()
    view.add_tool_card("agent", "agent", "Where is rounding done?", "Explorer")
    for i in range(args.nested):
        view.adopt(f"n{i}", "agent")
        if i % 3 == 0:
            view.add_tool_card(f"n{i}", "shell", f"grep -rn price src # {i}", "/repo")
            view.update_tool_card(f"n{i}", "completed", 20, "exit 0")
        else:
            view.append_assistant_delta(f"n{i}", f"partial answer {i} ")
            view.finish_assistant_message(f"n{i}", f"Nested answer {i} with `code`.")
        if i % 10 == 0:
            _pump(app, 2)
    view.update_tool_card("agent", "completed", 5000, "done")
    view.settle()
    nested_ms = (time.perf_counter() - started) * 1000
    _pump(app, 100)
    stalls["sub-agent"] = meter.phase()

    print(f"hosted rounds: {args.cards} x 5 cards + 1 message (code streamed in 20 pieces)")
    print(f"  per round: median {statistics.median(rounds):.1f} ms, worst {max(rounds):.1f} ms")
    print(
        f"image {len(image) / 1e6:.1f} MB PNG, 1024 x 1024: "
        + ", ".join(f"{m:.1f}" for m in image_ms)
        + " ms"
    )
    print(f"sub-agent run of {args.nested} entries, then folded: {nested_ms:.0f} ms")
    print(f"entries at the top level: {view.entry_count()}")
    print(
        "worst event-loop stall: "
        + ", ".join(f"{name} {ms:.0f} ms" for name, ms in stalls.items())
        + " (target < 50)"
    )


if __name__ == "__main__":
    main()
