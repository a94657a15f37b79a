"""Compact hunk lines (issue 15): no object per diff line, same lines, rows and counts, no leak."""

from __future__ import annotations

import difflib
import gc
import random
from dataclasses import replace

import pytest
from PySide6.QtCore import QCoreApplication, QEvent

from desktop.unified_diff import parse_unified_diff
from desktop.views.diff.build import build_file_diff, hunk_chunks, hunk_layout
from desktop.views.diff.lines import DiffLine, HunkLines
from desktop.views.diff.model import DiffHunk, build_rows, split_lines
from desktop.views.diff.view import DiffView
from harnesses.editor.hunks import compute_hunks


def _dense(lines: int, every: int = 12) -> tuple[str, str]:
    old = "".join(f"    value_{i} = compute({i}, 'x')  # note {i}\n" for i in range(lines))
    new = "".join(
        f"    value_{i} = compute({i}, 'y')  # changed\n" if i % every == 0 else line
        for i, line in enumerate(old.splitlines(keepends=True))
    )
    return old, new


def _random_texts(rng: random.Random) -> tuple[str, str]:
    a = [rng.choice(["a", "b", "", "c d", "\x00e"]) + rng.choice(["\n", "\r\n"]) for _ in range(80)]
    b = list(a)
    for _ in range(rng.randint(1, 12)):
        at = rng.randint(0, len(b) - 1)
        roll = rng.random()
        if roll < 0.4:
            b.insert(at, rng.choice(["x", "y z", ""]) + "\n")
        elif roll < 0.7:
            del b[at]
        else:
            b[at] = "changed\n"
    return "".join(a), "".join(b)


def _expected_lines(display: tuple[str, ...], old_no: int, new_no: int) -> list[DiffLine]:
    """The lines as the earlier (one object per line) conversion made them."""
    out: list[DiffLine] = []
    for line in display:
        if line[:1] == "-":
            out.append(DiffLine("delete", old_no, None, line[1:]))
            old_no += 1
        elif line[:1] == "+":
            out.append(DiffLine("add", None, new_no, line[1:]))
            new_no += 1
        else:
            out.append(DiffLine("context", old_no, new_no, line[1:]))
            old_no, new_no = old_no + 1, new_no + 1
    return out


def test_compact_lines_are_the_lines_numbers_and_texts_of_both_paths() -> None:
    rng = random.Random(15)
    for _ in range(60):
        old, new = _random_texts(rng)
        editor = compute_hunks(old, new)
        converted = [h for b in hunk_chunks("f.txt", old, new, hunks=editor) for h in b]
        diffed = build_file_diff("f.txt", old, new).hunks
        assert len(converted) == len(diffed) == len(editor)
        a = [ln.rstrip("\r\n") for ln in split_lines(old)]
        b = [ln.rstrip("\r\n") for ln in split_lines(new)]
        for mine, git, source in zip(converted, diffed, editor, strict=True):
            assert isinstance(mine.lines, HunkLines) and isinstance(git.lines, HunkLines)
            first_old = source.old_start if source.old_lines else source.old_start + 1
            first_new = source.new_start if source.new_lines else source.new_start + 1
            expected = _expected_lines(source.lines, first_old, first_new)
            assert list(mine.lines) == list(git.lines) == expected
            assert mine.lines == expected and len(mine.lines) == len(expected)
            assert [mine.lines[i] for i in range(-len(expected), len(expected))] == expected * 2
            assert mine.lines[1:3] == expected[1:3]
            for line in expected:  # each number points at its text in its side
                if line.old_no is not None:
                    assert a[line.old_no - 1] == line.text
                if line.new_no is not None:
                    assert b[line.new_no - 1] == line.text
            assert (mine.added, mine.removed) == (
                sum(ln.kind == "add" for ln in expected),
                sum(ln.kind == "delete" for ln in expected),
            )
            as_list = replace(mine, lines=expected)
            assert hunk_layout(mine) == hunk_layout(as_list)
            for unified in (False, True):
                assert build_rows([mine], unified=unified) == build_rows([as_list], unified=unified)


def test_unified_rows_pair_deleted_and_added_lines_of_compact_hunks() -> None:
    hunk = build_file_diff("f.txt", "a\nb\nc\n", "a\nB\nc\n").hunks[0]
    rows, _headers = build_rows([hunk], unified=True)
    deleted = next(r for r in rows if r.left is not None and r.left.kind == "delete")
    added = next(r for r in rows if r.right is not None and r.right.kind == "add")
    assert deleted.partner == added.right and added.partner == deleted.left


def test_compact_lines_refuse_what_they_cannot_hold() -> None:
    with pytest.raises(ValueError, match="kinds"):
        HunkLines(" x", ["a", "b"], 1, 1)
    with pytest.raises(ValueError, match="texts"):
        HunkLines(" ", ["a", "b"], 1, 1)
    with pytest.raises(IndexError):
        HunkLines(" ", ["a"], 1, 1)[1]
    odd = HunkLines(" +", ["one\ntwo", ""], 4, 4)  # a text with a "\n" in it is kept whole
    assert [ln.text for ln in odd] == ["one\ntwo", ""]
    assert list(HunkLines("", [], 1, 1)) == []
    lines = [DiffLine("delete", 3, None, "x"), DiffLine("add", None, 3, "y")]
    assert list(HunkLines.of(lines)) == lines
    with pytest.raises(ValueError, match="kinds"):
        HunkLines.of([DiffLine("moved", 3, None, "x")])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="run on"):
        HunkLines.of([DiffLine("delete", 3, None, "x"), DiffLine("delete", 9, None, "y")])


