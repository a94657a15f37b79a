"""ConversationView: messages, streaming Markdown coalescing, reasoning, tool cards, notices."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontInfo, QTextDocument
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QTextBrowser

from desktop.views.conversation_view import ConversationView, render_markdown


@pytest.fixture
def view(qtbot):
    widget = ConversationView(flush_interval_ms=30)
    qtbot.addWidget(widget)
    widget.resize(700, 500)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def texts(widget) -> str:
    """Every label and text browser's text below ``widget``, joined."""
    parts = [label.text() for label in widget.findChildren(QLabel) if label.isVisibleTo(widget)]
    parts += [b.toPlainText() for b in widget.findChildren(QTextBrowser) if b.isVisibleTo(widget)]
    return "\n".join(parts)


def test_user_message_is_plain_text(view) -> None:
    view.add_user_message("Fix **the** test in `a.py`")
    assert view.entry_count() == 1
    shown = texts(view.entries()[0])
    assert "You" in shown
    assert "Fix **the** test in `a.py`" in shown  # not interpreted as Markdown


def test_streaming_deltas_coalesce_into_one_render(view, qtbot) -> None:
    answer = "Here is the fix:\n\n```python\nprint('hi')\n```\n\nDone."
    for char in answer:
        view.append_assistant_delta("m1", char)
    assert view.entry_count() == 1
    assert view.render_count == 0  # nothing rendered synchronously per delta
    qtbot.waitUntil(lambda: view.render_count >= 1)
    assert view.render_count == 1  # one render for all the deltas
    shown = view.message_text("m1")
    assert "Here is the fix:" in shown
    assert "print('hi')" in shown
    assert "```" not in shown  # rendered as Markdown, not raw


def test_deltas_after_a_flush_render_again_and_finish_replaces_text(view, qtbot) -> None:
    view.append_assistant_delta("m1", "Hello")
    qtbot.waitUntil(lambda: view.render_count == 1)
    view.append_assistant_delta("m1", " world")
    qtbot.waitUntil(lambda: view.render_count == 2)
    assert view.message_text("m1").strip() == "Hello world"
    view.append_assistant_delta("m1", " and more")
    view.finish_assistant_message("m1", "Final **answer**")
    assert view.message_text("m1").strip() == "Final answer"
    view.append_assistant_delta("m1", " late")  # after finish: ignored
    view.flush()
    assert view.message_text("m1").strip() == "Final answer"
    assert view.entry_count() == 1


def test_two_streams_interleave_in_their_own_entries(view) -> None:
    view.append_assistant_delta("a", "first ")
    view.add_tool_card("c1", "shell", "ls", "")
    view.append_assistant_delta("b", "second")
    view.append_assistant_delta("a", "message")
    view.flush()
    assert view.message_text("a").strip() == "first message"
    assert view.message_text("b").strip() == "second"
    assert view.entry_count() == 3


def test_finish_without_deltas_creates_the_message(view) -> None:
    view.finish_assistant_message("m9", "# Title\n\nBody")
    assert "Title" in view.message_text("m9")
    assert "#" not in view.message_text("m9")


def test_markdown_code_blocks_are_monospace_and_boxed() -> None:
    doc = QTextDocument()
    render_markdown(doc, "Text with `inline`.\n\n```sh\nmake test\n```\n")
    frames = doc.rootFrame().childFrames()
    assert len(frames) == 1  # the code block, boxed
    code = doc.findBlock(frames[0].firstPosition())
    assert code.text() == "make test"
    assert QFontInfo(code.begin().fragment().charFormat().font()).fixedPitch()
    assert frames[0].frameFormat().background().color().lightness() < 40  # a dark box
    assert not code.blockFormat().nonBreakableLines()  # long lines wrap instead of widening


def test_reasoning_is_collapsed_and_toggles_on_click(view, qtbot) -> None:
    view.add_reasoning("r1", "I should run the tests first.")
    entry = view.reasoning_entry("r1")
    assert not entry.body.isVisible()
    assert "Reasoning" in entry.toggle.text()
    assert "6 words" in entry.toggle.text()
    QTest.mouseClick(entry.toggle, Qt.MouseButton.LeftButton)
    assert entry.body.isVisible()
    assert "run the tests" in entry.body.toPlainText()
    QTest.mouseClick(entry.toggle, Qt.MouseButton.LeftButton)
    assert not entry.body.isVisible()
    view.add_reasoning("r1", "Updated summary")
    assert view.entry_count() == 1
    assert "2 words" in entry.toggle.text()


def test_tool_card_shows_kind_title_and_status_updates(view) -> None:
    view.add_tool_card("c1", "shell", "pytest -q", "~/repo · sandboxed")
    card = view.tool_card("c1")
    shown = texts(card)
    assert "Shell" in shown
    assert "pytest -q" in shown
    assert "~/repo · sandboxed" in shown
    assert "running" in card.status.text()
    assert card.property("status") == "running"

    view.update_tool_card("c1", "failed", 2340, "exit 1 · 1 failed")
    assert "failed" in card.status.text()
    assert "2.3 s" in card.status.text()
    assert "exit 1 · 1 failed" in texts(card)
    assert card.property("status") == "failed"

    view.update_tool_card("c1", "completed", 450, "")
    assert "450 ms" in card.status.text()
    assert not card.summary.isVisibleTo(card)

    view.update_tool_card("nope", "completed", 1, "")  # unknown ids are ignored
    assert view.entry_count() == 1


