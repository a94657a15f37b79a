"""Tool search (spec §3): namespaces, deferred tools, validation, dispatch and tool-search items."""

from __future__ import annotations

import pytest

from core import (
    Agent,
    ModelBehaviorError,
    ModelSettings,
    RunConfig,
    Runner,
    ToolContext,
    UserError,
    function_tool,
)
from core.items import ToolSearchCallItem, ToolSearchOutputItem
from core.tools.hosted import HostedMCPTool
from core.tools.tool_search import ToolSearchTool, tool_namespace
from tests.support import items

SEEN: list[tuple[str, str | None, dict]] = []


@function_tool(defer_loading=True)
def get_profile(ctx: ToolContext, customer_id: str) -> str:
    """Fetch profile."""
    SEEN.append(("get_profile", ctx.tool_namespace, dict(ctx.tool_call)))
    return f"profile {customer_id}"


@function_tool
def list_orders(ctx: ToolContext, customer_id: str) -> str:
    """List orders."""
    SEEN.append(("list_orders", ctx.tool_namespace, dict(ctx.tool_call)))
    return f"orders {customer_id}"


@function_tool(defer_loading=True)
def get_weather(ctx: ToolContext, city: str) -> str:
    """Weather for a city."""
    SEEN.append(("get_weather", ctx.tool_namespace, dict(ctx.tool_call)))
    return f"sunny in {city}"


@pytest.fixture(autouse=True)
def _clear_seen():
    SEEN.clear()


def _crm():
    return tool_namespace(name="crm", description="CRM tools.", tools=[get_profile, list_orders])


def _params(tool):
    return tool.wire_parameters


# -- configuration and payloads ----------------------------------------------------------------


def test_tool_search_tool_payloads():
    assert ToolSearchTool().to_wire() == {"type": "tool_search"}
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    assert ToolSearchTool(
        description="Find tools.", execution="client", parameters=schema
    ).to_wire() == {
        "type": "tool_search",
        "description": "Find tools.",
        "execution": "client",
        "parameters": schema,
    }
    with pytest.raises(UserError):
        ToolSearchTool(execution="remote")  # type: ignore[arg-type]


def test_tool_namespace_copies_and_rules():
    crm = _crm()
    assert [(t.name, t._namespace) for t in crm] == [("get_profile", "crm"), ("list_orders", "crm")]
    assert get_profile._namespace is None and list_orders._namespace is None  # originals untouched
    with pytest.raises(UserError, match="name"):
        tool_namespace(name="  ", description="d", tools=[list_orders])
    with pytest.raises(UserError, match="description"):
        tool_namespace(name="crm", description=" ", tools=[list_orders])
    with pytest.raises(UserError, match="FunctionTool"):
        tool_namespace(name="crm", description="d", tools=[ToolSearchTool()])  # type: ignore[list-item]
    with pytest.raises(UserError, match="same name as its namespace"):
        tool_namespace(name="list_orders", description="d", tools=[list_orders])


async def test_namespace_payload_mixes_deferred_and_immediate(responses_server, model):
    agent = Agent(
        name="ops", model=model, tools=[get_weather, *_crm(), ToolSearchTool(), list_orders]
    )
    responses_server.enqueue([items.message("ok")])
    await Runner.run(agent, "hi")
    assert responses_server.requests[0].body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather for a city.",
            "strict": True,
            "parameters": _params(get_weather),
            "defer_loading": True,
        },
        {
            "type": "namespace",
            "name": "crm",
            "description": "CRM tools.",
            "tools": [
                {
                    "type": "function",
                    "name": "get_profile",
                    "description": "Fetch profile.",
                    "strict": True,
                    "parameters": _params(get_profile),
                    "defer_loading": True,
                },
                {
                    "type": "function",
                    "name": "list_orders",
                    "description": "List orders.",
                    "strict": True,
                    "parameters": _params(list_orders),
                },
            ],
        },
        {"type": "tool_search"},
        {
            "type": "function",
            "name": "list_orders",
            "description": "List orders.",
            "strict": True,
            "parameters": _params(list_orders),
        },
    ]


async def test_namespace_members_are_grouped_at_first_position(responses_server, model):
    a = tool_namespace(name="crm", description="CRM.", tools=[get_profile])
    b = tool_namespace(name="crm", description="CRM.", tools=[list_orders])
    agent = Agent(name="ops", model=model, tools=[*a, get_weather, *b, ToolSearchTool()])
    responses_server.enqueue([items.message("ok")])
    await Runner.run(agent, "hi")
    tools = responses_server.requests[0].body["tools"]
    assert [t.get("name", t["type"]) for t in tools] == ["crm", "get_weather", "tool_search"]
    assert [t["name"] for t in tools[0]["tools"]] == ["get_profile", "list_orders"]


