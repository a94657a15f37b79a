"""Reference behaviours on documented API (issue 13, Build item 5).

Each case states what ``openai-agents`` 0.24 does (learned by running it) and checks ``core``
does the same. Where the reference is installed (the ``bench`` extra), a few cases also run it
side by side; the literal expectations hold either way.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
from typing import Any

import pytest

from core import Agent, ModelSettings, RunConfig, Runner, UserError
from core.context import RunContextWrapper, ToolContext
from core.errors import ModelBehaviorError
from core.model_settings import get_default_model_settings
from core.models.openai_responses import OpenAIProvider, OpenAIResponsesModel
from core.tools import FunctionTool, function_tool
from core.tools.codex import codex_tool, validate_codex_tool_names
from core.tools.computer import AsyncComputer, Computer, ComputerProvider, ComputerTool
from core.tools.function import evaluate_needs_approval, invoke_function_tool
from core.tools.hosted import FileSearchTool, WebSearchTool
from core.tools.strict_schema import ensure_strict_json_schema
from core.tools.tool_search import tool_namespace
from tests.support import items

_EMPTY_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False, "required": []}


def _ctx(tool_name: str, arguments: str) -> ToolContext[Any]:
    return ToolContext(
        context=None, tool_name=tool_name, tool_call_id="call_1", tool_arguments=arguments
    )


async def _noop(ctx: Any, args: str) -> str:
    return "ok"


def _nested_schema(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {"type": "object", "properties": {}}
    node = root
    for _ in range(depth):
        child: dict[str, Any] = {"type": "object", "properties": {}}
        node["properties"]["x"] = child
        node = child
    return root


# -- a callable object used as a tool --------------------------------------------------------


class Adder:
    """Add two numbers."""

    def __init__(self) -> None:
        async def shadow(a: int, b: int) -> int:
            return 104

        self.__call__ = shadow  # an instance attribute: Python never calls it

    def __call__(self, a: int, b: int) -> int:
        return a + b


class Forwarding:
    """Answers every unknown attribute (a proxy-like object)."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: 104

    def __call__(self, a: int, b: int) -> int:
        return a + b


@pytest.mark.parametrize("factory", [Adder, Forwarding])
async def test_callable_object_runs_its_class_call(factory: Any) -> None:
    # openai-agents 0.24 (_normalize_function_tool_callable): the class MRO's __call__ is bound
    # and called; function_tool(obj) with {"a": 2, "b": 3} returns 5, never 104.
    tool = function_tool(factory())
    assert tool.name == factory.__name__
    assert set(tool.params_json_schema["properties"]) == {"a", "b"}
    ctx = _ctx(tool.name, '{"a": 2, "b": 3}')
    assert await invoke_function_tool(tool, ctx, '{"a": 2, "b": 3}') == 5


# -- Agent.get_all_tools ---------------------------------------------------------------------


async def test_get_all_tools_cancels_sibling_checks_and_raises() -> None:
    # openai-agents 0.24 Agent.get_all_tools: the is_enabled checks run concurrently
    # (gather_with_cancel); the first error cancels the others and is raised.
    never = asyncio.Event()
    cancelled: list[str] = []

    async def slow(ctx: Any, agent: Any) -> bool:
        try:
            await never.wait()
        except asyncio.CancelledError:
            cancelled.append("slow")
            raise
        return True

    async def broken(ctx: Any, agent: Any) -> bool:
        raise RuntimeError("is_enabled failed")

    @function_tool(is_enabled=slow)
    def first() -> str:
        return "1"

    @function_tool(is_enabled=broken)
    def second() -> str:
        return "2"

    agent = Agent(name="a", tools=[first, second])
    with pytest.raises(RuntimeError, match="is_enabled failed"):
        await asyncio.wait_for(agent.get_all_tools(RunContextWrapper(None)), 60)  # hang guard
    assert cancelled == ["slow"]


async def test_get_all_tools_keeps_order_with_mixed_checks() -> None:
    async def on(ctx: Any, agent: Any) -> bool:
        return True

    tools = [
        function_tool(lambda: "a", name_override="a", is_enabled=on),
        function_tool(lambda: "b", name_override="b", is_enabled=False),
        function_tool(lambda: "c", name_override="c", is_enabled=lambda ctx, agent: True),
        WebSearchTool(),
    ]
    enabled = await Agent(name="a", tools=tools).get_all_tools(RunContextWrapper(None))
    assert [t.name for t in enabled] == ["a", "c", "web_search"]


# -- a copied or renamed FunctionTool --------------------------------------------------------


