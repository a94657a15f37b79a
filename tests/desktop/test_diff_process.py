"""Diff builds in a process of their own (issue 15): the same hunks, rows and syntax lines as
the in-process path; a killed build process is started again once (each hunk shown once),
and killed again it is an error that keeps what was shown; closing a diff mid-build ends its
process."""

from __future__ import annotations

import os
import pickle
import queue
import signal

import pytest
from PySide6.QtCore import QObject

from desktop.views.diff import process as build_process
from desktop.views.diff.build import hunk_chunks, hunk_layout
from desktop.views.diff.model import HunkDecision, Verdict, split_lines
from desktop.views.diff.process import BuildProcess
from desktop.views.diff.stream import MERGE_HUNKS, DiffStream, StreamMessage
from desktop.views.diff.wire import decode_hunks, decode_sides, encode_sides
from desktop.views.diff_view import DiffView
from harnesses.editor.hunks import compute_hunks
from harnesses.editor.hunks import split_lines as editor_split_lines

# name -> (old, new): CRLF, no final newline, binary-ish, unicode, created, deleted
CASES = {
    "crlf.txt": ("a\r\nb\r\nc\r\nd\r\n" * 40, "a\r\nB\r\nc\r\nd\r\n" * 40),
    "no_eol.py": ("x = 1\ny = 2\nz = 3", "x = 1\ny = 20\nz = 3\nw = 4"),
    "blob.bin": (
        "\x00\x01\xff\x1c\x0b\x0c" * 50 + "\n" + "\x00end\r",
        "\x00\x01\xfe\x1c\x0b\x0c" * 50 + "\n" + "\x00end\r\x85more",
    ),
    "unicode.md": (
        "héllo wörld\n日本語のテキスト\nemoji 🎉 here\nsep\u2028inside\n" * 30,
        "héllo wörld!\n日本語のテキスト\nemoji 🎊 here\nsep\u2028inside\n" * 30,
    ),
    "created.py": (None, "def f():\n    return 1\n"),
    "deleted.py": ("def f():\n    return 1\n", None),
}


def _dense(lines: int, every: int = 12) -> tuple[str, str]:
    old = "".join(f"    value_{i} = compute({i}, 'x')  # note {i}\n" for i in range(lines))
    new = "".join(
        f"    value_{i} = compute({i}, 'y')  # changed\n" if i % every == 0 else line
        for i, line in enumerate(old.splitlines(keepends=True))
    )
    return old, new


def _view(qtbot, **kwargs: bool) -> DiffView:
    view = DiffView(**kwargs)
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    qtbot.waitExposed(view)
    return view


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone (reaped between open and read)
        return False


def _proposal_hunks(old: str | None, new: str | None):
    return compute_hunks(old or "", new or "")


def test_split_lines_keeps_the_editors_rule() -> None:
    for text in ["", "a", "a\n", "a\r\nb\rc\n", "x\x0by\x0cz\n\u2028q\r", "a\x1cb\x85c\r\r\n"]:
        assert split_lines(text) == editor_split_lines(text)


def test_sides_travel_as_joined_text_and_come_back_equal() -> None:
    for old, new in [([], []), ([""], ["a", ""]), (["a", "b"], ["x\ny"])]:
        assert decode_sides(encode_sides(old, new)) == (old, new)


@pytest.mark.parametrize("with_hunks", [True, False], ids=["proposal-hunks", "git-diff"])
def test_the_process_builds_what_the_process_less_path_builds(with_hunks: bool) -> None:
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    for token, (path, (old, new)) in enumerate(CASES.items(), start=1):
        hunks = _proposal_hunks(old, new) if with_hunks else None
        worker = BuildProcess(token, path, old, new, hunks, inbox)
        assert worker.join(60)
        frames = []
        while not inbox.empty():
            got_token, item = inbox.get()
            assert got_token == token
            frames.append(item)
        kinds = [f.kind for f in frames]
        assert kinds.count("lines") == 1 and kinds[-1] == "done", path
        assert kinds.index("lines") <= 1  # after the first chunk (the first screen) at most
        sides = decode_sides(pickle.loads(frames[kinds.index("lines")].payload))
        expected_sides = tuple(
            [ln.rstrip("\r\n") for ln in split_lines(t or "")] for t in (old, new)
        )
        assert sides == expected_sides, path
        got = [decode_hunks(pickle.loads(f.payload)) for f in frames if f.kind == "hunks"]
        here = list(hunk_chunks(path, old, new, hunks=hunks))
        assert [batch for batch, _layouts in got] == here, path
        assert [layouts for _batch, layouts in got] == [[hunk_layout(h) for h in b] for b in here]
        assert all(f.token == token for f in frames)


