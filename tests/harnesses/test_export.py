"""Export files (issue 16, Build item 3): turns, tool results and decisions from the journal,
a manifest of the repository state, secrets removed; checkouts rebuilt from a manifest; the
comparison that says where a replay differs. Real git in tmp_path, a real journal."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core import ScriptedModel
from core.redaction import REDACTED, forget_secrets, register_secret
from harnesses.recording import (
    EXPORT_FORMAT,
    ExportError,
    RecordingError,
    build_export,
    capture_base,
    compare_results,
    export_session,
    load_export,
    model_response_payload,
    prepare_checkout,
    write_export,
)
from harnesses.sessions import SessionJournal

SK_PROJ = "sk-proj-Pj7Hq2Zs9Kd4Lm1Nx8"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _call(call_id: str, command: str) -> dict[str, Any]:
    return {"type": "shell_call", "call_id": call_id, "action": {"commands": [command]}}


def _output(call_id: str, stdout: str) -> dict[str, Any]:
    return {
        "type": "shell_call_output",
        "call_id": call_id,
        "output": [{"stdout": stdout, "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}],
    }


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "content": [{"type": "output_text", "text": text}]}


def test_a_journaled_session_exports_turns_results_decisions_without_secrets(tmp_path):
    register_secret("gateway-secret-42", source="test")
    try:
        with SessionJournal(tmp_path / "j.sqlite3") as journal:
            sid = journal.create_session(tmp_path, "task")
            journal.append(sid, "recording_base", {"mode": "ask", "model": "m", "git": False})
            journal.append(sid, "user_message", {"text": "look"})
            reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
            turn1 = [reasoning, _call("c1", f"echo {SK_PROJ}")]
            journal.append(sid, "model_response", {"items": turn1, "usage": {"input_tokens": 7}})
            journal.append(sid, "tool_called", {"item": turn1[1]})
            journal.append(sid, "approval", {"call_id": "c1", "decision": "approve", "message": ""})
            journal.append(sid, "tool_output", {"item": _output("c1", "gateway-secret-42\n")})
            nested = {"items": [_message("explorer")], "usage": None}
            journal.append(sid, "model_response", {**nested, "parent": "c_x"})  # a sub-agent's
            journal.append(sid, "model_response", {"items": [_message("done")], "usage": None})
            journal.append(sid, "user_message", {"text": "again"})
            journal.append(sid, "model_response", {"items": [_message("twice")], "usage": None})
            export = export_session(journal, sid)
            written = write_export(journal, sid, tmp_path / "out.json")
    finally:
        forget_secrets("test")
    assert export["format"] == EXPORT_FORMAT
    assert export["manifest"]["mode"] == "ask" and export["manifest"]["session_id"] == sid
    assert export["manifest"]["turns_from"] == "model_responses"
    assert [len(t["output"]) for t in export["turns"]] == [2, 1, 1]  # nested turn left out
    assert export["turns"][0]["usage"] == {"input_tokens": 7} and "usage" not in export["turns"][1]
    assert export["runs"] == [{"task": "look", "turns": [0, 1]}, {"task": "again", "turns": [2]}]
    assert export["tool_results"][0]["turn"] == 1 and export["tool_results"][0]["call_id"] == "c1"
    assert export["decisions"]["approvals"] == {"c1": {"decision": "approve", "message": ""}}
    text = written.read_text()
    assert SK_PROJ not in text and "gateway-secret-42" not in text and REDACTED in text
    assert oct(written.stat().st_mode & 0o777) == "0o600"
    assert load_export(written)["runs"] == export["runs"]
    model = ScriptedModel(written)  # loadable as a scripted session
    assert model.remaining == 3


def test_a_session_without_model_responses_is_rebuilt_from_its_run_items():
    events = [
        ("user_message", {"text": "t"}),
        ("reasoning_item_created", {"item": {"type": "reasoning", "id": "r", "summary": []}}),
        ("tool_called", {"item": _call("c1", "ls")}),
        ("tool_called", {"item": _call("c2", "pwd")}),
        ("tool_output", {"item": _output("c1", "a\n")}),
        ("tool_output", {"item": _output("c2", "/x\n")}),
        ("tool_called", {"item": _call("c3", "ls"), "parent": "c9"}),  # nested: skipped
        ("message_output_created", {"item": _message("ok")}),
    ]
    export = build_export(events)
    assert export["manifest"]["turns_from"] == "run_items"
    assert [[i["type"] for i in t["output"]] for t in export["turns"]] == [
        ["reasoning", "shell_call", "shell_call"],
        ["message"],
    ]
    assert [(r["turn"], r["call_id"]) for r in export["tool_results"]] == [(1, "c1"), (1, "c2")]
    with pytest.raises(ExportError, match="no model response"):
        build_export([("user_message", {"text": "t"})])


def test_the_manifest_holds_head_and_the_dirty_files_and_a_checkout_rebuilds_them(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("one\n")
    (repo / "bin.dat").write_bytes(b"\x00\x01\x02")
    (repo / ".gitignore").write_text("secret.env\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "a.txt").write_text("one\ntwo\n")
    (repo / "bin.dat").write_bytes(b"\x00\x01\x02\x03")
    (repo / "new dir").mkdir()
    (repo / "new dir" / "b.txt").write_text("new\n")
    (repo / "secret.env").write_text("KEY=1\n")
    _git(repo, "add", "a.txt")  # staged or not: the patch holds both
    index_before = (repo / ".git" / "index").read_bytes()
    base = capture_base(repo)
    assert (repo / ".git" / "index").read_bytes() == index_before  # the user's index untouched
    assert base["git"] and base["head"] == _git(repo, "rev-parse", "HEAD").strip()
    assert "secret.env" not in base["patch"] and "GIT binary patch" in base["patch"]
    checkout = prepare_checkout({**base, "repo": str(repo)}, tmp_path / "replay" / "repo")
    assert (checkout / "a.txt").read_text() == "one\ntwo\n"
    assert (checkout / "bin.dat").read_bytes() == b"\x00\x01\x02\x03"
    assert (checkout / "new dir" / "b.txt").read_text() == "new\n"
    assert not (checkout / "secret.env").exists()
    assert _git(checkout, "rev-parse", "HEAD").strip() == base["head"]

    big = capture_base(repo, cap_bytes=10)
    assert big["patch_truncated"] and big["patch"] == "" and big["patch_bytes"] > 10
    with pytest.raises(RecordingError, match="over the cap"):
        prepare_checkout(big, tmp_path / "big")
    with pytest.raises(RecordingError, match="is not in"):
        prepare_checkout({**base, "head": "0" * 40}, tmp_path / "nohead")


def test_unborn_and_non_git_folders(tmp_path):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    _git(fresh, "init", "-q")
    (fresh / "only.txt").write_text("x\n")
    base = capture_base(fresh)
    assert base["git"] and base["head"] is None and "only.txt" in base["patch"]
    rebuilt = prepare_checkout(base, tmp_path / "rebuilt")
    assert (rebuilt / "only.txt").read_text() == "x\n"

    plain = tmp_path / "plain"
    plain.mkdir()
    assert capture_base(plain)["git"] is False
    with pytest.raises(RecordingError, match="outside Git"):
        prepare_checkout(capture_base(plain), tmp_path / "x")
    bad = {**base, "patch": "diff --git a/q b/q\n--- a/q\n+++ b/q\n@@ -1 +1 @@\n-no\n+yes\n"}
    with pytest.raises(RecordingError, match="does not apply"):
        prepare_checkout(bad, tmp_path / "bad")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("not json", "cannot read"),
        ({"turns": []}, "not a Tandem session export"),
        ({"format": EXPORT_FORMAT, "turns": [{"output": "x"}], "manifest": {}}, "'turns'"),
        ({"format": EXPORT_FORMAT, "turns": [], "manifest": []}, "'manifest'"),
        (
            {
                "format": EXPORT_FORMAT,
                "turns": [{"output": []}],
                "manifest": {},
                "runs": [{"turns": [3]}],
            },
            "'runs'",
        ),
        (
            {"format": EXPORT_FORMAT, "turns": [], "manifest": {}, "tool_results": [1]},
            "'tool_results'",
        ),
    ],
)
def test_a_malformed_export_is_refused_with_the_reason(tmp_path, data, message):
    path = tmp_path / "e.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(ExportError, match=message):
        load_export(path)


def test_the_comparison_says_which_turn_and_call_and_shows_a_diff():
    recorded = [
        {"turn": 1, "call_id": "c1", "item": {**_output("c1", "/rec/repo\n"), "id": "x"}},
        {"turn": 2, "call_id": "c2", "item": _output("c2", "same\n")},
        {"turn": 3, "call_id": "c3", "item": _output("c3", "3 passed\n")},
    ]
    replayed = [
        {**_output("c1", "/tmp/replay/repo\n"), "id": "y"},  # the folder differs: not a change
        _output("c3", "1 failed, 2 passed\n"),
        _output("c4", "?\n"),
    ]
    found = compare_results(recorded, replayed, replacements=[("/tmp/replay/repo", "/rec/repo")])
    assert [(m.turn, m.call_id, m.what) for m in found] == [
        (2, "c2", "missing"),
        (3, "c3", "differs"),
        (0, "c4", "extra"),
    ]
    text = found[1].describe()
    assert text.startswith("turn 3, call c3: the tool's result differs from the recording")
    lines = text.splitlines()
    assert any(line.startswith("-") and '"stdout": "3 passed' in line for line in lines)
    assert any(line.startswith("+") and '"stdout": "1 failed, 2 passed' in line for line in lines)
    assert compare_results(recorded[:1], replayed[:1]) != []  # without the replacement


def test_model_response_payload_takes_only_completed_responses():
    assert model_response_payload({"type": "response.output_text.delta"}) is None
    assert model_response_payload(None) is None
    event = {
        "type": "response.completed",
        "response": {"id": "r1", "output": [_message("hi")], "usage": {"input_tokens": 3}},
    }
    assert model_response_payload(event) == {
        "items": [_message("hi")],
        "usage": {"input_tokens": 3},
        "response_id": "r1",
    }


def test_a_files_accept_all_is_exported_per_hunk():
    """A ``review_decisions`` event (the diff view's *Accept all*) exports as the same
    per-hunk decisions as one ``review_decision`` per hunk; malformed entries are skipped."""
    one = {"accepted": True, "rejected": False, "edited_text": None, "comment": None}
    events = [
        ("model_response", {"response": {"id": "r1", "status": "completed", "output": []}}),
        ("proposal", {"id": "p1", "call_id": "c1", "path": "a.txt"}),
        ("review_decision", {"id": "p1", "hunk": 2, **one, "accepted": False, "rejected": True}),
        (
            "review_decisions",
            {
                "id": "p1",
                "accepted": [1],
                "rejected": [],
                "hunks": [{"hunk": 3, **one, "comment": "ok"}, "bad", {"hunk": "x"}],
            },
        ),
        ("review_decisions", {"id": "p1", "hunks": "not a list"}),
        ("proposal_closed", {"id": "p1", "how": "applied"}),
    ]
    export = build_export(events)
    [review] = export["decisions"]["reviews"]
    assert review["hunks"] == {
        "1": one,
        "2": {**one, "accepted": False, "rejected": True},
        "3": {**one, "comment": "ok"},
    }
    assert review["closed"] == "applied"
