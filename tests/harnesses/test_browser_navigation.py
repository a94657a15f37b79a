"""Browser navigation on real Chromium: goto/back/forward/current_url tools, the Ctrl+L gesture,
the allowed-domains rules for both, and the hand-back note (issue 17).

Pages come from a local HTTP server on 127.0.0.1; ``*.test`` hosts map to it, so a "foreign"
site is served locally too.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from core import Agent, RunConfig, Runner
from core.models.openai_responses import OpenAIProvider
from core.tools.computer import ComputerTool
from harnesses.browser import (
    AllowedDomainsPolicy,
    BrowserNotFoundError,
    PlaywrightComputer,
    find_chromium,
)
from harnesses.browser.gated import ActionGate, GatedComputer
from harnesses.browser.navigation import (
    AddressBarGesture,
    address_targets,
    navigation_tools,
    normalize_address,
)
from tests.harnesses.browser_pages import PageServer, serve_pages
from tests.support.items import function_call, message, new_id

try:
    find_chromium()
except BrowserNotFoundError:  # pragma: no cover - CI installs chromium
    pytest.skip("no Chromium installed", allow_module_level=True)

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


def _computer_call(actions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "computer_call",
        "id": new_id("cu"),
        "call_id": new_id("call"),
        "status": "completed",
        "pending_safety_checks": [],
        "actions": actions,
    }


def _ctrl_l(url: str) -> list[dict[str, Any]]:
    return [
        {"type": "keypress", "keys": ["CTRL", "L"]},
        {"type": "type", "text": url},
        {"type": "keypress", "keys": ["ENTER"]},
    ]


def _outputs(request: Any, kind: str) -> list[dict[str, Any]]:
    return [i for i in request.body["input"] if i.get("type") == kind]


def _user_texts(request: Any) -> list[str]:
    texts = []
    for item in request.body["input"]:
        if item.get("type") == "message" and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                texts.append(content)
            else:
                texts += [c.get("text", "") for c in content or []]
    return texts


def _browser_agent(computer: Any, policy: AllowedDomainsPolicy | None = None) -> Agent[Any]:
    policy = policy or AllowedDomainsPolicy()
    tools = [ComputerTool(computer, needs_approval=policy), *navigation_tools(computer, policy)]
    return Agent(name="b", model="gpt-5.5", tools=tools)


# -- pure parts ------------------------------------------------------------------------------


def test_addresses_are_normalised_like_a_browser_bar():
    assert normalize_address(" localhost:8000/signup ") == "http://localhost:8000/signup"
    assert normalize_address("127.0.0.1:5000") == "http://127.0.0.1:5000"
    assert normalize_address("example.com/docs") == "https://example.com/docs"
    assert normalize_address("http://x.test/a") == "http://x.test/a"
    assert normalize_address("about:blank") == "about:blank"
    for bad in ("", "   ", "how to sign up"):
        with pytest.raises(ValueError):
            normalize_address(bad)


def test_gesture_states():
    gesture = AddressBarGesture()
    assert gesture.on_keys(["Enter"]) is None and not gesture.active
    assert gesture.on_keys(["Control", "l"]) == "open" and gesture.on_type("exampel")
    assert gesture.on_keys(["Backspace"]) == "edit" and gesture.on_keys(["Backspace"]) == "edit"
    gesture.on_type("le.com")
    assert gesture.on_keys(["Enter"]) == "submit" and gesture.submit() == "https://example.com"
    assert not gesture.active and not gesture.on_type("x")
    gesture.on_keys(["Meta", "l"])
    assert gesture.on_keys(["Escape"]) == "cancel" and not gesture.active
    gesture.on_keys(["F6"])
    assert gesture.on_keys(["Tab"]) is None and not gesture.active  # a page key leaves the bar
    assert address_targets(_ctrl_l("evil.test/x")) == ["https://evil.test/x"]
    assert address_targets([{"type": "keypress", "keys": ["ENTER"]}], typed="localhost:1") == [
        "http://localhost:1"
    ]
    assert address_targets([*_ctrl_l("a.test")[:2], {"type": "click", "x": 1, "y": 1}]) == []


def test_tools_are_strict_and_tell_the_model_to_prefer_them():
    tools = navigation_tools(object())
    assert [t.name for t in tools] == ["goto", "back", "forward", "current_url"]
    goto = tools[0]
    assert goto.params_json_schema["required"] == ["url"] and goto.strict_json_schema
    assert "not Ctrl+L" in goto.description
    policy_check = goto.needs_approval
    assert callable(policy_check)
    assert policy_check(None, {"url": "localhost:3000"}, "c") is False
    assert policy_check(None, {"url": "https://elsewhere.test"}, "c") is True
    allowed = navigation_tools(object(), AllowedDomainsPolicy(["elsewhere.test"]))[0]
    assert allowed.needs_approval(None, {"url": "https://elsewhere.test/a"}, "c") is False


# -- real Chromium through the runner --------------------------------------------------------


async def test_scripted_session_reaches_the_page_with_goto_and_with_ctrl_l(
    responses_server, openai_client, browser: PlaywrightComputer, pages
) -> None:
    form, tall = pages.url("/form"), pages.url("/tall")
    server = responses_server
    server.enqueue([function_call("goto", {"url": form}, call_id="g1")])
    server.enqueue([_computer_call(_ctrl_l(f"127.0.0.1:{pages.port}/tall"))])
    server.enqueue([function_call("back", {}, call_id="b1")])
    server.enqueue([function_call("current_url", {}, call_id="u1")])
    server.enqueue([function_call("forward", {}, call_id="f1")])
    server.enqueue([message("visited both pages")])
    run_config = RunConfig(model_provider=OpenAIProvider(openai_client))
    result = await Runner.run(_browser_agent(browser), "visit", run_config=run_config)
    assert result.final_output == "visited both pages"
    assert browser.current_url == tall

    first = server.requests[0].body
    names = [t.get("name") or t["type"] for t in first["tools"]]
    assert names == ["computer", "goto", "back", "forward", "current_url"]
    assert _outputs(server.requests[1], "function_call_output")[0]["output"] == f"Now at {form}."
    shots = _outputs(server.requests[2], "computer_call_output")
    assert shots and shots[0]["output"]["image_url"].startswith("data:image/png;base64,")
    outputs = [o["output"] for o in _outputs(server.requests[5], "function_call_output")]
    assert outputs[1:] == [f"Now at {form}.", f"Now at {form}.", f"Now at {tall}."]


async def test_goto_and_ctrl_l_follow_the_allowed_domains(
    responses_server, openai_client, browser: PlaywrightComputer, pages
) -> None:
    foreign = f"http://shop.test:{pages.port}/form"
    run_config = RunConfig(model_provider=OpenAIProvider(openai_client))
    agent = _browser_agent(browser, AllowedDomainsPolicy(["docs.test"]))
    responses_server.enqueue([function_call("goto", {"url": foreign}, call_id="g1")])
    first = await Runner.run(agent, "go", run_config=run_config)
    assert [i.call_id for i in first.interruptions] == ["g1"]
    assert browser.current_url in ("", "about:blank")  # nothing ran before the approval
    state = first.to_state()
    state.approve(first.interruptions[0])
    responses_server.enqueue([message("ok")])
    await Runner.run(agent, state, run_config=run_config)
    assert browser.current_url == foreign

    await browser.goto(pages.url("/tall"))
    call = _computer_call(_ctrl_l(f"shop.test:{pages.port}/events"))
    responses_server.enqueue([call])
    second = await Runner.run(agent, "again", run_config=run_config)
    assert [i.call_id for i in second.interruptions] == [call["call_id"]]
    assert browser.current_url == pages.url("/tall")


async def test_bad_address_is_a_note_not_a_failed_run(
    responses_server, openai_client, browser: PlaywrightComputer, pages
) -> None:
    responses_server.enqueue([_computer_call(_ctrl_l("how do I sign up"))])
    responses_server.enqueue([function_call("goto", {"url": "http://127.0.0.1:9/x"}, call_id="g")])
    responses_server.enqueue([message("ok")])
    run_config = RunConfig(model_provider=OpenAIProvider(openai_client))
    result = await Runner.run(_browser_agent(browser), "go", run_config=run_config)
    assert result.final_output == "ok"
    notes = _user_texts(responses_server.requests[1])
    assert any("address bar did not navigate" in n for n in notes)
    out = _outputs(responses_server.requests[2], "function_call_output")[0]["output"]
    assert out.startswith("Error: the browser could not navigate")


async def test_hand_back_note_names_the_users_page(
    responses_server, openai_client, browser: PlaywrightComputer, pages
) -> None:
    gate = ActionGate()
    gated = GatedComputer(browser, gate)
    await browser.goto(pages.url("/form"))
    gate.pause()  # the user took control and went somewhere else
    await browser.goto(pages.url("/tall"))
    gate.leave_note(f"The user handed control back; the page is now {pages.url('/tall')}.")
    gate.resume()
    responses_server.enqueue([_computer_call([{"type": "click", "x": 10, "y": 10}])])
    responses_server.enqueue([message("ok")])
    run_config = RunConfig(model_provider=OpenAIProvider(openai_client))
    await Runner.run(_browser_agent(gated), "go", run_config=run_config)
    notes = _user_texts(responses_server.requests[1])
    assert any(pages.url("/tall") in n for n in notes)
    assert gate.note is None
    assert json.dumps(_outputs(responses_server.requests[1], "computer_call_output"))
