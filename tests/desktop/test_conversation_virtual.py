"""The virtualised transcript: only entries in view are laid out and shown, and long
conversations still expand, nest, stream, show images, keep their place and copy."""

from __future__ import annotations

import itertools
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel

import desktop.views.transcript.stack as stack_module
from desktop.activity import CardBody, Link
from desktop.views.conversation_view import ConversationView

_SPACING = 10  # TranscriptStack's default spacing (px)


@pytest.fixture
def view(qtbot):
    widget = ConversationView(flush_interval_ms=30)
    qtbot.addWidget(widget)
    widget.resize(700, 500)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _fill(view: ConversationView, count: int, *, prefix: str = "e") -> None:
    """``count`` top-level entries of several kinds."""
    links = [Link(f"Source {i}", f"https://example.org/{i}") for i in range(3)]
    for n in range(count):
        item = f"{prefix}{n}"
        kind = n % 5
        if kind == 0:
            view.add_user_message(f"question {n}")
        elif kind == 1:
            words = " ".join(f"word{k}" for k in range(24))  # wraps below ~600 px
            view.finish_assistant_message(item, f"Answer **{n}** with `code`: {words}.")
        elif kind == 2:
            view.add_tool_card(item, "shell", f"pytest -k case_{n}", "/repo")
            view.update_tool_card(item, "completed", 40, f"exit 0 · {n} passed")
        elif kind == 3:
            view.add_tool_card(item, "web_search", f"query {n}", "web")
            view.set_tool_body(item, CardBody(links=links))
            view.update_tool_card(item, "completed", 900, "3 sources")
        else:
            view.add_notice(f"notice {n}", "info")
    view.settle()


def _bar(view: ConversationView):
    return view._scroll.verticalScrollBar()


def _shown(view: ConversationView) -> list:
    return [entry for entry in view.entries() if not entry.isHidden()]


def _assert_tiled(view: ConversationView) -> None:
    """Shown entries sit at their tops, one under the other, each as tall as it needs."""
    stack = view._stack
    width = stack.column_width()
    shown = _shown(view)
    assert shown
    for entry in shown:
        assert entry.geometry().y() == stack.top_of(entry)
        assert entry.width() == width
        assert entry.height() == entry.layout().totalHeightForWidth(width)
    for upper, lower in itertools.pairwise(shown):
        assert upper.geometry().bottom() + 1 + _SPACING == lower.geometry().y()


def _png(width: int, height: int) -> bytes:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(0x2266AA)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def test_a_thousand_entries_show_only_the_ones_in_view(view, qtbot) -> None:
    _fill(view, 1000)
    assert view.entry_count() == 1000
    qtbot.waitUntil(lambda: _bar(view).value() == _bar(view).maximum())
    shown = _shown(view)
    assert 5 <= len(shown) <= 80  # a viewport and a half of entries, not 1,000
    assert shown[-1] is view.entries()[-1]  # following the end
    assert view.entries()[0].isHidden()
    _assert_tiled(view)


def test_an_append_at_a_thousand_measures_a_few_entries(view, monkeypatch) -> None:
    _fill(view, 1000)
    calls: list[object] = []
    measure = stack_module._measure

    def counting(widget, width):
        calls.append(widget)
        return measure(widget, width)

    monkeypatch.setattr(stack_module, "_measure", counting)
    view.add_tool_card("late", "shell", "ls", "/repo")
    view.update_tool_card("late", "completed", 3, "exit 0")
    view.settle()
    assert 1 <= len(calls) <= 4
    assert set(calls) == {view.tool_card("late")}


