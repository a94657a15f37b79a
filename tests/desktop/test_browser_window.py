"""The whole window with the live browser view during a scripted run (real Chromium, local
page, the local Responses server); saves the screenshot the README and reports link to.

``TANDEM_SCREENSHOT_DIR`` chooses where ``tandem-browser.png`` goes (default: the test's tmp).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import openai

from core import Agent, ComputerTool, OpenAIProvider, RunConfig
from core.settings import Settings
from desktop.browser_session import BrowserSession
from desktop.controller import Controller
from desktop.main_window import MainWindow
from harnesses.browser import PlaywrightComputer
from harnesses.browser.gated import ActionGate, GatedComputer
from harnesses.workspace import Workspace
from tests.desktop.test_browser_view import _alive, _computer_call, next_signal, run_qasync
from tests.desktop.test_browser_view import pages as pages  # the fixture
from tests.harnesses.browser_pages import PageServer
from tests.support.items import message


def test_window_shows_the_browser_live_during_a_run(
    qtbot: Any,
    tmp_path: Path,
    pages: PageServer,
    responses_server: Any,
) -> None:
    shots = Path(os.environ.get("TANDEM_SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    call = _computer_call(
        [
            {"type": "click", "x": 100, "y": 40, "button": "left"},
            {"type": "type", "text": "Ada Lovelace"},
            {"type": "keypress", "keys": ["ENTER"]},
        ]
    )
    responses_server.enqueue([call])
    responses_server.enqueue([message("The form now greets **Ada Lovelace**.")])
    repo = tmp_path / "repo"
    repo.mkdir()

    async def scenario() -> None:
        computer = PlaywrightComputer(
            dimensions=(800, 600), profile_dir=tmp_path / "profile", start_url=pages.url("/form")
        )
        gate = ActionGate()
        session = BrowserSession(computer, gate)
        client = openai.AsyncOpenAI(
            base_url=responses_server.base_url, api_key="test-key", max_retries=0
        )
        workspace = Workspace(repo, mode="ask", data_dir=tmp_path / "data")

        def factory(ws: Workspace) -> Agent[Any]:
            return Agent(
                name="Tandem",
                model="gpt-5.5",
                tools=[*ws.tools(), ComputerTool(GatedComputer(computer, gate))],
            )

        controller = Controller(
            workspace, factory, run_config=RunConfig(model_provider=OpenAIProvider(client))
        )
        window = MainWindow(controller, Settings(), browser_session=session)
        qtbot.addWidget(window)
        window.resize(1440, 900)
        window.show()
        painted = next_signal(window.browser.framePainted)
        done = next_signal(controller.runningChanged, lambda running: not running)
        window.composer.set_text("Fill the signup form with the name Ada Lovelace.")
        window.composer.submit()
        await asyncio.wait_for(done, 40)
        await asyncio.wait_for(painted, 20)
        assert window.tabs.currentIndex() == 2  # the window switched to the browser by itself
        window.conversation.flush()
        assert await computer.page.text_content("#out") == "Hello, Ada Lovelace"
        assert window.browser.frames_painted >= 1 and len(window.browser.log_entries()) == 3
        pid = computer.browser_pid
        assert window.grab().save(str(shots / "tandem-browser.png"))
        await controller.shutdown()
        await session.close()
        await computer.close()
        await client.close()
        window.close()
        assert not _alive(pid)

    run_qasync(scenario)
    assert (shots / "tandem-browser.png").stat().st_size > 20_000
