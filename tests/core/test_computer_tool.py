"""ComputerTool (spec §6): payloads, validation, tool_choice, batching, safety checks, factories."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import core
from core import Agent, ModelBehaviorError, ModelSettings, RunConfig, Runner, UserError
from core.context import RunContextWrapper
from core.models.openai_responses import OpenAIProvider
from core.tools.computer import (
    AsyncComputer,
    Computer,
    ComputerCallResult,
    ComputerProvider,
    ComputerRestartedError,
    ComputerTool,
    ensure_single_computer_tool,
)
from core.tools.local import LocalCallHandler
from tests.support.items import message, new_id
from tests.support.seed import core_source


class RecordingComputer(AsyncComputer):
    """Records every driver call; screenshots are numbered ``"shot1"``, ``"shot2"``..."""

    def __init__(self, environment: Any = "browser", dimensions: Any = (1280, 720)) -> None:
        self._env = environment
        self._dims = dimensions
        self.calls: list[tuple[Any, ...]] = []
        self.shots = 0

    @property
    def environment(self) -> Any:
        return self._env

    @property
    def dimensions(self) -> Any:
        return self._dims

    async def screenshot(self) -> str:
        self.shots += 1
        self.calls.append(("screenshot",))
        return f"shot{self.shots}"

    async def click(self, x: int, y: int, button: Any, *, keys: list[str] | None = None) -> None:
        self.calls.append(("click", x, y, button, keys))

    async def double_click(self, x: int, y: int) -> None:  # no keys parameter on purpose
        self.calls.append(("double_click", x, y))

    async def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int, **kw: Any) -> None:
        self.calls.append(("scroll", x, y, scroll_x, scroll_y, kw.get("keys")))

    async def type(self, text: str) -> None:
        self.calls.append(("type", text))

    async def wait(self) -> None:
        self.calls.append(("wait",))

    async def move(self, x: int, y: int, *, keys: list[str] | None = None) -> None:
        self.calls.append(("move", x, y, keys))

    async def keypress(self, keys: list[str]) -> None:
        self.calls.append(("keypress", keys))

    async def drag(self, path: list[tuple[int, int]], *, keys: list[str] | None = None) -> None:
        self.calls.append(("drag", path, keys))


class SyncComputer(Computer):
    environment = "ubuntu"  # type: ignore[assignment]
    dimensions = (800, 600)  # type: ignore[assignment]

    def __init__(self) -> None:
        self.calls: list[str] = []

    def screenshot(self) -> str:
        return "c3luYw=="

    def click(self, x: int, y: int, button: Any) -> None:
        self.calls.append(f"click {x} {y} {button}")

    def double_click(self, x: int, y: int) -> None: ...
    def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int) -> None: ...
    def type(self, text: str) -> None:
        self.calls.append(f"type {text}")

    def wait(self) -> None: ...
    def move(self, x: int, y: int) -> None: ...
    def keypress(self, keys: list[str]) -> None: ...
    def drag(self, path: list[tuple[int, int]]) -> None: ...


def _call(actions: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "computer_call",
        "id": new_id("cu"),
        "call_id": new_id("call"),
        "status": "completed",
        "pending_safety_checks": [],
    }
    if actions is not None:
        item["actions"] = actions
    item.update(extra)
    return item


def _ctx() -> RunContextWrapper[Any]:
    return RunContextWrapper(context=None)


# -- construction and protocol ----------------------------------------------------------------


def test_implements_the_local_call_handler_protocol() -> None:
    tool = ComputerTool(RecordingComputer())
    assert isinstance(tool, LocalCallHandler)
    assert tool.call_item_types == ("computer_call",)
    assert tool.name == "computer_use_preview" and tool.trace_name == "computer"


def test_abstract_computers_need_every_method() -> None:
    class Partial(AsyncComputer):
        async def screenshot(self) -> str:
            return ""

    with pytest.raises(TypeError):
        Partial()  # type: ignore[abstract]


@pytest.mark.parametrize("bad", [42, "computer", None])
def test_rejects_what_is_not_a_computer(bad: Any) -> None:
    with pytest.raises(UserError, match="ComputerTool needs"):
        ComputerTool(bad)


def test_rejects_non_callable_callbacks() -> None:
    with pytest.raises(UserError, match="on_safety_check must be callable"):
        ComputerTool(RecordingComputer(), on_safety_check="yes")  # type: ignore[arg-type]
    with pytest.raises(UserError, match="needs_approval"):
        ComputerTool(RecordingComputer(), needs_approval="always")  # type: ignore[arg-type]


def test_at_most_one_computer_tool() -> None:
    one = ComputerTool(RecordingComputer())
    ensure_single_computer_tool([one, object()])
    with pytest.raises(UserError, match="only provide one computer tool"):
        ensure_single_computer_tool([one, ComputerTool(RecordingComputer())])


# -- wire payload (spec §6.3) -----------------------------------------------------------------


@pytest.mark.parametrize("model", ["gpt-5.5", "gpt-5.4", "gpt-4.1", "my-proxy-model"])
def test_ga_payload_for_any_known_non_preview_model(model: str) -> None:
    assert ComputerTool(RecordingComputer()).to_wire(model) == {"type": "computer"}


@pytest.mark.parametrize("model", ["computer-use-preview", "computer-use-preview-2025-03-11", None])
def test_preview_payload_for_preview_model_or_missing_model(model: str | None) -> None:
    tool = ComputerTool(RecordingComputer("mac", (1440, 900)))
    assert tool.to_wire(model) == {
        "type": "computer_use_preview",
        "environment": "mac",
        "display_width": 1440,
        "display_height": 900,
    }


@pytest.mark.parametrize("choice", ["computer", "computer_use"])
def test_missing_model_with_forced_ga_choice_sends_ga(choice: str) -> None:
    tool = ComputerTool(RecordingComputer(None, None))
    assert tool.to_wire(None, tool_choice=choice) == {"type": "computer"}
    with pytest.raises(UserError):
        tool.to_wire(None, tool_choice="computer_use_preview")


@pytest.mark.parametrize(("env", "dims"), [(None, (10, 10)), ("browser", None)])
def test_preview_needs_environment_and_dimensions(env: Any, dims: Any) -> None:
    tool = ComputerTool(RecordingComputer(env, dims))
    with pytest.raises(UserError, match="environment and dimensions"):
        tool.to_wire("computer-use-preview")
    assert tool.to_wire("gpt-5.5") == {"type": "computer"}


async def test_unresolved_factory_is_fine_for_ga_but_not_preview() -> None:
    tool = ComputerTool(lambda *, run_context: RecordingComputer())
    assert tool.to_wire("gpt-5.5") == {"type": "computer"}
    with pytest.raises(UserError, match="resolved"):
        tool.to_wire("computer-use-preview")
    ctx = _ctx()
    await tool.on_run_start(ctx)
    assert tool.to_wire("computer-use-preview")["display_width"] == 1280


# -- tool_choice (spec §6.6) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "model", "expected"),
    [
        ("computer", "gpt-5.5", {"type": "computer"}),
        ("computer_use", "gpt-5.5", {"type": "computer"}),
        ("computer_use_preview", "gpt-5.5", {"type": "computer"}),
        ("computer", "computer-use-preview", {"type": "computer_use_preview"}),
        ("computer_use", "computer-use-preview", {"type": "computer_use_preview"}),
        ("computer_use_preview", "computer-use-preview", {"type": "computer_use_preview"}),
        ("computer", None, {"type": "computer"}),
        ("computer_use", None, {"type": "computer"}),
        ("computer_use_preview", None, {"type": "computer_use_preview"}),
        ("auto", "gpt-5.5", None),
        ("my_function", None, None),
    ],
)
def test_normalize_tool_choice(choice: str, model: str | None, expected: Any) -> None:
    assert ComputerTool(RecordingComputer()).normalize_tool_choice(choice, model) == expected


async def test_runner_sends_normalized_choice_only_with_a_computer_tool(
    responses_server, openai_client
) -> None:
    config = RunConfig(model_provider=OpenAIProvider(openai_client))
    settings = ModelSettings(tool_choice="computer")
    responses_server.enqueue([message("a")])
    responses_server.enqueue([message("b")])
    with_tool = Agent(
        name="a",
        model="gpt-5.5",
        model_settings=settings,
        tools=[ComputerTool(RecordingComputer())],
    )
    await Runner.run(with_tool, "x", run_config=config)
    await Runner.run(
        Agent(name="a", model="gpt-5.5", model_settings=settings), "x", run_config=config
    )
    first, second = (r.body for r in responses_server.requests)
    assert first["tool_choice"] == {"type": "computer"} and first["tools"] == [{"type": "computer"}]
    assert second["tool_choice"] == {"type": "function", "name": "computer"}


# -- calls (spec §6.4, §6.5) ------------------------------------------------------------------


async def test_batch_runs_every_action_in_order_then_screenshots() -> None:
    computer = RecordingComputer()
    tool = ComputerTool(computer)
    call = _call(
        [
            {"type": "click", "x": 1, "y": 2, "button": "right", "keys": ["SHIFT"]},
            {"type": "double_click", "x": 3, "y": 4},
            {"type": "scroll", "x": 5, "y": 6, "scroll_x": 0, "scroll_y": 120, "keys": ["CTRL"]},
            {"type": "type", "text": "hello"},
            {"type": "wait"},
            {"type": "move", "x": 7, "y": 8},
            {"type": "keypress", "keys": ["CTRL", "A"]},
            {"type": "drag", "path": [{"x": 1, "y": 1}, {"x": 9, "y": 9}]},
        ]
    )
    tool.validate_call(call)
    result = await tool.execute(_ctx(), call)
    assert computer.calls == [
        ("click", 1, 2, "right", ["SHIFT"]),
        ("double_click", 3, 4),
        ("scroll", 5, 6, 0, 120, ["CTRL"]),
        ("type", "hello"),
        ("wait",),
        ("move", 7, 8, None),
        ("keypress", ["CTRL", "A"]),
        ("drag", [(1, 1), (9, 9)], None),
        ("screenshot",),
    ]
    assert result.input_item == {
        "type": "computer_call_output",
        "call_id": call["call_id"],
        "output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,shot1"},
        "acknowledged_safety_checks": None,
    }
    assert result.output == "data:image/png;base64,shot1" and result.notes == []


async def test_keys_dropped_with_a_warning_when_the_driver_does_not_take_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    computer = RecordingComputer()
    call = _call([{"type": "double_click", "x": 3, "y": 4, "keys": ["ALT"]}])
    with caplog.at_level(logging.WARNING, logger="core"):
        await ComputerTool(computer).execute(_ctx(), call)
    assert computer.calls[0] == ("double_click", 3, 4)
    assert "does not accept keys" in caplog.text


async def test_last_screenshot_action_is_reused() -> None:
    computer = RecordingComputer()
    call = _call(
        [{"type": "screenshot"}, {"type": "click", "x": 1, "y": 1}, {"type": "screenshot"}]
    )
    result = await ComputerTool(computer).execute(_ctx(), call)
    assert computer.shots == 2
    assert result.input_item["output"]["image_url"] == "data:image/png;base64,shot2"


async def test_single_preview_action_and_default_button() -> None:
    computer = RecordingComputer()
    call = _call(None, action={"type": "click", "x": 10, "y": 20})
    await ComputerTool(computer).execute(_ctx(), call)
    assert computer.calls[0] == ("click", 10, 20, "left", None)
    call = _call([], action={"type": "type", "text": "x"})  # empty actions fall back to action
    await ComputerTool(computer).execute(_ctx(), call)
    assert ("type", "x") in computer.calls


async def test_empty_screenshot_gives_an_empty_image_url() -> None:
    class Blank(RecordingComputer):
        async def screenshot(self) -> str:
            return ""

    result = await ComputerTool(Blank()).execute(_ctx(), _call([{"type": "wait"}]))
    assert result.input_item["output"]["image_url"] == ""


async def test_sync_computer_is_driven_too() -> None:
    computer = SyncComputer()
    tool = ComputerTool(computer)
    call = _call(
        [{"type": "click", "x": 1, "y": 2, "button": "left"}, {"type": "type", "text": "a"}]
    )
    result = await tool.execute(_ctx(), call)
    assert computer.calls == ["click 1 2 left", "type a"]
    assert result.output == "data:image/png;base64,c3luYw=="
    assert tool.to_wire("computer-use-preview")["environment"] == "ubuntu"


def test_validation_errors() -> None:
    tool = ComputerTool(RecordingComputer())
    with pytest.raises(ModelBehaviorError, match="unknown action type 'teleport'"):
        tool.validate_call(_call([{"type": "click", "x": 1, "y": 1}, {"type": "teleport"}]))
    with pytest.raises(ModelBehaviorError, match="no action"):
        tool.validate_call(_call([]))
    with pytest.raises(ModelBehaviorError, match="call_id"):
        tool.validate_call({"type": "computer_call", "action": {"type": "wait"}})


async def test_missing_driver_method_and_malformed_action() -> None:
    class DuckComputer:
        def screenshot(self) -> str:
            return "x"

    tool = ComputerTool(DuckComputer())  # type: ignore[arg-type]
    with pytest.raises(ModelBehaviorError, match="Computer driver missing method click"):
        await tool.execute(_ctx(), _call([{"type": "click", "x": 1, "y": 1}]))
    with pytest.raises(ModelBehaviorError, match="malformed"):
        await ComputerTool(RecordingComputer()).execute(_ctx(), _call([{"type": "click"}]))


async def test_safety_checks_acknowledged_in_order() -> None:
    checks = [
        {"id": "sc_1", "code": "malicious_instructions", "message": "careful"},
        {"id": "sc_2", "code": "sensitive_domain", "message": "bank"},
    ]
    seen: list[Any] = []

    async def on_check(data: Any) -> bool:
        seen.append((data.safety_check["id"], data.tool_call["call_id"], data.ctx_wrapper))
        return True

    ctx = _ctx()
    call = _call([{"type": "wait"}], pending_safety_checks=checks)
    result = await ComputerTool(RecordingComputer(), on_safety_check=on_check).execute(ctx, call)
    assert seen == [("sc_1", call["call_id"], ctx), ("sc_2", call["call_id"], ctx)]
    assert result.input_item["acknowledged_safety_checks"] == checks


async def test_refused_safety_check_fails_before_any_action() -> None:
    computer = RecordingComputer()
    tool = ComputerTool(computer, on_safety_check=lambda data: data.safety_check["id"] != "sc_2")
    call = _call(
        [{"type": "click", "x": 1, "y": 1}],
        pending_safety_checks=[{"id": "sc_1"}, {"id": "sc_2", "code": "x", "message": "y"}],
    )
    with pytest.raises(UserError, match="Computer tool safety check was not acknowledged"):
        await tool.execute(_ctx(), call)
    assert computer.calls == []


async def test_no_callback_sends_null_and_callback_without_checks_sends_null() -> None:
    # openai-agents 0.24 ComputerAction: null unless pending checks were acknowledged.
    call = _call([{"type": "wait"}], pending_safety_checks=[{"id": "sc_1"}])
    plain = await ComputerTool(RecordingComputer()).execute(_ctx(), call)
    assert plain.input_item["acknowledged_safety_checks"] is None
    quiet = _call([{"type": "wait"}])
    answered = await ComputerTool(RecordingComputer(), on_safety_check=lambda d: True).execute(
        _ctx(), quiet
    )
    assert answered.input_item["acknowledged_safety_checks"] is None


async def test_restarted_driver_stops_the_batch_and_leaves_a_note() -> None:
    class Flaky(RecordingComputer):
        async def type(self, text: str) -> None:
            raise ComputerRestartedError("The browser crashed and was restarted.")

    computer = Flaky()
    call = _call(
        [{"type": "click", "x": 1, "y": 1}, {"type": "type", "text": "a"}, {"type": "wait"}]
    )
    result = await ComputerTool(computer).execute(_ctx(), call)
    assert [c[0] for c in computer.calls] == ["click", "screenshot"]
    assert isinstance(result, ComputerCallResult)
    assert result.notes == ["The browser crashed and was restarted."]
    assert result.note_items() == [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "The browser crashed and was restarted."}],
        }
    ]


async def test_rejection_reuses_the_last_screenshot_and_explains() -> None:
    tool = ComputerTool(RecordingComputer())
    first = _call([{"type": "wait"}])
    await tool.execute(_ctx(), first)
    rejected = _call([{"type": "click", "x": 1, "y": 1}])
    result = tool.rejection(rejected, "Not on that site.")
    assert result.input_item["call_id"] == rejected["call_id"]
    assert result.input_item["output"] == {
        "type": "computer_screenshot",
        "image_url": "data:image/png;base64,shot1",
    }
    assert result.notes == ["The computer action was not performed: Not on that site."]


# -- factories (spec §6.2) --------------------------------------------------------------------


async def test_factory_resolved_once_per_run_and_disposed(responses_server, openai_client) -> None:
    created: list[RecordingComputer] = []
    disposed: list[tuple[Any, RecordingComputer]] = []

    async def create(*, run_context: Any) -> RecordingComputer:
        created.append(RecordingComputer())
        return created[-1]

    def dispose(*, run_context: Any, computer: RecordingComputer) -> None:
        disposed.append((run_context, computer))

    tool = ComputerTool(ComputerProvider(create=create, dispose=dispose))
    config = RunConfig(model_provider=OpenAIProvider(openai_client))
    agent = Agent(name="a", model="computer-use-preview", tools=[tool])
    for _ in range(2):
        responses_server.enqueue([_call(None, action={"type": "click", "x": 1, "y": 1})])
        responses_server.enqueue([_call(None, action={"type": "type", "text": "t"})])
        responses_server.enqueue([message("done")])
        await Runner.run(agent, "go", run_config=config)
    assert len(created) == 2 and [c for _, c in disposed] == created
    assert [c[0] for c in created[0].calls] == ["click", "screenshot", "type", "screenshot"]
    body = responses_server.requests[0].body
    assert body["tools"][0]["type"] == "computer_use_preview"
    sent = [
        i
        for i in responses_server.requests[1].body["input"]
        if i.get("type") == "computer_call_output"
    ]
    assert sent[0]["output"]["image_url"] == "data:image/png;base64,shot1"


async def test_plain_factory_and_failing_disposer_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def boom(*, run_context: Any, computer: Any) -> None:
        raise RuntimeError("dispose failed")

    tool = ComputerTool(
        ComputerProvider(create=lambda *, run_context: RecordingComputer(), dispose=boom)
    )
    ctx = _ctx()
    await tool.on_run_start(ctx)
    first = await tool.resolve(ctx)
    assert await tool.resolve(ctx) is first
    with caplog.at_level(logging.ERROR, logger="core"):
        await tool.on_run_end(ctx)
    assert "disposing the computer failed" in caplog.text
    assert await tool.resolve(ctx) is not first


async def test_factory_returning_junk_is_a_user_error() -> None:
    tool = ComputerTool(lambda *, run_context: "not a computer")
    with pytest.raises(UserError, match="not a Computer"):
        await tool.on_run_start(_ctx())


async def test_driver_exception_fails_the_run(responses_server, openai_client) -> None:
    class Broken(RecordingComputer):
        async def click(self, x: int, y: int, button: Any, *, keys: Any = None) -> None:
            raise RuntimeError("display gone")

    responses_server.enqueue([_call([{"type": "click", "x": 1, "y": 1}])])
    agent = Agent(name="a", model="gpt-5.5", tools=[ComputerTool(Broken())])
    with pytest.raises(RuntimeError, match="display gone"):
        await Runner.run(
            agent, "go", run_config=RunConfig(model_provider=OpenAIProvider(openai_client))
        )


async def test_computer_call_without_a_computer_tool(responses_server, openai_client) -> None:
    responses_server.enqueue([_call([{"type": "wait"}])])
    agent = Agent(name="a", model="gpt-5.5")
    with pytest.raises(ModelBehaviorError, match="without a computer tool"):
        await Runner.run(
            agent, "go", run_config=RunConfig(model_provider=OpenAIProvider(openai_client))
        )


# -- the seed's local-runtime example (block 3) -----------------------------------------------


@pytest.mark.skipif(
    not all(hasattr(core, name) for name in ("AsyncComputer", "ComputerTool")),
    reason="core does not export AsyncComputer/ComputerTool yet",
)
async def test_seed_block3_with_a_computer_tool(responses_server, openai_client) -> None:
    scope: dict[str, Any] = {}
    exec(compile(core_source(3), "<seed block 3>", "exec"), scope)
    computer = scope["NoopComputer"]()
    agent = scope["agent"]
    agent.tools.append(core.ComputerTool(computer))
    agent.model = "computer-use-preview"
    responses_server.enqueue(
        [_call(None, action={"type": "click", "x": 1, "y": 2, "button": "left"})]
    )
    responses_server.enqueue([message("done")])
    result = await Runner.run(
        agent, "go", run_config=RunConfig(model_provider=OpenAIProvider(openai_client))
    )
    assert result.final_output == "done"
    first, second = (r.body for r in responses_server.requests)
    assert first["tools"][-1] == {
        "type": "computer_use_preview",
        "environment": "browser",
        "display_width": 1024,
        "display_height": 768,
    }
    sent = [i for i in second["input"] if i.get("type") == "computer_call_output"]
    assert sent[0]["output"] == {"type": "computer_screenshot", "image_url": ""}


async def test_restart_note_reaches_the_model_after_the_screenshot(responses_server, model) -> None:
    from core import Agent, Runner
    from tests.support import items

    class Flaky(RecordingComputer):
        async def click(self, x: int, y: int, button: str = "left") -> None:
            raise ComputerRestartedError(
                "The browser crashed and was restarted; the click was not performed."
            )

    call = _call([{"type": "click", "x": 5, "y": 5}])
    responses_server.enqueue([call])
    responses_server.enqueue([items.message("I will click again.")])
    agent = Agent(name="a", model=model, tools=[ComputerTool(Flaky())])
    result = await Runner.run(agent, "click it")
    assert result.final_output == "I will click again."
    sent = responses_server.requests[1].body["input"]
    kinds = [i.get("type") for i in sent]
    output_at = kinds.index("computer_call_output")
    assert sent[output_at + 1] == {
        "type": "message",
        "role": "user",
        "content": [
            {
                "type": "input_text",
                "text": "The browser crashed and was restarted; the click was not performed.",
            }
        ],
    }
