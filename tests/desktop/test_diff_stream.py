"""The streamed diff: git's line diff, worker builds, hunks streaming into the view."""

from __future__ import annotations

import difflib
import random
from pathlib import Path

import pytest
from PySide6.QtWidgets import QListWidget, QPushButton

from desktop.views.diff.build import build_file_diff, hunk_chunks, hunk_layout
from desktop.views.diff.model import HunkDecision, Verdict, build_rows
from desktop.views.diff.view import DiffView
from harnesses.editor.hunks import compute_hunks, grouped_opcodes, line_opcodes
from harnesses.vcs.runner import run_git


def _dense(lines: int, every: int = 12) -> tuple[str, str]:
    old = "".join(f"    value_{i} = compute({i}, 'x')  # note {i}\n" for i in range(lines))
    new = "".join(
        f"    value_{i} = compute({i}, 'y')  # changed\n" if i % every == 0 else line
        for i, line in enumerate(old.splitlines(keepends=True))
    )
    return old, new


def _view(qtbot) -> DiffView:
    view = DiffView()
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    qtbot.waitExposed(view)
    return view


def _random_pair(rng: random.Random) -> tuple[list[str], list[str]]:
    a = [rng.choice("abcdefg") + rng.choice(["\n", "\r\n"]) for _ in range(rng.randint(0, 60))]
    b = list(a)
    for _ in range(rng.randint(0, 8)):
        at = rng.randint(0, len(b))
        roll = rng.random()
        if roll < 0.4:
            b.insert(at, rng.choice("xyzab") + "\n")
        elif b and roll < 0.7:
            del b[min(at, len(b) - 1)]
        elif b:
            b[min(at, len(b) - 1)] = rng.choice("qrs") + "\n"
    return a, b


# the engine ----------------------------------------------------------------------------------


def test_line_opcodes_rebuild_the_new_side_exactly() -> None:
    rng = random.Random(7)
    for _ in range(300):
        a, b = _random_pair(rng)
        rebuilt: list[str] = []
        for tag, i1, i2, j1, j2 in line_opcodes(a, b):
            if tag == "equal":
                assert a[i1:i2] == b[j1:j2]
            rebuilt.extend(a[i1:i2] if tag == "equal" else b[j1:j2])
        assert rebuilt == b


def test_grouping_is_diff_u_grouping() -> None:
    """Given the same opcodes, the hunks are grouped exactly as difflib groups them."""
    rng = random.Random(11)
    for _ in range(300):
        a, b = _random_pair(rng)
        codes = line_opcodes(a, b)
        for context in (0, 1, 3):
            matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
            matcher.get_opcodes = lambda codes=codes: list(codes)  # type: ignore[method-assign]

            def real(groups):
                return [[c for c in g if not (c[0] == "equal" and c[1] == c[2])] for g in groups]

            want = real(matcher.get_grouped_opcodes(context))
            assert real(grouped_opcodes(a, b, context)) == want


