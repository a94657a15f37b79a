"""Hosted tools (spec §2): wire payloads, recorded items, stream events and the MCP approval flow."""

from __future__ import annotations

import json

import pytest

from core import Agent, ModelBehaviorError, RunConfig, Runner, RunState, UserError
from core.items import (
    MCPApprovalRequestItem,
    MCPApprovalResponseItem,
    MCPListToolsItem,
    MessageOutputItem,
    ToolApprovalItem,
    ToolCallItem,
)
from core.tools.hosted import (
    CodeInterpreterTool,
    FileSearchTool,
    HostedMCPTool,
    ImageGenerationTool,
    MCPToolApprovalRequest,
    WebSearchTool,
)
from tests.support import items

DEEPWIKI = {
    "type": "mcp",
    "server_label": "deepwiki",
    "server_url": "https://mcp.deepwiki.com/mcp",
    "require_approval": "always",
}


def _input_of(server, index):
    return server.requests[index].body["input"]


# -- wire payloads ------------------------------------------------------------------------------


def test_web_search_payloads():
    assert WebSearchTool().to_wire() == {
        "type": "web_search",
        "filters": None,
        "user_location": None,
        "search_context_size": "medium",
    }
    tool = WebSearchTool(
        filters={"allowed_domains": ["openai.com"]},
        user_location={"type": "approximate", "city": "Paris", "country": None},
        search_context_size="high",
        external_web_access=False,
    )
    assert tool.to_wire() == {
        "type": "web_search",
        "filters": {"allowed_domains": ["openai.com"]},
        "user_location": {"type": "approximate", "city": "Paris"},
        "search_context_size": "high",
        "external_web_access": False,
    }


def test_file_search_payloads_and_validation():
    assert FileSearchTool(vector_store_ids=["vs_1"]).to_wire() == {
        "type": "file_search",
        "vector_store_ids": ["vs_1"],
    }
    assert FileSearchTool(vector_store_ids=["vs_1"], max_num_results=0).to_wire() == {
        "type": "file_search",
        "vector_store_ids": ["vs_1"],
    }
    full = FileSearchTool(
        vector_store_ids=["vs_1", "vs_2"],
        max_num_results=50,
        ranking_options={"ranker": "auto", "score_threshold": 0.5},
        filters={"type": "eq", "key": "lang", "value": "en"},
    )
    assert full.to_wire() == {
        "type": "file_search",
        "vector_store_ids": ["vs_1", "vs_2"],
        "max_num_results": 50,
        "ranking_options": {"ranker": "auto", "score_threshold": 0.5},
        "filters": {"type": "eq", "key": "lang", "value": "en"},
    }
    for bad in (51, -1, 2.5, True):
        with pytest.raises(UserError, match="max_num_results"):
            FileSearchTool(vector_store_ids=["vs_1"], max_num_results=bad).to_wire()


def test_code_interpreter_image_generation_and_mcp_payloads_are_sent_unchanged():
    config = {"type": "code_interpreter", "container": {"type": "auto", "file_ids": ["f1"]}}
    tool = CodeInterpreterTool(tool_config=config)
    assert tool.to_wire() == config
    assert tool.to_wire() is not config
    assert ImageGenerationTool(
        tool_config={"type": "image_generation", "quality": "low"}
    ).to_wire() == {
        "type": "image_generation",
        "quality": "low",
    }
    assert HostedMCPTool(tool_config=DEEPWIKI).to_wire() == DEEPWIKI
    with pytest.raises(UserError, match="server_label"):
        HostedMCPTool(tool_config={"type": "mcp", "server_url": "https://x"})
    with pytest.raises(UserError, match="allowed_callers"):
        CodeInterpreterTool(
            tool_config={"type": "code_interpreter", "container": "c", "allowed_callers": ["x"]}
        )
    with pytest.raises(UserError, match="type"):
        ImageGenerationTool(tool_config={"type": "web_search"})


async def test_request_tools_and_include(responses_server, model):
    agent = Agent(
        name="a",
        model=model,
        tools=[
            WebSearchTool(),
            FileSearchTool(vector_store_ids=["vs_1"], include_search_results=True),
            HostedMCPTool(tool_config=DEEPWIKI),
        ],
    )
    responses_server.enqueue([items.message("hi")])
    await Runner.run(agent, "go")
    body = responses_server.requests[0].body
    assert body["include"] == ["file_search_call.results"]
    assert body["tools"] == [
        {
            "type": "web_search",
            "filters": None,
            "user_location": None,
            "search_context_size": "medium",
        },
        {"type": "file_search", "vector_store_ids": ["vs_1"]},
        DEEPWIKI,
    ]


