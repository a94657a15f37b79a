"""TerminalView, its model and the ANSI parser: parsing, blocks, kill, search, bounds, copy."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import tracemalloc
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from desktop.views.ansi import (
    LINE_RESET,
    AnsiParser,
    Style,
    StyledRun,
    palette_rgb,
    parse_ansi,
    strip_ansi,
)
from desktop.views.terminal_model import ScrollbackLimits, TerminalModel
from desktop.views.terminal_view import TerminalView

ESC = "\x1b"


def runs(text: str) -> list[tuple[str, Style]]:
    return [(s.text, s.style) for s in parse_ansi(text) if isinstance(s, StyledRun)]


# -- ANSI parsing ---------------------------------------------------------------------------


def test_basic_colours_bold_and_reset() -> None:
    out = runs(f"{ESC}[1;32mPASS{ESC}[0m plain {ESC}[31mred{ESC}[39m default{ESC}[91m!")
    assert out == [
        ("PASS", Style(fg=2, bold=True)),
        (" plain ", Style()),
        ("red", Style(fg=1)),
        (" default", Style()),
        ("!", Style(fg=9)),
    ]


def test_empty_sgr_resets_and_attribute_offs() -> None:
    out = runs(f"{ESC}[1;3;4;7;9;44ma{ESC}[22;23;24;27;29;49mb{ESC}[2mc{ESC}[md")
    assert out[0] == (
        "a",
        Style(bg=4, bold=True, italic=True, underline=True, inverse=True, strike=True),
    )
    assert out[1] == ("b", Style())
    assert out[2] == ("c", Style(dim=True))
    assert out[3] == ("d", Style())


def test_256_and_truecolor_both_syntaxes() -> None:
    out = runs(
        f"{ESC}[38;5;208ma{ESC}[48;5;17mb{ESC}[0;38;2;10;20;30mc{ESC}[38:2::1:2:3md{ESC}[38:5:99me"
    )
    assert out[0] == ("a", Style(fg=208))
    assert out[1] == ("b", Style(fg=208, bg=17))
    assert out[2] == ("c", Style(fg=(10, 20, 30)))
    assert out[3] == ("d", Style(fg=(1, 2, 3)))
    assert out[4] == ("e", Style(fg=99))
    assert palette_rgb(16) == (0, 0, 0)
    assert palette_rgb(196) == (255, 0, 0)
    assert palette_rgb(232) == (8, 8, 8)
    with pytest.raises(ValueError):
        palette_rgb(3)


def test_cursor_osc_and_other_sequences_are_stripped() -> None:
    text = (
        f"{ESC}]0;window title{ESC}\\a{ESC}[2K{ESC}[1Gb{ESC}[?25l{ESC}[?25hc"
        f"{ESC}]8;;https://example.com\x07link{ESC}]8;;\x07{ESC}(Bd{ESC}7e{ESC}Pq#0{ESC}\\f\x07\x08g"
    )
    assert strip_ansi(text) == "abclinkdefg"


def test_carriage_return_overwrites_line_and_crlf_is_newline() -> None:
    assert strip_ansi("downloading 10%\rdownloading 55%\rdone\r\nnext\r\n") == "done\nnext\n"
    assert parse_ansi("a\rb")[1] is LINE_RESET


def test_sequences_split_across_chunks() -> None:
    parser = AnsiParser()
    segments = []
    whole = f"x{ESC}[38;2;1;2;3mtrue{ESC}[0m y{ESC}]0;title\x07z 50%\r\ndone"
    for i in range(len(whole)):  # worst case: one character per chunk
        segments.extend(parser.feed(whole[i]))
    text = "".join(s.text for s in segments if isinstance(s, StyledRun))
    assert text == "xtrue yz 50%\ndone"
    assert LINE_RESET not in segments  # the \r of a split \r\n is not an overwrite
    chars = [(c, s.style) for s in segments if isinstance(s, StyledRun) for c in s.text]
    assert {style for _c, style in chars[1:5]} == {Style(fg=(1, 2, 3))}
    assert chars[5] == (" ", Style())


def test_unterminated_escape_does_not_grow_without_bound() -> None:
    parser = AnsiParser()
    parser.feed(f"{ESC}]0;")
    for _ in range(10):
        parser.feed("a" * 4096)
    assert len(parser._pending) == 0  # gave up on the runaway OSC
    assert strip_ansi(f"a{ESC}\nb") == "a\nb"  # a lone ESC is dropped


# -- model ----------------------------------------------------------------------------------


def test_model_keeps_head_and_tail_and_marks_the_middle() -> None:
    limits = ScrollbackLimits(head_lines=3, tail_lines=5, tail_chars=10_000)
    model = TerminalModel(limits)
    model.start_block("b", "seq 100", "/tmp")
    model.append("b", "stdout", "".join(f"{i}\n" for i in range(100)))
    block = model.block("b")
    assert block.omitted_lines == 92
    assert block.text().splitlines() == [
        "0",
        "1",
        "2",
        "… 92 lines omitted …",
        *map(str, range(95, 100)),
    ]


def test_model_cuts_a_huge_line_and_evicts_old_finished_blocks() -> None:
    limits = ScrollbackLimits(max_line_chars=100, max_total_chars=1_000)
    model = TerminalModel(limits)
    model.start_block("old", "cat big", "/")
    model.append("old", "stdout", "y" * 10_000 + "\n")
    assert model.block("old").text().startswith("y" * 100 + " … [9900 chars truncated]")
    model.finish_block("old", 0, "exit", 5)
    model.start_block("new", "cat", "/")
    for _ in range(20):
        model.append("new", "stdout", "z" * 99 + "\n")
    assert "old" not in model
    assert model.drain_evicted() == ["old"]
    with pytest.raises(ValueError):
        model.finish_block("new", 0, "exploded", 1)


# -- view -----------------------------------------------------------------------------------


@pytest.fixture
def view(qtbot):
    widget = TerminalView()
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    return widget


def test_blocks_created_updated_and_finished(view: TerminalView) -> None:
    view.on_command_started("c1", "pytest -q", "/repo", True, "agent")
    view.on_command_started("c2", "codex exec ls", "/repo", False, "codex", "bwrap missing")
    view.on_output("c1", "stdout", f"{ESC}[32m3 passed{ESC}[0m\n")
    view.on_output("c2", "stderr", "ls: cannot access\n")
    view.flush()
    w1, w2 = view.block_widget("c1"), view.block_widget("c2")
    assert w1.command_label.text() == "pytest -q"
    assert view.output_document("c1").toPlainText() == "3 passed\n"
    assert w1.kill_button.isVisible() and "running" in w1.footer.text()
    badges = {
        label.text()
        for label in w2.findChildren(type(w2.footer))
        if label.objectName().startswith("badge")
    }
    assert {"not sandboxed: bwrap missing", "Codex"} <= badges
    # stderr is tinted: its characters carry a background
    doc = view.output_document("c2")
    fmt = doc.firstBlock().begin().fragment().charFormat()
    assert fmt.background().style() != Qt.BrushStyle.NoBrush
    # green text from SGR 32
    green = view.output_document("c1").firstBlock().begin().fragment().charFormat()
    assert green.foreground().color().green() > green.foreground().color().red()

    view.on_command_finished("c1", 0, "exit", 1234)
    view.on_command_finished("c2", 2, "exit", 50)
    view.flush()
    assert not w1.kill_button.isVisible()
    assert "exit 0" in w1.footer.text() and "1.2 s" in w1.footer.text()
    assert "exit 2" in w2.footer.text()
    # unknown ids are ignored rather than raising inside a slot
    view.on_output("nope", "stdout", "x")
    view.on_command_finished("nope", 1, "exit", 1)


def test_output_is_coalesced_by_the_timer(view: TerminalView, qtbot) -> None:
    view.on_command_started("c", "yes", "/", None, "user")
    for i in range(50):
        view.on_output("c", "stdout", f"line {i}\n")
    assert view.output_document("c").toPlainText() == ""  # nothing drawn per chunk
    qtbot.waitUntil(lambda: "line 49" in view.output_document("c").toPlainText())
    assert view.output_document("c").blockCount() == 51


def test_carriage_return_progress_redraws_in_place(view: TerminalView) -> None:
    view.on_command_started("c", "pip download x", "/", True, "agent")
    view.on_output("c", "stdout", "Downloading\n 10%")
    view.flush()
    view.on_output("c", "stdout", "\r 55%")
    view.flush()
    view.on_output("c", "stdout", "\r100%\n")
    view.flush()
    assert view.output_document("c").toPlainText() == "Downloading\n100%\n"


def test_kill_button_emits_kill_requested(view: TerminalView, qtbot) -> None:
    view.on_command_started("c-7", "sleep 100", "/", True, "agent")
    view.flush()
    button = view.block_widget("c-7").kill_button
    with qtbot.waitSignal(view.killRequested) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert blocker.args == ["c-7"]
    assert not button.isEnabled()
    view.on_command_finished("c-7", 137, "killed", 300)
    view.flush()
    assert not button.isVisible()
    assert "killed" in view.block_widget("c-7").footer.text()


def test_search_finds_and_steps_through_matches(view: TerminalView, qtbot) -> None:
    view.on_command_started("a", "make", "/", True, "agent")
    view.on_command_started("b", "make test", "/", True, "agent")
    view.on_output("a", "stdout", "compile foo.c\nwarning: unused x\n")
    view.on_output("b", "stderr", "FAILED test_one\nWarning: slow\n")
    view.flush()
    with qtbot.waitActive(view):  # shortcuts fire only in the active window
        view.activateWindow()
    qtbot.keyClick(view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert view.find_bar.isVisible()
    qtbot.keyClicks(view.find_bar.edit, "warning")
    assert view.match_count() == 2
    qtbot.keyClick(view.find_bar.edit, Qt.Key.Key_Return)
    assert view.current_match() == ("a", "warning")
    qtbot.keyClick(view.find_bar.edit, Qt.Key.Key_Return)
    assert view.current_match() == ("b", "Warning")
    qtbot.keyClick(view.find_bar.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert view.current_match() == ("a", "warning")
    assert len(view.block_widget("b").output.extraSelections()) == 1
    assert view.find_bar.count.text() == "1/2"
    assert view.search("no such text") == 0
    qtbot.keyClick(view.find_bar.edit, Qt.Key.Key_Escape)
    assert not view.find_bar.isVisible()


def test_scrollback_bounded_after_20_mb(qtbot) -> None:
    limits = ScrollbackLimits()
    view = TerminalView(TerminalModel(limits))
    qtbot.addWidget(view)
    view.show()
    view.on_command_started("big", "cat huge.log", "/", True, "agent")
    line = f"{ESC}[36m2026-01-01T00:00:00{ESC}[0m INFO GET /api/v1/items?page=7 200 in 12 ms\n"
    chunk = line * (65536 // len(line))
    total = 0
    growth = None
    while total < 20_000_000:
        if growth is None and total >= 16_000_000:  # steady state: measure what 4 MB more adds
            tracemalloc.start()
            growth = tracemalloc.get_traced_memory()[0]
        view.on_output("big", "stdout", chunk)
        total += len(chunk)
        if total % (1024 * 1024) < len(chunk):
            view.flush()
    view.flush()
    growth = tracemalloc.get_traced_memory()[0] - (growth or 0)
    tracemalloc.stop()
    block = view.model.block("big")
    doc = view.output_document("big")
    bound = limits.block_chars()
    assert block.received_chars >= 20_000_000
    assert block.kept_chars() <= bound
    assert view.model.kept_chars() <= bound
    assert doc.characterCount() <= bound + 100
    assert block.omitted_lines > 200_000
    assert "lines omitted" in doc.findBlockByNumber(limits.head_lines).text()
    # the document holds exactly the model's head + marker + tail (+ empty last line)
    assert doc.blockCount() == len(block.head) + 1 + len(block.tail) + 1
    assert doc.toPlainText() == block.text()
    assert growth < 2_000_000  # the last 4 MB replaced old lines instead of adding up


def test_auto_scroll_follows_until_user_scrolls_up(view: TerminalView) -> None:
    view.on_command_started("c", "seq", "/", True, "agent")
    view.on_output("c", "stdout", "".join(f"{i}\n" for i in range(200)))
    view.flush()
    bar = view.block_widget("c").output.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    view.on_output("c", "stdout", "".join(f"{i}\n" for i in range(200, 300)))
    view.flush()
    assert bar.value() == bar.maximum()
    bar.setValue(10)  # the user scrolls up
    view.on_output("c", "stdout", "".join(f"{i}\n" for i in range(300, 400)))
    view.flush()
    assert bar.value() == 10
    bar.setValue(bar.maximum())  # back to the end: following again
    view.on_output("c", "stdout", "more\n" * 50)
    view.flush()
    assert bar.value() == bar.maximum()


def test_copy_output_and_command_to_clipboard(view: TerminalView, qtbot) -> None:
    view.on_command_started("c", "git status --short", "/repo", True, "agent")
    view.on_output("c", "stdout", f"{ESC}[31m M{ESC}[0m core/x.py\n?? new.txt\n")
    view.flush()
    widget = view.block_widget("c")
    qtbot.mouseClick(widget.copy_output_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == " M core/x.py\n?? new.txt\n"
    qtbot.mouseClick(widget.copy_command_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "git status --short"


def test_screenshot_of_three_blocks(view: TerminalView, tmp_path: Path) -> None:
    g, r, y, b, z, inv = (f"{ESC}[{c}m" for c in ("32", "31", "33", "1", "0", "7"))
    view.on_command_started(
        "c1", "python -m pytest -q tests/core", "/home/dev/tandem", True, "agent"
    )
    view.on_output(
        "c1",
        "stdout",
        f"{b}{'=' * 29} test session starts {'=' * 29}{z}\r\n"
        "platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.6.0\r\n"
        "rootdir: /home/dev/tandem\r\ncollected 42 items\r\n\r\n"
        f"tests/core/test_runner.py {g}{'.' * 10}{z}{g}{' ' * 38}[ 23%]{z}\r\n"
        f"tests/core/test_shell_tool.py {g}{'.' * 17}{z}{g}{' ' * 27}[ 64%]{z}\r\n"
        f"tests/core/test_v4a.py {g}{'.' * 15}{z}{g}{' ' * 36}[100%]{z}\r\n\r\n"
        f"{g}{'=' * 30} {b}42 passed{z}{g} in 3.41s {'=' * 30}{z}\r\n",
    )
    view.on_command_finished("c1", 0, "exit", 3412)
    view.on_command_started(
        "c2", "npm run build", "/home/dev/tandem/web", False, "codex", "bwrap unavailable"
    )
    view.on_output("c2", "stdout", "\n> web@0.3.0 build\n> tsc -p . && vite build\n\n")
    view.on_output(
        "c2",
        "stderr",
        f"src/app.ts{z}:{y}14{z}:{y}7{z} - {r}error{z}{ESC}[90m TS2322: {z}"
        "Type 'string' is not assignable to type 'number'.\n\n"
        f"{inv}14{z}   const port: number = process.env.PORT;\n{inv}  {z}{r}         ~~~~{z}\n\n"
        f"Found 1 error in src/app.ts{y}:14{z}\n",
    )
    view.on_command_finished("c2", 2, "exit", 5120)
    view.on_command_started("c3", "pip install -e '.[dev]'", "/home/dev/tandem", True, "user")
    view.on_output(
        "c3",
        "stdout",
        "Obtaining file:///home/dev/tandem\n  Installing build dependencies ... done\n"
        "Collecting pyside6-essentials>=6.11\n"
        "  Downloading pyside6_essentials-6.11.3-cp39-abi3-manylinux_2_28_x86_64.whl (95.2 MB)\n",
    )
    for done in ("40.1", "61.4"):
        view.on_output(
            "c3",
            "stdout",
            f"\r     {ESC}[38;5;197m{'━' * 18}{z}{ESC}[38;5;237m{'━' * 7}{z} {g}{done}/95.2 MB{z} "
            f"{r}12.9 MB/s{z} eta {ESC}[36m0:00:03{z}",
        )
    view.flush()
    QApplication.processEvents()  # let the scroll area take the new block sizes
    bar = view._scroll.verticalScrollBar()
    assert bar.value() == bar.maximum()  # following the newest block
    image = view.grab()
    assert not image.isNull()
    for path in (tmp_path / "terminal_view.png", Path("/tmp/terminal_view.png")):
        assert image.save(str(path))
    assert "61.4/95.2 MB" in view.output_document("c3").lastBlock().text()
    assert "40.1" not in view.output_document("c3").toPlainText()


def test_wrapped_lines_are_shown_without_an_inner_scrollbar(view: TerminalView, qtbot) -> None:
    view.on_command_started("w", "grep -rn price src", "/repo", True, "agent")
    long_line = "tests/test_inventory.py:8: " + "x" * 400  # wraps over several visual lines
    view.on_output("w", "stdout", f"{long_line}\nsrc/a.py:1: short\n")
    view.on_command_finished("w", 0, "exit", 12)
    view.flush()
    output = view.block_widget("w").output
    qtbot.waitUntil(lambda: output.verticalScrollBar().maximum() == 0)
    assert output.height() > 3 * output.fontMetrics().lineSpacing()
