"""Hosted activity and nested agent runs reach the window as cards, bodies and nesting signals.

The real runner drives the real ``openai`` client against the local Responses server (SSE):
web search with sources and citations, file search results, code interpreter code streamed in,
a generated image, an MCP server's tools, a tool search, an MCP approval asked through the
approval queue, and an agent tool whose nested run is adopted by its card.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest

from core import (
    Agent,
    CodeInterpreterTool,
    FileSearchTool,
    HostedMCPTool,
    ImageGenerationTool,
    ToolSearchTool,
    WebSearchTool,
    function_tool,
    tool_namespace,
)
from desktop.activity import CardBody
from desktop.controller import Controller
from harnesses.workspace import Workspace
from tests.support import items
from tests.support.images import png_bytes


def _record(signal: Any) -> list[tuple[Any, ...]]:
    seen: list[tuple[Any, ...]] = []
    signal.connect(lambda *args: seen.append(args))
    return seen


@function_tool(defer_loading=True)
def lookup_account(account_id: str) -> str:
    """Look up a customer account by id."""
    return f"account {account_id}: active"


def _cited_message(text: str, url: str, title: str) -> dict[str, Any]:
    message = items.message(text)
    message["content"][0]["annotations"] = [
        {"type": "url_citation", "url": url, "title": title, "start_index": 0, "end_index": 4},
        {"type": "url_citation", "url": url, "title": title, "start_index": 5, "end_index": 9},
        {"type": "file_citation", "file_id": "file_1", "filename": "handbook.pdf", "index": 3},
    ]
    return message


async def _until(predicate: Any, timeout: float = 30.0) -> None:
    async def wait() -> None:
        while not predicate():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(wait(), timeout)


async def test_hosted_activity_and_nested_runs_become_cards(
    responses_server, model, tmp_path, qtbot
):
    workspace = Workspace(tmp_path, mode="auto", data_dir=tmp_path / ".data")
    explorer = Agent(name="Explorer", model=model, instructions="Answer questions about the repo.")

    def factory(ws: Workspace) -> Agent[Any]:
        return Agent(
            name="outer",
            model=model,
            tools=[
                WebSearchTool(),
                FileSearchTool(vector_store_ids=["vs_1"], include_search_results=True),
                CodeInterpreterTool(
                    tool_config={"type": "code_interpreter", "container": {"type": "auto"}}
                ),
                ImageGenerationTool(tool_config={"type": "image_generation"}),
                HostedMCPTool(
                    tool_config={
                        "type": "mcp",
                        "server_label": "docs",
                        "server_url": "https://mcp.example.invalid/mcp",
                        "require_approval": "always",
                    }
                ),
                ToolSearchTool(),
                *tool_namespace(
                    name="crm", description="Customer records.", tools=[lookup_account]
                ),
                explorer.as_tool(
                    tool_name="explore_repository", tool_description="Ask the explorer."
                ),
            ],
        )

    controller = Controller(workspace, factory)
    started, updated, bodies, cites, nested, approvals = (
        _record(controller.toolStarted),
        _record(controller.toolUpdated),
        _record(controller.toolBody),
        _record(controller.citations),
        _record(controller.nestedEntry),
        _record(controller.approvalRequested),
    )
    png = png_bytes(64, 40)
    server = responses_server
    web = items.web_search_call("python decimal rounding", id="ws_1")
    web["action"]["sources"] = [
        {"type": "url", "url": "https://docs.python.org/3/library/decimal.html"},
        {"type": "url", "url": "https://peps.python.org/pep-0327/"},
    ]
    hits = [
        {
            "file_id": "file_1",
            "filename": "handbook.pdf",
            "score": 0.91,
            "text": "Refunds take 5 days.",
            "attributes": {},
        }
    ]
    code = "import math\nprint(math.sqrt(2))\n"
    server.enqueue(
        [
            web,
            items.file_search_call(["refund policy"], hits, id="fs_1"),
            items.code_interpreter_call(code, "1.4142135623730951\n", id="ci_1"),
            items.image_generation_call(base64.b64encode(png).decode(), id="ig_1"),
            items.mcp_list_tools("docs", ["read_wiki", "search_wiki"], id="mcpl_1"),
            items.tool_search_call({"paths": ["crm"], "query": "lookup account"}, id="tsc_1"),
            items.tool_search_output(
                [
                    {
                        "type": "namespace",
                        "name": "crm",
                        "tools": [{"type": "function", "name": "lookup_account"}],
                    }
                ],
                id="tso_1",
            ),
            items.mcp_approval_request("docs", "read_wiki", {"page": "intro"}, id="mcpr_1"),
        ]
    )
    server.enqueue(
        [
            items.mcp_call(
                "docs",
                "read_wiki",
                {"page": "intro"},
                "Intro page text",
                id="mcp_1",
                approval_request_id="mcpr_1",
            ),
            items.function_call(
                "explore_repository", {"input": "Where is rounding done?"}, "call_explore"
            ),
        ]
    )
    server.enqueue([items.message("In src/money.py, line 12.", id="msg_nested")])  # the explorer
    server.enqueue(
        [
            _cited_message(
                "Use ROUND_HALF_EVEN as the docs say.",
                "https://docs.python.org/3/library/decimal.html",
                "decimal",
            )
        ]
    )

    controller.submit("How should we round money?")
    await _until(lambda: approvals)
    request = approvals[0][0]
    assert (request.id, request.kind) == ("mcpr_1", "mcp")
    assert "read_wiki" in request.title and '"page": "intro"' in request.body
    assert request.rule_preview and "docs" in request.rule_preview
    assert ("mcpr_1", "waiting-approval", None, "waiting for your approval") in updated
    controller.decide("mcpr_1", "allow_once", "")
    await _until(lambda: not controller.is_running)
    await controller.shutdown()

    cards = {s[0]: s[1:] for s in started}
    assert cards["ws_1"] == ("web_search", "python decimal rounding", "web")
    assert cards["fs_1"][:2] == ("file_search", "refund policy")
    assert cards["ci_1"][:2] == ("code_interpreter", "import math")
    assert cards["ig_1"][0] == "image_generation"
    assert cards["mcpl_1"] == ("mcp", "list tools", "MCP server docs")
    assert cards["tsc_1"] == ("tool_search", "lookup account", "in crm")
    assert cards["mcpr_1"][:2] == ("mcp", 'read_wiki(page="intro")')
    assert cards["call_explore"] == ("agent", "Where is rounding done?", "Explorer")
    assert "mcp_1" not in cards  # the approved request's card became the call's card

    finals = {u[0]: u for u in updated if u[1] in ("completed", "failed")}
    assert finals["ws_1"][3] == "2 sources from docs.python.org, peps.python.org"
    assert finals["fs_1"][3] == "1 result in 1 file"
    assert finals["ci_1"][3] == "1 line of output"
    assert finals["ig_1"][3] == "64 x 40 image"
    assert finals["mcpl_1"][3] == "2 tools"
    assert finals["tsc_1"][3] == "loaded crm.lookup_account"
    assert finals["mcpr_1"][3] == "Intro page text"
    assert finals["call_explore"][3] == "In src/money.py, line 12."

    by_card: dict[str, list[CardBody]] = {}
    for call_id, body in bodies:
        by_card.setdefault(call_id, []).append(body)
    links = by_card["ws_1"][-1].links
    assert [link.title for link in links] == ["docs.python.org", "peps.python.org"]
    assert by_card["fs_1"][-1].hits[0].filename == "handbook.pdf"
    streamed = [b.code for b in by_card["ci_1"][:-1]]
    assert len(streamed) >= 2 and streamed[-1] == code  # code grew piece by piece, then done
    assert by_card["ci_1"][-1].output == "1.4142135623730951\n"
    assert by_card["ig_1"][0].images == [png]  # the partial image, before the item completed
    assert by_card["ig_1"][-1].images == [png]
    assert by_card["mcpl_1"][-1].lines == ["read_wiki", "search_wiki"]
    assert by_card["mcpr_1"][-1].output == "Intro page text"

    assert ("msg_nested", "call_explore") in nested  # the explorer's answer sits in its card
    assert all(parent == "call_explore" for _, parent in nested)
    ((item_id, sources),) = cites
    assert [link.title for link in sources] == ["decimal", "handbook.pdf"]
    assert item_id != "msg_nested"
    approval_reply = [
        i for i in server.requests[1].body["input"] if i.get("type") == "mcp_approval_response"
    ]
    assert approval_reply == [
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True}
    ]


async def test_journal_replay_restores_nesting_and_bodies(responses_server, model, tmp_path, qtbot):
    from harnesses.sessions import SessionJournal

    journal = SessionJournal(tmp_path / "journal.sqlite3")
    workspace = Workspace(tmp_path, mode="auto", data_dir=tmp_path / ".data")
    helper = Agent(name="Helper", model=model)

    def factory(ws: Workspace) -> Agent[Any]:
        return Agent(
            name="outer",
            model=model,
            tools=[
                WebSearchTool(),
                helper.as_tool(tool_name="ask_helper", tool_description="Ask."),
            ],
        )

    session = journal.create_session(tmp_path, "t")
    controller = Controller(workspace, factory, journal=journal, session_id=session)
    responses_server.enqueue(
        [
            items.web_search_call("q", id="ws_9"),
            items.function_call("ask_helper", {"input": "hi"}, "c_h"),
        ]
    )
    responses_server.enqueue([items.message("nested hello", id="msg_h")])
    responses_server.enqueue([items.message("done")])
    controller.submit("go")
    await _until(lambda: not controller.is_running)
    await controller.shutdown()
    journal.flush()

    again = Controller(workspace, factory, journal=journal)
    started, nested, bodies = (
        _record(again.toolStarted),
        _record(again.nestedEntry),
        _record(again.toolBody),
    )
    updated = _record(again.toolUpdated)
    again.load_session(session)
    assert [s[0] for s in started] == ["ws_9", "c_h"]
    assert nested == [("msg_h", "c_h")]
    # the answer; its duration is the journal's (issue 16), hosted results have none
    (answer,) = [u for u in updated if u[0] == "c_h"]
    assert answer[1] == "completed" and answer[3] == "nested hello"
    assert isinstance(answer[2], int) and answer[2] >= 0
    assert all(u[2] is None for u in updated if u[0] != "c_h")
    assert [b[0] for b in bodies] == []  # a search without sources has no body
    await again.shutdown()
    journal.close()
    assert json.dumps(started)  # plain values only


async def test_a_cards_duration_leaves_out_the_approval_wait(responses_server, model, tmp_path, qtbot):
    workspace = Workspace(tmp_path, mode="ask", data_dir=tmp_path / ".data")
    controller = Controller(workspace, lambda ws: Agent(name="a", model=model, tools=ws.tools()))
    updated, approvals = _record(controller.toolUpdated), _record(controller.approvalRequested)
    responses_server.enqueue([items.shell_call(["touch made.txt"], call_id="s1")])
    responses_server.enqueue([items.message("made")])
    controller.submit("make a file")
    await _until(lambda: approvals)
    await asyncio.sleep(1.5)  # the user takes their time
    controller.decide("s1", "allow_once", "")
    await _until(lambda: not controller.is_running)
    await controller.shutdown()
    assert (tmp_path / "made.txt").exists()
    (final,) = [u for u in updated if u[0] == "s1" and u[1] == "completed"]
    assert final[2] is not None and final[2] < 1500  # the command's time, not the wait


async def test_a_here_document_is_asked_without_a_rule(responses_server, model, tmp_path, qtbot):
    workspace = Workspace(tmp_path, mode="ask", data_dir=tmp_path / ".data")
    controller = Controller(workspace, lambda ws: Agent(name="a", model=model, tools=ws.tools()))
    approvals, notices = _record(controller.approvalRequested), _record(controller.notice)
    heredoc = "cat <<'EOF' > notes.txt\nhello\nEOF"
    responses_server.enqueue([items.shell_call([heredoc], call_id="h1")])
    responses_server.enqueue([items.message("written")])
    controller.submit("write notes")
    await _until(lambda: approvals)
    request = approvals[0][0]
    assert (request.id, request.body, request.rule_preview) == ("h1", heredoc, None)
    controller.decide("h1", "always_allow", "")  # no rule can be made: allowed once
    await _until(lambda: not controller.is_running)
    await controller.shutdown()
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
    assert not [n for n in notices if n[1] == "error"]


async def test_reasoning_shows_before_the_hosted_calls_of_its_turn(responses_server, model, tmp_path, qtbot):
    workspace = Workspace(tmp_path, mode="auto", data_dir=tmp_path / ".data")
    controller = Controller(workspace, lambda ws: Agent(name="a", model=model, tools=[WebSearchTool()]))
    order: list[str] = []
    controller.reasoning.connect(lambda item_id, text: order.append(f"reasoning:{text}"))
    controller.toolStarted.connect(lambda call_id, *_: order.append(f"card:{call_id}"))
    reasoning = items.reasoning("first, think")
    responses_server.enqueue([reasoning, items.web_search_call("q", id="ws_r"), items.message("ok")])
    controller.submit("go")
    await _until(lambda: not controller.is_running)
    await controller.shutdown()
    assert order[0] == "reasoning:first, think"
    assert order.index("card:ws_r") > 0


async def test_a_sub_agents_command_is_approved_from_the_window(responses_server, model, tmp_path, qtbot):
    from desktop.subagents import explorer_tool

    workspace = Workspace(tmp_path, mode="ask", data_dir=tmp_path / ".data")
    (tmp_path / "notes.txt").write_text("alpha\n")

    def factory(ws: Workspace) -> Agent[Any]:
        return Agent(name="outer", model=model, tools=[explorer_tool(ws, model=model)])

    controller = Controller(workspace, factory)
    approvals, nested, updated = (
        _record(controller.approvalRequested),
        _record(controller.nestedEntry),
        _record(controller.toolUpdated),
    )
    server = responses_server
    server.enqueue([items.function_call("explore_repository", {"input": "count lines"}, "c_outer")])
    server.enqueue([items.shell_call(["wc -l notes.txt > count.txt"], call_id="c_inner")])  # writes: asks
    server.enqueue([items.message("1 line, written to count.txt", id="m_inner")])
    server.enqueue([items.message("The explorer counted 1 line.")])
    controller.submit("how long is notes.txt?")
    await _until(lambda: approvals)
    request = approvals[0][0]
    assert (request.id, request.kind) == ("c_inner", "command")
    assert ("c_inner", "c_outer") in nested  # the waiting card sits in the sub-conversation
    assert ("c_inner", "waiting-approval", None, "waiting for your approval") in updated
    controller.decide("c_inner", "allow_once", "")
    await _until(lambda: not controller.is_running)
    await controller.shutdown()
    assert (tmp_path / "count.txt").read_text().split()[0] == "1"
    assert ("m_inner", "c_outer") in nested
    assert [u for u in updated if u[0] == "c_outer" and u[1] == "completed"]


@pytest.mark.filterwarnings("error::UserWarning")  # no pydantic serializer warnings either
async def test_malformed_hosted_items_never_stop_the_run(responses_server, model, tmp_path, qtbot):
    workspace = Workspace(tmp_path, mode="auto", data_dir=tmp_path / ".data")
    controller = Controller(workspace, lambda ws: Agent(name="a", model=model, tools=[WebSearchTool()]))
    started, notices, done = _record(controller.toolStarted), _record(controller.notice), _record(controller.assistantDone)
    odd = {"type": "web_search_call", "id": "ws_odd", "status": "completed", "action": "oops"}
    odd_queries = {"type": "file_search_call", "id": "fs_odd", "status": "completed", "queries": None, "results": "nope"}
    responses_server.enqueue([odd, odd_queries, items.message("still here")])
    controller.submit("go")
    await _until(lambda: not controller.is_running)
    await controller.shutdown()
    assert ("ws_odd", "web_search", "searching the web", "web") in started
    assert [s for s in started if s[0] == "fs_odd"]
    assert [d for d in done if d[1] == "still here"]
    assert not [n for n in notices if n[1] == "error"]


async def test_a_huge_code_cell_is_sent_to_the_view_bounded(responses_server, model, tmp_path, qtbot):
    workspace = Workspace(tmp_path, mode="auto", data_dir=tmp_path / ".data")
    tool = CodeInterpreterTool(tool_config={"type": "code_interpreter", "container": {"type": "auto"}})
    controller = Controller(workspace, lambda ws: Agent(name="a", model=model, tools=[tool]))
    bodies = _record(controller.toolBody)
    code = "".join(f"x_{i} = {i}\n" for i in range(30_000))  # ~300 KB streamed in pieces
    responses_server.enqueue([items.code_interpreter_call(code, "done\n", id="ci_big"), items.message("ok")])
    controller.submit("go")
    await _until(lambda: not controller.is_running)
    await controller.shutdown()
    sent = [body.code for call_id, body in bodies if call_id == "ci_big"]
    assert sent and all(len(text) < 20_100 for text in sent)
    assert sent[-1].startswith("x_0 = 0\n") and sent[-1].endswith(f"(20,000 of {len(code):,} characters shown)")
