"""desktop.activity: what a card says about each hosted item, including odd and broken ones."""

from __future__ import annotations

import base64

from desktop.activity import (
    citations,
    hosted_card,
    hosted_result,
    image_format,
    mcp_list_tools_result,
    tool_search_card,
    tool_search_result,
)
from desktop.event_relay import _plain_markdown
from tests.support import items

PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


def test_web_search_actions_and_sources():
    search = items.web_search_call("qt 6.11", id="ws")
    search["action"]["sources"] = [{"type": "url", "url": "https://www.qt.io/blog"}, "notadict"]
    assert hosted_card(search).title == "qt 6.11"
    done = hosted_result(search)
    assert (done.status, done.summary) == ("completed", "1 source from qt.io")
    assert [(link.title, link.url) for link in done.body.links] == [("qt.io", "https://www.qt.io/blog")]
    page = {"type": "web_search_call", "id": "w2", "status": "completed", "action": {"type": "open_page", "url": "https://a.example/x"}}
    assert hosted_card(page).title == "open https://a.example/x"
    bare = {"type": "web_search_call", "id": "w3", "status": "failed"}
    assert hosted_card(bare).title == "searching the web"
    assert (hosted_result(bare).status, hosted_result(bare).summary) == ("failed", "search failed")


def test_images_are_checked_not_trusted():
    good = items.image_generation_call(base64.b64encode(PNG_1x1).decode())
    assert (hosted_result(good).status, hosted_result(good).summary) == ("completed", "1 x 1 image")
    not_image = items.image_generation_call(base64.b64encode(b"hello, not an image").decode())
    assert (hosted_result(not_image).status, hosted_result(not_image).summary) == ("failed", "the result is not an image (19 bytes)")
    not_base64 = items.image_generation_call("%%% not base64 %%%")
    assert hosted_result(not_base64).summary == "the result is not base64 image data"
    assert hosted_result(items.image_generation_call(None)).summary == "no image returned"
    assert [image_format(b) for b in (PNG_1x1, b"\xff\xd8\xff\xe0", b"RIFF\0\0\0\0WEBPVP8 ", b"GIF89a", b"<svg")] == ["png", "jpeg", "webp", "gif", None]


def test_mcp_errors_say_what_went_wrong():
    call = items.mcp_call("wiki", "read", {"p": 1}, None)
    call["error"] = {"code": -32000, "message": "tool crashed"}
    done = hosted_result(call)
    assert (done.status, done.summary) == ("failed", "error: tool crashed (code -32000)")
    assert '"tool crashed"' in done.body.output  # the whole error object stays in the details
    listing = items.mcp_list_tools("wiki", [])
    listing["error"] = "401 Unauthorized: bad token"
    assert (mcp_list_tools_result(listing).status, mcp_list_tools_result(listing).summary) == ("failed", "401 Unauthorized: bad token")


def test_huge_output_is_cut_with_a_note():
    done = hosted_result(items.mcp_call("wiki", "dump", {}, "x" * 1_000_000))
    assert done.body.output.endswith("… (20,000 of 1,000,000 characters shown)")
    assert len(done.body.output) < 20_100
    assert len(done.summary) <= 160


def test_code_interpreter_failure_keeps_the_code():
    call = items.code_interpreter_call("1/0", None, id="ci")
    call["status"] = "failed"
    done = hosted_result(call)
    assert (done.status, done.summary, done.body.code) == ("failed", "failed", "1/0")


def test_tool_search_cards():
    call = items.tool_search_call({"paths": ["crm"], "query": "lookup"}, execution="client")
    assert (tool_search_card(call).title, tool_search_card(call).detail) == ("lookup", "in crm on your machine")
    empty = tool_search_result(items.tool_search_output([]))
    assert (empty.status, empty.summary) == ("completed", "no tools found")
    many = tool_search_result(items.tool_search_output([{"type": "function", "name": f"f{i}"} for i in range(6)]))
    assert many.summary == "loaded f0, f1, f2, f3 and 2 more"


def test_citations_in_order_without_repeats():
    message = items.message("see a and b")
    message["content"][0]["annotations"] = [
        {"type": "url_citation", "url": "https://b.example/", "title": "B", "start_index": 0, "end_index": 1},
        {"type": "file_citation", "file_id": "f1", "filename": "notes.pdf", "index": 2},
        {"type": "url_citation", "url": "https://b.example/", "title": "B", "start_index": 5, "end_index": 6},
        {"type": "url_citation", "url": "javascript:alert(1)", "title": None, "start_index": "a", "end_index": 9},
        {"type": "weird"},
    ]
    assert [(link.title, link.url) for link in citations(message)] == [
        ("B", "https://b.example/"),
        ("notes.pdf", ""),
        ("javascript:alert(1)", "javascript:alert(1)"),  # kept as text; the view never opens it
    ]


def test_sub_agent_summaries_drop_markdown_marks():
    text = "`src/a.py:6`: **floats** in `total`; see [the docs](https://d.example) and snake_case"
    assert _plain_markdown(text) == "src/a.py:6: floats in total; see the docs and snake_case"
