"""BrowserView + BrowserSession + GatedComputer on a real Chromium (issue "Browser", item 3)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
import qasync
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core import Agent, RunConfig, RunItemStreamEvent, Runner
from core.models.openai_responses import OpenAIProvider
from core.tools.computer import AsyncComputer, Button, ComputerTool
from desktop.browser_session import BrowserSession, PageInput
from desktop.views.browser_view import BrowserView, describe_action
from harnesses.browser import BrowserAction, BrowserNotFoundError, PlaywrightComputer, find_chromium
from harnesses.browser.gated import ActionGate, GatedComputer, GateState
from tests.harnesses.browser_pages import PageServer, serve_pages
from tests.support.items import message, new_id

SCREENSHOT = Path("/tmp/browser_view.png")
# The offscreen platform's only, harmless, message (platform notes).
_HARMLESS = ("This plugin does not support propagateSizeHints()",)


def _chromium_available() -> bool:
    try:
        find_chromium()
    except BrowserNotFoundError:  # pragma: no cover - CI installs chromium
        return False
    return True


needs_chromium = pytest.mark.skipif(not _chromium_available(), reason="no Chromium installed")


# -- helpers ------------------------------------------------------------------------------------


def run_qasync(coro_factory: Callable[[], Awaitable[Any]], timeout_s: float = 60) -> Any:
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        with loop:
            return loop.run_until_complete(asyncio.wait_for(coro_factory(), timeout_s))
    finally:
        asyncio.set_event_loop(None)


def next_signal(signal: Any, accept: Callable[..., bool] = lambda *args: True) -> asyncio.Future:
    """A future resolved with the arguments of the next emission ``accept`` agrees to."""
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def fire(*args: Any) -> None:
        if not future.done() and accept(*args):
            future.set_result(args)
            signal.disconnect(fire)

    signal.connect(fire)
    return future


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _computer_call(actions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "computer_call",
        "id": new_id("cu"),
        "call_id": new_id("call"),
        "status": "completed",
        "pending_safety_checks": [],
        "actions": actions,
    }


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with serve_pages() as server:
        yield server


@pytest.fixture(autouse=True)
def _no_qt_warnings(qtlog: Any) -> Iterator[None]:
    """Fail on any Qt warning except the offscreen platform's harmless one."""
    yield
    from PySide6.QtCore import QtMsgType

    bad = [
        record.message
        for record in qtlog.records
        if record.type != QtMsgType.QtDebugMsg
        and record.type != QtMsgType.QtInfoMsg
        and not any(text in record.message for text in _HARMLESS)
    ]
    assert not bad, f"unexpected Qt messages: {bad}"


class _Browser:
    """A PlaywrightComputer, its gate, the session and the view, closed and checked after."""

    def __init__(self, qtbot: Any, tmp_path: Path, start_url: str) -> None:
        self.computer = PlaywrightComputer(
            dimensions=(800, 600), profile_dir=tmp_path / "profile", start_url=start_url
        )
        self.gate = ActionGate()
        self.agent = GatedComputer(self.computer, self.gate)
        self.session = BrowserSession(self.computer, self.gate)
        self.view = BrowserView(self.session)
        qtbot.addWidget(self.view)
        self.view.resize(900, 760)
        self.view.show()
        self.pids: list[int] = []

    async def close(self) -> None:
        if self.computer.browser_pid is not None:
            self.pids.append(self.computer.browser_pid)
        await self.session.close()
        await self.computer.close()
        self.view.close()
        assert not [pid for pid in self.pids if _alive(pid)], "Chromium is still running"


# -- the gate alone ---------------------------------------------------------------------------


