"""ConversationView: hosted tool bodies, citations and nested (agent-as-tool) sub-conversations."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontInfo, QFontMetrics
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QToolButton

from desktop.activity import CardBody, Link, SearchHit
from desktop.views.conversation_view import ConversationView
from tests.support.images import noise_png, png_bytes


@pytest.fixture
def view(qtbot):
    widget = ConversationView(flush_interval_ms=30)
    qtbot.addWidget(widget)
    widget.resize(700, 800)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


LINKS = [
    Link("Qt 6.11 Released", "https://www.qt.io/blog/qt-6.11-released"),
    Link("New features", "https://wiki.qt.io/New_Features"),
    Link("doc.qt.io", "https://doc.qt.io/qt-6/whatsnew.html"),
]


@pytest.mark.parametrize(
    ("kind", "label"),
    [
        ("web_search", "Web search"),
        ("file_search", "File search"),
        ("code_interpreter", "Code"),
        ("image_generation", "Image"),
        ("mcp", "MCP"),
        ("tool_search", "Tool search"),
        ("agent", "Agent"),
    ],
)
def test_hosted_kinds_have_a_label_and_a_dejavu_glyph(view, kind: str, label: str) -> None:
    view.add_tool_card("c1", kind, "title", "")
    card = view.tool_card("c1")
    assert card.kind_label.text() == label
    glyph = card.icon.text()
    assert glyph not in ("", "•")  # a glyph of its own, not the fallback
    font = QFont("DejaVu Sans")
    if QFontInfo(font).family() != "DejaVu Sans":
        pytest.skip("DejaVu Sans is not installed")
    assert QFontMetrics(font).inFontUcs4(ord(glyph))


def test_web_search_links_start_folded_and_toggle_open(view) -> None:
    view.add_tool_card("ws", "web_search", "qt release notes", "web")
    view.set_tool_body("ws", CardBody(links=LINKS))
    card = view.tool_card("ws")
    assert card.body_toggle is not None
    assert card.body_toggle.isVisible()
    assert card.body_toggle.text() == "▸ 3 sources"
    assert not card.is_body_visible()
    assert card.body is not None and not card.body.isVisible()
    text = card.body_text()
    for link in LINKS:
        assert link.title in text
        assert link.url in text
    assert "qt.io" in text and "1." in text and "3." in text

    QTest.mouseClick(card.body_toggle, Qt.MouseButton.LeftButton)
    assert card.is_body_visible()
    assert card.body.links.isVisible()
    assert card.body_toggle.text() == "▾ 3 sources"
    assert not card.body.links.openExternalLinks()  # clicks go through open_safe_url
    assert 'href="https://wiki.qt.io/New_Features"' in card.body.links.text()
    card.toggle_body()
    assert not card.is_body_visible()
    assert card.body_toggle.text() == "▸ 3 sources"


def test_file_search_hits_show_name_score_and_snippet(view) -> None:
    view.add_tool_card("fs", "file_search", "layout hold", "vector stores")
    hits = [
        SearchHit("conversation_view.py", 0.8734, "while slots run, the layout is off"),
        SearchHit("README.md", None, "Tandem is a desktop coding assistant."),
    ]
    view.set_tool_body("fs", CardBody(hits=hits))
    card = view.tool_card("fs")
    assert card.body_toggle is not None
    assert card.body_toggle.text() == "▸ 2 results"
    text = card.body_text()
    assert "conversation_view.py · 0.87" in text
    assert "while slots run, the layout is off" in text
    assert "README.md" in text and "Tandem is a desktop coding assistant." in text
    assert "README.md ·" not in text  # no score, no separator


def test_code_interpreter_shows_code_and_capped_output(view, qtbot) -> None:
    view.add_tool_card("ci", "code_interpreter", "import math", "cntr_1")
    output = "".join(f"line {i}\n" for i in range(100))
    code = "import math\nprint(math.pi)"
    view.set_tool_body("ci", CardBody(code=code, output=output, expanded=True))
    view.settle()
    card = view.tool_card("ci")
    assert card.is_body_visible()
    assert card.body is not None
    assert card.body.code.isVisible() and card.body.output.isVisible()
    assert card.body_toggle is not None and card.body_toggle.text() == "▾ details"
    assert "print(math.pi)" in card.body.code.toPlainText()
    assert card.body.code.toPlainText() == code  # plain text in a box, never Markdown
    assert card.body.code.objectName() == "cardCode"
    assert QFontInfo(card.body.code.font()).fixedPitch()
    assert QFontInfo(card.body.output.font()).fixedPitch()
    text = card.body_text()
    assert "import math" in text and "line 0" in text and "line 99" in text
    line = QFontMetrics(card.body.output.font()).lineSpacing()
    assert card.body.output.height() < 20 * line  # capped, it scrolls instead
    qtbot.waitUntil(lambda: card.body.output.verticalScrollBar().maximum() > 0)


def shown_images(card) -> list[QLabel]:
    return [
        label
        for label in card.body.findChildren(QLabel, "cardImage")
        if label.isVisibleTo(card.body) and not label.pixmap().isNull()
    ]


def test_image_body_shows_a_scaled_pixmap(view, qtbot) -> None:
    view.add_tool_card("img", "image_generation", "a blue square", "")
    view.set_tool_body("img", CardBody(images=[png_bytes(800, 400)], expanded=True))
    card = view.tool_card("img")
    assert card.image_count() == 1
    view.settle()
    labels = shown_images(card)
    assert len(labels) == 1
    pixmap = labels[0].pixmap()
    assert pixmap.width() == 360  # scaled down to at most 360 px wide
    assert pixmap.height() == 180  # aspect kept
    assert labels[0].isVisible()

    view.set_tool_body("img", CardBody(images=[png_bytes(100, 50)], expanded=True))  # replaced
    assert card.image_count() == 1
    labels = shown_images(card)
    assert [label.pixmap().width() for label in labels] == [100]  # small ones not upscaled


def test_images_shrink_in_a_narrow_transcript(view, qtbot) -> None:
    view.add_tool_card("img", "image_generation", "wide", "")
    view.set_tool_body("img", CardBody(images=[png_bytes(800, 400)], expanded=True))
    card = view.tool_card("img")
    view.resize(300, 600)
    view.settle()
    viewport = view._scroll.viewport()
    qtbot.waitUntil(lambda: card.width() <= viewport.width())  # never widens the transcript
    (label,) = shown_images(card)
    qtbot.waitUntil(lambda: label.pixmap().width() < 360)
    assert label.pixmap().width() <= label.width()
    assert abs(label.pixmap().height() * 2 - label.pixmap().width()) <= 2


def test_undecodable_image_gives_a_dim_line(view) -> None:
    view.add_tool_card("img", "image_generation", "broken", "")
    view.set_tool_body("img", CardBody(images=[b"not an image at all"], expanded=True))
    card = view.tool_card("img")
    assert card.image_count() == 0
    assert "image could not be decoded" in card.body_text()


def test_replacing_the_body_keeps_the_users_choice(view) -> None:
    view.add_tool_card("ci", "code_interpreter", "print(1)", "")
    card = view.tool_card("ci")
    view.set_tool_body("ci", CardBody(code="print(1)"))
    assert not card.is_body_visible()
    view.set_tool_body("ci", CardBody(code="print(1)", expanded=True))
    assert card.is_body_visible()  # no choice made yet: the body's own wish
    card.toggle_body()  # the user folds it
    view.set_tool_body("ci", CardBody(code="print(1)\nprint(2)", expanded=True))
    assert not card.is_body_visible()
    assert "print(2)" in card.body_text()  # the content was replaced
    card.toggle_body()  # and opens it again
    view.set_tool_body("ci", CardBody(code="print(1)\nprint(2)\nprint(3)", expanded=False))
    assert card.is_body_visible()
    assert "print(3)" in card.body_text()


def test_empty_body_hides_body_and_toggle(view) -> None:
    view.add_tool_card("ws", "web_search", "q", "")
    card = view.tool_card("ws")
    view.set_tool_body("ws", CardBody())  # nothing yet: no toggle at all
    assert card.body_toggle is None and card.body_text() == ""
    view.set_tool_body("ws", CardBody(links=LINKS, expanded=True))
    assert card.is_body_visible()
    view.set_tool_body("ws", CardBody())
    assert card.body_toggle is not None and not card.body_toggle.isVisibleTo(card)
    assert not card.is_body_visible()
    assert card.body_text() == ""


def test_mcp_tool_lines_are_listed(view) -> None:
    view.add_tool_card("m", "mcp", "list tools", "MCP server docs")
    view.set_tool_body("m", CardBody(lines=["read_wiki — read a page", "ask_question"]))
    card = view.tool_card("m")
    assert card.body_toggle is not None and card.body_toggle.text() == "▸ 2 tools"
    assert "read_wiki — read a page" in card.body_text()
    assert "ask_question" in card.body_text()


def test_citations_footer_numbers_links_and_files(view) -> None:
    view.set_citations("m1", [LINKS[0], Link("notes.md")])  # before the message exists
    assert view.entry_count() == 1
    view.finish_assistant_message("m1", "Qt 6.11 is out [1], see the notes [2].")
    assert view.entry_count() == 1  # the same entry
    assert view.message_sources("m1") == ["Qt 6.11 Released", "notes.md"]
    message = view.entries()[0]
    footer = message.findChild(QLabel, "messageSources")
    assert footer is not None and footer.isVisible()
    shown = footer.text()
    assert "Sources" in shown
    assert "1." in shown and "2." in shown
    assert f'href="{LINKS[0].url}"' in shown
    assert "qt.io" in shown  # the dim domain
    assert shown.count("href=") == 1  # the file citation is not a link
    assert not footer.openExternalLinks()  # clicks go through open_safe_url

    view.finish_assistant_message("m2", "No sources here.")
    view.set_citations("m2", [])
    assert view.message_sources("m2") == []
    assert view.entries()[1].findChild(QLabel, "messageSources") is None


def test_nested_runs_form_sub_conversations(view, qtbot) -> None:
    view.add_user_message("research this")
    view.add_tool_card("agent1", "agent", "researcher", "")
    view.adopt("n1", "agent1")
    view.append_assistant_delta("n1", "Looking ")
    view.adopt("shell1", "agent1")
    view.add_tool_card("shell1", "shell", "rg -n hold", "~/repo")
    view.adopt("agent2", "agent1")
    view.add_tool_card("agent2", "agent", "summariser", "")
    view.adopt("n2", "agent2")
    view.finish_assistant_message("n2", "Nested **twice**.")
    view.adopt("agent3", "agent2")
    view.add_tool_card("agent3", "agent", "checker", "")
    view.adopt("r3", "agent3")
    view.add_reasoning("r3", "Third level thinking")

    # While slots run the nested layouts are held too; one pass at the next turn.
    outer = view.tool_card("agent1")
    assert outer.sub_box is not None
    assert not outer.sub_box.layout().isEnabled()
    qtbot.waitUntil(lambda: outer.sub_box.layout().isEnabled())

    assert view.entry_count() == 2  # the user message and the outer card only
    assert len(view.entries()) == 2
    assert outer.sub_entries() == [
        view._messages["n1"],
        view.tool_card("shell1"),
        view.tool_card("agent2"),
    ]
    assert outer.is_sub_expanded()
    assert outer.sub_toggle is not None
    assert outer.sub_toggle.text() == "▾ Conversation · 3 entries"
    middle = view.tool_card("agent2")
    inner = view.tool_card("agent3")
    assert middle.sub_entries() == [view._messages["n2"], inner]
    assert inner.sub_entries() == [view.reasoning_entry("r3")]
    assert inner.sub_toggle is not None and "1 entry" in inner.sub_toggle.text()
    assert "Nested twice." in view.message_text("n2")
    assert inner.isVisible() and view.reasoning_entry("r3").isVisible()
    assert view.tool_card("shell1").width() < outer.width()  # indented inside its parent

    before = view.render_count
    view.append_assistant_delta("n1", "it **up**.")
    qtbot.waitUntil(lambda: view.render_count > before)
    assert view.message_text("n1").strip() == "Looking it up."

    view.update_tool_card("shell1", "completed", 12, "exit 0")  # nested cards update too
    assert "done" in view.tool_card("shell1").status.text()


def test_sub_conversation_folds_when_done_unless_the_user_chose(view) -> None:
    view.add_tool_card("a", "agent", "one", "")
    view.add_tool_card("b", "agent", "two", "")
    for parent in ("a", "b"):
        view.adopt(f"m-{parent}", parent)
        view.finish_assistant_message(f"m-{parent}", "done")
    a, b = view.tool_card("a"), view.tool_card("b")
    assert a.is_sub_expanded() and b.is_sub_expanded()

    view.update_tool_card("a", "completed", 1000, "")
    assert not a.is_sub_expanded()
    assert a.sub_toggle is not None and a.sub_toggle.text().startswith("▸ Conversation")
    a.toggle_sub()
    assert a.is_sub_expanded()

    QTest.mouseClick(b.sub_toggle, Qt.MouseButton.LeftButton)  # fold while running
    QTest.mouseClick(b.sub_toggle, Qt.MouseButton.LeftButton)  # and open again: a choice
    view.update_tool_card("b", "failed", 1000, "error")
    assert b.is_sub_expanded()  # the user's choice wins

    view.adopt("late", "a")  # a card that completed can still receive entries
    view.add_reasoning("late", "afterthought")
    assert len(a.sub_entries()) == 2


def test_unknown_ids_are_ignored(view) -> None:
    view.set_tool_body("nope", CardBody(links=LINKS))
    view.update_tool_card("nope", "completed", 1, "")
    view.adopt("m1", "no-such-card")  # an unknown parent: the top level
    view.finish_assistant_message("m1", "hello")
    assert view.entry_count() == 1
    view.add_tool_card("c1", "shell", "ls", "")
    view.adopt("c1", "c1")  # an entry that already exists stays where it is
    view.add_tool_card("c1", "shell", "ls -l", "")
    assert view.entry_count() == 2
    assert view.tool_card("c1").sub_entries() == []
    view.set_tool_body("c1", "not a body")  # wrong payloads are ignored too
    assert view.tool_card("c1").body is None


def test_clear_forgets_nested_entries_and_adoptions(view) -> None:
    view.add_tool_card("a", "agent", "one", "")
    view.adopt("n", "a")
    view.add_tool_card("n", "shell", "ls", "")
    view.adopt("pending", "a")
    view.clear()
    view.settle()  # a pending relayout after clear is harmless
    with pytest.raises(KeyError):
        view.tool_card("n")
    view.add_tool_card("a", "agent", "again", "")
    view.add_reasoning("pending", "top level now")  # the old adoption was forgotten
    assert view.entry_count() == 2


def test_reveal_opens_a_folded_sub_conversation_and_scrolls_to_it(view, qtbot) -> None:
    view.add_tool_card("agent_1", "agent", "Where is rounding done?", "Explorer")
    view.adopt("msg_in", "agent_1")
    view.finish_assistant_message("msg_in", "In `src/money.py`.")
    for index in range(60):  # enough entries below to scroll the card out of view
        view.add_notice(f"later entry {index}", "info")
    view.update_tool_card("agent_1", "completed", 900, "In src/money.py.")
    view.settle()
    bar = view._scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    view.scroll_to_end()
    card = view.tool_card("agent_1")
    assert not card.is_sub_expanded()
    assert bar.value() > 0 and card.visibleRegion().isEmpty()

    view.reveal("agent_1")
    assert card.is_sub_expanded()
    assert not view.is_following()
    qtbot.waitUntil(lambda: card.visibleRegion().boundingRect().height() == card.height())
    view.reveal("no_such_card")  # ignored


def test_only_web_links_are_opened(view, qtbot) -> None:
    from PySide6.QtCore import QObject, QUrl, Slot
    from PySide6.QtGui import QDesktopServices

    from desktop.views.rich_text import links_html, open_safe_url

    class Catcher(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.urls: list[str] = []

        @Slot(QUrl)
        def take(self, url: QUrl) -> None:
            self.urls.append(url.toString())

    catcher = Catcher()
    schemes = ("http", "https", "javascript", "data", "file")
    for scheme in schemes:
        QDesktopServices.setUrlHandler(scheme, catcher, "take")
    try:
        evil = [Link("x", "javascript:alert(1)"), Link("d", "data:text/html,<script>1</script>"), Link("f", "file:///etc/passwd")]
        html_text = links_html([*evil, Link("ok", "https://example.org/a")])
        assert "javascript:" in html_text  # shown as text...
        assert html_text.count("href=") == 1  # ...but only the web link is a link
        for link in evil:
            assert not open_safe_url(link.url)
        assert open_safe_url(QUrl("https://example.org/a"))
        view.finish_assistant_message("m1", "see [docs](javascript:alert(2)) and [site](https://example.org/b)")
        body = view._messages["m1"].body
        body.anchorClicked.emit(QUrl("javascript:alert(2)"))
        body.anchorClicked.emit(QUrl("https://example.org/b"))
        assert catcher.urls == ["https://example.org/a", "https://example.org/b"]
    finally:
        for scheme in schemes:
            QDesktopServices.unsetUrlHandler(scheme)


def test_card_text_is_never_markup(view) -> None:
    view.add_tool_card("c1", "shell", 'grep -n "<title>" index.html', "/repo")
    view.update_tool_card("c1", "completed", 5, "<h1 style='color:lime'>ALL PASSED</h1><!-- 3 failed -->")
    card = view.tool_card("c1")
    assert card.title.full_text == 'grep -n "<title>" index.html'
    assert card.title.textFormat() == Qt.TextFormat.PlainText
    assert card.summary.textFormat() == Qt.TextFormat.PlainText
    assert "<!-- 3 failed -->" in card.summary.text()
    view.add_notice("<b>bold?</b>", "info")
    notice_label = view.entries()[-1].label
    assert notice_label.textFormat() == Qt.TextFormat.PlainText


def test_long_unbroken_summaries_wrap_inside_the_card(view) -> None:
    view.resize(420, 600)
    view.add_tool_card("c2", "mcp", "dump()", "MCP server x")
    view.update_tool_card("c2", "completed", 5, "x" * 160)
    view.settle()
    card = view.tool_card("c2")
    assert card.summary.sizeHint().width() < 420
    assert card.summary.text().replace("\u200b", "") == "x" * 160


def test_a_generated_image_can_be_saved_as_received(view, qtbot, tmp_path) -> None:
    data = png_bytes(40, 30)
    view.add_tool_card("ig_s", "image_generation", "a chart", "")
    view.set_tool_body("ig_s", CardBody(images=[data, b"not an image"], expanded=True))
    body = view.tool_card("ig_s").body
    buttons = [b for b in body.findChildren(QToolButton) if b.objectName() == "saveImage"]
    assert [b.text() for b in buttons] == ["Save image…"]  # none for the undecodable one
    body.save_image(0, tmp_path / "chart.png")
    assert (tmp_path / "chart.png").read_bytes() == data


def test_escape_sequences_and_bidi_controls_never_reach_the_screen(view) -> None:
    view.add_tool_card("mcp_x", "mcp", "read(\u202egnp.exe\u202c)", "MCP server x")
    view.update_tool_card("mcp_x", "completed", 3, "\x1b[31mRED ALERT\x1b[0m plain \x1b]0;title\x07 after")
    view.set_tool_body(
        "mcp_x",
        CardBody(output="\x1b[2J\x1b[Hcleared?", links=[Link("\u202egnp.exe\u202c", "https://x.example/a")]),
    )
    view.finish_assistant_message("m_x", "Final \x1b[31mtext\x1b[0m \u2066isolated\u2069.")
    card = view.tool_card("mcp_x")
    assert card.title.full_text == "read(gnp.exe)"
    assert card.summary.text() == "RED ALERT plain  after"
    assert "\x1b" not in card.body_text() and "\u202e" not in card.body_text()
    assert "cleared?" in card.body_text() and "gnp.exe" in card.body_text()
    assert view.message_text("m_x") == "Final text isolated."


def test_toggles_answer_return_as_well_as_space(view, qtbot) -> None:
    view.add_tool_card("ws_k", "web_search", "q", "web")
    view.set_tool_body("ws_k", CardBody(links=LINKS))
    card = view.tool_card("ws_k")
    assert not card.is_body_visible()
    card.body_toggle.setFocus()
    QTest.keyClick(card.body_toggle, Qt.Key.Key_Return)
    qtbot.waitUntil(card.is_body_visible)
    QTest.keyClick(card.body_toggle, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: not card.is_body_visible())


def test_cards_fit_at_the_views_minimum_width(view, qtbot) -> None:
    view.resize(view.minimumWidth(), 600)
    view.add_tool_card("c_min", "code_interpreter", "x" * 200, "cntr_1")
    view.update_tool_card("c_min", "waiting-approval", 123456, "waiting for your approval")
    view.settle()
    card = view.tool_card("c_min")
    viewport = view._scroll.viewport()
    qtbot.waitUntil(lambda: card.width() > 0)
    right = card.mapTo(viewport, card.rect().topRight()).x()
    assert right <= viewport.width()


def test_large_images_decode_off_the_gui_thread_and_only_the_latest_shows(view, qtbot) -> None:
    partials = [noise_png(600 + 40 * i, 400) for i in range(4)]  # each well over 256 KB
    assert all(len(p) > 256 * 1024 for p in partials)
    view.add_tool_card("ig_big", "image_generation", "a photo", "")
    for data in partials:  # partial images arrive faster than they decode
        view.set_tool_body("ig_big", CardBody(images=[data], expanded=True))
    body = view.tool_card("ig_big").body
    assert "loading image…" in body.text()
    qtbot.waitUntil(lambda: body.image_count() == 1, timeout=10_000)
    shown = next(label for label in body._image_labels() if not label.pixmap().isNull())
    assert shown.full.width() == 360 and shown.full.height() == round(400 * 360 / 720)  # the last
    assert "loading image…" not in body.text()
