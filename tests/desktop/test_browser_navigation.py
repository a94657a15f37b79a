"""The Browser tab navigates: URL field and back/forward/reload under Take control, a hand-back
note naming the user's page in the model's next input, and a true status line (issue 17).

Real Chromium through Playwright, pages from a local HTTP server on 127.0.0.1, the real
``openai`` client against the local Responses server, on a qasync loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
import qasync
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core import Agent, RunConfig, Runner
from core.models.openai_responses import OpenAIProvider
from core.tools.computer import ComputerTool
from desktop.browser_session import BrowserSession
from desktop.views.browser_view import BrowserView
from harnesses.browser import BrowserNotFoundError, PlaywrightComputer, find_chromium
from harnesses.browser.gated import ActionGate, GatedComputer
from harnesses.browser.navigation import navigation_tools
from tests.harnesses.browser_pages import PageServer, serve_pages
from tests.support.items import function_call, message, new_id

try:
    find_chromium()
except BrowserNotFoundError:  # pragma: no cover - CI installs chromium
    pytest.skip("no Chromium installed", allow_module_level=True)


def run_qasync(coro_factory: Callable[[], Awaitable[Any]], timeout_s: float = 90) -> Any:
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        with loop:
            return loop.run_until_complete(asyncio.wait_for(coro_factory(), timeout_s))
    finally:
        asyncio.set_event_loop(None)


async def until(predicate: Callable[[], bool], timeout_s: float = 30) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout_s)


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with serve_pages() as server:
        yield server


def _user_texts(request: Any) -> list[str]:
    texts: list[str] = []
    for item in request.body["input"]:
        if item.get("type") == "message" and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                texts.append(content)
            else:
                texts += [c.get("text", "") for c in content or []]
    return texts


def test_user_navigates_in_the_url_field_and_the_model_learns_the_url(
    qtbot: Any, tmp_path: Path, pages: PageServer, responses_server: Any
) -> None:
    form, tall, events = pages.url("/form"), pages.url("/tall"), pages.url("/events")
    server = responses_server
    click = {
        "type": "computer_call",
        "id": new_id("cu"),
        "call_id": "cc1",
        "status": "completed",
        "pending_safety_checks": [],
        "actions": [{"type": "click", "x": 60, "y": 100}],
    }
    server.enqueue([click])
    server.enqueue([function_call("current_url", {}, call_id="u1")])
    server.enqueue([message("I see where you left the page")])

    async def scenario() -> None:
        computer = PlaywrightComputer(
            dimensions=(800, 600), profile_dir=tmp_path / "profile", start_url=form
        )
        gate = ActionGate()
        gated = GatedComputer(computer, gate)
        session = BrowserSession(computer, gate)
        view = BrowserView(session)
        qtbot.addWidget(view)
        view.resize(900, 700)
        view.show()
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        agent = Agent(
            name="b", model="gpt-5.5", tools=[ComputerTool(gated), *navigation_tools(gated)]
        )
        try:
            await computer.start()
            assert view.state.text() == "Idle" and view.url.isReadOnly()
            assert not view.nav_buttons["back"].isEnabled()
            view.control_button.click()  # Take control: the agent's click will wait
            assert session.user_has_control and not view.url.isReadOnly()
            assert view.nav_buttons["reload"].isEnabled()
            session.set_agent_running(True)
            run = asyncio.ensure_future(
                Runner.run(agent, "go", run_config=RunConfig(model_provider=OpenAIProvider(client)))
            )
            await until(lambda: bool(gate.state.waiting))
            assert view.state.text() == "You have control — the agent waits to click"

            # The user types addresses in the URL field, goes back and reloads.
            view.url.setFocus()
            view.url.selectAll()
            QTest.keyClicks(view.url, f"127.0.0.1:{pages.port}/tall")
            QTest.keyClick(view.url, Qt.Key.Key_Return)
            await until(lambda: computer.current_url == tall)
            await until(lambda: view.url.text() == tall)
            view.url.setFocus()
            view.url.selectAll()
            QTest.keyClicks(view.url, events)
            QTest.keyClick(view.url, Qt.Key.Key_Return)
            await until(lambda: computer.current_url == events)
            view.nav_buttons["back"].click()
            await until(lambda: computer.current_url == tall)
            view.nav_buttons["reload"].click()
            await session.drain()
            assert computer.current_url == tall and not run.done()

            view.control_button.click()  # Hand back
            assert view.url.isReadOnly() and view.state.text() == "Agent is driving"
            result = await asyncio.wait_for(run, 30)
            assert result.final_output == "I see where you left the page"
            session.set_agent_running(False)
            assert view.state.text() == "Idle"
            notes = _user_texts(server.requests[1])  # the model's next input
            assert any(tall in note and "handed it back" in note for note in notes), notes
            assert computer.current_url == tall  # the stale click was not performed
            outputs = [
                i["output"]
                for i in server.requests[2].body["input"]
                if i.get("type") == "function_call_output"
            ]
            assert outputs == [f"Now at {tall}."]
        finally:
            await client.close()
            await session.close()
            await computer.close()
            view.close()

    run_qasync(scenario)


async def test_browser_demo_scenario_runs_offline_to_the_end() -> None:
    """``tandem demo --scenario browser --headless``: dev server, goto, form, error, stop."""
    import io

    from desktop.demo import run_headless_demo

    out = io.StringIO()
    code = await run_headless_demo(out, scenario="browser")
    text = out.getvalue()
    assert code == 0, text
    assert "started background service #1" in text
    assert "-> goto(" in text and "[screenshot of the page]" in text
    assert "browser page error text: 'Please enter a valid email address.'" in text
    assert "dev servers still running: 0" in text