def test_scrolled_to_the_middle_the_entries_in_view_tile_exactly(view, qtbot) -> None:
    _fill(view, 400)
    bar = _bar(view)
    bar.setValue(bar.maximum() // 2)
    view.settle()
    assert not view.is_following()
    shown = _shown(view)
    assert view.entries().index(shown[0]) > 100  # the middle, not the ends
    assert view.entries().index(shown[-1]) < 300
    _assert_tiled(view)
    viewport = view._scroll.viewport()
    top, bottom = bar.value(), bar.value() + viewport.height()
    covered = [e for e in shown if e.geometry().bottom() >= top and e.geometry().y() <= bottom]
    assert covered and covered[0].geometry().y() <= top + _SPACING
    assert covered[-1].geometry().bottom() >= bottom - _SPACING
    assert all(not e.visibleRegion().isEmpty() for e in covered[1:-1])


def test_expanding_a_card_in_the_middle_moves_the_entries_below(view, qtbot) -> None:
    _fill(view, 300)
    card = view.tool_card("e153")  # a web search card, folded
    bar = _bar(view)
    bar.setValue(view._stack.top_of(card) - 40)
    view.settle()
    below = view.entries()[view.entries().index(card) + 1]
    assert card.isVisible() and below.isVisible()
    before = below.geometry().y()
    assert card.body_toggle is not None and not card.is_body_visible()
    qtbot.mouseClick(card.body_toggle, Qt.MouseButton.LeftButton)
    assert card.is_body_visible()
    qtbot.waitUntil(lambda: below.geometry().y() > before + 20)
    _assert_tiled(view)
    assert "https://example.org/1" in card.body_text()
    qtbot.mouseClick(card.body_toggle, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: below.geometry().y() == before)


def test_a_change_above_the_view_keeps_the_view_in_place(view, qtbot) -> None:
    _fill(view, 300)
    bar = _bar(view)
    bar.setValue(bar.maximum() // 2)
    view.settle()
    anchor = _shown(view)[len(_shown(view)) // 2]
    on_screen = anchor.geometry().y() - bar.value()
    view.set_tool_body(  # a card far above the view opens its body
        "e13", CardBody(output="\n".join(f"line {i}" for i in range(12)), expanded=True)
    )
    view.settle()
    assert view.tool_card("e13").isHidden()  # still out of view
    assert anchor.geometry().y() - bar.value() == on_screen


def test_nested_runs_stream_into_a_card_at_the_end_of_a_long_transcript(view, qtbot) -> None:
    _fill(view, 300)
    view.add_tool_card("agent", "agent", "Where is rounding done?", "Explorer")
    card = view.tool_card("agent")
    for i in range(12):
        view.adopt(f"n{i}", "agent")
        if i % 2:
            view.add_tool_card(f"n{i}", "shell", f"grep -rn round src # {i}", "/repo")
        else:
            view.append_assistant_delta(f"n{i}", f"looking at part {i} ")
    view.flush()
    view.settle()
    assert len(card.sub_entries()) == 12 and card.is_sub_expanded()
    qtbot.waitUntil(lambda: _bar(view).value() == _bar(view).maximum())
    assert view.is_following()
    assert card.height() == card.layout().totalHeightForWidth(view._stack.column_width())
    nested = view.tool_card("n1")
    assert nested.isVisible() and nested.width() < card.width()
    tall = card.height()

    view.update_tool_card("agent", "completed", 900, "done")  # folds the sub-conversation
    view.settle()
    assert not card.is_sub_expanded()
    qtbot.waitUntil(lambda: card.height() < tall - 100)
    _assert_tiled(view)
    view.reveal("n1")
    assert card.is_sub_expanded() and nested.isVisible()
    qtbot.waitUntil(lambda: not nested.visibleRegion().isEmpty())


def test_streaming_at_the_end_of_a_long_transcript_follows_the_text(view, qtbot) -> None:
    _fill(view, 500)
    for i in range(40):
        view.append_assistant_delta("live", f"word{i} " * 6 + "\n\n")
    qtbot.waitUntil(lambda: view.render_count >= 1)
    view.settle()
    message = view.entries()[-1]
    qtbot.waitUntil(lambda: message.height() > 300)  # 40 paragraphs, not one line
    qtbot.waitUntil(lambda: _bar(view).value() == _bar(view).maximum())
    viewport = view._scroll.viewport()
    assert message.geometry().bottom() <= _bar(view).value() + viewport.height()
    assert "word39" in view.message_text("live")


def test_text_of_an_entry_far_up_can_be_selected_and_copied(view, qtbot) -> None:
    view.finish_assistant_message("first", "The **answer** is `42`.")
    _fill(view, 300)
    message = view.entries()[0]
    assert message.isHidden()  # out of view at the end of the transcript
    _bar(view).setValue(0)
    view.settle()
    assert message.isVisible()
    QApplication.clipboard().clear()
    message.body.setFocus()
    message.body.selectAll()
    QTest.keyClick(message.body, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "The answer is 42." in QApplication.clipboard().text())


def test_images_far_up_are_shown_at_full_height_when_scrolled_to(view, qtbot) -> None:
    view.add_tool_card("ig", "image_generation", "a chart", "")
    view.set_tool_body("ig", CardBody(images=[_png(300, 200)], expanded=True))
    view.update_tool_card("ig", "completed", 800, "1 image")
    _fill(view, 200)
    card = view.tool_card("ig")
    assert card.isHidden()
    _bar(view).setValue(0)
    view.settle()
    assert card.isVisible() and card.image_count() == 1
    label = card.findChild(QLabel, "cardImage")
    assert label is not None and label.isVisible() and label.height() >= 190
    assert card.height() > 200  # the entry is measured with its image
    _assert_tiled(view)


def test_a_narrower_view_measures_every_entry_again(view, qtbot) -> None:
    _fill(view, 300)
    stack = view._stack
    wide = {entry: entry.height() for entry in _shown(view)}
    view.resize(420, 500)
    width = stack.column_width()
    qtbot.waitUntil(lambda: all(w == width for w in stack._widths), timeout=10_000)
    entries = view.entries()
    for i in range(0, len(entries), 7):  # tops are the running sum of the new heights
        if i + 1 < len(entries):
            height = entries[i].layout().totalHeightForWidth(width)
            assert stack.top_of(entries[i + 1]) == stack.top_of(entries[i]) + height + _SPACING
    _assert_tiled(view)
    taller = [e for e in _shown(view) if e in wide and e.height() > wide[e]]
    assert taller or not wide  # wrapped text grows when the column narrows


def test_clear_after_a_long_transcript_starts_empty(view, qtbot) -> None:
    _fill(view, 200)
    view.clear()
    assert view.entry_count() == 0 and view._stack.shown_count() == 0
    assert _bar(view).maximum() == 0
    view.add_user_message("again")
    view.settle()
    assert view.entries()[0].isVisible()
    _assert_tiled(view)