@pytest.mark.parametrize("arguments", ["{", '{"x": "not a number"}'])
async def test_renamed_tool_reports_errors_under_its_new_name(arguments: str) -> None:
    # openai-agents 0.24: dataclasses.replace(tool, name="renamed") raises
    # ModelBehaviorError("Invalid JSON input for tool renamed") (it reads ctx.tool_name).
    @function_tool(failure_error_function=None)
    def original(x: int) -> str:
        return str(x)

    renamed = dataclasses.replace(original, name="renamed")
    with pytest.raises(ModelBehaviorError, match=r"^Invalid JSON input for tool renamed"):
        await invoke_function_tool(renamed, _ctx("renamed", arguments), arguments)


async def test_renamed_tool_through_the_runner(model, responses_server) -> None:
    @function_tool(failure_error_function=None)
    def original(x: int) -> str:
        return str(x)

    renamed = dataclasses.replace(original, name="renamed")
    responses_server.enqueue([items.function_call("renamed", "{", "c1")])
    with pytest.raises(ModelBehaviorError, match="Invalid JSON input for tool renamed"):
        await Runner.run(Agent(name="a", model=model, tools=[renamed]), "go")


# -- ComputerProvider ------------------------------------------------------------------------


def test_computer_provider_is_subscriptable() -> None:
    # openai-agents 0.24: ComputerProvider is Generic[ComputerT]; ComputerProvider[Computer] works.
    alias = ComputerProvider[Computer]
    assert ComputerProvider[AsyncComputer] is not None
    provider = alias(create=lambda **kwargs: None)
    assert isinstance(provider, ComputerProvider)
    assert isinstance(ComputerTool(provider), ComputerTool)


# -- construction-time validation ------------------------------------------------------------


def test_non_callable_timeout_error_function_is_refused_at_construction() -> None:
    # openai-agents 0.24: TypeError("FunctionTool timeout_error_function must be callable or
    # None.") from both FunctionTool(...) and function_tool(...).
    message = "FunctionTool timeout_error_function must be callable or None."
    with pytest.raises(TypeError, match=message):
        FunctionTool("n", "d", _EMPTY_SCHEMA, _noop, timeout_error_function="nope")  # type: ignore[arg-type]

    async def handler(x: int) -> int:
        return x

    with pytest.raises(TypeError, match=message):
        function_tool(handler, timeout_error_function="nope")  # type: ignore[arg-type]


@pytest.mark.parametrize("setting", ["yes", 1, None, ["always"]])
def test_invalid_needs_approval_is_refused_at_construction(setting: Any) -> None:
    # openai-agents 0.24 raises UserError("Invalid needs_approval value: expected a bool or
    # callable, got str.") when the setting is evaluated; Tandem raises it at construction.
    message = (
        f"Invalid needs_approval value: expected a bool or callable, got {type(setting).__name__}."
    )
    with pytest.raises(UserError, match=message.replace(".", r"\.")):
        FunctionTool("n", "d", _EMPTY_SCHEMA, _noop, needs_approval=setting)
    with pytest.raises(UserError, match="Invalid needs_approval value"):
        function_tool(lambda: "x", name_override="x", needs_approval=setting)


async def test_needs_approval_set_after_construction_is_checked_when_evaluated() -> None:
    tool = FunctionTool("n", "d", _EMPTY_SCHEMA, _noop)
    tool.needs_approval = "yes"  # type: ignore[assignment]
    with pytest.raises(UserError, match="got str"):
        await evaluate_needs_approval(tool, RunContextWrapper(None), "{}", "c1")
    tool.needs_approval = True
    assert await evaluate_needs_approval(tool, RunContextWrapper(None), "{}", "c1") is True


@pytest.mark.parametrize("depth", [150, 2_000, 20_000])
def test_deeply_nested_schema_raises_user_error(depth: int) -> None:
    # openai-agents 0.24 ensure_strict_json_schema: UserError("JSON schema is too deeply nested
    # to process safely. Simplify or flatten the schema."), never RecursionError.
    message = "JSON schema is too deeply nested to process safely. Simplify or flatten the schema."
    with pytest.raises(UserError) as raised:
        ensure_strict_json_schema(_nested_schema(depth))
    assert str(raised.value) == message
    with pytest.raises(UserError, match="too deeply nested"):
        FunctionTool("n", "d", _nested_schema(depth), _noop)


