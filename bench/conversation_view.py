"""ConversationView: the cost of one append as the transcript grows (10/100/500/1,000 cards).

Drives the view through the window's own path: a ``QObject`` with the controller's signal
signatures, connected to the view's slots as ``MainWindow._connect_signals`` connects them,
emits a realistic mix of entries (user and streamed assistant messages with citations,
reasoning, notices, and tool cards of every kind: shell with output, a stalled shell then
killed, apply_patch, computer, codex, function, web search with sources, file search hits,
code interpreter with code and output, a generated image, MCP, tool search, and an agent run
as a tool with a nested sub-conversation).

At each size the view is first filled to that many top-level entries, then ``--samples``
more are appended one at a time; an append is timed from the first signal to the end of
the event-loop work it causes (layout and paint, drained with ``processEvents``). Over the
samples it prints the median, the 95th percentile and the worst append, and the longest
gap between ticks of a 5 ms ``QTimer`` (the event-loop stall a user would feel), each beside
the target (append < 16 ms at 1,000 cards; stall < 50 ms, the product's budget).

Then (``--part nested``, or ``both``, the default) the nested part: the append cost into one
running agent card's sub-conversation as it grows to 10/100/500/1,000 entries, and the
top-level append cost after ``--big-cards`` finished agent cards of ``--big-nested`` nested
entries each (same target).

Usage: ``python -m bench.conversation_view [--sizes 10,100,500,1000] [--samples 40]
[--part top|nested|both] [--nested-sizes 10,100,500,1000]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QElapsedTimer, QIODevice, QObject, QTimer, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from desktop.activity import CardBody, Link, SearchHit
from desktop.gc_policy import install_gui_thread_gc
from desktop.views.conversation_view import ConversationView

_APPEND_TARGET_MS = 16.0
_STALL_TARGET_MS = 50.0


class _Signals(QObject):
    """The controller's conversation signals (names and signatures as in the controller)."""

    userMessage = Signal(str)
    assistantDelta = Signal(str, str)
    assistantDone = Signal(str, str)
    reasoning = Signal(str, str)
    toolStarted = Signal(str, str, str, str)
    toolUpdated = Signal(str, str, object, str)
    toolBody = Signal(str, object)
    citations = Signal(str, object)
    nestedEntry = Signal(str, str)
    notice = Signal(str, str)


def _connect(c: _Signals, view: ConversationView) -> None:
    c.userMessage.connect(view.add_user_message)
    c.assistantDelta.connect(view.append_assistant_delta)
    c.assistantDone.connect(view.finish_assistant_message)
    c.reasoning.connect(view.add_reasoning)
    c.toolStarted.connect(view.add_tool_card)
    c.toolUpdated.connect(view.update_tool_card)
    c.toolBody.connect(view.set_tool_body)
    c.citations.connect(view.set_citations)
    c.nestedEntry.connect(view.adopt)
    c.notice.connect(view.add_notice)


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


def _png(size: int) -> bytes:
    image = QImage(size, size, QImage.Format.Format_RGB32)
    image.fill(0x3366AA)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def _drain(app: QApplication) -> None:
    """Run the event-loop work pending now (0 ms timers, layout requests, paints)."""
    for _ in range(3):
        app.sendPostedEvents()
        app.processEvents()


