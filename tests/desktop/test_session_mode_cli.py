"""``tandem run`` and ``tandem sessions resume`` keep the session's approval mode and its true
state (issue 16; the safety model: "approval modes per session"): a resumed session runs in
the mode it ran in (an explicit ``--mode`` overrides it and is journaled), an approval that
waited is asked again whatever the mode, a stopped run is listed ``stopped``, and a usage
error before the first model call leaves no session behind."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from harnesses.sessions import SessionJournal
from tests.desktop.test_tandem_run_tty import _cli, _env, _Tty

PROMPT = "allow once [y], always [a], reject [n]"


def _home(tmp_path: Path) -> Path:
    """A fresh HOME whose saved settings say ``approval_mode = "auto"``."""
    home = tmp_path / "home"
    (home / ".config" / "tandem").mkdir(parents=True)
    (home / ".config" / "tandem" / "settings.toml").write_text('approval_mode = "auto"\n')
    return home


def _script(path: Path, *outputs: dict[str, Any]) -> str:
    path.write_text(json.dumps({"turns": [{"output": [o]} for o in outputs]}))
    return f"scripted:{path}"


def _shell(call_id: str, command: str) -> dict[str, Any]:
    return {"type": "shell_call", "call_id": call_id, "action": {"commands": [command]}}


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "content": [{"type": "output_text", "text": text}]}


def _journal(home: Path) -> SessionJournal:
    return SessionJournal(home / ".local/share/tandem/sessions.sqlite3")


def _interrupted_at_an_approval(tmp_path: Path, home: Path, repo: Path) -> str:
    """``tandem run --mode ask``, Ctrl+C at the first approval; returns the session id."""
    first = _script(tmp_path / "first.json", _shell("c1", "touch ran1"))
    tty = _Tty(
        ["run", "run the tests", "--repo", str(repo), "--mode", "ask", "--model", first],
        _env(home),
    )
    tty.expect("(mode ask,")
    tty.expect(PROMPT)
    tty.proc.send_signal(signal.SIGINT)
    assert tty.finish() == 130
    assert not (repo / "ran1").exists()
    listed = _cli(home, "sessions", "list", "--repo", str(repo)).stdout
    row = next(line for line in listed.splitlines() if "run the tests" in line)
    assert "awaiting_approval" in row
    return row.split()[0]


def test_resume_runs_in_the_sessions_mode_and_asks_the_waiting_call_again(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    home = _home(tmp_path)
    session_id = _interrupted_at_an_approval(tmp_path, home, repo)
    second = _script(tmp_path / "second.json", _shell("c2", "touch ran2"), _message("done"))
    tty = _Tty(
        ["sessions", "resume", session_id, "--repo", str(repo), "--model", second], _env(home)
    )
    tty.expect("asking again")
    tty.expect("(mode ask,")  # the session's mode, not the saved auto
    tty.expect(PROMPT)
    assert not (repo / "ran1").exists()  # nothing ran before the answer
    tty.send("y")
    tty.expect(PROMPT)  # the next command asks too: the session is in ask
    assert (repo / "ran1").exists() and not (repo / "ran2").exists()
    tty.send("n")
    tty.expect("message to the model")
    tty.send("")
    assert tty.finish() == 3
    assert not (repo / "ran2").exists()
    listed = _cli(home, "sessions", "list", "--repo", str(repo)).stdout
    row = next(line for line in listed.splitlines() if line.startswith(session_id))
    assert " stopped " in row  # ended on a rejection: not "completed"


def test_an_explicit_mode_on_resume_overrides_is_journaled_and_still_asks(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    home = _home(tmp_path)
    session_id = _interrupted_at_an_approval(tmp_path, home, repo)
    second = _script(tmp_path / "second.json", _shell("c2", "touch ran2"), _message("done"))
    tty = _Tty(
        [
            *("sessions", "resume", session_id, "--repo", str(repo)),
            *("--mode", "auto", "--model", second),
        ],
        _env(home),
    )
    tty.expect("(mode auto,")
    tty.expect(PROMPT)  # waited for the user: asked again, even in auto
    assert not (repo / "ran1").exists()
    tty.send("y")
    tty.expect("done")
    assert tty.finish() == 0
    assert (repo / "ran1").exists() and (repo / "ran2").exists()  # c2 ran under auto
    with _journal(home) as journal:
        modes = [e.payload["mode"] for e in journal.events(session_id, kinds=["mode"])]
        status = journal.session(session_id).status
    assert modes[-1] == "auto" and "ask" in modes
    assert status == "completed"


def test_a_run_stopped_on_a_rejection_is_listed_stopped(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    script = _script(tmp_path / "s.json", _shell("c1", "touch ran1"), _message("gave up"))
    run = _cli(home, "run", "make a file", "--repo", str(repo), "--mode", "ask", "--model", script)
    assert run.returncode == 3, run.stderr  # rejected without a terminal
    listed = _cli(home, "sessions", "list", "--repo", str(repo)).stdout
    row = next(line for line in listed.splitlines() if "make a file" in line)
    assert " stopped " in row
    from desktop.app import session_state  # the window's sessions list says the same

    with _journal(home) as journal:
        record = next(r for r in journal.sessions(repo) if r.title == "make a file")
        assert session_state(journal, record) == "stopped"


def test_a_usage_error_before_the_first_model_call_leaves_no_session(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    run = _cli(home, "run", "fix it", "--repo", str(repo))  # no key, no local server
    assert run.returncode == 2, run.stderr
    assert "API key" in run.stderr
    listed = _cli(home, "sessions", "list", "--repo", str(repo))
    assert listed.returncode == 0
    assert "no sessions" in listed.stdout and "fix it" not in listed.stdout