def test_tool_namespace_arguments_are_keyword_only() -> None:
    # openai-agents 0.24: tool_namespace(*, name, description, tools).
    tool = function_tool(lambda: "x", name_override="lookup")
    params = inspect.signature(tool_namespace).parameters
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    with pytest.raises(TypeError):
        tool_namespace("crm", "CRM tools.", [tool])  # type: ignore[misc]
    assert [t.name for t in tool_namespace(name="crm", description="CRM.", tools=[tool])] == [
        "lookup"
    ]


# -- codex_tool ------------------------------------------------------------------------------


def _thread_key(tool: FunctionTool) -> str:
    key: str = tool.on_invoke_tool.run_context_thread_id_key  # type: ignore[attr-defined]
    return key


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "Codex tool name must be a non-empty string."),
        ("   ", "Codex tool name must be a non-empty string."),
        (7, "Codex tool name must be a string."),
        ("review", 'Codex tool name must be "codex" or start with "codex_".'),
    ],
)
def test_codex_tool_name_rules(name: Any, message: str) -> None:
    # openai-agents 0.24 _resolve_codex_tool_name.
    with pytest.raises(UserError) as raised:
        codex_tool(name=name)
    assert str(raised.value) == message


def test_codex_tool_name_is_stripped() -> None:
    assert codex_tool(name="  codex_review ").name == "codex_review"


def test_codex_tool_name_colliding_with_another_tool_is_refused() -> None:
    # openai-agents 0.24 Agent.get_all_tools: a Codex tool name used by any other tool raises
    # UserError("Duplicate Codex tool names found: codex. Provide a unique codex_tool(name=...)
    # per tool instance.").
    other = function_tool(lambda: "x", name_override="codex")
    expected = (
        "Duplicate Codex tool names found: codex. Provide a unique codex_tool(name=...) per "
        "tool instance."
    )
    with pytest.raises(UserError) as raised:
        validate_codex_tool_names([codex_tool(), other])
    assert str(raised.value) == expected
    with pytest.raises(UserError, match="Duplicate Codex tool names found: codex"):
        Agent(name="a", tools=[other, codex_tool()])
    validate_codex_tool_names([codex_tool(), function_tool(lambda: "x", name_override="other")])


async def test_codex_tool_collision_added_after_construction_is_refused() -> None:
    agent = Agent(name="a", tools=[codex_tool(name="codex_x")])
    agent.tools.append(function_tool(lambda: "x", name_override="codex_x"))
    with pytest.raises(UserError, match="Duplicate Codex tool names found: codex_x"):
        await agent.get_all_tools(RunContextWrapper(None))


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("", "run_context_thread_id_key must be a non-empty string."),
        ("  ", "run_context_thread_id_key must be a non-empty string."),
        (3, "run_context_thread_id_key must be a string."),
    ],
)
def test_codex_blank_or_non_string_context_key_is_refused(key: Any, message: str) -> None:
    # openai-agents 0.24 _validate_run_context_thread_id_key.
    with pytest.raises(UserError) as raised:
        codex_tool(run_context_thread_id_key=key)
    assert str(raised.value) == message


def test_codex_context_key_is_stripped() -> None:
    assert _thread_key(codex_tool(run_context_thread_id_key=" my_key ")) == "my_key"


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("codex_My-Tool", "must match [A-Za-z0-9_]+"),
        ("codex_a.b", "must match [A-Za-z0-9_]+"),
        ("codex_", 'must include a non-empty suffix after "codex_"'),
    ],
)
def test_codex_lossy_default_context_key_is_refused_when_used(name: str, fragment: str) -> None:
    # openai-agents 0.24: with use_run_context_thread_id=True and no explicit key, a suffix that
    # would be lossy as a context key raises UserError ("codex_a-b" and "codex_a_b" would
    # otherwise share one key).
    with pytest.raises(UserError) as raised:
        codex_tool(name=name, use_run_context_thread_id=True)
    assert fragment in str(raised.value)
    assert str(raised.value).startswith(
        "When use_run_context_thread_id=True and run_context_thread_id_key is omitted, "
    )
    tool = codex_tool(name=name, use_run_context_thread_id=True, run_context_thread_id_key="k")
    assert _thread_key(tool) == "k"


def test_codex_default_context_keys() -> None:
    # openai-agents 0.24: codex_thread_id / codex_thread_id_<suffix>; when the key is never read
    # (use_run_context_thread_id=False) the suffix is lowercased and other characters become "_".
    assert _thread_key(codex_tool()) == "codex_thread_id"
    assert _thread_key(codex_tool(name="codex_ok", use_run_context_thread_id=True)) == (
        "codex_thread_id_ok"
    )
    assert _thread_key(codex_tool(name="codex_My-Tool")) == "codex_thread_id_my_tool"