class _Mix:
    """Emits entry number ``n`` of a realistic session (kind chosen by ``n``)."""

    def __init__(self, c: _Signals, view: ConversationView) -> None:
        self.c = c
        self.view = view
        self.links = [Link(f"Source {i}", f"https://example.org/page/{i}") for i in range(5)]
        self.hits = [SearchHit(f"doc{i}.md", 0.9 - i / 10, f"snippet {i} " * 8) for i in range(3)]
        self.code = "\n".join(f"value_{i} = compute({i}) * 2" for i in range(20))
        self.output = "".join(f"line {i}: ok\n" for i in range(30))
        self.image = _png(256)
        self._kinds: list[Callable[[str], None]] = [
            self._user,
            self._assistant,
            self._shell,
            self._reasoning,
            self._patch,
            self._web_search,
            self._stalled,
            self._code,
            self._file_search,
            self._computer,
            self._codex,
            self._function,
            self._image,
            self._mcp,
            self._tool_search,
            self._notice,
            self._agent,
        ]

    def emit(self, n: int) -> None:
        self._kinds[n % len(self._kinds)](f"e{n}")

    def _user(self, i: str) -> None:
        self.c.userMessage.emit(f"Please look at module {i} and fix the failing test.")

    def _assistant(self, i: str) -> None:
        for word in "Here is what I found in the code, with a `snippet`:".split(" "):
            self.c.assistantDelta.emit(i, word + " ")
        self.view.flush()  # the coalescing timer's render, inside the measured append
        text = f"Answer **{i}**:\n\n```python\nprint('{i}')\n```\n\n- one\n- two"
        self.c.assistantDone.emit(i, text)
        self.c.citations.emit(i, self.links[:2])

    def _reasoning(self, i: str) -> None:
        self.c.reasoning.emit(i, "I should read the test first, then the module. " * 3)

    def _shell(self, i: str) -> None:
        self.c.toolStarted.emit(i, "shell", f"pytest -x tests/test_{i}.py", "/repo")
        self.c.toolUpdated.emit(i, "completed", 840, "exit 0 · 12 passed")

    def _stalled(self, i: str) -> None:
        self.c.toolStarted.emit(i, "shell", "npm run watch", "/repo")
        self.c.toolUpdated.emit(i, "stalled", None, "no output for 30 s")
        self.c.toolUpdated.emit(i, "killed", 30_000, "stopped by the user")

    def _patch(self, i: str) -> None:
        self.c.toolStarted.emit(i, "apply_patch", f"apply_patch src/{i}.py", "update_file")
        self.c.toolUpdated.emit(i, "waiting-approval", None, "")
        self.c.toolUpdated.emit(i, "completed", 12, "+3 -1")

    def _computer(self, i: str) -> None:
        self.c.toolStarted.emit(i, "computer", "click (120, 340)", "example.org")
        self.c.toolUpdated.emit(i, "completed", 300, "")

    def _codex(self, i: str) -> None:
        self.c.toolStarted.emit(i, "codex", "Refactor the parser", "codex exec")
        self.c.toolUpdated.emit(i, "completed", 42_000, "4 files changed")

    def _function(self, i: str) -> None:
        self.c.toolStarted.emit(i, "function", 'get_weather(city="Paris")', "")
        self.c.toolUpdated.emit(i, "failed", 3, "ValueError: unknown city")

    def _web_search(self, i: str) -> None:
        self.c.toolStarted.emit(i, "web_search", f"query {i}", "web")
        self.c.toolBody.emit(i, CardBody(links=self.links))
        self.c.toolUpdated.emit(i, "completed", 900, "5 sources")

    def _file_search(self, i: str) -> None:
        self.c.toolStarted.emit(i, "file_search", "rounding rules", "vector store")
        self.c.toolBody.emit(i, CardBody(hits=self.hits, expanded=True))
        self.c.toolUpdated.emit(i, "completed", 200, "3 results")

    def _code(self, i: str) -> None:
        self.c.toolStarted.emit(i, "code_interpreter", "value_0 = compute(0)", "cntr")
        self.c.toolBody.emit(i, CardBody(code=self.code[:200], expanded=True))
        self.c.toolBody.emit(i, CardBody(code=self.code, output=self.output, expanded=True))
        self.c.toolUpdated.emit(i, "completed", 1200, "30 lines of output")

    def _image(self, i: str) -> None:
        self.c.toolStarted.emit(i, "image_generation", "a chart", "")
        self.c.toolBody.emit(i, CardBody(images=[self.image], expanded=True))
        self.c.toolUpdated.emit(i, "completed", 8000, "1 image")

    def _mcp(self, i: str) -> None:
        self.c.toolStarted.emit(i, "mcp", 'read_page(page="intro")', "MCP server wiki")
        self.c.toolBody.emit(i, CardBody(output="Intro page text\n" * 20))
        self.c.toolUpdated.emit(i, "completed", 300, "Intro page text")

    def _tool_search(self, i: str) -> None:
        self.c.toolStarted.emit(i, "tool_search", "currency helpers", "in pricing")
        self.c.toolBody.emit(i, CardBody(lines=["pricing.round_money", "pricing.convert"]))
        self.c.toolUpdated.emit(i, "completed", 5, "loaded pricing.round_money")

    def _notice(self, i: str) -> None:
        self.c.notice.emit(f"Checkpoint {i} saved.", "info")

    def _agent(self, i: str) -> None:
        self.c.toolStarted.emit(i, "agent", "Where is rounding done?", "Explorer")
        for k in range(4):
            nested = f"{i}.{k}"
            self.c.nestedEntry.emit(nested, i)
            if k % 2 == 0:
                self.c.toolStarted.emit(nested, "shell", f"grep -rn price src # {k}", "/repo")
                self.c.toolUpdated.emit(nested, "completed", 20, "exit 0")
            else:
                self.c.assistantDone.emit(nested, f"Nested answer {k} with `code`.")
        self.c.toolUpdated.emit(i, "completed", 5000, "done")