def test_a_view_shows_the_same_rows_built_in_a_process_or_on_a_thread(qtbot) -> None:
    views = [_view(qtbot), _view(qtbot, build_process=False)]
    old, new = _dense(6_000)
    cases = {**CASES, "dense.py": (old, new)}
    for path, (old, new) in cases.items():
        hunks = _proposal_hunks(old, new)
        diffs = [v.stream_file(path, old, new, proposal_id="p", hunks=hunks) for v in views]
        for view in views:
            qtbot.waitUntil(lambda v=view, p=path: not v.building(p), timeout=60_000)
        assert diffs[0].hunks == diffs[1].hunks and diffs[0].hunks, path
        for unified in (False, True):
            for view in views:
                view.set_unified(unified)
            assert views[0].displayed_rows() == views[1].displayed_rows(), path
        syntax = [(v._delegate.old_syntax, v._delegate.new_syntax) for v in views]
        for side in (0, 1):
            a, b = syntax[0][side], syntax[1][side]
            assert a._lines == b._lines, path
            for number, text in enumerate(a._lines[:50], start=1):
                assert a.spans(number, text) == b.spans(number, text)
        assert views[0].counts(path) == views[1].counts(path)
        assert views[0]._stream.processes() == [] and path not in views[0]._errors


def _killed_mid_build(qtbot, view: DiffView, diff) -> tuple[int, int, list]:
    """Stop the build process mid-build, accept the current hunk, kill it: ``(its pid,
    hunks shown when it was killed, those hunks)``."""
    [pid] = view._stream.processes()
    qtbot.waitUntil(lambda: len(diff.hunks) >= 100, timeout=60_000)
    os.kill(pid, signal.SIGSTOP)  # held mid-build (2,000 hunks a second at most)
    assert view.building("big.py"), "the build ended before it could be stopped"
    assert not view._accept_all_btn.isEnabled()  # every hunk must be there to be decided
    view.accept_all()
    assert view._review.tally("big.py") == (0, 0)
    view.accept_current()
    shown, kept = len(diff.hunks), list(diff.hunks)
    os.kill(pid, signal.SIGKILL)
    return pid, shown, kept


def test_a_killed_build_process_is_started_again_and_skips_what_was_shown(qtbot) -> None:
    """A build process killed by a signal (a crash, the OOM killer) is started again once;
    the new one's hunks up to those shown are dropped, so each hunk is shown once, in order,
    with the decision taken on it kept, and the proposal can be applied."""
    old, new = _dense(200_000)
    view = _view(qtbot)
    diff = view.stream_file("big.py", old, new, proposal_id="p", hunks=compute_hunks(old, new))
    pid, shown, kept = _killed_mid_build(qtbot, view, diff)
    qtbot.waitUntil(lambda: not view.building("big.py"), timeout=120_000)
    assert not _alive(pid) and "big.py" not in view._errors
    assert [h.id for h in diff.hunks] == list(range(1, 16_668))
    assert diff.hunks[:shown] == kept
    assert view.decisions("big.py")[1] == HunkDecision(Verdict.ACCEPTED)
    assert view._apply_btn.isEnabled()
    assert view._stream.processes() == []
    view.reject_current()  # hunk 2 rejected by hand, then Accept all takes the rest
    with qtbot.waitSignal(view.decisionsChanged) as decided:
        view._accept_all_btn.click()
    assert len(decided.args[1]) == 16_665
    assert view._review.tally("big.py") == (16_666, 1)


