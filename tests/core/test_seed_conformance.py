"""Seed conformance: the seed's agents-as-tools examples send the same requests as the reference.

Each example (``tests/seed/tools.ko.md`` Python blocks 10, 12, 13, 14 and 15) runs twice
against its own local Responses server with the same scripted answers: once as written, on
``openai-agents`` (the reference, 0.24), and once with only its imports pointed at ``core``.
The recorded request bodies must be identical, field by field, in the same order of requests
(block 15's two nested runs are concurrent, so its requests are compared as a sorted list).
Agents leave ``model_settings`` unset here, so this also pins the default-model settings:
the reference sends ``reasoning`` and ``text.verbosity`` for its default GPT-5 model.

Block 11 is a fragment (``run_config=...``) and runs only in test_seed_hosted_and_agents.py.
Runs when ``openai-agents`` is installed (the ``bench`` extra; scripts/bootstrap.sh installs it).
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import json
from collections.abc import Callable
from typing import Any

import openai
import pytest

import core
from core.models.provider import DEFAULT_MODEL
from tests.support import items
from tests.support.responses_server import ResponsesServer, ScriptedResponse
from tests.support.seed import core_source, python_blocks

agents = pytest.importorskip("agents")
_openai_shared = pytest.importorskip("agents.models._openai_shared")

Bodies = list[dict[str, Any]]


@pytest.fixture(autouse=True)
def _reference_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both SDKs read the key and base URL from the environment; the reference never traces.

    The reference's default model is pointed at core's, so both name the same model.
    """
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_DEFAULT_MODEL", DEFAULT_MODEL)
    agents.set_tracing_disabled(True)


def _call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {**items.function_call(name, arguments, call_id), "id": f"fc_{call_id}"}


def _message(text: str, n: int) -> dict[str, Any]:
    return items.message(text, id=f"msg_{n}")


def _source(block: int, sdk: str) -> str:
    return python_blocks()[block] if sdk == "agents" else core_source(block)


