"""PlaywrightComputer on the system Chromium, alone and driven by the runner (issue "Browser")."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import struct
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from core import Agent, RunConfig, Runner, UserError
from core.context import RunContextWrapper
from core.models.openai_responses import OpenAIProvider
from core.tools.computer import ComputerCallResult, ComputerRestartedError, ComputerTool
from harnesses.browser import (
    AllowedDomainsPolicy,
    BrowserAction,
    BrowserNotFoundError,
    BrowserRestarted,
    FrameMetadata,
    PlaywrightComputer,
    discovery,
    find_chromium,
)
from tests.harnesses.browser_pages import PageServer, serve_pages
from tests.support.items import message, new_id

try:
    find_chromium()
except BrowserNotFoundError:  # pragma: no cover - CI installs chromium
    pytest.skip("no Chromium installed", allow_module_level=True)

# Maps *.test hosts to the local page server, so a "foreign" site can be served locally.
_RESOLVER = "--host-resolver-rules=MAP *.test 127.0.0.1"


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with serve_pages() as server:
        yield server


@pytest_asyncio.fixture
async def browser(tmp_path: Path) -> AsyncIterator[PlaywrightComputer]:
    computer = PlaywrightComputer(
        dimensions=(800, 600), profile_dir=tmp_path / "profile", extra_args=[_RESOLVER]
    )
    try:
        yield computer
    finally:
        await computer.close()


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _computer_call(actions: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    item = {
        "type": "computer_call",
        "id": new_id("cu"),
        "call_id": new_id("call"),
        "status": "completed",
        "pending_safety_checks": [],
        "actions": actions,
    }
    item.update(extra)
    return item


def _run_config(openai_client: Any) -> RunConfig:
    return RunConfig(model_provider=OpenAIProvider(openai_client))


async def _goto(computer: PlaywrightComputer, url: str) -> None:
    await computer.start()
    await computer.page.goto(url)


# -- discovery --------------------------------------------------------------------------------


def test_setting_and_env_var_come_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "my-chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert find_chromium(str(fake)) == str(fake)
    monkeypatch.setenv("TANDEM_CHROMIUM", str(fake))
    assert find_chromium() == str(fake)
    with pytest.raises(BrowserNotFoundError, match="not an executable"):
        find_chromium(str(tmp_path / "missing"))


def test_no_browser_is_reported_clearly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TANDEM_CHROMIUM", raising=False)
    monkeypatch.setattr(
        discovery, "chromium_candidates", lambda setting=None: [str(tmp_path / "x")]
    )
    with pytest.raises(BrowserNotFoundError) as info:
        find_chromium()
    assert "apt-get install chromium" in str(info.value) and "TANDEM_CHROMIUM" in str(info.value)


def test_system_chromium_is_found_without_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TANDEM_CHROMIUM", raising=False)
    found = find_chromium()
    assert os.access(found, os.X_OK)


# -- actions on real Chromium -----------------------------------------------------------------


async def test_screenshot_is_a_png_of_the_viewport(browser: PlaywrightComputer, pages) -> None:
    await _goto(browser, pages.url("/form"))
    data = base64.b64decode(await browser.screenshot())
    assert _png_size(data) == (800, 600)
    assert browser.environment == "browser" and browser.dimensions == (800, 600)


async def test_click_type_enter_and_action_events(browser: PlaywrightComputer, pages) -> None:
    events: list[Any] = []
    browser.add_listener(events.append)
    await _goto(browser, pages.url("/form"))
    await browser.click(60, 100, "left")
    assert await browser.page.text_content("#out") == "clicked"
    await browser.click(100, 40, "left")
    await browser.type("Ada")
    await browser.keypress(["ENTER"])
    assert await browser.page.text_content("#out") == "Hello, Ada"
    actions = [e for e in events if isinstance(e, BrowserAction)]
    assert [(a.kind, a.x, a.y) for a in actions[:2]] == [("click", 60, 100), ("click", 100, 40)]
    assert actions[2].kind == "type" and actions[2].text == "Ada"
    assert actions[3].kind == "keypress" and actions[3].text == "Enter"
    assert actions[0].url == pages.url("/form")


async def test_key_names_and_combinations(browser: PlaywrightComputer, pages) -> None:
    await _goto(browser, pages.url("/events"))
    await browser.keypress(["CTRL", "A"])
    await browser.keypress(["ArrowLeft"])
    await browser.keypress(["cmd", "shift", "K"])
    await browser.keypress(["esc"])
    await browser.keypress(["alt+F4"])
    keys = [entry[1:] for entry in await browser.page.evaluate("log") if entry[0] == "key"]
    assert keys == [
        ["Control", True, False, False, False],
        ["a", True, False, False, False],
        ["ArrowLeft", False, False, False, False],
        ["Meta", False, False, False, True],
        ["Shift", False, True, False, True],
        ["k", False, True, False, True],
        ["Escape", False, False, False, False],
        ["Alt", False, False, True, False],
        ["F4", False, False, True, False],
    ]


async def test_all_buttons_double_click_and_modifiers(browser: PlaywrightComputer, pages) -> None:
    await _goto(browser, pages.url("/events"))
    await browser.click(10, 20, "left")
    await browser.click(30, 40, "right")
    await browser.click(50, 60, "wheel", keys=["SHIFT"])
    await browser.double_click(70, 80)
    log = await browser.page.evaluate("log")
    downs = [entry[1:] for entry in log if entry[0] == "down"]
    assert downs[:3] == [
        [0, 10, 20, False, False],
        [2, 30, 40, False, False],
        [1, 50, 60, True, False],
    ]
    assert ["dblclick", 70, 80] in log


async def test_back_and_forward_buttons_navigate(browser: PlaywrightComputer, pages) -> None:
    await _goto(browser, pages.url("/form"))
    await browser.page.goto(pages.url("/other"))
    await browser.click(0, 0, "back")
    assert browser.current_url == pages.url("/form")
    await browser.click(0, 0, "forward")
    assert browser.current_url == pages.url("/other")


async def test_drag_follows_the_path(browser: PlaywrightComputer, pages) -> None:
    await _goto(browser, pages.url("/events"))
    await browser.drag([(100, 100), (200, 150), (300, 120)])
    log = await browser.page.evaluate("log")
    assert log[0][:4] == ["down", 0, 100, 100]
    drags = [(e[1], e[2]) for e in log if e[0] == "drag"]
    assert (200, 150) in drags and drags[-1] == (300, 120)
    assert log[-1][:4] == ["up", 0, 300, 120]


async def test_scroll_and_move(browser: PlaywrightComputer, pages) -> None:
    await _goto(browser, pages.url("/tall"))
    await browser.scroll(400, 300, 0, 700)
    await browser.page.wait_for_function("window.scrollY >= 700")
    await browser.scroll(400, 300, 250, 0)
    await browser.page.wait_for_function("window.scrollX >= 250")
    await browser.move(5, 5)
    assert await browser.page.evaluate("[scrollX, scrollY]") == [250, 700]


async def test_start_url_and_wait(tmp_path: Path, pages) -> None:
    computer = PlaywrightComputer(
        dimensions=(640, 480), start_url=pages.url("/other"), throwaway=True, wait_ms=10
    )
    try:
        await computer.wait()
        assert computer.current_url == pages.url("/other")
        profile = computer.profile_dir
        assert profile is not None and profile.is_dir()
    finally:
        await computer.close()
    assert not profile.exists(), "a throw-away profile is deleted on close"


# -- crash recovery and profiles ---------------------------------------------------------------


async def test_killed_browser_restarts_on_next_action(browser: PlaywrightComputer, pages) -> None:
    browser.start_url = pages.url("/form")
    events: list[Any] = []
    browser.add_listener(events.append)
    await browser.start()
    old_pid = browser.browser_pid
    assert old_pid is not None
    os.kill(old_pid, signal.SIGKILL)
    with pytest.raises(ComputerRestartedError) as info:
        await browser.click(60, 100, "left")
    assert "restarted" in info.value.note and "not performed" in info.value.note
    assert browser.restarts == 1 and browser.browser_pid not in (None, old_pid)
    assert [e.reason for e in events if isinstance(e, BrowserRestarted)] == ["closed"]
    assert await browser.page.text_content("#out") == "idle", "the click was not replayed"
    await browser.click(60, 100, "left")
    assert await browser.page.text_content("#out") == "clicked"


async def test_tool_reports_restart_with_a_screenshot_and_a_note(
    browser: PlaywrightComputer, pages
) -> None:
    browser.start_url = pages.url("/form")
    await browser.start()
    os.kill(browser.browser_pid or 0, signal.SIGKILL)
    tool = ComputerTool(browser)
    call = _computer_call([{"type": "click", "x": 60, "y": 100, "button": "left"}])
    result = await tool.execute(RunContextWrapper(context=None), call)
    assert isinstance(result, ComputerCallResult)
    assert len(result.notes) == 1 and "browser was closed" in result.notes[0]
    url = result.input_item["output"]["image_url"]
    assert _png_size(base64.b64decode(url.removeprefix("data:image/png;base64,"))) == (800, 600)
    assert result.note_items()[0]["role"] == "user"


async def test_persistent_profile_survives_restart(tmp_path: Path, pages) -> None:
    profile = tmp_path / "project-profile"
    first = PlaywrightComputer(profile_dir=profile)
    try:
        await _goto(first, pages.url("/storage?set=v1"))
        assert await first.page.text_content("#out") == "v1|c=v1"
        os.kill(first.browser_pid or 0, signal.SIGKILL)
        with pytest.raises(ComputerRestartedError):
            await first.screenshot()
        # Chromium writes cookies and localStorage to disk lazily, so a killed browser may lose
        # the newest values; what the restarted browser stores must land in the same profile.
        assert first.profile_dir == profile
        await first.page.goto(pages.url("/storage?set=v2"))
    finally:
        await first.close()
    second = PlaywrightComputer(profile_dir=profile)
    try:
        await _goto(second, pages.url("/storage"))
        assert await second.page.text_content("#out") == "v2|c=v2"
    finally:
        await second.close()
    fresh = PlaywrightComputer(throwaway=True)
    try:
        await _goto(fresh, pages.url("/storage"))
        assert await fresh.page.text_content("#out") == "none|nocookie"
    finally:
        await fresh.close()


def test_project_profiles_are_per_project(tmp_path: Path) -> None:
    a = PlaywrightComputer(project_dir=tmp_path / "a").profile_dir
    b = PlaywrightComputer(project_dir=tmp_path / "b").profile_dir
    assert a is not None and b is not None and a != b
    assert PlaywrightComputer(project_dir=tmp_path / "a").profile_dir == a


# -- screencast ---------------------------------------------------------------------------------


async def test_screencast_delivers_frames_on_an_animated_page(
    browser: PlaywrightComputer, pages
) -> None:
    await _goto(browser, pages.url("/animated"))
    frames: list[tuple[bytes, FrameMetadata]] = []
    enough = asyncio.Event()

    def on_frame(data: bytes, meta: FrameMetadata) -> None:
        frames.append((data, meta))
        if len(frames) >= 10:
            enough.set()

    await browser.start_screencast(on_frame)
    await asyncio.wait_for(enough.wait(), timeout=20)
    await browser.stop_screencast()
    count = len(frames)
    data, meta = frames[-1]
    assert data[:3] == b"\xff\xd8\xff", "JPEG frames"
    assert meta.format == "jpeg" and meta.url == pages.url("/animated")
    assert (meta.device_width, meta.device_height) == (800, 600)
    await browser.screenshot()  # a round trip to the browser after stopping
    assert len(frames) == count, "no frame arrives after stop_screencast"


async def test_screencast_resumes_after_a_restart(browser: PlaywrightComputer, pages) -> None:
    browser.start_url = pages.url("/animated")
    got = asyncio.Event()
    await browser.start_screencast(lambda data, meta: got.set())
    await asyncio.wait_for(got.wait(), timeout=20)
    os.kill(browser.browser_pid or 0, signal.SIGKILL)
    with pytest.raises(ComputerRestartedError):
        await browser.screenshot()
    got.clear()
    await asyncio.wait_for(got.wait(), timeout=20)
    await browser.stop_screencast()


# -- allowed domains -------------------------------------------------------------------------------


def test_allowed_domains_policy() -> None:
    policy = AllowedDomainsPolicy(["example.com", "*.docs.org"])
    assert policy.allows("https://example.com/x") and policy.allows("https://a.example.com/")
    assert policy.allows("https://api.docs.org/") and policy.allows("https://docs.org/")
    assert not policy.allows("https://example.com.evil.net/")
    assert not policy.allows("https://notexample.com/")
    for local in (
        "http://localhost:3000/",
        "http://127.0.0.1:8000/",
        "http://[::1]/",
        "about:blank",
    ):
        assert policy.allows(local), local
    assert not policy.allows("file:///etc/passwd")
    click = [{"type": "click", "x": 1, "y": 1}]
    assert policy.needs_approval_for("https://shop.test/", click)
    assert not policy.needs_approval_for("https://shop.test/", [{"type": "screenshot"}])
    assert AllowedDomainsPolicy(["*"]).allows("https://anything.net/")


# -- end to end through the runner -------------------------------------------------------------


async def test_runner_batched_call_changes_the_page(
    responses_server, openai_client, browser: PlaywrightComputer, pages
) -> None:
    browser.start_url = pages.url("/form")
    call = _computer_call(
        [
            {"type": "click", "x": 100, "y": 40, "button": "left"},
            {"type": "type", "text": "Grace"},
            {"type": "keypress", "keys": ["ENTER"]},
        ]
    )
    responses_server.enqueue([call])
    responses_server.enqueue([message("done")])
    agent = Agent(name="b", model="gpt-5.5", tools=[ComputerTool(browser)])
    result = await Runner.run(agent, "fill the form", run_config=_run_config(openai_client))
    assert result.final_output == "done"
    assert await browser.page.text_content("#out") == "Hello, Grace"
    first, second = (r.body for r in responses_server.requests)
    assert first["tools"] == [{"type": "computer"}]
    sent = [i for i in second["input"] if i.get("type") == "computer_call_output"]
    assert len(sent) == 1 and sent[0]["call_id"] == call["call_id"]
    assert sent[0]["output"]["type"] == "computer_screenshot"
    url = sent[0]["output"]["image_url"]
    assert url.startswith("data:image/png;base64,")
    assert _png_size(base64.b64decode(url.split(",", 1)[1])) == (800, 600)


async def test_runner_preview_model_sends_preview_payload(
    responses_server, openai_client, browser: PlaywrightComputer, pages
) -> None:
    browser.start_url = pages.url("/form")
    call = _computer_call([], action={"type": "click", "x": 60, "y": 100, "button": "left"})
    del call["actions"]
    responses_server.enqueue([call])
    responses_server.enqueue([message("ok")])
    agent = Agent(name="b", model="computer-use-preview-2025-03-11", tools=[ComputerTool(browser)])
    await Runner.run(agent, "click", run_config=_run_config(openai_client))
    assert responses_server.requests[0].body["tools"] == [
        {
            "type": "computer_use_preview",
            "environment": "browser",
            "display_width": 800,
            "display_height": 600,
        }
    ]
    assert await browser.page.text_content("#out") == "clicked"


async def test_runner_factory_is_resolved_once_and_disposed(
    responses_server, openai_client, pages, tmp_path: Path
) -> None:
    created: list[PlaywrightComputer] = []
    disposed: list[PlaywrightComputer] = []

    async def create(*, run_context: Any) -> PlaywrightComputer:
        computer = PlaywrightComputer(throwaway=True, start_url=pages.url("/form"))
        created.append(computer)
        return computer

    async def dispose(*, run_context: Any, computer: PlaywrightComputer) -> None:
        disposed.append(computer)
        await computer.close()

    from core.tools.computer import ComputerProvider

    tool = ComputerTool(ComputerProvider(create=create, dispose=dispose))
    responses_server.enqueue([_computer_call([{"type": "click", "x": 60, "y": 100}])])
    responses_server.enqueue([_computer_call([{"type": "screenshot"}])])
    responses_server.enqueue([message("ok")])
    agent = Agent(name="b", model="computer-use-preview", tools=[tool])
    await Runner.run(agent, "go", run_config=_run_config(openai_client))
    assert len(created) == 1 and disposed == created
    assert responses_server.requests[0].body["tools"][0]["display_width"] == 1024


async def test_runner_safety_checks_acknowledged_or_refused(
    responses_server, openai_client, browser: PlaywrightComputer, pages
) -> None:
    browser.start_url = pages.url("/form")
    check = {"id": "sc_1", "code": "malicious_instructions", "message": "careful"}
    seen: list[dict[str, Any]] = []

    def accept(data: Any) -> bool:
        seen.append(data.safety_check)
        return True

    call = _computer_call([{"type": "screenshot"}], pending_safety_checks=[check])
    responses_server.enqueue([call])
    responses_server.enqueue([message("ok")])
    agent = Agent(name="b", model="gpt-5.5", tools=[ComputerTool(browser, on_safety_check=accept)])
    await Runner.run(agent, "go", run_config=_run_config(openai_client))
    assert seen == [check]
    sent = [
        i
        for i in responses_server.requests[1].body["input"]
        if i.get("type") == "computer_call_output"
    ]
    assert sent[0]["acknowledged_safety_checks"] == [check]

    responses_server.enqueue(
        [_computer_call([{"type": "click", "x": 60, "y": 100}], pending_safety_checks=[check])]
    )
    refusing = Agent(
        name="b", model="gpt-5.5", tools=[ComputerTool(browser, on_safety_check=lambda d: False)]
    )
    with pytest.raises(UserError, match="safety check was not acknowledged"):
        await Runner.run(refusing, "go", run_config=_run_config(openai_client))
    assert await browser.page.text_content("#out") == "idle", "a refused call runs no action"


async def test_runner_asks_before_acting_outside_allowed_domains(
    responses_server, openai_client, browser: PlaywrightComputer, pages
) -> None:
    browser.start_url = f"http://shop.test:{pages.port}/form"
    tool = ComputerTool(browser, needs_approval=AllowedDomainsPolicy(["docs.org"]))
    call = _computer_call([{"type": "click", "x": 60, "y": 100}])
    responses_server.enqueue([call])
    agent = Agent(name="b", model="gpt-5.5", tools=[tool])
    first = await Runner.run(agent, "go", run_config=_run_config(openai_client))
    assert [i.call_id for i in first.interruptions] == [call["call_id"]]
    await browser.start()
    assert browser.current_url.startswith("http://shop.test:")
    assert await browser.page.text_content("#out") == "idle"
    state = first.to_state()
    state.approve(first.interruptions[0])
    responses_server.enqueue([message("ok")])
    await Runner.run(agent, state, run_config=_run_config(openai_client))
    assert await browser.page.text_content("#out") == "clicked"

    # On a local page the same policy lets the call run without asking.
    await browser.page.goto(pages.url("/form"))
    responses_server.enqueue([_computer_call([{"type": "click", "x": 60, "y": 100}])])
    responses_server.enqueue([message("ok")])
    result = await Runner.run(agent, "again", run_config=_run_config(openai_client))
    assert not result.interruptions
    assert await browser.page.text_content("#out") == "clicked"


async def test_runner_survives_a_killed_browser(
    responses_server, openai_client, browser: PlaywrightComputer, pages
) -> None:
    browser.start_url = pages.url("/form")
    await browser.start()
    os.kill(browser.browser_pid or 0, signal.SIGKILL)
    call = _computer_call([{"type": "click", "x": 60, "y": 100}])
    responses_server.enqueue([call])
    responses_server.enqueue([_computer_call([{"type": "click", "x": 60, "y": 100}])])
    responses_server.enqueue([message("ok")])
    agent = Agent(name="b", model="gpt-5.5", tools=[ComputerTool(browser)])
    result = await Runner.run(agent, "go", run_config=_run_config(openai_client))
    assert result.final_output == "ok" and browser.restarts == 1
    second = responses_server.requests[1].body["input"]
    out = next(i for i in second if i.get("type") == "computer_call_output")
    assert out["output"]["image_url"].startswith("data:image/png;base64,")
    assert await browser.page.text_content("#out") == "clicked", "the next call works"