def test_a_built_diff_keeps_a_few_tracked_objects_per_hunk_not_one_per_line() -> None:
    old, new = _dense(6_000)
    gc.collect()
    before = len(gc.get_objects())
    diff = build_file_diff("pkg/dense.py", old, new)
    layouts = [hunk_layout(h) for h in diff.hunks]
    gc.collect()
    made = len(gc.get_objects()) - before
    lines = sum(len(h.lines) for h in diff.hunks)
    assert len(diff.hunks) == 500 and lines > 3_900
    # hunk + its lines + its layout; one DiffLine per line was 11 per hunk
    assert made <= 3 * len(diff.hunks) + 50, made
    assert len(layouts) == len(diff.hunks)


def _tracked(kind: type) -> int:
    """Live instances of ``kind`` once widgets closed earlier are deleted and garbage is gone."""
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is kind)


def test_a_replaced_or_closed_streamed_diff_is_freed(qtbot) -> None:
    view = DiffView()
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    qtbot.waitExposed(view)
    baseline, compact = _tracked(DiffHunk), _tracked(HunkLines)
    old, new = _dense(12_000)
    editor = compute_hunks(old, new)
    for round_ in range(3):  # replacing a proposal's diff frees the previous one
        diff = view.stream_file("pkg/dense.py", old, new, proposal_id=f"p{round_}", hunks=editor)
        qtbot.waitUntil(lambda: not view.building("pkg/dense.py"), timeout=60_000)
        view.repaint()  # rows built and cached for the painted hunks
        assert len(diff.hunks) == len(editor) == 1_000
        assert _tracked(DiffHunk) - baseline == 1_000
        assert _tracked(HunkLines) - compact == 1_000
        del diff
    view.set_files([])  # closed: nothing of it is left
    assert view.wait_built()
    qtbot.waitUntil(lambda: _tracked(DiffHunk) == baseline, timeout=10_000)
    assert _tracked(HunkLines) == compact


def test_a_checkpoint_diffs_hunks_arrive_compact_and_equal_to_the_parse(qtbot) -> None:
    old, new = _dense(1_200)
    body = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), "a/f.py", "b/f.py"
        )
    )
    text = "diff --git a/f.py b/f.py\nindex 1111111..2222222 100644\n" + body
    parsed = parse_unified_diff(text)[0].hunks
    view = DiffView()
    qtbot.addWidget(view)
    view.show()
    view.stream_unified(text, parse_unified_diff)
    qtbot.waitUntil(lambda: view.current_file() is not None, timeout=10_000)
    qtbot.waitUntil(lambda: not view.building("f.py"), timeout=30_000)
    shown = view.current_file()
    assert shown is not None and len(shown.hunks) == len(parsed) == 100
    assert all(isinstance(h.lines, HunkLines) for h in shown.hunks)
    assert [list(h.lines) for h in shown.hunks] == [h.lines for h in parsed]
    assert [(h.header, h.old_text, h.new_text) for h in shown.hunks] == [
        (h.header, h.old_text, h.new_text) for h in parsed
    ]
    assert view.counts("f.py") == (100, 100)


def test_the_windows_replaced_and_closed_proposals_are_freed(qtbot, tmp_path) -> None:
    """The app's path: proposals into ``MainWindow._show_proposal``, closed unapplied."""
    import time

    from core import Agent, ScriptedModel
    from core.settings import Settings
    from core.tools.editor import ApplyPatchOperation
    from desktop.controller import Controller
    from desktop.main_window import MainWindow
    from harnesses.editor.review import Proposal
    from harnesses.workspace import Workspace

    (tmp_path / "repo").mkdir()
    workspace = Workspace(tmp_path / "repo", mode="ask", data_dir=tmp_path / "data")
    model = ScriptedModel([])
    controller = Controller(
        workspace, lambda ws: Agent(name="Tandem", model=model, tools=ws.tools())
    )
    window = MainWindow(controller, Settings())
    qtbot.addWidget(window)
    window.show()
    baseline, compact = _tracked(DiffHunk), _tracked(HunkLines)
    old, new = _dense(12_000)
    editor = tuple(compute_hunks(old, new))
    shown: str | None = None
    for round_ in range(3):
        if shown is not None:
            window._close_proposal(shown)  # answered, nothing accepted: the file goes
        shown = f"p{round_}"
        controller.proposalSubmitted.emit(
            Proposal(
                id=shown,
                operation=ApplyPatchOperation(type="update_file", path="pkg/dense.py", diff=""),
                path="pkg/dense.py",
                move_to=None,
                old_text=old,
                new_text=new,
                hunks=editor,
                created_at=time.time(),
                base_fingerprint=None,
            )
        )
        qtbot.waitUntil(lambda: not window.diff_view.building("pkg/dense.py"), timeout=60_000)
        current = window.diff_view.current_file()
        assert current is not None and len(current.hunks) == 1_000
        del current
        assert _tracked(DiffHunk) - baseline == 1_000  # the previous proposal's are gone
        assert _tracked(HunkLines) - compact == 1_000
    window._close_proposal(shown)
    assert window.diff_view.wait_built()
    qtbot.waitUntil(lambda: _tracked(DiffHunk) == baseline, timeout=10_000)
    assert _tracked(HunkLines) == compact