# -- validation before the request (spec §3.4, §3.6) -------------------------------------------


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            lambda: [get_weather, ToolSearchTool(), ToolSearchTool()],
            "Only one ToolSearchTool() is allowed when using OpenAI Responses models.",
        ),
        (
            lambda: [get_weather],
            "Deferred-loading Responses tools require ToolSearchTool() when using OpenAI "
            "Responses models.",
        ),
        (
            lambda: [*tool_namespace(name="crm", description="CRM.", tools=[get_profile])],
            "Deferred-loading Responses tools require ToolSearchTool()",
        ),
        (
            lambda: [
                HostedMCPTool(
                    tool_config={
                        "type": "mcp",
                        "server_label": "wiki",
                        "server_url": "https://w",
                        "defer_loading": True,
                    }
                )
            ],
            "Deferred-loading Responses tools require ToolSearchTool()",
        ),
        (
            lambda: [list_orders, ToolSearchTool()],
            "ToolSearchTool() requires at least one searchable Responses surface: ",
        ),
        (
            lambda: [*_crm(), *_crm(), ToolSearchTool()],
            "Ambiguous function tool configuration: ",
        ),
        (
            lambda: [get_weather, get_weather, ToolSearchTool()],
            "Ambiguous function tool configuration: ",
        ),
        (
            lambda: [
                *tool_namespace(name="crm", description="CRM.", tools=[get_profile]),
                *tool_namespace(name="crm", description="Other.", tools=[list_orders]),
                ToolSearchTool(),
            ],
            "All tools in namespace 'crm' must share the same description.",
        ),
    ],
)
async def test_misconfiguration_raises_before_any_request(responses_server, model, tools, message):
    agent = Agent(name="ops", model=model, tools=tools())
    with pytest.raises(UserError) as raised:
        await Runner.run(agent, "hi")
    assert str(raised.value).startswith(message)
    assert responses_server.requests == []


async def test_visible_and_deferred_top_level_tools_may_share_a_name(responses_server, model):
    @function_tool(name_override="get_weather")
    def visible_weather(city: str) -> str:
        """Visible weather."""
        return f"visible {city}"

    agent = Agent(name="ops", model=model, tools=[visible_weather, get_weather, ToolSearchTool()])
    responses_server.enqueue(
        [
            items.function_call("get_weather", {"city": "Oslo"}, call_id="bare"),
            items.function_call(
                "get_weather", {"city": "Rome"}, call_id="deferred", namespace="get_weather"
            ),
        ]
    )
    responses_server.enqueue([items.message("ok")])
    await Runner.run(agent, "hi")
    outputs = {
        i["call_id"]: i["output"]
        for i in responses_server.requests[1].body["input"]
        if i.get("type") == "function_call_output"
    }
    assert outputs == {"bare": "visible Oslo", "deferred": "sunny in Rome"}


