"""The diff review view: model building, row pairing, word diffs, keys, signals and modes."""

from __future__ import annotations

from typing import Any

import pytest
from pygments.token import Comment, Keyword, Name, Number, String, Text
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)

from desktop.views.diff_highlight import (
    DARK_STYLE,
    SyntaxLines,
    lexer_for_path,
    token_style,
    unpack_spans,
    word_diff,
)
from desktop.views.diff_model import (
    FileDiff,
    HunkDecision,
    ReviewState,
    Verdict,
    build_file_diff,
    build_rows,
    edit_hunk,
    editor_text_to_hunk_text,
    hunk_text_to_editor_text,
    pair_lines,
)
from desktop.views.diff_view import DiffView

OLD = "".join(f"line {i}\n" for i in range(1, 41))


def _modified() -> str:
    """OLD with line 5 changed into two lines, line 20 deleted, a line added after 35."""
    lines = OLD.splitlines(keepends=True)
    lines[4] = "line five\nline five and a half\n"
    lines[19] = ""
    lines[34] = "line 35\ninserted\n"
    return "".join(lines)


def _view(qtbot, files: list[FileDiff], **kwargs) -> DiffView:
    view = DiffView(files, **kwargs)
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    qtbot.waitExposed(view)
    return view


def _rows_widget(view: DiffView) -> QAbstractItemView:
    rows = view.findChild(QAbstractItemView, "diffRows")
    assert rows is not None
    return rows


# model ---------------------------------------------------------------------------------------


def test_modify_builds_hunks_with_numbers_and_texts() -> None:
    diff = build_file_diff("a.txt", OLD, _modified(), proposal_id="p")
    assert diff.status == "modified"
    assert [h.header for h in diff.hunks] == [
        "@@ -2,7 +2,8 @@",
        "@@ -17,7 +18,6 @@",
        "@@ -33,6 +33,7 @@",
    ]
    assert [h.id for h in diff.hunks] == [1, 2, 3]
    first = diff.hunks[0]
    assert [(ln.kind, ln.old_no, ln.new_no, ln.text) for ln in first.lines[3:6]] == [
        ("delete", 5, None, "line 5"),
        ("add", None, 5, "line five"),
        ("add", None, 6, "line five and a half"),
    ]
    assert first.old_text == "".join(f"line {i}\n" for i in range(2, 9))
    assert first.new_text.startswith("line 2\nline 3\nline 4\nline five\n")
    assert (diff.added, diff.removed) == (3, 2)
    assert diff.hunks[1].lines[3] == diff.hunks[1].lines[3].__class__("delete", 20, None, "line 20")


def test_pure_addition_and_pure_deletion_hunks() -> None:
    added = build_file_diff("a.txt", "a\nb\n", "a\nx\nb\n", context=0)
    assert [h.header for h in added.hunks] == ["@@ -1,0 +2,1 @@"]
    assert [ln.kind for ln in added.hunks[0].lines] == ["add"]
    removed = build_file_diff("a.txt", "a\nx\nb\n", "a\nb\n", context=0)
    assert [h.header for h in removed.hunks] == ["@@ -2,1 +1,0 @@"]
    assert removed.hunks[0].lines[0].old_no == 2


def test_created_deleted_and_unchanged_files() -> None:
    created = build_file_diff("new.py", None, "x = 1\ny = 2\n")
    assert created.status == "created"
    assert created.hunks[0].header == "@@ -0,0 +1,2 @@"
    assert {ln.kind for ln in created.hunks[0].lines} == {"add"}
    deleted = build_file_diff("old.py", "x = 1\n", None)
    assert deleted.status == "deleted"
    assert deleted.hunks[0].header == "@@ -1,1 +0,0 @@"
    assert deleted.hunks[0].old_text == "x = 1\n"
    unchanged = build_file_diff("same.py", "x\n", "x\n")
    assert (unchanged.status, unchanged.hunks) == ("unchanged", [])
    with pytest.raises(ValueError):
        build_file_diff("none", None, None)
    with pytest.raises(ValueError):
        build_file_diff("a", "a", "b", context=-1)