# -- output items -------------------------------------------------------------------------------


def _hosted_output():
    return [
        items.web_search_call("coffee in SF", id="ws_1"),
        items.file_search_call(
            ["preferences"],
            results=[
                {
                    "file_id": "f1",
                    "filename": "prefs.md",
                    "score": 0.9,
                    "text": "likes espresso",
                    "attributes": {},
                }
            ],
            id="fs_1",
        ),
        items.code_interpreter_call("print(1+1)", logs="2\n", id="ci_1"),
        items.image_generation_call("aGVsbG8=", id="ig_1"),
        items.mcp_list_tools("deepwiki", ["ask_question"], id="mcpl_1"),
        items.mcp_call("deepwiki", "ask_question", {"q": "x"}, output="answer", id="mcp_1"),
        items.message("Blue Bottle."),
    ]


async def test_hosted_items_recorded_and_replayed(responses_server, model):
    agent = Agent(
        name="a",
        model=model,
        tools=[
            WebSearchTool(),
            HostedMCPTool(tool_config={**DEEPWIKI, "require_approval": "never"}),
        ],
    )
    responses_server.enqueue(_hosted_output())
    responses_server.enqueue([items.message("again")])
    result = await Runner.run(agent, "where?")
    assert result.final_output == "Blue Bottle."
    kinds = [(type(i).__name__, i.raw_item["type"]) for i in result.new_items]
    assert kinds == [
        ("ToolCallItem", "web_search_call"),
        ("ToolCallItem", "file_search_call"),
        ("ToolCallItem", "code_interpreter_call"),
        ("ToolCallItem", "image_generation_call"),
        ("MCPListToolsItem", "mcp_list_tools"),
        ("ToolCallItem", "mcp_call"),
        ("MessageOutputItem", "message"),
    ]
    assert result.new_items[2].raw_item["outputs"] == [{"type": "logs", "logs": "2\n"}]
    assert result.new_items[3].raw_item["result"] == "aGVsbG8="
    assert len(responses_server.requests) == 1
    # the items go back as input when the conversation continues
    follow = await Runner.run(agent, result.to_input_list())
    assert follow.final_output == "again"
    sent = [i.get("type") for i in _input_of(responses_server, 1)]
    assert sent[1:] == [
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_list_tools",
        "mcp_call",
        "message",
    ]


async def test_hosted_activity_without_message_runs_again(responses_server, model):
    agent = Agent(name="a", model=model, tools=[WebSearchTool()])
    responses_server.enqueue([items.web_search_call("q", id="ws_1")])
    responses_server.enqueue([items.message("done")])
    result = await Runner.run(agent, "go")
    assert result.final_output == "done"
    assert [i.get("type") for i in _input_of(responses_server, 1)] == [None, "web_search_call"]


async def test_stream_event_names_for_hosted_items(responses_server, model):
    agent = Agent(
        name="a",
        model=model,
        tools=[
            WebSearchTool(),
            HostedMCPTool(
                tool_config=DEEPWIKI, on_approval_request=lambda request: {"approve": True}
            ),
        ],
    )
    responses_server.enqueue(
        [
            items.web_search_call("q", id="ws_1"),
            items.mcp_list_tools("deepwiki", ["ask_question"], id="mcpl_1"),
            items.mcp_approval_request("deepwiki", "ask_question", {"q": "x"}, id="mcpr_1"),
        ]
    )
    responses_server.enqueue([items.message("ok")])
    result = Runner.run_streamed(agent, "go")
    names = [
        (e.name, type(e.item).__name__)
        async for e in result.stream_events()
        if e.type == "run_item_stream_event"
    ]
    assert names == [
        ("tool_called", "ToolCallItem"),
        ("mcp_list_tools", "MCPListToolsItem"),
        ("mcp_approval_requested", "MCPApprovalRequestItem"),
        ("mcp_approval_response", "MCPApprovalResponseItem"),
        ("message_output_created", "MessageOutputItem"),
    ]
    assert result.final_output == "ok"