def _nested_entry(c: _Signals, view: ConversationView, parent: str, n: int) -> None:
    """Nested entry ``n`` of agent card ``parent``'s run: a shell card, an assistant message
    streamed in, or a web search with sources (as the explorer's runs journal them)."""
    nested = f"{parent}.{n}"
    c.nestedEntry.emit(nested, parent)
    kind = n % 3
    if kind == 0:
        c.toolStarted.emit(nested, "shell", f"grep -rn price src # {n}", "/repo")
        c.toolUpdated.emit(nested, "completed", 20, "exit 0 · 3 matches")
    elif kind == 1:
        for word in f"Nested answer {n} with `code` and a list:".split(" "):
            c.assistantDelta.emit(nested, word + " ")
        view.flush()
        c.assistantDone.emit(nested, f"Nested answer {n} with `code`.\n\n- one\n- two")
    else:
        c.toolStarted.emit(nested, "web_search", f"rounding rules {n}", "web")
        c.toolBody.emit(nested, CardBody(links=[Link("Docs", "https://example.org/docs")]))
        c.toolUpdated.emit(nested, "completed", 400, "1 source")


def _timed(app: QApplication, meter: _StallMeter, samples: int, act: Callable[[], None]) -> str:
    """Time ``samples`` calls of ``act`` (each drained); median, p95, worst, stall (ms)."""
    meter.phase()
    times: list[float] = []
    for _ in range(samples):
        started = time.perf_counter()
        act()
        _drain(app)
        times.append((time.perf_counter() - started) * 1000)
        app.processEvents()
    stall = meter.phase()
    return (
        f"{statistics.median(times):>10.1f} {_percentile(times, 0.95):>8.1f}"
        f" {max(times):>9.1f} {stall:>9.0f}"
    )