@pytest.mark.parametrize(
    ("status", "words"),
    [("rejected", "rejected"), ("waiting-approval", "waiting for approval")],
)
def test_tool_card_other_statuses(view, status: str, words: str) -> None:
    view.add_tool_card("c1", "apply_patch", "apply_patch src/a.py", "")
    view.update_tool_card("c1", status, None, "")
    card = view.tool_card("c1")
    assert words in card.status.text()
    assert card.property("status") == status


def test_long_titles_are_elided_with_the_full_text_in_the_tooltip(view) -> None:
    command = "echo " + "x" * 400
    view.add_tool_card("c1", "shell", command, "")
    card = view.tool_card("c1")
    assert card.title.full_text == command
    assert card.title.toolTip() == command
    assert len(card.title.text()) < len(command)
    assert card.width() <= view.width()  # never widens the transcript


def test_card_link_click_emits_activation(view, qtbot) -> None:
    view.add_tool_card("call_7", "apply_patch", "apply_patch src/a.py", "")
    link = view.tool_card("call_7").link
    assert link.isVisible()
    assert "Diff" in link.text()
    with qtbot.waitSignal(view.toolCardActivated, timeout=1000) as blocker:
        QTest.mouseClick(link, Qt.MouseButton.LeftButton)
    assert blocker.args == ["call_7", "apply_patch"]


def test_function_cards_have_no_view_link(view) -> None:
    view.add_tool_card("f1", "function", "get_weather(city='Paris')", "")
    assert not view.tool_card("f1").link.isVisibleTo(view)


def test_notices_show_text_and_level(view) -> None:
    view.add_notice("Rate limited; retrying in 2 s", "warning")
    view.add_notice("Codex crashed", "error")
    view.add_notice("Checkpoint created", "bogus")
    levels = [entry.property("level") for entry in view.entries()]
    assert levels == ["warning", "error", "info"]
    assert "Rate limited; retrying in 2 s" in texts(view.entries()[0])


def test_secrets_never_reach_the_screen(view) -> None:
    """Issue 11 "Redaction": a registered key and secret shapes are redacted in notices
    (errors from the service), card summaries and messages."""
    from core.redaction import REDACTED, register_secret

    register_secret("gw-7d1e93", source="test")
    view.add_notice("Error code: 401 - invalid key gw-7d1e93", "error")
    view.add_tool_card("c9", "shell", "echo Authorization: Bearer abcdef0123456789xyz", "")
    view.add_tool_card("c9", "shell", "x", "token gw-7d1e93 printed")
    shown = " ".join(texts(entry) for entry in view.entries())
    assert "gw-7d1e93" not in shown
    assert "abcdef0123456789xyz" not in shown
    assert REDACTED in shown


def test_clear_removes_everything(view, qtbot) -> None:
    view.add_user_message("hi")
    view.append_assistant_delta("m1", "partial")
    view.add_tool_card("c1", "shell", "ls", "")
    view.clear()
    assert view.entry_count() == 0
    view.flush()  # a pending render after clear is harmless
    view.update_tool_card("c1", "completed", 1, "")  # and the old card is gone
    with pytest.raises(KeyError):
        view.tool_card("c1")
    view.add_user_message("again")
    assert view.entry_count() == 1


def _bar(view):
    return view._scroll.verticalScrollBar()


def test_auto_scroll_follows_until_the_user_scrolls_up(view, qtbot) -> None:
    for i in range(40):
        view.add_user_message(f"message {i}")
    qtbot.waitUntil(lambda: _bar(view).maximum() > 0)
    qtbot.waitUntil(lambda: _bar(view).value() == _bar(view).maximum())
    assert view.is_following()

    _bar(view).setValue(0)  # the user scrolls up
    assert not view.is_following()
    old_max = _bar(view).maximum()
    view.add_user_message("new one")
    qtbot.waitUntil(lambda: _bar(view).maximum() > old_max)
    assert _bar(view).value() == 0  # stays where the user is
    qtbot.waitUntil(view.jump_button.isVisible)

    QTest.mouseClick(view.jump_button, Qt.MouseButton.LeftButton)
    assert view.is_following()
    assert _bar(view).value() == _bar(view).maximum()
    assert not view.jump_button.isVisible()


def test_five_hundred_messages_stay_responsive(view, qtbot) -> None:
    for i in range(125):
        view.add_user_message(f"Task {i}: please look at `module_{i}.py`")
        view.finish_assistant_message(f"m{i}", f"Answer {i} with `code` and\n\n```\nline {i}\n```")
        view.add_tool_card(f"c{i}", "shell", f"pytest tests/test_{i}.py", "~/repo")
        view.update_tool_card(f"c{i}", "completed", i * 10, "exit 0")
        view.add_reasoning(f"r{i}", f"Thinking about step {i}")
    assert view.entry_count() == 500
    # Streaming into the newest message still renders only that message, and the event
    # loop keeps running (the coalescing timer fires) with 500 entries on screen.
    before = view.render_count
    for word in "streaming into a long transcript".split():
        view.append_assistant_delta("live", word + " ")
    qtbot.waitUntil(lambda: view.render_count > before, timeout=5000)
    assert view.render_count == before + 1
    assert view.message_text("live").strip() == "streaming into a long transcript"
    qtbot.waitUntil(lambda: _bar(view).value() == _bar(view).maximum(), timeout=5000)
    view.update_tool_card("c0", "failed", 5, "late update to the first card")
    assert "late update" in texts(view.tool_card("c0"))