async def _exec(block: int, sdk: str, names: dict[str, Any]) -> dict[str, Any]:
    code = compile(
        _source(block, sdk), f"<seed block {block}>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    )
    scope: dict[str, Any] = {"__name__": f"seed_block_{block}", **names}
    with contextlib.redirect_stdout(io.StringIO()):
        value = eval(code, scope)
        if inspect.iscoroutine(value):
            await value
    return scope


async def _on_server(
    monkeypatch: pytest.MonkeyPatch,
    script: list[list[dict[str, Any]]] | Callable[[dict[str, Any]], ScriptedResponse],
    run: Callable[[], Any],
    *,
    own_loop: bool = False,
) -> Bodies:
    """Run ``run`` against a fresh server scripted with ``script``; the request bodies.

    ``own_loop``: ``run`` drives its own event loop (``asyncio.run`` in a thread), whose
    connections die with that loop, so the reference's client is not closed from this one.
    """
    with ResponsesServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        # The reference shares one HTTP client per process; each test has its own event loop,
        # so its runs get a client of their own (the default client the seed's Runner uses).
        client = openai.AsyncOpenAI(api_key="test-key", base_url=server.base_url)
        monkeypatch.setattr(_openai_shared, "_default_openai_client", client)
        if callable(script):
            server.responder = script
        else:
            for output in script:
                server.enqueue(output)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                await run()
        finally:
            if not own_loop:
                await client.close()
        assert server.errors == []
        assert all(r.path == "/v1/responses" for r in server.requests)
        return [r.body for r in server.requests]


def _assert_same(reference: Bodies, ours: Bodies) -> None:
    assert len(ours) == len(reference)
    for index, (theirs, mine) in enumerate(zip(reference, ours, strict=True)):
        assert mine == theirs, f"request {index} differs"


def _sdk(sdk: str) -> Any:
    return agents if sdk == "agents" else core


async def test_block10_orchestrator_requests_match(monkeypatch):
    script = [
        [_call("translate_to_spanish", {"input": "Hello, how are you?"}, "c1")],
        [_message("Hola, ¿cómo estás?", 1)],
        [_message("In Spanish: Hola, ¿cómo estás?", 2)],
    ]

    async def run_with(sdk: str) -> Bodies:
        scope = await _exec(10, sdk, {})
        return await _on_server(monkeypatch, script, scope["main"])

    reference = await run_with("agents")
    _assert_same(reference, await run_with("core"))
    # the reference's defaults for its default GPT-5 model, sent for an agent left unset
    assert reference[0]["model"] == DEFAULT_MODEL
    assert {"reasoning", "text"} <= reference[0].keys()


async def test_block12_structured_input_requests_match(monkeypatch):
    arguments = {"text": "Good morning", "source": "en", "target": "fr"}
    script = [
        [_call("translate_text", arguments, "c1")],
        [_message("Bonjour", 1)],
        [_message("It is 'Bonjour'.", 2)],
    ]

    async def run_with(sdk: str) -> Bodies:
        m = _sdk(sdk)
        translator = m.Agent(name="translator", instructions="Translate as asked.")
        scope = await _exec(12, sdk, {"translator_agent": translator})
        outer = m.Agent(name="outer", tools=[scope["translator_tool"]])
        return await _on_server(
            monkeypatch, script, lambda: m.Runner.run(outer, "Translate 'Good morning' to French")
        )

    _assert_same(await run_with("agents"), await run_with("core"))


async def test_block13_custom_output_extractor_requests_match(monkeypatch):
    script = [
        [_call("get_data_json", {"input": "sales"}, "c1")],
        [_call("load_sales", {}, "i1")],
        [_message("Here are the sales figures, north leads.", 1)],
        [_message("North leads.", 2)],
    ]

    async def run_with(sdk: str) -> Bodies:
        m = _sdk(sdk)

        @m.function_tool
        def load_sales() -> str:
            """Load the sales figures as JSON."""
            return '  {"north": 12, "south": 9}  '

        data_agent = m.Agent(name="data agent", tools=[load_sales])
        names = {
            "data_agent": data_agent,
            "RunResult": m.RunResult,
            "ToolCallOutputItem": m.ToolCallOutputItem,
        }
        scope = await _exec(13, sdk, names)
        outer = m.Agent(name="outer", tools=[scope["json_tool"]])
        return await _on_server(monkeypatch, script, lambda: m.Runner.run(outer, "sales?"))

    _assert_same(await run_with("agents"), await run_with("core"))


async def test_block14_streamed_nested_run_requests_match(monkeypatch):
    script = [
        [_call("billing_helper", {"input": "Why $5?"}, "c1")],
        [_message("A $5 service fee.", 1)],
        [_message("It is a service fee.", 2)],
    ]

    async def run_with(sdk: str) -> Bodies:
        m = _sdk(sdk)
        billing = m.Agent(name="Billing agent", instructions="Answer billing questions.")
        scope = await _exec(14, sdk, {"billing_agent": billing})
        outer = m.Agent(name="outer", tools=[scope["billing_agent_tool"]])
        return await _on_server(
            monkeypatch, script, lambda: m.Runner.run(outer, "Why was I charged $5?")
        )

    reference = await run_with("agents")
    assert reference[1]["stream"] is True  # on_stream streams the nested run
    _assert_same(reference, await run_with("core"))


def _block15_responder(body: dict[str, Any]) -> ScriptedResponse:
    instructions = body.get("instructions") or ""
    if instructions.startswith("You respond in Spanish"):
        return ScriptedResponse(output=[_message("Estoy bien.", 1)])
    if instructions.startswith("You respond in French"):
        return ScriptedResponse(output=[_message("Je vais bien.", 2)])
    if any(i.get("type") == "function_call_output" for i in body["input"]):
        return ScriptedResponse(output=[_message("Estoy bien. / Je vais bien.", 3)])
    return ScriptedResponse(
        output=[
            _call("respond_spanish", {"input": "How are you?"}, "c1"),
            _call("respond_french", {"input": "How are you?"}, "c2"),
        ]
    )


def _exec_in_thread(block: int, sdk: str) -> None:
    """Block 15 calls ``asyncio.run`` itself, so it runs where no loop is running."""
    scope: dict[str, Any] = {"__name__": f"seed_block_{block}"}
    exec(compile(_source(block, sdk), f"<seed block {block}>", "exec"), scope)


async def test_block15_conditional_tools_requests_match(monkeypatch):
    async def run_with(sdk: str) -> Bodies:
        return await _on_server(
            monkeypatch,
            _block15_responder,
            lambda: asyncio.to_thread(_exec_in_thread, 15, sdk),
            own_loop=True,
        )

    def ordered(bodies: Bodies) -> Bodies:
        return sorted(bodies, key=lambda b: json.dumps(b, sort_keys=True))

    reference = await run_with("agents")
    ours = await run_with("core")
    assert len(reference) == 4
    _assert_same(ordered(reference), ordered(ours))