def test_codex_env_values_are_stringified() -> None:
    # openai-agents 0.24 Codex(_normalize_env): {str(k): str(v)} for the child environment.
    from core.tools.codex import CodexOptions

    options = CodexOptions(env={"RETRIES": 3, "VERBOSE": True, "EMPTY": None})  # type: ignore[dict-item]
    assert options.env == {"RETRIES": "3", "VERBOSE": "True", "EMPTY": "None"}
    assert codex_tool(codex_options={"env": {"N": 1}}) is not None
    with pytest.raises(UserError, match="mapping"):
        CodexOptions(env=["A=1"])  # type: ignore[arg-type]


# -- hosted tools ----------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [51, 100, -1, 2.5, True, "3"])
def test_file_search_limits_are_checked_at_conversion(bad: Any) -> None:
    # openai-agents 0.24: FileSearchTool(max_num_results=100) constructs; Converter.convert_tools
    # raises UserError("FileSearchTool max_num_results must be zero, an integer between 1 and 50,
    # or None.").
    tool = FileSearchTool(vector_store_ids=["vs"], max_num_results=bad)
    with pytest.raises(UserError) as raised:
        tool.to_wire()
    assert str(raised.value) == (
        "FileSearchTool max_num_results must be zero, an integer between 1 and 50, or None."
    )


async def test_file_search_limit_fails_the_run_before_any_request(model, responses_server) -> None:
    agent = Agent(
        name="a", model=model, tools=[FileSearchTool(vector_store_ids=["vs"], max_num_results=99)]
    )
    with pytest.raises(UserError, match="max_num_results"):
        await Runner.run(agent, "go")
    assert responses_server.requests == []


@pytest.mark.parametrize(
    ("filters", "sent"),
    [
        ({"allowed_domains": ["a.com"]}, {"allowed_domains": ["a.com"]}),
        ({"allowed_domains": None}, {"allowed_domains": None}),
        ({}, {"allowed_domains": None}),
        ({"allowed_domains": ["a.com"], "x_new": 1}, {"allowed_domains": ["a.com"], "x_new": 1}),
    ],
)
def test_web_search_filters_dict_is_passed_through(filters: dict, sent: dict) -> None:
    # openai-agents 0.24: a filters dict becomes the Filters model (extra keys allowed) and is
    # sent as its model_dump(), None entries included.
    assert WebSearchTool(filters=filters).to_wire()["filters"] == sent


def test_web_search_filters_of_the_wrong_type_are_refused() -> None:
    # openai-agents 0.24: TypeError for a non-dict, pydantic ValidationError for a bad field.
    from pydantic import ValidationError

    with pytest.raises(TypeError, match="web search filters must be a Filters instance or a dict"):
        WebSearchTool(filters="a.com")
    with pytest.raises(ValidationError):
        WebSearchTool(filters={"allowed_domains": "a.com"})


# -- computer_call_output --------------------------------------------------------------------


class _Screen(AsyncComputer):
    @property
    def environment(self) -> Any:
        return "browser"

    @property
    def dimensions(self) -> tuple[int, int]:
        return (800, 600)

    async def screenshot(self) -> str:
        return "png"

    async def click(self, x: int, y: int, button: str) -> None:
        return None

    async def double_click(self, x: int, y: int) -> None:
        return None

    async def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int) -> None:
        return None

    async def type(self, text: str) -> None:
        return None

    async def wait(self) -> None:
        return None

    async def move(self, x: int, y: int) -> None:
        return None

    async def keypress(self, keys: list[str]) -> None:
        return None

    async def drag(self, path: list[tuple[int, int]]) -> None:
        return None


def _computer_call(checks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "computer_call",
        "id": "cu_1",
        "call_id": "call_1",
        "status": "completed",
        "actions": [{"type": "wait"}],
        "pending_safety_checks": checks,
    }


async def test_computer_call_output_sends_null_when_nothing_was_acknowledged() -> None:
    # openai-agents 0.24 ComputerAction: acknowledged_safety_checks is None unless there were
    # pending checks and on_safety_check acknowledged them (then the list of them).
    tool = ComputerTool(_Screen(), on_safety_check=lambda data: True)
    quiet = await tool.execute(RunContextWrapper(None), _computer_call([]))
    assert quiet.input_item["acknowledged_safety_checks"] is None
    assert json.loads(json.dumps(quiet.input_item))["acknowledged_safety_checks"] is None
    checked = await tool.execute(
        RunContextWrapper(None), _computer_call([{"id": "sc_1", "code": "c", "message": "m"}])
    )
    assert checked.input_item["acknowledged_safety_checks"] == [
        {"id": "sc_1", "code": "c", "message": "m"}
    ]


