"""``tandem replay`` in its own checkout and its comparison (issue 16, new-user trial friction).

- A replay without ``--repo`` of a repository under ``/tmp`` (``tmp_path`` is): the checkout
  is self-contained, so git inside the sandbox (whose ``/tmp`` is private) still works.
- Tool results that differ only in timings (``0.03s`` vs ``0.04s``), timestamps, PIDs or
  temporary paths are reported as "equal apart from timings", not as a failure; a real
  difference still fails.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from desktop import cli
from desktop.headless import HeadlessOptions, run_headless
from desktop.replay import replay
from harnesses.sessions import SessionJournal, default_journal_path
from tests.desktop.test_replay import _git
from tests.support import items


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    (repo / "notes.txt").write_text("alpha\nbeta\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "notes.txt").write_text("alpha\nbeta\ndirty\n")
    return repo


async def _record(
    tmp_path: Path, server: Any, monkeypatch: pytest.MonkeyPatch, commands: list[str]
) -> tuple[Path, dict[str, Any]]:
    repo = _repo(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-recording-key-0123456789")
    for n, command in enumerate(commands):
        server.enqueue([items.shell_call([command], f"c_{n}")])
    server.enqueue([items.message("Done.")])
    options = HeadlessOptions(
        repo,
        "look around",
        mode="auto",
        model="test-model",
        base_url=server.base_url,
        interactive=False,
        yes=True,
    )
    out = io.StringIO()
    assert await run_headless(options, out) == 0, out.getvalue()
    with SessionJournal(default_journal_path()) as journal:
        (record,) = journal.sessions()
    export_path = tmp_path / "session.json"
    _export_quiet(record.id, export_path)
    return export_path, json.loads(export_path.read_text())


def _export_quiet(session_id: str, path: Path) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(["sessions", "export", session_id, "-o", str(path)]) == 0


async def test_a_replay_checkout_of_a_repo_under_tmp_is_self_contained(
    tmp_path, responses_server, monkeypatch
):
    assert str(tmp_path).startswith("/tmp/")  # the case of the trial: the sandbox hides it
    export_path, _export_data = await _record(
        tmp_path,
        responses_server,
        monkeypatch,
        ["git log --format=%s && git status --short && git rev-parse HEAD"],
    )
    out = io.StringIO()
    report = await replay(export_path, out=out, workdir=tmp_path / "replay")
    text = out.getvalue()
    assert "unable to normalize alternate" not in text, text
    assert report.mismatches == [], text
    assert report.exit_code == 0
    (result,) = report.replayed
    assert "base" in json.dumps(result) and "M notes.txt" in json.dumps(result)
    git_dir = report.root / ".git"
    assert not (git_dir / "objects" / "info" / "alternates").exists()
    # the copy holds its own objects: git works there without the original repository
    done = subprocess.run(
        ["git", "-C", str(report.root), "fsck", "--no-dangling"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert not any(p.stat().st_nlink > 1 for p in (git_dir / "objects").rglob("*") if p.is_file())


RUNNER = (  # a test runner's summary: its timing, its pid and the moment vary from run to run
    "python3 -c \"import os, time; t = time.perf_counter(); print('3 passed in', "
    "'%.2fs' % (time.perf_counter() - t), 'pid', os.getpid(), "
    "'at', time.strftime('%Y-%m-%dT%H:%M:%S'))\""
)


async def test_timings_differ_but_the_replay_is_equal_apart_from_timings(
    tmp_path, responses_server, monkeypatch
):
    export_path, export = await _record(tmp_path, responses_server, monkeypatch, [RUNNER])
    # the recorded run took other time, had another pid, ran at another moment
    (result,) = export["tool_results"]
    text = json.dumps(result["item"])
    assert "passed in" in text
    recorded = re.sub(r"in \d+\.\d+s", "in 9.87s", text)
    recorded = re.sub(r"pid \d+", "pid 1", recorded)
    recorded = re.sub(r"\d{4}-\d\d-\d\dT[\d:]+", "2001-02-03T04:05:06", recorded)
    result["item"] = json.loads(recorded)
    export_path.write_text(json.dumps(export))
    out = io.StringIO()
    report = await replay(export_path, out=out, workdir=tmp_path / "replay")
    text = out.getvalue()
    assert report.mismatches == [] and report.exit_code == 0, text
    assert [m.call_id for m in report.volatile] == ["c_0"]
    assert "turn 1, call c_0: equal apart from timings" in text
    assert "the 1 tool results match the recording, 1 of them equal apart from timings" in text
    assert "9.87s" in text  # the diff shows what varied


async def test_a_real_difference_next_to_a_timing_still_fails(
    tmp_path, responses_server, monkeypatch
):
    export_path, export = await _record(tmp_path, responses_server, monkeypatch, [RUNNER])
    (result,) = export["tool_results"]
    text = json.dumps(result["item"])
    changed = re.sub(r"in \d+\.\d+s", "in 9.87s", text).replace("3 passed", "2 passed")
    result["item"] = json.loads(changed)
    export_path.write_text(json.dumps(export))
    out = io.StringIO()
    report = await replay(export_path, out=out, workdir=tmp_path / "replay")
    assert [(m.call_id, m.what) for m in report.mismatches] == [("c_0", "differs")]
    assert report.exit_code == 1 and not report.volatile
    assert "the tool's result differs from the recording" in out.getvalue()


@pytest.mark.parametrize(
    ("recorded", "replayed", "volatile"),
    [
        ("20 passed in 0.03s", "20 passed in 0.04s", True),
        ("Ran 5 tests in 1.2 s", "Ran 5 tests in 0.9 s", True),
        ("took 12ms", "took 130ms", True),
        ("started 2026-01-02T03:04:05Z", "started 2026-12-01T15:46:05Z", True),
        ("at 15:46:05", "at 09:01:02", True),
        ("worker pid 4242", "worker pid 77", True),
        ("wrote /tmp/tmpab12cd/out.txt", "wrote /tmp/tmpzz99yy/out.txt", True),
        ("<Obj at 0x7f12ab34cd00>", "<Obj at 0x7f99ab34cd00>", True),
        ("20 passed in 0.03s", "19 passed in 0.03s", False),
        ("version 1.2.3", "version 1.2.4", False),
        ("line 12", "line 13", False),
    ],
)
def test_what_counts_as_timings(recorded: str, replayed: str, volatile: bool) -> None:
    from harnesses.recording import compare_results

    entry = {"turn": 1, "call_id": "c", "item": {"call_id": "c", "output": recorded}}
    (found,) = compare_results([entry], [{"call_id": "c", "output": replayed}])
    assert found.what == ("volatile" if volatile else "differs")
    assert found.real is not volatile