def nested(args: argparse.Namespace) -> None:
    """The nested part (issue 15, Build item 2 at scale): the append cost into one running
    agent's sub-conversation (expanded, followed) as it grows to each of ``--nested-sizes``
    entries; then the top-level append cost after ``--big-cards`` finished agent cards each
    holding ``--big-nested`` nested entries (folded, as a finished run's are)."""
    app = QApplication.instance() or QApplication([])
    view = ConversationView()
    view.resize(args.width, args.height)
    view.show()
    signals = _Signals()
    _connect(signals, view)
    meter = _StallMeter()
    sizes = [int(size) for size in args.nested_sizes.split(",")]
    print(f"append into a running agent's sub-conversation ({args.samples} samples)")
    print(f"{'nested':>8} {'median ms':>10} {'p95 ms':>8} {'worst ms':>9} {'stall ms':>9}  target")
    signals.userMessage.emit("Explore the repository")
    signals.toolStarted.emit("agent", "agent", "Where is rounding done?", "Explorer")
    card = view.tool_card("agent")
    count = [0]

    def add_nested() -> None:
        _nested_entry(signals, view, "agent", count[0])
        count[0] += 1

    for size in sizes:
        started = time.perf_counter()
        while len(card.sub_entries()) < size:
            add_nested()
            if count[0] % 20 == 0:
                _drain(app)
        _drain(app)
        fill_s = time.perf_counter() - started
        row = _timed(app, meter, args.samples, add_nested)
        print(
            f"{size:>8} {row}  append < {_APPEND_TARGET_MS:.0f} ms, stall < "
            f"{_STALL_TARGET_MS:.0f} ms  (filled in {fill_s:.1f} s)"
        )
    signals.toolUpdated.emit("agent", "completed", 60_000, "done")
    for k in range(1, args.big_cards):
        parent = f"big{k}"
        signals.toolStarted.emit(parent, "agent", f"Explore part {k}", "Explorer")
        for n in range(args.big_nested):
            _nested_entry(signals, view, parent, n)
            if n % 20 == 0:
                _drain(app)
        signals.toolUpdated.emit(parent, "completed", 60_000, "done")
        _drain(app)
    mix = _Mix(signals, view)
    step = [0]

    def add_top() -> None:  # the mix's kinds in turn, its agent card left out
        if step[0] % len(mix._kinds) == len(mix._kinds) - 1:
            step[0] += 1
        mix.emit(step[0])
        step[0] += 1

    print(
        f"top-level append after {args.big_cards} agent cards of {args.big_nested} "
        f"nested entries: {_timed(app, meter, args.samples, add_top)}"
        f"  append < {_APPEND_TARGET_MS:.0f} ms"
    )
    view.close()


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,500,1000", help="transcript sizes (entries)")
    parser.add_argument("--samples", type=int, default=40, help="appends timed per size")
    parser.add_argument("--width", type=int, default=720, help="view width (px)")
    parser.add_argument("--height", type=int, default=900, help="view height (px)")
    parser.add_argument(
        "--nested-sizes", default="10,100,500,1000", help="sub-conversation sizes (entries)"
    )
    parser.add_argument("--big-cards", type=int, default=5, help="agent cards, nested part")
    parser.add_argument("--big-nested", type=int, default=500, help="entries in each of them")
    parser.add_argument(
        "--part", choices=["top", "nested", "both"], default="both", help="what to measure"
    )
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    # the app's collection (desktop.gc_policy): automatic passes off, young ones on a timer,
    # full ones freezing their survivors (Python's automatic gen-2 pass took 75 ms in a fill here)
    gc_timers = install_gui_thread_gc(app)  # noqa: F841  (kept alive for the run)
    if args.part != "top":
        nested(args)
    if args.part == "nested":
        return
    sizes = [int(size) for size in args.sizes.split(",")]
    app = QApplication.instance() or QApplication([])
    view = ConversationView()
    view.resize(args.width, args.height)
    view.show()
    signals = _Signals()
    _connect(signals, view)
    mix = _Mix(signals, view)
    _drain(app)
    meter = _StallMeter()
    n = 0
    print(
        f"conversation append cost (view {args.width} x {args.height} px, {args.samples} samples)"
    )
    print(f"{'entries':>8} {'median ms':>10} {'p95 ms':>8} {'worst ms':>9} {'stall ms':>9}  target")
    results: list[tuple[int, float]] = []
    for size in sizes:
        fill_started = time.perf_counter()
        while view.entry_count() < size:
            mix.emit(n)
            n += 1
            if n % 20 == 0:
                _drain(app)
        _drain(app)
        fill_s = time.perf_counter() - fill_started
        meter.phase()
        times: list[float] = []
        for _ in range(args.samples):
            started = time.perf_counter()
            mix.emit(n)
            n += 1
            _drain(app)
            times.append((time.perf_counter() - started) * 1000)
            app.processEvents()  # let the stall meter tick between appends
        stall = meter.phase()
        median = statistics.median(times)
        results.append((size, median))
        print(
            f"{size:>8} {median:>10.1f} {_percentile(times, 0.95):>8.1f} {max(times):>9.1f}"
            f" {stall:>9.0f}  append < {_APPEND_TARGET_MS:.0f} ms, stall < {_STALL_TARGET_MS:.0f}"
            f" ms  (filled in {fill_s:.1f} s)"
        )
    if len(results) > 1:
        (small, first), (large, last) = results[0], results[-1]
        print(f"median append at {large} / at {small} entries: {last / max(first, 0.01):.2f}x")


if __name__ == "__main__":
    main()