def test_line_terminators_are_compared_exactly() -> None:
    diff = build_file_diff("a.txt", "a\r\nb", "a\r\nb\n", context=1)
    assert len(diff.hunks) == 1
    hunk = diff.hunks[0]
    assert (hunk.old_text, hunk.new_text) == ("a\r\nb", "a\r\nb\n")
    assert [ln.kind for ln in hunk.lines] == ["context", "delete", "add"]


def test_section_heading_is_the_enclosing_python_def() -> None:
    old = "import os\n\n\nclass A:\n    def run(self):\n" + "".join(
        f"        x{i} = {i}\n" for i in range(10)
    )
    new = old.replace("x8 = 8", "x8 = 80")
    diff = build_file_diff("m.py", old, new)
    assert diff.hunks[0].section == "def run(self):"


def test_hunks_match_the_editor_harness() -> None:
    hunks = pytest.importorskip("harnesses.editor.hunks")
    old, new = OLD, _modified()
    theirs = hunks.compute_hunks(old, new)
    ours = build_file_diff("a.txt", old, new).hunks
    assert [(h.id, h.header, h.old_text, h.new_text) for h in theirs] == [
        (h.id, h.header, h.old_text, h.new_text) for h in ours
    ]


def test_side_by_side_rows_pair_deleted_with_added_lines() -> None:
    old = "keep\nold one\nold two\nold three\nkeep too\n"
    new = "keep\nnew one\nkeep too\nextra\n"
    hunk = build_file_diff("a.txt", old, new).hunks[0]
    pairs = [(o.text if o else None, n.text if n else None) for o, n in pair_lines(hunk.lines)]
    assert pairs == [
        ("keep", "keep"),
        ("old one", "new one"),
        ("old two", None),
        ("old three", None),
        ("keep too", "keep too"),
        (None, "extra"),
    ]
    rows, headers = build_rows([hunk], unified=False)
    assert headers == [0] and rows[0].header
    assert [
        (r.left.text if r.left else None, r.right.text if r.right else None) for r in rows[1:]
    ] == pairs
    unified, _ = build_rows([hunk], unified=True)
    kinds = [(r.left or r.right).kind for r in unified[1:]]  # type: ignore[union-attr]
    assert kinds == ["context", "delete", "delete", "delete", "add", "context", "add"]
    assert unified[2].partner is not None and unified[2].partner.text == "new one"
    assert unified[5].partner is not None and unified[5].partner.text == "old one"
    assert unified[3].partner is None


def test_word_diff_marks_only_changed_words() -> None:
    old_spans, new_spans = word_diff("    return foo(a, b)", "    return foo(a, c, d)")
    assert old_spans == ((18, 19),)
    assert new_spans == ((18, 22),)
    assert "    return foo(a, c, d)"[18:22] == "c, d"
    assert word_diff("same text", "same text") == ((), ())
    assert word_diff("completely different", "xyz 123 !!") == ((), ())


def test_syntax_lines_lex_in_context_and_fall_back_per_line() -> None:
    lines = ['x = """start', "still a string", 'end"""', "y = 2"]
    syntax = SyntaxLines(lexer_for_path("m.py"), lines)

    def first_token(line_no: int, text: str):
        spans = syntax.spans(line_no, text)
        assert spans is not None
        return unpack_spans(spans)[0][2]

    assert syntax.spans(2, "still a string", lex=False) is None  # unknown yet, not lexed
    assert first_token(2, "still a string") not in String  # lexed alone: not a string
    while not syntax.advance(5):
        pass
    assert syntax.lexed_lines == 4
    assert first_token(2, "still a string") in String  # in context
    edited = syntax.spans(4, "y = 'q'")
    assert edited is not None and unpack_spans(edited)[-1][2] in String  # lexed on its own
    assert SyntaxLines(lexer_for_path("notes.unknown-ext"), lines).spans(1, lines[0]) == ()


def test_syntax_lines_lex_requested_blocks_first() -> None:
    lines = [f"value_{i} = {i}" for i in range(200)]
    syntax = SyntaxLines(lexer_for_path("m.py"), lines)
    assert syntax.missing([150, 151, 3]) == [3, 150, 151]
    assert syntax.lex_lines([150, 151, 152], budget_ms=50) == 3
    assert syntax.missing([150, 151, 152, 153]) == [153]
    spans = syntax.spans(151, "value_150 = 150", lex=False)
    assert spans is not None
    assert [token for _s, _e, token in unpack_spans(spans)][-1] in Number


