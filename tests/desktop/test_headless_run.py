"""``tandem run`` with a scripted session: approvals on the terminal, or refused without one."""

from __future__ import annotations

import io
import json
from pathlib import Path

from desktop.headless import HeadlessOptions, run_headless


def _session(tmp_path: Path) -> Path:
    turns = [
        {"output": [{"type": "shell_call", "call_id": "c1", "action": {"commands": ["ls"]}}]},
        {
            "output": [
                {"type": "shell_call", "call_id": "c2", "action": {"commands": ["rm -rf data"]}}
            ]
        },
        {"output": [{"type": "message", "content": [{"type": "output_text", "text": "all done"}]}]},
    ]
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"turns": turns}))
    return path


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "data" / "keep.txt").write_text("precious\n")
    return repo


async def test_non_interactive_run_rejects_destructive_command(tmp_path):
    repo = _repo(tmp_path)
    out = io.StringIO()
    options = HeadlessOptions(
        repo, "tidy", mode="auto", model=f"scripted:{_session(tmp_path)}", interactive=False
    )
    assert await run_headless(options, out) == 0
    text = out.getvalue()
    assert "$ ls" in text and "data" in text  # allowed command ran
    assert "[approval] shell" in text and "destructive" in text and "rejected (no terminal)" in text
    assert (repo / "data" / "keep.txt").read_text() == "precious\n"
    assert "all done" in text


async def test_interactive_approval_runs_the_command(tmp_path):
    repo = _repo(tmp_path)
    answers = iter(["y"])
    out = io.StringIO()
    options = HeadlessOptions(
        repo, "tidy", mode="auto", model=f"scripted:{_session(tmp_path)}", interactive=True
    )
    assert await run_headless(options, out, ask=lambda _prompt: next(answers)) == 0
    assert not (repo / "data").exists()