@pytest.mark.parametrize(
    ("choice", "tools", "fragment"),
    [
        ("crm", lambda: [*_crm(), ToolSearchTool()], "not a namespace wrapper or bare inner name"),
        (
            "get_profile",
            lambda: [*_crm(), ToolSearchTool()],
            "not a namespace wrapper or bare inner name",
        ),
        ("get_weather", lambda: [get_weather, ToolSearchTool()], "deferred-loading tool"),
        ("tool_search", lambda: [*_crm(), ToolSearchTool()], "tool_choice='tool_search'"),
        ("tool_search", lambda: [list_orders], "tool_choice='tool_search'"),
        ("required", lambda: [get_weather], "tool_choice='required'"),
    ],
)
async def test_named_tool_choice_restrictions(responses_server, model, choice, tools, fragment):
    agent = Agent(
        name="ops", model=model, tools=tools(), model_settings=ModelSettings(tool_choice=choice)
    )
    with pytest.raises(UserError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        await Runner.run(agent, "hi")
    assert responses_server.requests == []


async def test_named_tool_choice_on_real_top_level_tools_passes(responses_server, model):
    @function_tool
    def tool_search(q: str) -> str:
        """A real tool called tool_search."""
        return q

    for choice, expected in (
        ("list_orders", {"type": "function", "name": "list_orders"}),
        ("tool_search", {"type": "function", "name": "tool_search"}),
        ("required", "required"),
    ):
        agent = Agent(
            name="ops",
            model=model,
            tools=[*_crm(), list_orders, tool_search, ToolSearchTool()],
            model_settings=ModelSettings(tool_choice=choice),
        )
        responses_server.enqueue([items.message("ok")])
        await Runner.run(agent, "hi")
        assert responses_server.requests[-1].body["tool_choice"] == expected


# -- dispatch and items (spec §3.5, §3.7) ------------------------------------------------------


async def test_tool_search_items_and_namespaced_dispatch(responses_server, model):
    agent = Agent(name="ops", model=model, tools=[*_crm(), get_weather, ToolSearchTool()])
    search_call = items.tool_search_call({"paths": ["crm"], "query": "profile"}, id="tsc_1")
    search_output = items.tool_search_output(
        [{"type": "namespace", "name": "crm", "description": "CRM tools.", "tools": []}], id="tso_1"
    )
    responses_server.enqueue(
        [
            search_call,
            search_output,
            items.function_call(
                "get_profile", {"customer_id": "c42"}, call_id="p", namespace="crm"
            ),
            items.function_call(
                "get_weather", {"city": "Oslo"}, call_id="w", namespace="get_weather"
            ),
        ]
    )
    responses_server.enqueue([items.message("done")])
    result = Runner.run_streamed(agent, "look up c42")
    names = [e.name async for e in result.stream_events() if e.type == "run_item_stream_event"]
    assert names == [
        "tool_search_called",
        "tool_search_output_created",
        "tool_called",
        "tool_called",
        "tool_output",
        "tool_output",
        "message_output_created",
    ]
    assert isinstance(result.new_items[0], ToolSearchCallItem)
    assert isinstance(result.new_items[1], ToolSearchOutputItem)
    assert result.new_items[0].type == "tool_search_call_item"
    assert result.new_items[1].type == "tool_search_output_item"
    # dispatch: (namespace, name); the deferred top-level tool loses its synthetic namespace
    assert [(name, ns, "namespace" in call) for name, ns, call in SEEN] == [
        ("get_profile", "crm", True),
        ("get_weather", None, False),
    ]
    sent = responses_server.requests[1].body["input"]
    stripped = {k: v for k, v in search_call.items() if k != "created_by"}
    assert sent[1] == stripped
    assert sent[2] == {k: v for k, v in search_output.items() if k != "created_by"}
    outputs = [i for i in sent if i.get("type") == "function_call_output"]
    assert outputs == [
        {"call_id": "p", "output": "profile c42", "type": "function_call_output"},
        {"call_id": "w", "output": "sunny in Oslo", "type": "function_call_output"},
    ]


async def test_bare_inner_name_does_not_resolve_to_a_namespaced_tool(responses_server, model):
    agent = Agent(name="ops", model=model, tools=[*_crm(), ToolSearchTool()])
    responses_server.enqueue(
        [items.function_call("get_profile", {"customer_id": "c"}, call_id="x")]
    )
    with pytest.raises(ModelBehaviorError, match="Tool get_profile not found in agent ops"):
        await Runner.run(agent, "hi")
    responses_server.enqueue(
        [items.function_call("get_profile", {"customer_id": "c"}, call_id="y", namespace="billing")]
    )
    responses_server.enqueue([items.message("ok")])
    await Runner.run(
        agent, "hi", run_config=RunConfig(tool_not_found_behavior="return_error_to_model")
    )
    outputs = [
        i["output"]
        for i in responses_server.requests[-1].body["input"]
        if i.get("type") == "function_call_output"
    ]
    assert outputs == ["Tool 'get_profile' not found."]


_CLIENT_MESSAGE = (
    "Client-executed tool_search calls are not supported by the standard agent runner. "
    "Handle the tool_search_call yourself and return a matching tool_search_output item "
    "with the same call_id."
)


async def test_client_executed_tool_search_is_refused_before_any_request(responses_server, model):
    agent = Agent(name="ops", model=model, tools=[*_crm(), ToolSearchTool(execution="client")])
    with pytest.raises(UserError) as raised:
        await Runner.run(agent, "hi")
    assert str(raised.value) == _CLIENT_MESSAGE
    assert responses_server.requests == []


async def test_client_tool_search_call_from_the_model_is_refused(responses_server, model):
    agent = Agent(name="ops", model=model, tools=[*_crm(), ToolSearchTool()])
    responses_server.enqueue(
        [items.tool_search_call({"query": "crm"}, execution="client", call_id="ts_1")]
    )
    with pytest.raises(ModelBehaviorError) as raised:
        await Runner.run(agent, "hi")
    assert str(raised.value) == _CLIENT_MESSAGE
    assert len(responses_server.requests) == 1  # nothing further was sent


async def test_approval_of_a_namespaced_tool_uses_its_qualified_name(responses_server, model):
    @function_tool(needs_approval=True)
    def refund(order_id: str) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    billing = tool_namespace(name="billing", description="Billing.", tools=[refund])
    agent = Agent(name="ops", model=model, tools=[*billing, ToolSearchTool()])
    responses_server.enqueue(
        [items.function_call("refund", {"order_id": "o1"}, call_id="r1", namespace="billing")]
    )
    responses_server.enqueue([items.message("ok")])
    first = await Runner.run(agent, "refund o1")
    [pending] = first.interruptions
    assert (pending.tool_name, pending.tool_namespace, pending.qualified_name) == (
        "refund",
        "billing",
        "billing.refund",
    )
    state = first.to_state()
    state.approve(pending)
    final = await Runner.run(agent, state)
    assert final.final_output == "ok"
    outputs = [
        i["output"]
        for i in responses_server.requests[1].body["input"]
        if i.get("type") == "function_call_output"
    ]
    assert outputs == ["refunded o1"]
