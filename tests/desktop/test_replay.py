"""Record and replay (issue 16, Build item 3): a live ``tandem run`` against the local
Responses server is journaled, exported with ``tandem sessions export``, and replayed with
``tandem replay`` in a fresh checkout of the recorded state (HEAD + the dirty files): the same
tool calls, the same tool results, the same resulting files. A replay whose tools answer
otherwise says where (turn, call id, a diff).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from core import ScriptedModel
from desktop import cli
from desktop.headless import HeadlessOptions, run_headless
from desktop.replay import replay
from harnesses.sessions import SessionJournal, default_journal_path
from tests.support import items

PATCH = "@@\n alpha\n-beta\n+BETA\n gamma\n"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _repo(tmp_path: Path) -> Path:
    """A repository with a commit, then dirty: a changed tracked file and an untracked one."""
    repo = tmp_path / "project"
    (repo / "data").mkdir(parents=True)
    (repo / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (repo / "data" / "keep.txt").write_text("precious\n")
    (repo / ".gitignore").write_text(".env\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "notes.txt").write_text("alpha\nbeta\ngamma\ndirty line\n")  # not committed
    (repo / "draft.txt").write_text("an untracked draft\n")
    (repo / ".env").write_text("IGNORED=1\n")  # ignored: never in a recording
    return repo


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def _script(server: Any) -> None:
    server.enqueue(
        [items.reasoning("look first"), items.shell_call(["cat notes.txt draft.txt"], "c_cat")],
        usage=items.usage(120, 30),
    )
    server.enqueue(
        [
            items.apply_patch_call(
                {"type": "update_file", "path": "notes.txt", "diff": PATCH}, "c_patch"
            )
        ]
    )
    server.enqueue([items.shell_call(["echo made > made.txt && ls"], "c_make")])
    server.enqueue([items.shell_call(["rm -rf data"], "c_rm")])  # destructive: rejected (no TTY)
    server.enqueue([items.message("Changed beta and made made.txt.")], usage=items.usage(300, 12))


async def _record(tmp_path: Path, server: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    repo = _repo(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-recording-key-0123456789")
    _script(server)
    options = HeadlessOptions(
        repo,
        "fix the notes",
        mode="ask",
        model="test-model",
        base_url=server.base_url,
        interactive=False,
        yes=True,  # approves the ordinary command and the patch; rm -rf still rejected
    )
    out = io.StringIO()
    code = await run_headless(options, out)
    assert code == 3, out.getvalue()  # the destructive command was rejected
    with SessionJournal(default_journal_path()) as journal:
        (record,) = journal.sessions()
    return repo, record.id


def _export(session_id: str, path: Path) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["sessions", "export", session_id, "-o", str(path)]) == 0
    assert "5 turns" in out.getvalue() and f"tandem replay {path}" in out.getvalue()
    return json.loads(path.read_text())


def _calls(journal_path: Path) -> list[dict[str, Any]]:
    with SessionJournal(journal_path) as journal:
        return [
            {k: v for k, v in e.payload["item"].items() if k != "status"}
            for s in reversed(journal.sessions())
            for e in journal.events(s.id, kinds=["tool_called"])
        ]


async def test_record_then_replay_gives_the_same_calls_results_and_files(
    tmp_path, responses_server, monkeypatch
):
    repo, session_id = await _record(tmp_path, responses_server, monkeypatch)
    recorded_files = _files(repo)
    assert recorded_files["notes.txt"] == "alpha\nBETA\ngamma\ndirty line\n"
    assert recorded_files["made.txt"] == "made\n" and (repo / "data" / "keep.txt").exists()
    export_path = tmp_path / "session.json"
    export = _export(session_id, export_path)

    manifest = export["manifest"]
    assert manifest["model"] == "test-model" and manifest["mode"] == "ask"
    assert manifest["head"] == _git(repo, "rev-parse", "HEAD").strip()
    assert "+dirty line" in manifest["patch"] and "draft.txt" in manifest["patch"]
    assert ".env" not in manifest["patch"]
    assert manifest["tandem_version"]
    assert "sk-test-recording-key" not in export_path.read_text()  # secrets removed
    assert [t["output"][0]["type"] for t in export["turns"]] == [
        "reasoning",
        "apply_patch_call",
        "shell_call",
        "shell_call",
        "message",
    ]
    assert export["turns"][0]["usage"]["input_tokens"] == 120
    assert {r["call_id"]: r["turn"] for r in export["tool_results"]} == {
        "c_cat": 1,
        "c_patch": 2,
        "c_make": 3,
        "c_rm": 4,
    }
    assert export["decisions"]["approvals"]["c_rm"]["decision"] == "reject"
    assert ScriptedModel(export_path).remaining == 5  # `tandem run --model scripted:FILE`

    # the repository moves on after the recording: the replay still starts from the record
    (repo / "notes.txt").write_text("something else\n")
    work = tmp_path / "replay"
    out = io.StringIO()
    report = await replay(export_path, out=out, workdir=work)
    text = out.getvalue()
    assert report.mismatches == [], text
    assert "the 4 tool results match the recording" in text
    assert report.root.parent == work and report.root != repo
    replayed_files = _files(report.root)
    assert recorded_files.pop(".env") == "IGNORED=1\n"  # ignored files are not recorded
    assert replayed_files == recorded_files  # same resulting files
    assert _calls(work / "replay-journal.sqlite3") == _calls(default_journal_path())
    assert [i["call_id"] for i in report.replayed] == ["c_cat", "c_patch", "c_make", "c_rm"]


async def test_a_replay_whose_tools_answer_otherwise_says_where(
    tmp_path, responses_server, monkeypatch
):
    _repo_path, session_id = await _record(tmp_path, responses_server, monkeypatch)
    export_path = tmp_path / "session.json"
    export = _export(session_id, export_path)
    # the recorded state differs from what the tools will see: draft.txt says something else
    export["manifest"]["patch"] = export["manifest"]["patch"].replace(
        "+an untracked draft", "+a different draft"
    )
    export_path.write_text(json.dumps(export))
    out = io.StringIO()
    report = await replay(export_path, out=out, workdir=tmp_path / "replay")
    assert [(m.turn, m.call_id, m.what) for m in report.mismatches] == [(1, "c_cat", "differs")]
    text = out.getvalue()
    assert "1 of the tool results differ" in text
    assert "turn 1, call c_cat: the tool's result differs from the recording" in text
    assert "-" in text and "an untracked draft" in text and "a different draft" in text
    assert report.exit_code == 1


async def test_replay_in_place_and_bad_files(tmp_path, responses_server, monkeypatch, capsys):
    repo, session_id = await _record(tmp_path, responses_server, monkeypatch)
    export_path = tmp_path / "session.json"
    _export(session_id, export_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    report = await replay(export_path, repo=clone, out=io.StringIO(), workdir=tmp_path / "w")
    assert report.root == clone.resolve() and report.mismatches == [] and not report.warnings
    expected = _files(repo)
    expected.pop(".env")
    assert _files(clone) == expected

    full = json.loads(export_path.read_text())
    full["manifest"]["mode"] = "full"  # a file cannot ask for unsandboxed commands
    full_path = tmp_path / "full.json"
    full_path.write_text(json.dumps(full))
    report = await replay(full_path, out=io.StringIO(), workdir=tmp_path / "w2")
    assert any("replaying in auto mode" in w for w in report.warnings)

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # mkdtemp stays in here
    (tmp_path / "tmp").mkdir()
    assert await asyncio.to_thread(cli.main, ["replay", str(export_path)]) == 0
    printed = capsys.readouterr().out
    assert "the 4 tool results match the recording" in printed
    assert str(tmp_path / "tmp" / "tandem-replay-") in printed

    bad = tmp_path / "bad.json"
    bad.write_text('{"turns": "nope"}')
    assert await asyncio.to_thread(cli.main, ["replay", str(bad)]) == 2  # its own loop
    assert "is not a Tandem session export" in capsys.readouterr().err
    assert cli.main(["sessions", "export", "f" * 32, "-o", str(tmp_path / "x.json")]) == 2
    assert "no session" in capsys.readouterr().err


def test_a_window_session_exports_from_the_file_menu_and_replays(tmp_path, qtbot):
    """File > Export session… writes the window's session (per-hunk review, an approval);
    the replay answers both as the user did and lands the same files."""
    from tests.desktop import app_scenario
    from tests.desktop.test_app import next_signal, run_qasync
    from tests.desktop.test_card_truth import run_ended

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text(app_scenario.notes_text())
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    journal = SessionJournal(tmp_path / "journal.sqlite3")
    export_path = tmp_path / "window-session.json"

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, app_scenario.turns())
        qtbot.addWidget(window)
        window.show()
        shown = next_signal(controller.proposalSubmitted)
        asked = next_signal(controller.approvalRequested)
        done = run_ended(controller)
        controller.submit("edit the notes")
        await shown
        window.diff_view.accept_current()
        window.diff_view.reject_current()  # hunk 2 rejected
        window.diff_view.accept_current()
        window.diff_view.apply_reviewed()
        await asked
        window.approvals.allow_once()  # touch made.txt
        await done
        exported = next_signal(controller.sessionExported)
        menu = next(a for a in window.menuBar().actions() if a.text() == "&File").menu()
        next(a for a in menu.actions() if a.text() == "&Export session…").trigger()
        window.export_dialog.fileSelected.emit(str(export_path))  # the user picks the file
        assert await exported == (str(export_path),)
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()
    recorded = _files(repo)
    assert "FILLER 6" not in recorded["notes.txt"] and "BETA" in recorded["notes.txt"]
    assert "made.txt" in recorded
    export = json.loads(export_path.read_text())
    assert export["manifest"]["mode"] == "ask" and export["manifest"]["model"] == "ScriptedModel"
    assert len(export["turns"]) == 3 and export["runs"][0]["task"] == "edit the notes"
    (review,) = export["decisions"]["reviews"]
    assert review["call_id"] == "p1"
    assert {k: v["accepted"] for k, v in review["hunks"].items()} == {
        "1": True,
        "2": False,
        "3": True,
    }
    assert export["decisions"]["approvals"]["s1"]["decision"] == "allow_once"

    out = io.StringIO()
    report = asyncio.run(replay(export_path, out=out, workdir=tmp_path / "replay"))
    assert report.mismatches == [], out.getvalue()
    assert _files(report.root) == recorded