def test_a_build_process_killed_twice_is_an_error_that_keeps_what_was_shown(qtbot) -> None:
    old, new = _dense(200_000)
    view = _view(qtbot)
    diff = view.stream_file("big.py", old, new, proposal_id="p", hunks=compute_hunks(old, new))
    pid, shown, kept = _killed_mid_build(qtbot, view, diff)
    qtbot.waitUntil(
        lambda: bool(view._stream.processes()) and pid not in view._stream.processes(),
        timeout=30_000,
    )
    [again_pid] = view._stream.processes()
    os.kill(again_pid, signal.SIGKILL)  # the one retry killed too
    qtbot.waitUntil(lambda: not view.building("big.py"), timeout=30_000)
    assert not _alive(pid) and not _alive(again_pid)
    assert "stopped (exit status -9)" in view._errors["big.py"]
    assert len(diff.hunks) >= shown and diff.hunks[:shown] == kept  # nothing lost
    assert [h.id for h in diff.hunks] == list(range(1, len(diff.hunks) + 1))  # none twice
    assert view.decisions("big.py")[1] == HunkDecision(Verdict.ACCEPTED)
    assert view._file_progress(diff).startswith("build failed after")
    assert "Could not build the whole diff" in view._progress.text()
    assert not view._apply_btn.isEnabled()  # fails closed: never applies half a proposal
    with qtbot.assertNotEmitted(view.applyRequested):
        view.apply_reviewed()  # Ctrl+Enter too: hunk 1 is accepted
    assert not view._accept_all_btn.isEnabled() and view._reject_all_btn.isEnabled()
    view.accept_all()
    assert view.decisions("big.py")[2].pending  # never accepted blind
    view.reject_all()  # but the proposal can be rejected from here
    assert not view._apply_btn.isEnabled()  # hunk 1 is still accepted
    view.first_hunk()
    view.reject_current()
    assert view._apply_btn.isEnabled()
    with qtbot.waitSignal(view.applyRequested) as sent:
        view.apply_reviewed()
    assert not any(d.accepted for d in sent.args[1].values())
    # building it again works, with a new process
    again = view.stream_file("big.py", old, new, proposal_id="p", hunks=compute_hunks(old, new))
    qtbot.waitUntil(lambda: not view.building("big.py"), timeout=120_000)
    assert len(again.hunks) == 16_667 and "big.py" not in view._errors
    assert view._apply_btn.isEnabled()


def test_a_process_that_cannot_start_is_an_error_row(qtbot, monkeypatch) -> None:
    monkeypatch.setattr(build_process, "_WORKER", "desktop.views.diff.no_such_worker")
    view = _view(qtbot)
    old, new = _dense(3_000)  # over converts_at_once's size: a build
    diff = view.stream_file("a.py", old, new, proposal_id="p", hunks=compute_hunks(old, new))
    qtbot.waitUntil(lambda: not view.building("a.py"), timeout=30_000)
    assert diff.hunks == [] and "stopped (exit status 1)" in view._errors["a.py"]
    assert "Could not build the diff of a.py" in view._empty.text()


def test_a_process_that_cannot_be_spawned_is_an_error_row(qtbot, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(build_process, "_ROOT", tmp_path / "missing")  # Popen's cwd fails
    view = _view(qtbot)
    old, new = _dense(3_000)
    diff = view.stream_file("a.py", old, new, proposal_id="p", hunks=compute_hunks(old, new))
    qtbot.waitUntil(lambda: not view.building("a.py"), timeout=30_000)
    assert diff.hunks == [] and view._stream.processes() == []
    assert view._errors["a.py"].startswith("could not start the diff build process")
    assert not view._apply_btn.isEnabled()


def test_closing_a_diff_mid_build_stops_its_process(qtbot) -> None:
    old, new = _dense(200_000)
    view = _view(qtbot)
    view.stream_file("big.py", old, new, proposal_id="p", hunks=compute_hunks(old, new))
    [pid] = view._stream.processes()
    os.kill(pid, signal.SIGSTOP)  # it is mid-build whenever the view closes the diff
    view.set_files([])
    qtbot.waitUntil(lambda: not _alive(pid), timeout=10_000)
    assert not view.building("big.py")
    qtbot.waitUntil(lambda: view._stream.processes() == [], timeout=10_000)


def test_a_view_deleted_mid_build_stops_its_process(qtbot) -> None:
    old, new = _dense(200_000)
    view = DiffView()
    view.stream_file("big.py", old, new, proposal_id="p", hunks=compute_hunks(old, new))
    [pid] = view._stream.processes()
    os.kill(pid, signal.SIGSTOP)
    view.deleteLater()
    qtbot.waitUntil(lambda: not _alive(pid), timeout=10_000)


def test_a_process_builds_hunks_are_added_merged_and_in_order(qtbot) -> None:
    old, new = _dense(40_000)  # 3,334 hunks: 34 chunks of 100
    owner = QObject()
    got: list[StreamMessage] = []
    builds = DiffStream(owner, got.append)
    builds.start("big.py", old, new, hunks=compute_hunks(old, new))
    qtbot.waitUntil(lambda: not builds.building("big.py"), timeout=60_000)
    added = [len(m.data[0]) for m in got if m.kind == "hunks"]
    ids = [h.id for m in got if m.kind == "hunks" for h in m.data[0]]
    assert ids == list(range(1, 3_335)) and [m.kind for m in got][-1] == "done"
    assert added[0] == 100 and max(added) <= MERGE_HUNKS + 100  # the first screen at once
    assert len(added) < 34  # merged, not one repaint per chunk
    assert builds.wait(30)
