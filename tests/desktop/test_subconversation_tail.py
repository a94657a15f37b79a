"""Issue 15, Build item 2 at scale: a long nested sub-conversation lays out only its last
``SUB_TAIL`` entries (a nested append then costs the same at 1,000 entries as at 10); the
earlier ones come back with "Show earlier" or when revealed, and expanding, folding,
streaming and the entry list keep working."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget

from desktop.views.conversation_view import ConversationView
from desktop.views.tool_card import SUB_PAGE, SUB_TAIL, ToolCard


@pytest.fixture
def view(qtbot):
    widget = ConversationView(flush_interval_ms=30)
    qtbot.addWidget(widget)
    widget.resize(700, 600)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _run(view: ConversationView, count: int, *, parent: str = "agent", start: int = 0) -> None:
    """``count`` nested entries (shell cards and messages) in agent card ``parent``."""
    if start == 0:
        view.add_tool_card(parent, "agent", "Where is rounding done?", "Explorer")
    for n in range(start, start + count):
        entry = f"{parent}.{n}"
        view.adopt(entry, parent)
        if n % 2:
            view.add_tool_card(entry, "shell", f"grep -rn round src # {n}", "/repo")
            view.update_tool_card(entry, "completed", 20, "exit 0")
        else:
            view.finish_assistant_message(entry, f"Nested answer {n}.")
    view.settle()


def _laid_out(card: ToolCard) -> list[QWidget]:
    """The nested entries in the sub-conversation's layout, in layout order."""
    layout = card.sub_box.layout()
    items = (layout.itemAt(i).widget() for i in range(layout.count()))
    return [w for w in items if w is not None and w is not card.sub_earlier]


def test_only_the_last_entries_are_laid_out(view) -> None:
    _run(view, 100)
    card = view.tool_card("agent")
    entries = card.sub_entries()
    assert len(entries) == 100  # every entry is kept, oldest first
    assert _laid_out(card) == entries[-SUB_TAIL:]
    assert all(w.isHidden() for w in entries[:-SUB_TAIL])
    assert not any(w.isHidden() for w in entries[-SUB_TAIL:])
    assert card.hidden_sub_count() == 100 - SUB_TAIL
    assert card.sub_earlier is not None and card.sub_earlier.isVisible()
    assert card.sub_earlier.text() == f"▴ Show {SUB_PAGE} earlier · {100 - SUB_TAIL} hidden"
    assert card.sub_toggle.text() == "▾ Conversation · 100 entries"  # the whole run's count
    height = card.height()
    _run(view, 100, start=100)  # twice as long: the card does not grow
    assert len(card.sub_entries()) == 200
    assert abs(card.height() - height) < 40
    assert card.height() == card.layout().totalHeightForWidth(view._stack.column_width())


def test_a_short_run_has_no_show_earlier_button(view) -> None:
    _run(view, SUB_TAIL)
    card = view.tool_card("agent")
    assert _laid_out(card) == card.sub_entries()
    assert card.sub_earlier is None and card.hidden_sub_count() == 0


def test_show_earlier_brings_back_a_page_that_then_stays(view, qtbot) -> None:
    _run(view, 100)
    card = view.tool_card("agent")
    QTest.mouseClick(card.sub_earlier, Qt.MouseButton.LeftButton)
    view.settle()
    hidden = 100 - SUB_TAIL - SUB_PAGE
    assert card.hidden_sub_count() == hidden
    assert _laid_out(card) == card.sub_entries()[hidden:]  # in order, after the button
    assert card.sub_earlier.text() == f"▴ Show {hidden} earlier · {hidden} hidden"
    _run(view, 5, start=100)  # the run goes on: what the user brought back stays
    assert card.hidden_sub_count() == hidden
    assert _laid_out(card) == card.sub_entries()[hidden:]
    card.show_earlier()
    assert card.hidden_sub_count() == 0 and card.sub_earlier.isHidden()
    assert _laid_out(card) == card.sub_entries()
    view.settle()
    qtbot.waitUntil(
        lambda: card.height() == card.layout().totalHeightForWidth(view._stack.column_width())
    )


def test_revealing_an_early_nested_card_brings_it_back_into_view(view, qtbot) -> None:
    _run(view, 120)
    view.update_tool_card("agent", "completed", 9000, "done")  # the run ends: folded
    view.settle()
    card = view.tool_card("agent")
    early = view.tool_card("agent.3")
    assert not card.is_sub_expanded() and early.isHidden()
    view.reveal("agent.3")
    assert card.is_sub_expanded() and not early.isHidden()
    assert card.hidden_sub_count() == 3
    assert _laid_out(card) == card.sub_entries()[3:]
    qtbot.waitUntil(lambda: early.isVisible() and not early.visibleRegion().isEmpty())


def test_fold_and_expand_keep_the_tail(view) -> None:
    _run(view, 80)
    card = view.tool_card("agent")
    view.update_tool_card("agent", "completed", 9000, "done")
    view.settle()
    assert not card.is_sub_expanded()
    card.toggle_sub()
    view.settle()
    assert card.is_sub_expanded()
    assert _laid_out(card) == card.sub_entries()[-SUB_TAIL:]
    assert all(not w.isHidden() for w in _laid_out(card))


def test_streaming_into_nested_messages_shown_and_hidden(view) -> None:
    _run(view, 60)
    view.adopt("live", "agent")
    for word in ("streamed ", "into ", "the ", "tail"):
        view.append_assistant_delta("live", word)
    view.flush()
    view.settle()
    assert view.message_text("live") == "streamed into the tail"
    card = view.tool_card("agent")
    assert card.sub_entries()[-1] is view._messages["live"]
    assert not view._messages["live"].isHidden()
    view.finish_assistant_message("agent.0", "the oldest answer, rewritten")  # hidden one
    view.settle()
    assert view.message_text("agent.0") == "the oldest answer, rewritten"
    assert view._messages["agent.0"].isHidden()


def test_nested_runs_inside_a_long_run_keep_their_own_tail(view) -> None:
    _run(view, 40)
    view.adopt("inner", "agent")
    view.add_tool_card("inner", "agent", "Look deeper", "Explorer")
    for n in range(SUB_TAIL + 10):
        entry = f"inner.{n}"
        view.adopt(entry, "inner")
        view.finish_assistant_message(entry, f"deep answer {n}")
    view.settle()
    inner = view.tool_card("inner")
    outer = view.tool_card("agent")
    assert outer.sub_entries()[-1] is inner and not inner.isHidden()
    assert len(inner.sub_entries()) == SUB_TAIL + 10 and inner.hidden_sub_count() == 10
    view.reveal("inner")
    assert inner.is_sub_expanded() and outer.is_sub_expanded()