def test_editor_text_round_trip_and_edit_hunk() -> None:
    assert hunk_text_to_editor_text("a\r\nb\r\n") == "a\nb"
    assert editor_text_to_hunk_text("x\ny", "a\r\nb\r\n") == "x\r\ny\r\n"
    assert editor_text_to_hunk_text("x", "a") == "x"
    assert editor_text_to_hunk_text("", "a\n") == ""
    hunk = build_file_diff("a.txt", OLD, _modified()).hunks[0]
    edited = edit_hunk(hunk, "line 2\nline 3\nline 4\nLINE FIVE\nline 6\nline 7\nline 8\n")
    assert edited.id == hunk.id and edited.old_text == hunk.old_text
    changed = [(ln.kind, ln.text) for ln in edited.lines if ln.kind != "context"]
    assert changed == [("delete", "line 5"), ("add", "LINE FIVE")]
    assert edited.header == "@@ -2,7 +2,7 @@"


def test_review_state_tracks_verdicts_edits_and_comments() -> None:
    diff = build_file_diff("a.txt", OLD, _modified())
    state = ReviewState([diff])
    assert all(d.pending for d in state.decisions("a.txt").values())
    state.set_verdict("a.txt", 1, Verdict.REJECTED)
    state.set_edit("a.txt", 2, "x\n")
    state.set_comment("a.txt", 3, "why?")
    assert state.decisions("a.txt") == {
        1: HunkDecision(Verdict.REJECTED),
        2: HunkDecision(Verdict.ACCEPTED, "x\n"),
        3: HunkDecision(Verdict.PENDING, None, "why?"),
    }
    assert state.reviewed("a.txt") == 2
    with pytest.raises(KeyError):
        state.set_verdict("a.txt", 9, Verdict.ACCEPTED)


# widget --------------------------------------------------------------------------------------


def test_home_and_end_reach_the_first_and_last_hunk(qtbot) -> None:
    diff = build_file_diff("a.txt", OLD, _modified(), proposal_id="prop-1")
    assert len(diff.hunks) >= 3
    view = _view(qtbot, [diff])
    rows = _rows_widget(view)
    for key, modifier, expected in (
        (Qt.Key.Key_End, Qt.KeyboardModifier.NoModifier, -1),
        (Qt.Key.Key_Home, Qt.KeyboardModifier.NoModifier, 0),
        (Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier, -1),
        (Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier, 0),
    ):
        qtbot.keyClick(rows, key, modifier)
        assert view.current_hunk() is diff.hunks[expected], (key, modifier)


def test_keys_navigate_decide_and_apply_carries_decisions(qtbot) -> None:
    diff = build_file_diff("a.txt", OLD, _modified(), proposal_id="prop-1")
    view = _view(qtbot, [diff])
    rows = _rows_widget(view)
    assert view.current_hunk() is diff.hunks[0]

    with qtbot.waitSignal(view.currentHunkChanged) as moved:
        qtbot.keyClick(rows, "j")
    assert moved.args == ["a.txt", 2]
    qtbot.keyClick(rows, "k")
    assert view.current_hunk() is diff.hunks[0]

    with qtbot.waitSignal(view.decisionChanged) as decided:
        qtbot.keyClick(rows, "a")
    assert decided.args[:2] == ["a.txt", 1] and decided.args[2].accepted
    assert view.current_hunk() is diff.hunks[1]  # accepting moves on
    qtbot.keyClick(rows, "r")
    assert view.decisions()[2].rejected

    qtbot.keyClick(rows, "k")
    with qtbot.waitSignal(view.decisionChanged) as commented:
        qtbot.keyClick(rows, "c")
        comment = view.findChild(QLineEdit, "hunkComment")
        assert comment is not None and comment.isVisible()
        qtbot.keyClicks(comment, "use a constant")
        qtbot.keyClick(comment, Qt.Key.Key_Return)
    assert commented.args[1] == 2 and commented.args[2].comment == "use a constant"
    assert commented.args[2].rejected  # a comment keeps the verdict
    assert not comment.isVisible()

    message = view.findChild(QLineEdit, "applyMessage")
    assert message is not None
    message.setText("thanks")
    apply = view.findChild(QPushButton, "applyButton")
    assert apply is not None
    with qtbot.waitSignal(view.applyRequested) as applied:
        qtbot.mouseClick(apply, Qt.MouseButton.LeftButton)
    proposal_id, decisions, text = applied.args
    assert (proposal_id, text) == ("prop-1", "thanks")
    assert decisions == {
        1: HunkDecision(Verdict.ACCEPTED),
        2: HunkDecision(Verdict.REJECTED, comment="use a constant"),
        3: HunkDecision(Verdict.PENDING),
    }