# -- hosted MCP approvals -----------------------------------------------------------------------


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_mcp_approval_through_on_approval_request(responses_server, model, asynchronous):
    seen: list[tuple[str, str, str]] = []

    def decide(request: MCPToolApprovalRequest):
        assert isinstance(request, MCPToolApprovalRequest)
        assert request.ctx_wrapper.context == {"user": "ann"}
        seen.append((request.data.id, request.data.name, request.data.server_label))
        if request.data.name == "ask_question":
            return {"approve": True}
        return {"approve": False, "reason": "writes are not allowed"}

    async def adecide(request):
        return decide(request)

    tool = HostedMCPTool(
        tool_config=DEEPWIKI, on_approval_request=adecide if asynchronous else decide
    )
    agent = Agent(name="a", model=model, tools=[tool])
    request_1 = items.mcp_approval_request("deepwiki", "ask_question", {"q": "x"}, id="mcpr_1")
    request_2 = items.mcp_approval_request("deepwiki", "write_page", {"p": 1}, id="mcpr_2")
    responses_server.enqueue([request_1, request_2])
    responses_server.enqueue(
        [
            items.mcp_call(
                "deepwiki", "ask_question", {"q": "x"}, output="42", approval_request_id="mcpr_1"
            ),
            items.message("The answer is 42."),
        ]
    )
    result = await Runner.run(agent, "ask", context={"user": "ann"})
    assert result.final_output == "The answer is 42."
    assert seen == [
        ("mcpr_1", "ask_question", "deepwiki"),
        ("mcpr_2", "write_page", "deepwiki"),
    ]
    assert _input_of(responses_server, 1)[1:] == [
        request_1,
        request_2,
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
        {
            "type": "mcp_approval_response",
            "approval_request_id": "mcpr_2",
            "approve": False,
            "reason": "writes are not allowed",
        },
    ]
    responses = [i for i in result.new_items if isinstance(i, MCPApprovalResponseItem)]
    assert [r.raw_item["approve"] for r in responses] == [True, False]
    assert not result.interruptions


async def test_mcp_approval_through_interruption_and_run_state(responses_server, model):
    agent = Agent(name="a", model=model, tools=[HostedMCPTool(tool_config=DEEPWIKI)])
    request = items.mcp_approval_request("deepwiki", "ask_question", {"q": "x"}, id="mcpr_1")
    responses_server.enqueue([request])
    responses_server.enqueue([items.message("answered")])
    first = await Runner.run(agent, "ask")
    assert first.final_output is None
    [pending] = first.interruptions
    assert isinstance(pending, ToolApprovalItem)
    assert (pending.tool_name, pending.call_id, pending.raw_item) == (
        "ask_question",
        "mcpr_1",
        request,
    )
    assert any(isinstance(i, MCPApprovalRequestItem) for i in first.new_items)
    # the decision survives serialisation
    state = await RunState.from_string(agent, first.to_state().to_string())
    state.approve(state.get_interruptions()[0])
    final = await Runner.run(agent, state)
    assert final.final_output == "answered"
    assert len(responses_server.requests) == 2  # no model call before the response went back
    assert _input_of(responses_server, 1)[1:] == [
        request,
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
    ]
    assert [type(i).__name__ for i in final.new_items] == [
        "MCPApprovalRequestItem",
        "MCPApprovalResponseItem",
        "MessageOutputItem",
    ]


async def test_mcp_rejection_reason_precedence_and_caller(responses_server, model):
    agent = Agent(name="a", model=model, tools=[HostedMCPTool(tool_config=DEEPWIKI)])
    request = {
        **items.mcp_approval_request("deepwiki", "write_page", {"p": 1}, id="mcpr_9"),
        "caller": {"type": "direct"},
    }
    responses_server.enqueue([request])
    responses_server.enqueue([items.message("ok")])
    first = await Runner.run(agent, "write")
    state = first.to_state()
    state.reject(first.interruptions[0], rejection_message="no")
    await Runner.run(agent, state)
    assert _input_of(responses_server, 1)[-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": "mcpr_9",
        "approve": False,
        "reason": "no",
        "caller": {"type": "direct"},
    }
    # without an explicit message the formatter's text is the reason
    responses_server.enqueue(
        [items.mcp_approval_request("deepwiki", "write_page", "{}", id="mcpr_10")]
    )
    responses_server.enqueue([items.message("ok")])
    config = RunConfig(tool_error_formatter=lambda a: f"{a.kind}/{a.tool_type}/{a.tool_name}")
    first = await Runner.run(agent, "write", run_config=config)
    state = first.to_state()
    state.reject(first.interruptions[0])
    await Runner.run(agent, state, run_config=config)
    assert _input_of(responses_server, 3)[-1] == {
        "type": "mcp_approval_response",
        "approval_request_id": "mcpr_10",
        "approve": False,
        "reason": "approval_rejected/mcp/write_page",
    }