# -- default model settings ------------------------------------------------------------------

_DEFAULTS = [
    ("gpt-5", {"effort": "low"}, "low"),
    ("gpt-5-2025-08-07", {"effort": "low"}, "low"),
    ("gpt-5.1", {"effort": "none"}, "low"),
    ("gpt-5.2-pro", {"effort": "medium"}, "low"),
    ("gpt-5.2-codex", {"effort": "low"}, "low"),
    ("gpt-5.3-codex", {"effort": "none"}, "low"),
    ("gpt-5.4-mini", {"effort": "none"}, "low"),
    ("gpt-5.5", {"effort": "none"}, "low"),
    ("gpt-5.6-luna", {"effort": "none"}, "low"),
    ("gpt-5-mini", None, "low"),
    ("gpt-5-chat-latest", None, None),
    ("gpt-4.1", None, None),
    ("test-model", None, None),
]


@pytest.mark.parametrize(("name", "reasoning", "verbosity"), _DEFAULTS)
def test_default_model_settings_follow_the_reference(
    name: str, reasoning: dict | None, verbosity: str | None
) -> None:
    # openai-agents 0.24 get_default_model_settings (its default model is gpt-5.6-luna).
    settings = get_default_model_settings(name)
    assert (settings.reasoning, settings.verbosity) == (reasoning, verbosity)
    try:
        from agents.models.default_models import get_default_model_settings as reference
    except ImportError:
        return
    theirs = reference(name)
    effort = theirs.reasoning.model_dump(exclude_none=True) if theirs.reasoning else None
    assert (effort, theirs.verbosity) == (reasoning, verbosity)


async def _request_of(
    openai_client: Any, responses_server: Any, agent: Agent[Any], run_config: RunConfig
) -> dict[str, Any]:
    responses_server.enqueue([items.message("ok")])
    await Runner.run(agent, "hi", run_config=run_config)
    body: dict[str, Any] = responses_server.requests[-1].body
    return body


async def test_unset_settings_send_the_default_model_defaults(openai_client, responses_server):
    provider = RunConfig(model_provider=OpenAIProvider(openai_client))
    body = await _request_of(
        openai_client, responses_server, Agent(name="a", model="gpt-5.5"), provider
    )
    assert (body["model"], body["reasoning"], body["text"]) == (
        "gpt-5.5",
        {"effort": "none"},
        {"verbosity": "low"},
    )
    # the provider's default model when the agent names none
    body = await _request_of(openai_client, responses_server, Agent(name="a"), provider)
    assert body["model"].startswith("gpt-5") and body["text"] == {"verbosity": "low"}


async def test_run_config_settings_apply_on_top_of_the_defaults(openai_client, responses_server):
    run_config = RunConfig(
        model_provider=OpenAIProvider(openai_client),
        model_settings=ModelSettings(temperature=0.5, verbosity="high"),
    )
    body = await _request_of(
        openai_client, responses_server, Agent(name="a", model="gpt-5"), run_config
    )
    assert (body["reasoning"], body["text"], body["temperature"]) == (
        {"effort": "low"},
        {"verbosity": "high"},
        0.5,
    )


@pytest.mark.parametrize(
    "agent_kwargs",
    [
        {"model": "gpt-5.5", "model_settings": ModelSettings()},  # set, even if empty
        {"model": "gpt-5.5", "model_settings": ModelSettings(temperature=0.1)},
        {"model": "gpt-4.1"},  # not a GPT-5 model (local servers' names alike)
    ],
)
async def test_no_defaults_for_settings_set_or_other_models(
    openai_client, responses_server, agent_kwargs
):
    # openai-agents 0.24: defaults replace only the implicit settings, and only GPT-5 names get them.
    run_config = RunConfig(model_provider=OpenAIProvider(openai_client))
    body = await _request_of(
        openai_client, responses_server, Agent(name="a", **agent_kwargs), run_config
    )
    assert "reasoning" not in body and "text" not in body


async def test_a_model_object_sends_the_settings_as_they_are(openai_client, responses_server):
    # openai-agents 0.24: an agent whose model is a Model instance gets ModelSettings().
    model = OpenAIResponsesModel("gpt-5.5", openai_client)
    body = await _request_of(
        openai_client, responses_server, Agent(name="a", model=model), RunConfig()
    )
    assert body["model"] == "gpt-5.5"
    assert "reasoning" not in body and "text" not in body