def test_accept_all_and_reject_all_decide_only_the_pending_hunks(qtbot) -> None:
    """*Accept all* / *Reject all* (buttons, Shift+A / Shift+R) give the file's pending hunks
    a verdict in one ``decisionsChanged``; explicit decisions and comments stay; both are off
    once nothing is pending, and absent in read-only mode."""
    diff = build_file_diff("a.txt", OLD, _modified(), proposal_id="prop-1")
    assert len(diff.hunks) == 3
    view = _view(qtbot, [diff])
    rows = _rows_widget(view)
    accept_all = view.findChild(QPushButton, "acceptAllButton")
    reject_all = view.findChild(QPushButton, "rejectAllButton")
    assert accept_all is not None and reject_all is not None
    assert accept_all.isVisible() and accept_all.isEnabled() and reject_all.isEnabled()
    qtbot.keyClick(rows, "j")
    qtbot.keyClick(rows, "r")  # hunk 2 rejected by hand
    with qtbot.waitSignal(view.decisionsChanged) as decided:
        qtbot.mouseClick(accept_all, Qt.MouseButton.LeftButton)
    path, changed = decided.args
    assert path == "a.txt" and sorted(changed) == [1, 3]
    assert all(d.accepted for d in changed.values())
    assert {k: d.verdict for k, d in view.decisions().items()} == {
        1: Verdict.ACCEPTED,
        2: Verdict.REJECTED,
        3: Verdict.ACCEPTED,
    }
    assert not accept_all.isEnabled() and not reject_all.isEnabled()  # nothing pending
    assert "3/3 reviewed" in view.findChild(QWidget, "reviewProgress").text()

    other = build_file_diff("b.txt", OLD, _modified(), proposal_id="prop-2")
    view2 = _view(qtbot, [other])
    rows2 = _rows_widget(view2)
    qtbot.keyClick(rows2, "a")  # hunk 1 accepted by hand
    with qtbot.waitSignal(view2.decisionsChanged) as rejected:
        qtbot.keyClick(rows2, Qt.Key.Key_R, Qt.KeyboardModifier.ShiftModifier)
    assert sorted(rejected.args[1]) == [2, 3]
    assert [d.verdict for d in view2.decisions().values()] == [
        Verdict.ACCEPTED,
        Verdict.REJECTED,
        Verdict.REJECTED,
    ]
    with qtbot.assertNotEmitted(view2.decisionsChanged):
        qtbot.keyClick(rows2, Qt.Key.Key_A, Qt.KeyboardModifier.ShiftModifier)  # none pending

    read_only = _view(qtbot, [build_file_diff("c.txt", OLD, _modified())], read_only=True)
    button = read_only.findChild(QPushButton, "acceptAllButton")
    assert button is None or not button.isVisible()
    with qtbot.assertNotEmitted(read_only.decisionsChanged):
        qtbot.keyClick(_rows_widget(read_only), Qt.Key.Key_A, Qt.KeyboardModifier.ShiftModifier)