class _Recorder(AsyncComputer):
    """Records calls (an in-memory computer for the gate's own rules)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    async def screenshot(self) -> str:
        self.calls.append(("screenshot",))
        return "UE5H"

    async def click(self, x: int, y: int, button: Button, *, keys: list[str] | None = None) -> None:
        self.calls.append(("click", x, y, button, tuple(keys or ())))

    async def double_click(self, x: int, y: int) -> None:
        self.calls.append(("double_click", x, y))

    async def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int) -> None:
        self.calls.append(("scroll", x, y, scroll_x, scroll_y))

    async def type(self, text: str) -> None:
        self.calls.append(("type", text))

    async def wait(self) -> None:
        self.calls.append(("wait",))

    async def move(self, x: int, y: int) -> None:
        self.calls.append(("move", x, y))

    async def keypress(self, keys: list[str]) -> None:
        self.calls.append(("keypress", tuple(keys)))

    async def drag(self, path: list[tuple[int, int]]) -> None:
        self.calls.append(("drag", tuple(path)))


async def test_gate_holds_every_action_until_resumed() -> None:
    inner = _Recorder()
    gated = GatedComputer(inner)
    states: list[GateState] = []
    gated.gate.add_listener(states.append)
    await gated.click(1, 2, "right", keys=["SHIFT"])
    await gated.move(3, 4, keys=["CTRL"])  # the inner move takes no keys: dropped, not failed
    assert inner.calls == [("click", 1, 2, "right", ("SHIFT",)), ("move", 3, 4)]
    blocked = asyncio.Event()
    gated.gate.add_listener(lambda state: blocked.set() if state.waiting else None)
    gated.gate.pause()
    waiting = asyncio.ensure_future(gated.type("held"))
    await asyncio.wait_for(blocked.wait(), 5)
    assert gated.gate.state == GateState(paused=True, waiting=("type",))
    assert ("type", "held") not in inner.calls
    gated.gate.resume()
    await waiting
    assert inner.calls[-1] == ("type", "held")
    assert await gated.screenshot() == "UE5H"
    assert states[-1] == GateState(paused=False)
    assert any(s.active == "type" for s in states)


def test_describe_action_texts() -> None:
    assert describe_action(BrowserAction("click", x=3, y=4)) == "click (3, 4)"
    assert describe_action(BrowserAction("click", x=3, y=4, button="right", keys=("Shift",))) == (
        "click right (3, 4) with Shift"
    )
    assert describe_action(BrowserAction("drag", path=((1, 2), (5, 6), (9, 9)))) == (
        "drag (1, 2) → (9, 9)"
    )
    assert describe_action(BrowserAction("type", text="Ada")) == 'type "Ada"'
    assert describe_action(BrowserAction("keypress", text="Control+a")) == "press Control+a"
    assert describe_action(BrowserAction("scroll", x=1, y=1, scroll=(0, 40))) == (
        "scroll (0, 40) at (1, 1)"
    )


def test_widget_to_page_mapping_keeps_the_aspect(qtbot: Any) -> None:
    computer = PlaywrightComputer(dimensions=(800, 600))  # never started: no browser
    session = BrowserSession(computer)
    view = BrowserView(session)
    qtbot.addWidget(view)
    canvas = view.canvas
    for width, height in ((1000, 500), (400, 700)):
        canvas.resize(width, height)
        rect = canvas.frame_rect()
        assert rect.width() / rect.height() == pytest.approx(800 / 600, rel=1e-3)
        assert rect.center().x() == pytest.approx(width / 2)
        assert rect.center().y() == pytest.approx(height / 2)
        for x, y in ((0, 0), (400, 300), (799, 599), (60, 100)):
            point = canvas.to_widget(x, y)
            assert canvas.to_page(point) == pytest.approx((x, y), abs=0.1)
        # outside the frame (letterbox) clamps to the page's edge
        assert canvas.to_page(QPointF(0, 0)) == (0.0, 0.0)
    assert not session.send_input(PageInput("text", text="x")), "no input without control"
    run_qasync(session.close)


# -- on Chromium ---------------------------------------------------------------------------------


@needs_chromium
def test_scripted_run_paints_frames_and_marks_actions(
    qtbot: Any, tmp_path: Path, pages: PageServer, responses_server: Any
) -> None:
    call = _computer_call(
        [
            {"type": "click", "x": 100, "y": 40, "button": "left"},
            {"type": "type", "text": "Ada Lovelace"},
            {"type": "keypress", "keys": ["ENTER"]},
        ]
    )
    responses_server.enqueue([call])
    responses_server.enqueue([message("done")])

    async def scenario() -> None:
        browser = _Browser(qtbot, tmp_path, pages.url("/form"))
        view, session = browser.view, browser.session
        client = openai.AsyncOpenAI(
            base_url=responses_server.base_url, api_key="test-key", max_retries=0
        )
        try:
            painted = next_signal(view.framePainted)
            agent: Agent[Any] = Agent(
                name="b", model="gpt-5.5", tools=[ComputerTool(browser.agent)]
            )
            result = Runner.run_streamed(
                agent,
                "fill the form",
                run_config=RunConfig(model_provider=OpenAIProvider(client)),
            )
            async for event in result.stream_events():
                # what the controller's toolStarted/toolUpdated signals carry
                if isinstance(event, RunItemStreamEvent) and event.name == "tool_called":
                    session.on_tool_started(event.item.raw_item["call_id"], "computer", "", "")
                elif isinstance(event, RunItemStreamEvent) and event.name == "tool_output":
                    session.on_tool_updated(event.item.raw_item["call_id"], "completed", None, "")
            assert result.final_output == "done"
            await asyncio.wait_for(painted, 20)
            assert await browser.computer.page.text_content("#out") == "Hello, Ada Lovelace"
            assert session.streaming and session.frames_received >= 1
            assert view.frames_painted >= 1 and view.canvas.image is not None
            assert view.canvas.meta is not None and view.canvas.meta.url == pages.url("/form")
            assert view.url.text() == pages.url("/form")
            entries = view.log_entries()
            assert [text.split("  ", 1)[1] for text, _ in entries] == [
                "click (100, 40)",
                'type "Ada Lovelace"',
                "press Enter",
            ]
            assert {call_id for _, call_id in entries} == {call["call_id"]}
            assert view.canvas.marks_added == 3  # marked on the frame (they fade in 1.6 s)
            sent = [
                i
                for i in responses_server.requests[1].body["input"]
                if i.get("type") == "computer_call_output"
            ]
            assert sent[0]["output"]["image_url"].startswith("data:image/png;base64,")
            # the picture for the report: the filled form with the action marks
            assert view.grab().save(str(SCREENSHOT))
            activated = next_signal(view.callActivated)
            view.log.itemActivated.emit(view.log.item(0))
            assert await activated == (call["call_id"],)
            view.show_call(call["call_id"])
            assert len(view.log.selectedItems()) == 3
        finally:
            await client.close()
            await browser.close()

    run_qasync(scenario)
    assert SCREENSHOT.stat().st_size > 10_000


@needs_chromium
def test_take_control_holds_the_agent_until_hand_back(
    qtbot: Any, tmp_path: Path, pages: PageServer, responses_server: Any
) -> None:
    responses_server.enqueue([_computer_call([{"type": "click", "x": 60, "y": 100}])])
    responses_server.enqueue([message("ok")])

    async def scenario() -> None:
        browser = _Browser(qtbot, tmp_path, pages.url("/form"))
        view, session = browser.view, browser.session
        client = openai.AsyncOpenAI(
            base_url=responses_server.base_url, api_key="test-key", max_retries=0
        )
        try:
            await browser.computer.start()
            assert view.state.text() == "Idle"  # no run going on (issue 17)
            view.control_button.click()
            assert session.user_has_control and browser.gate.paused
            assert view.control_button.text() == "Hand back"
            assert view.state.text().startswith("You have control")
            blocked = next_signal(session.gateChanged, lambda state: bool(state.waiting))
            agent: Agent[Any] = Agent(
                name="b", model="gpt-5.5", tools=[ComputerTool(browser.agent)]
            )
            run = asyncio.ensure_future(
                Runner.run(
                    agent, "click", run_config=RunConfig(model_provider=OpenAIProvider(client))
                )
            )
            (state,) = await asyncio.wait_for(blocked, 30)
            assert state.waiting == ("click",)
            assert view.state.text() == "You have control — the agent waits to click"
            assert await browser.computer.page.text_content("#out") == "idle"
            assert not run.done()
            view.control_button.click()  # Hand back
            assert view.control_button.text() == "Take control"
            result = await asyncio.wait_for(run, 30)
            assert result.final_output == "ok"
            assert await browser.computer.page.text_content("#out") == "clicked"
            texts = [text.split("  ", 1)[1] for text, _ in view.log_entries()]
            assert texts == ["You took control", "You handed back control", "click (60, 100)"]
        finally:
            await client.close()
            await browser.close()

    run_qasync(scenario)


@needs_chromium
def test_user_input_reaches_the_page_only_with_control(
    qtbot: Any, tmp_path: Path, pages: PageServer
) -> None:
    async def scenario() -> None:
        browser = _Browser(qtbot, tmp_path, pages.url("/form"))
        view, session, canvas = browser.view, browser.session, browser.view.canvas
        page_of = browser.computer
        try:
            painted = next_signal(view.framePainted)
            session.start()
            await asyncio.wait_for(painted, 20)
            page = page_of.page

            def at(x: int, y: int) -> QPoint:
                return canvas.to_widget(x, y).toPoint()

            # without control, clicks and keys stay in the view
            QTest.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=at(60, 100))
            await session.drain()
            assert await page.text_content("#out") == "idle"

            view.control_button.click()
            QTest.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=at(60, 100))
            await session.drain()
            assert await page.text_content("#out") == "clicked"

            QTest.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=at(100, 40))
            QTest.keyClicks(canvas, "Bob")
            QTest.keyClick(canvas, Qt.Key.Key_Left)
            QTest.keyClicks(canvas, "!")
            QTest.keyClick(canvas, Qt.Key.Key_Return)
            await session.drain()
            assert await page.input_value("#name") == "Bo!b"
            assert await page.text_content("#out") == "Hello, Bo!b"

            QTest.keyClick(canvas, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
            QTest.keyClick(canvas, Qt.Key.Key_Backspace)
            await session.drain()
            assert await page.input_value("#name") == ""

            await page.goto(pages.url("/tall"))
            # (QTest.mouseMove spins a nested event loop, which re-enters qasync: send events)
            move = QMouseEvent(
                QEvent.Type.MouseMove,
                QPointF(at(400, 300)),
                QPointF(canvas.mapToGlobal(at(400, 300))),
                Qt.MouseButton.NoButton,
                Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier,
            )
            QApplication.sendEvent(canvas, move)
            wheel = QWheelEvent(
                QPointF(at(400, 300)),
                QPointF(canvas.mapToGlobal(at(400, 300))),
                QPoint(0, 0),
                QPoint(0, -240),  # two notches towards the user: scroll down
                Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier,
                Qt.ScrollPhase.NoScrollPhase,
                False,
            )
            QApplication.sendEvent(canvas, wheel)
            await session.drain()
            await page.wait_for_function("window.scrollY > 0")

            view.control_button.click()  # Hand back: input is ignored again
            await page.goto(pages.url("/form"))
            QTest.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=at(60, 100))
            await session.drain()
            assert await page.text_content("#out") == "idle"
            assert not browser.gate.paused
        finally:
            await browser.close()

    run_qasync(scenario)


_MY_TESTS = (b"test_scripted_run_paints", b"test_take_control_holds", b"test_user_input_reaches")


def test_no_chromium_left_running() -> None:
    """No browser started by this module's tests is still running (checked last)."""
    left = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                args = handle.read().split(b"\0")
        except OSError:
            continue
        profiles = [a for a in args if a.startswith(b"--user-data-dir=")]
        if any(name in profile for profile in profiles for name in _MY_TESTS):
            left.append(entry)
    assert not left, f"Chromium processes left: {left}"
