"""Issue 15: the diff rows' cached text layouts paint what an uncached painter paints (after a
width, font, theme or content change), the toolbar is not repainted by counts that stream in,
and lexing stays inside its slice."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QFont, QFontDatabase, QImage, QPaintEvent
from PySide6.QtWidgets import QAbstractItemView, QApplication, QFrame, QToolButton, QWidget

from bench.diff_samples import SAMPLE_NEW, SAMPLE_OLD
from desktop.views.diff import painter as painter_module
from desktop.views.diff.build import build_file_diff
from desktop.views.diff.model import FileDiff
from desktop.views.diff.palette import QCOLOURS
from desktop.views.diff.view import DiffView
from desktop.views.diff_highlight import SyntaxLines, lexer_for_path

SIZE = (1000, 560)


def _files() -> list[FileDiff]:
    return [build_file_diff("src/config/cache.py", SAMPLE_OLD, SAMPLE_NEW, proposal_id="p1")]


def _settle(view: DiffView) -> None:
    """Let syntax lexing finish (bounded), then paint the rows."""
    deadline = time.perf_counter() + 10
    while view._lex_timer.isActive() and time.perf_counter() < deadline:
        QApplication.processEvents()
    assert not view._lex_timer.isActive()
    QApplication.processEvents()


def _rows(view: DiffView) -> QWidget:
    rows = view.findChild(QAbstractItemView, "diffRows")
    assert rows is not None
    return rows.viewport()


def _grab(view: DiffView) -> QImage:
    _settle(view)
    viewport = _rows(view)
    viewport.repaint()  # a second paint of the same rows: their layouts are made by now
    viewport.repaint()
    return viewport.grab().toImage()


def _view(qtbot, files: list[FileDiff], size: tuple[int, int] = SIZE, **kwargs) -> DiffView:
    view = DiffView(files, **kwargs)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    return view


def _fresh(qtbot, files: list[FileDiff], size: tuple[int, int] = SIZE) -> QImage:
    """The rows as a new view paints them, its caches empty."""
    view = _view(qtbot, files, size)
    image = _grab(view)
    view.close()
    return image


def test_layouts_are_made_when_a_line_is_painted_again_and_then_reused(qtbot) -> None:
    view = _view(qtbot, _files())
    _settle(view)
    view.restyle()  # every cache emptied
    text = view._delegate.text
    _rows(view).repaint()  # painted once, as when scrolling through: drawn run by run
    once = text.made  # (a context line shown on both sides is laid out the second time)
    _rows(view).repaint()  # painted again: the lines get their layouts
    assert text.made > once
    made = text.made
    _rows(view).repaint()
    _rows(view).repaint()
    assert text.made == made  # nothing new to lay out: every line drawn from the cache


def test_a_width_change_reuses_the_layouts_and_paints_as_a_new_view(qtbot) -> None:
    view = _view(qtbot, _files())
    _grab(view)
    text = view._delegate.text
    before = len(text)
    assert before > 0
    wide = (SIZE[0] + 260, SIZE[1])
    view.resize(*wide)
    image = _grab(view)
    assert image == _fresh(qtbot, _files(), wide)
    assert len(text) >= before  # the old layouts are still good (not keyed by width)


def test_a_font_change_drops_the_layouts_and_paints_as_a_new_view(qtbot) -> None:
    view = _view(qtbot, _files())
    old = _grab(view)
    font = QFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    font.setPointSizeF(view._delegate.font.pointSizeF() + 3)
    view.set_code_font(font)
    image = _grab(view)
    assert image != old
    other = _view(qtbot, _files())
    other.set_code_font(font)
    assert image == _grab(other)


def test_a_theme_change_is_painted_only_after_restyle(qtbot, monkeypatch) -> None:
    view = _view(qtbot, _files())
    before = _grab(view)
    monkeypatch.setitem(QCOLOURS, "text", QCOLOURS["accent"])  # plain code text
    monkeypatch.setattr(painter_module, "STYLE", "monokai")  # the token colours
    themed = _fresh(qtbot, _files())
    assert themed != before
    assert _grab(view) == before  # the cache still holds the old theme's layouts
    view.restyle()
    assert _grab(view) == themed


def test_new_row_content_paints_as_a_new_view(qtbot) -> None:
    view = _view(qtbot, _files())
    _grab(view)
    old = SAMPLE_OLD.replace("import json", "import json  # decoded here")
    changed = [build_file_diff("src/config/cache.py", old, SAMPLE_NEW, proposal_id="p2")]
    view.set_files(changed)
    assert _grab(view) == _fresh(qtbot, changed)


def test_lines_drawn_without_a_layout_have_the_layouts_pixels(qtbot) -> None:
    """The first paint draws a line run by run, later ones from its cached layout: the same
    pixels (runs start where the layout puts them), so nothing moves when a layout arrives."""
    direct = _view(qtbot, _files())
    direct._delegate.layout_budget_ms = 0.0  # never make a layout
    cached = _view(qtbot, _files())
    for unified in (False, True):
        direct.set_unified(unified)
        cached.set_unified(unified)
        a, b = _grab(direct), _grab(cached)
        assert len(direct._delegate.text) == 0 and len(cached._delegate.text) > 0
        assert a == b


class _Paints(QObject):
    """Counts paint and layout events per watched widget."""

    def __init__(self, widgets: list[QWidget]) -> None:
        super().__init__()
        self.paints = {id(w): 0 for w in widgets}
        self.whole = {id(w): 0 for w in widgets}  # paints of the widget's whole rect
        self.layouts = 0
        for widget in widgets:
            widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.paints[id(watched)] += 1
            assert isinstance(watched, QWidget) and isinstance(event, QPaintEvent)
            self.whole[id(watched)] += event.rect().contains(watched.rect())
        elif event.type() == QEvent.Type.LayoutRequest:
            self.layouts += 1
        return False


def _dense(lines: int) -> tuple[str, str]:
    old = "".join(f"    value_{i} = compute({i}, 'x')  # note {i}\n" for i in range(lines))
    new = "".join(
        f"    value_{i} = compute({i}, 'y')  # changed\n" if i % 12 == 0 else line
        for i, line in enumerate(old.splitlines(keepends=True))
    )
    return old, new


def test_counts_streaming_in_do_not_repaint_the_toolbar(qtbot) -> None:
    view = _view(qtbot, [], (1200, 700), build_process=False)
    toolbar = view.findChild(QFrame, "diffToolbar")
    assert toolbar is not None
    buttons = toolbar.findChildren(QToolButton)
    assert len(buttons) == 4
    labels = {"hunks": view._hunk_label, "counts": view._counts, "progress": view._progress}
    watched = [*buttons, toolbar, *labels.values()]
    shown: dict[str, set[str]] = {name: set() for name in labels}

    def record() -> None:
        for name, label in labels.items():
            shown[name].add(label.text())

    counter = _Paints(watched)
    old, new = _dense(24_000)
    file = view.stream_file("pkg/dense.py", old, new, proposal_id="p")
    deadline = time.perf_counter() + 60
    while view.building("pkg/dense.py") and time.perf_counter() < deadline:
        QApplication.processEvents()
        record()
    assert not view.building("pkg/dense.py")
    QApplication.processEvents()
    record()
    assert len(file.hunks) == 2_000
    assert len(shown["hunks"]) >= 3, shown["hunks"]  # the counts did change as hunks came
    assert len(shown["progress"]) >= 3, shown["progress"]
    for button in buttons:  # shown once, then left alone (27-49 repaints a build before)
        assert counter.paints[id(button)] <= 3, (button.text(), counter.paints[id(button)])
    assert counter.whole[id(toolbar)] <= 3  # the labels' rects only, not the whole bar
    assert counter.layouts <= 4  # the toolbar re-laid out once or so, not per chunk


def test_a_lexing_slice_stops_inside_a_block_and_resumes_to_the_same_spans() -> None:
    lines = [f"value_{n} = compute({n}, 'text', alpha=[1, 2, 3])  # note {n}" for n in range(40)]
    lexer = lexer_for_path("example.py")
    assert lexer is not None
    sliced, whole = SyntaxLines(lexer, lines), SyntaxLines(lexer, lines)
    wanted = range(1, 13)  # one block of 12 lines
    first = sliced.lex_lines(wanted, budget_ms=0.0)
    assert 1 <= first < 12  # the clock is read inside the block: it stopped after a line
    calls = 1
    while sliced.missing(wanted):
        assert sliced.lex_lines(wanted, budget_ms=0.0) >= 1  # always moves on
        calls += 1
        assert calls <= 12
    assert whole.lex_lines(wanted, budget_ms=1_000.0) == 12
    for n in wanted:
        assert sliced.spans(n, lines[n - 1], lex=False) == whole.spans(n, lines[n - 1], lex=False)


@pytest.fixture(autouse=True)
def _no_leftover_views():
    yield
    QApplication.processEvents()