def test_edited_text_lands_in_the_decision(qtbot) -> None:
    diff = build_file_diff("a.txt", OLD, _modified(), proposal_id="p")
    view = _view(qtbot, [diff])
    rows = _rows_widget(view)
    qtbot.keyClick(rows, "e")
    editor = view.findChild(QPlainTextEdit, "hunkEditor")
    assert editor is not None and editor.isVisible()
    assert editor.toPlainText() == diff.hunks[0].new_text.rstrip("\n")
    editor.setPlainText(editor.toPlainText().replace("line five and a half", "line 5.5"))
    with qtbot.waitSignal(view.decisionChanged) as edited:
        qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    decision = edited.args[2]
    assert decision.accepted
    assert decision.edited_text == diff.hunks[0].new_text.replace(
        "line five and a half", "line 5.5"
    )
    assert not editor.isVisible()
    shown = [r.right.text for r in view.displayed_rows() if r.right is not None]
    assert "line 5.5" in shown and "line five and a half" not in shown
    with qtbot.waitSignal(view.applyRequested) as applied:
        qtbot.keyClick(rows, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert applied.args[1][1].edited_text == decision.edited_text


def test_escape_cancels_an_edit(qtbot) -> None:
    diff = build_file_diff("a.txt", OLD, _modified(), proposal_id="p")
    view = _view(qtbot, [diff])
    qtbot.keyClick(_rows_widget(view), "e")
    editor = view.findChild(QPlainTextEdit, "hunkEditor")
    assert editor is not None
    editor.setPlainText("nothing")
    with qtbot.assertNotEmitted(view.decisionChanged):
        qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert not editor.isVisible()
    assert view.decisions()[1] == HunkDecision()


def _header_buttons(view: DiffView, hunk_index: int) -> dict[str, QRect]:
    """Where the header buttons of a hunk are painted, in viewport coordinates."""
    rows = _rows_widget(view)
    row = next(i for i, r in enumerate(view.displayed_rows()) if r.header and r.hunk == hunk_index)
    delegate: Any = rows.itemDelegate()
    rect = delegate.row_rect(rows.visualRect(rows.model().index(row, 0)))
    return {action: box for action, box, _label, _tip in delegate.buttons(rect)}


def test_header_buttons_accept_and_reject(qtbot) -> None:
    diff = build_file_diff("a.txt", OLD, _modified(), proposal_id="p")
    view = _view(qtbot, [diff])
    viewport = _rows_widget(view).viewport()
    buttons = _header_buttons(view, 1)
    assert set(buttons) == {"accept", "reject", "edit", "comment"}
    with qtbot.waitSignal(view.decisionChanged) as first:
        qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=buttons["reject"].center())
    assert first.args[1] == 2 and first.args[2].rejected
    assert view.current_hunk() is diff.hunks[1]  # clicking a header makes its hunk current
    with qtbot.waitSignal(view.decisionChanged) as second:
        qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=buttons["accept"].center())
    assert second.args[2].accepted
    with qtbot.waitSignal(view.decisionChanged) as third:  # clicking again resets
        qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=buttons["accept"].center())
    assert third.args[2].pending
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=buttons["comment"].center())
    comment = view.findChild(QLineEdit, "hunkComment")
    assert comment is not None and comment.isVisible()
    assert view.decisions()[1].pending  # hunk 1 untouched


def test_unified_toggle(qtbot) -> None:
    old = "a\nb\nc\n"
    new = "a\nB\nc\n"
    view = _view(qtbot, [build_file_diff("a.txt", old, new, proposal_id="p")])
    side_by_side = view.displayed_rows()
    assert len(side_by_side) == 1 + 3  # header, a, b|B, c
    qtbot.keyClick(_rows_widget(view), "u")
    assert view.is_unified()
    unified = view.displayed_rows()
    assert len(unified) == 1 + 4  # header, a, -b, +B, c
    assert unified[2].left is not None and unified[2].left.kind == "delete"
    assert unified[2].partner is not None and unified[2].partner.text == "B"
    view.set_unified(False)
    assert len(view.displayed_rows()) == 4


def test_read_only_mode_hides_actions(qtbot) -> None:
    diff = build_file_diff("a.txt", OLD, _modified())
    view = _view(qtbot, [diff], read_only=True)
    rows = _rows_widget(view)
    apply = view.findChild(QPushButton, "applyButton")
    assert apply is not None and not apply.isVisible()
    assert _header_buttons(view, 0) == {}
    with qtbot.assertNotEmitted(view.decisionChanged), qtbot.assertNotEmitted(view.applyRequested):
        for key in ("a", "r", "c", "e"):
            qtbot.keyClick(rows, key)
        view.apply_reviewed()
    editor = view.findChild(QPlainTextEdit, "hunkEditor")
    assert editor is not None and not editor.isVisible()
    assert all(d.pending for d in view.decisions().values())
    qtbot.keyClick(rows, "j")  # navigation still works
    assert view.current_hunk() is diff.hunks[1]
    view.set_read_only(False)
    assert apply.isVisible()