@pytest.mark.parametrize(("every", "hunks"), [(8, 75), (7, 1)])
def test_hunks_are_gits_on_the_real_files(tmp_path: Path, every: int, hunks: int) -> None:
    old, new = _dense(600, every=every)
    (tmp_path / "old.py").write_text(old)
    (tmp_path / "new.py").write_text(new)
    result = run_git(
        ["diff", "--no-index", "--no-ext-diff", "-U3", "--", "old.py", "new.py"],
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 1
    headers = [
        line.split(" @@")[0] + " @@" for line in result.text.splitlines() if line[:3] == "@@ "
    ]
    ours = [h.header for h in build_file_diff("new.py", old, new).hunks]
    # git merges hunks whose contexts touch (gap <= 2 * context): so does diff -u grouping
    assert ours == headers and len(ours) == hunks


def test_odd_bytes_lone_cr_and_nul_are_plain_lines() -> None:
    old = "a\rb\x00c\nd\n\ud800e\n"
    new = "a\rB\x00c\nd\n\ud800e\nf"
    diff = build_file_diff("odd.txt", old, new, context=0)
    assert [(h.old_text, h.new_text) for h in diff.hunks] == [("b\x00c\n", "B\x00c\n"), ("", "f")]


def test_a_dense_50k_file_matches_the_editor_hunks() -> None:
    old, new = _dense(50_000)
    editor = compute_hunks(old, new)
    ours = [h for batch in hunk_chunks("big.py", old, new) for h in batch]
    assert len(editor) == 4167
    assert [(h.id, h.header, h.old_text, h.new_text) for h in editor] == [
        (h.id, h.header, h.old_text, h.new_text) for h in ours
    ]


def test_hunk_layout_counts_the_rows_build_rows_makes() -> None:
    rng = random.Random(3)
    for _ in range(200):
        a, b = _random_pair(rng)
        for hunk in build_file_diff("r.txt", "".join(a), "".join(b), context=2).hunks:
            layout = hunk_layout(hunk)
            assert layout.split_rows == len(build_rows([hunk], unified=False)[0])
            assert layout.unified_rows == len(build_rows([hunk], unified=True)[0])
            assert (layout.added, layout.removed) == (hunk.added, hunk.removed)


# the view ------------------------------------------------------------------------------------


def test_stream_shows_the_file_at_once_then_the_proposals_hunks(qtbot) -> None:
    old, new = _dense(20_000)
    proposal_hunks = compute_hunks(old, new)
    view = _view(qtbot)
    apply = view.findChild(QPushButton, "applyButton")
    files = view.findChild(QListWidget, "fileList")
    diff = view.stream_file("pkg/big.py", old, new, proposal_id="p", hunks=proposal_hunks)
    assert files.count() == 1 and view.current_file() is diff
    assert view.building("pkg/big.py") and not apply.isEnabled()
    qtbot.waitUntil(lambda: not view.building("pkg/big.py"), timeout=60_000)
    assert [(h.id, h.header, h.old_text, h.new_text) for h in diff.hunks] == [
        (h.id, h.header, h.old_text, h.new_text) for h in proposal_hunks
    ]
    assert apply.isEnabled() and set(view.decisions()) == {h.id for h in proposal_hunks}
    assert view.counts("pkg/big.py") == (diff.added, diff.removed)
    rows = view.displayed_rows()
    assert rows == build_rows(diff.hunks, unified=False)[0]
    view.set_unified(True)
    assert view.displayed_rows() == build_rows(diff.hunks, unified=True)[0]
    view.next_hunk()
    assert view.current_hunk() is diff.hunks[1]


def test_stream_without_hunks_diffs_with_git(qtbot) -> None:
    old, new = _dense(3_000, every=5)
    view = _view(qtbot)
    diff = view.stream_file("a.py", old, new, proposal_id="p")
    qtbot.waitUntil(lambda: not view.building("a.py"), timeout=60_000)
    whole = build_file_diff("a.py", old, new, proposal_id="p")
    assert diff.hunks == whole.hunks and diff.status == "modified"


def test_decisions_restored_before_the_hunks_arrive_are_kept(qtbot) -> None:
    old, new = _dense(8_000)
    view = _view(qtbot)
    diff = view.stream_file("b.py", old, new, proposal_id="p", hunks=compute_hunks(old, new))
    edited = "    value_12 = compute(12, 'z')\n"
    view.restore_decisions(
        "b.py",
        {
            1: HunkDecision(Verdict.ACCEPTED),
            600: HunkDecision(Verdict.REJECTED, comment="no"),
            2: HunkDecision(Verdict.ACCEPTED, edited_text=diff_hunk_new(old, new, 2, edited)),
        },
    )
    qtbot.waitUntil(lambda: not view.building("b.py"), timeout=60_000)
    decisions = view.decisions("b.py")
    assert decisions[1].accepted and decisions[600].rejected and decisions[600].comment == "no"
    assert decisions[2].edited_text is not None and decisions[3].pending
    shown_second = view.displayed_rows()[view._headers[1] + 1 :]
    assert any(r.right is not None and "'z'" in r.right.text for r in shown_second[:8])
    sent: list[object] = []
    view.applyRequested.connect(lambda pid, d, _c: sent.append((pid, len(d))))
    view.apply_reviewed()
    assert sent == [("p", len(diff.hunks))]


def diff_hunk_new(old: str, new: str, hunk_id: int, replacement: str) -> str:
    """Hunk ``hunk_id``'s proposed side with its changed line replaced by ``replacement``."""
    hunk = compute_hunks(old, new)[hunk_id - 1]
    lines = hunk.new_text.splitlines(keepends=True)
    changed = next(i for i, line in enumerate(lines) if "'y'" in line)
    lines[changed] = replacement
    return "".join(lines)


def test_a_build_dropped_midway_adds_nothing(qtbot) -> None:
    old, new = _dense(30_000)
    view = _view(qtbot)
    view.stream_file("c.py", old, new, proposal_id="p", hunks=compute_hunks(old, new))
    view.set_files([])
    assert not view.building("c.py")
    assert view.wait_built(60)
    stream = view._stream  # the drain timer stops once the queued chunks are all seen
    qtbot.waitUntil(lambda: not stream._timer.isActive(), timeout=10_000)
    assert view.current_file() is None and view.displayed_rows() == []


def test_both_sides_missing_is_refused(qtbot) -> None:
    view = _view(qtbot)
    with pytest.raises(ValueError):
        view.stream_file("x", None, None)
    assert view.current_file() is None