async def test_mcp_sticky_approval_is_keyed_by_server_and_tool(responses_server, model):
    other = {**DEEPWIKI, "server_label": "other", "server_url": "https://other/mcp"}
    agent = Agent(
        name="a",
        model=model,
        tools=[HostedMCPTool(tool_config=DEEPWIKI), HostedMCPTool(tool_config=other)],
    )
    responses_server.enqueue([items.mcp_approval_request("deepwiki", "ask", "{}", id="r1")])
    responses_server.enqueue(
        [
            items.mcp_approval_request("deepwiki", "ask", "{}", id="r2"),
            items.mcp_approval_request("other", "ask", "{}", id="r3"),
            items.mcp_approval_request("deepwiki", "write", "{}", id="r4"),
        ]
    )
    first = await Runner.run(agent, "go")
    state = first.to_state()
    state.approve(first.interruptions[0], always_approve=True)
    second = await Runner.run(agent, state)
    assert [(i.raw_item["server_label"], i.tool_name) for i in second.interruptions] == [
        ("other", "ask"),
        ("deepwiki", "write"),
    ]
    sent = [i for i in _input_of(responses_server, 1) if i.get("type") == "mcp_approval_response"]
    assert sent == [{"type": "mcp_approval_response", "approval_request_id": "r1", "approve": True}]
    # r2 was answered from the sticky decision, in the same step that interrupted on r3/r4
    answered = [
        i.raw_item["approval_request_id"]
        for i in second.new_items
        if isinstance(i, MCPApprovalResponseItem)
    ]
    assert answered == ["r1", "r2"]


async def test_mcp_approval_for_unknown_server_label(responses_server, model):
    agent = Agent(name="a", model=model, tools=[HostedMCPTool(tool_config=DEEPWIKI)])
    responses_server.enqueue([items.mcp_approval_request("elsewhere", "ask", "{}", id="r1")])
    with pytest.raises(ModelBehaviorError, match="MCP server label elsewhere not found"):
        await Runner.run(agent, "go")


async def test_bad_callback_answer_is_a_user_error(responses_server, model):
    tool = HostedMCPTool(tool_config=DEEPWIKI, on_approval_request=lambda r: True)
    agent = Agent(name="a", model=model, tools=[tool])
    responses_server.enqueue([items.mcp_approval_request("deepwiki", "ask", "{}", id="r1")])
    with pytest.raises(UserError, match="on_approval_request must return"):
        await Runner.run(agent, "go")


async def test_hosted_run_items_survive_run_state_round_trip(responses_server, model):
    agent = Agent(name="a", model=model, tools=[HostedMCPTool(tool_config=DEEPWIKI)])
    responses_server.enqueue(
        [
            items.mcp_list_tools("deepwiki", ["ask"], id="l1"),
            items.mcp_approval_request("deepwiki", "ask", "{}", id="r1"),
        ]
    )
    first = await Runner.run(agent, "go")
    data = json.loads(first.to_state().to_string())
    restored = await RunState.from_json(agent, data)
    assert [type(i) for i in restored.generated_items] == [
        MCPListToolsItem,
        MCPApprovalRequestItem,
        ToolApprovalItem,
    ]
    assert restored.get_interruptions()[0].approval_key == "mcp:deepwiki:ask"


def test_tool_call_item_for_hosted_items_keeps_the_raw_item():
    agent = Agent(name="a")
    raw = items.web_search_call("q", id="ws_7")
    item = ToolCallItem(agent=agent, raw_item=raw)
    assert (item.call_id, item.tool_name, item.to_input_item()) == ("ws_7", "web_search_call", raw)
    assert isinstance(
        MessageOutputItem(agent=agent, raw_item=items.message("x")), MessageOutputItem
    )