def test_file_list_and_set_files_keep_decisions(qtbot) -> None:
    first = build_file_diff("src/a.py", "x = 1\n", "x = 2\n", proposal_id="p1")
    second = build_file_diff("src/b.py", None, "y = 1\n", proposal_id="p2")
    view = _view(qtbot, [first, second])
    view.accept_current()
    view.show_file("src/b.py")
    assert view.current_file() is second
    assert view.current_hunk() is second.hunks[0]
    view.set_files([first, second, build_file_diff("c.py", "a\n", None, proposal_id="p3")])
    assert view.decisions("src/a.py")[1].accepted
    assert view.current_file() is second  # the shown file stays
    changed = build_file_diff("src/a.py", "x = 1\n", "x = 3\n", proposal_id="p1")
    view.set_files([changed])
    assert view.decisions("src/a.py")[1].pending  # content changed: decisions reset
    with pytest.raises(KeyError):
        view.show_file("missing.py")
    with pytest.raises(ValueError):
        view.set_files([first, first])
    view.set_files([])
    assert view.current_file() is None and view.displayed_rows() == []


def test_ten_thousand_line_diff_opens_and_scrolls(qtbot, tmp_path) -> None:
    old = "".join(f"value_{i} = compute({i}, 'x')  # note {i}\n" for i in range(10_000))
    new = "".join(
        f"value_{i} = compute({i}, 'y')  # note {i}\n" if i % 100 == 0 else line
        for i, line in enumerate(old.splitlines(keepends=True))
    )
    diff = build_file_diff("big/module.py", old, new, proposal_id="big")
    view = _view(qtbot, [diff])
    assert len(diff.hunks) == 100
    # each hunk: a header, context rows and one deleted/added pair on a single row
    assert len(view.displayed_rows()) == sum(len(h.lines) for h in diff.hunks)
    rows = _rows_widget(view)
    rows.scrollToBottom()
    for _ in range(120):
        qtbot.keyClick(rows, "j")
    current = view.current_hunk()
    assert current is not None and current.id == 100
    view.set_unified(True)
    assert len(view.displayed_rows()) == sum(1 + len(h.lines) for h in diff.hunks)
    image = view.grab()
    assert not image.isNull()
    assert image.save(str(tmp_path / "big.png"))
    created = build_file_diff("big/new.py", None, old, proposal_id="n")
    view.set_files([created])
    assert len(view.displayed_rows()) == 10_001
    at = rows.indexAt(QPoint(5, 5))
    assert at.isValid()


def _luminance(colour: QColor) -> float:
    """WCAG relative luminance of an sRGB colour (0 black … 1 white)."""

    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(colour.redF())
        + 0.7152 * channel(colour.greenF())
        + 0.0722 * channel(colour.blueF())
    )


def _contrast(a: QColor, b: QColor) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_dark_palette_rows_and_token_colours(qtbot) -> None:
    diff = build_file_diff("a.py", OLD, _modified(), proposal_id="p")
    view = _view(qtbot, [diff])
    rows = _rows_widget(view)
    image = rows.viewport().grab().toImage()
    shown = view.displayed_rows()
    kinds = {
        "context": next(i for i, r in enumerate(shown) if r.left and r.left.kind == "context"),
        "change": next(i for i, r in enumerate(shown) if r.left and r.left.kind == "delete"),
    }
    samples = {}
    for name, row in kinds.items():
        rect = rows.visualRect(rows.model().index(row, 0))
        y = rect.center().y()
        # past the end of the text of each half: only the row background is painted there
        samples[name] = (
            image.pixelColor(rows.viewport().width() // 2 - 4, y),
            image.pixelColor(rows.viewport().width() - 4, y),
        )
    context_left, context_right = samples["context"]
    deleted, added = samples["change"]
    assert context_left == context_right
    for colour in (context_left, deleted, added):
        assert _luminance(colour) < 0.05, colour.name()  # dark backgrounds
    assert deleted.red() > deleted.green() and added.green() > added.red()
    text = QColor(token_style(DARK_STYLE, Text)[0] or "#000000")
    for token in (Text, Keyword, Name.Function, String, Number, Comment):
        colour = QColor(token_style(DARK_STYLE, token)[0] or text.name())
        for background in (context_left, deleted, added):
            assert _contrast(colour, background) >= 4.5, (token, background.name())
