"""``tandem run``'s rough edges found by a new-user trial on a real PyPI project (issue 16).

A subfolder of a repository runs on its top level; the header names the model and server;
a closing summary line; a rejected command says so; plurals; long command output folds;
the 404 hint and the missing-key message say where to fix them; session ids take a unique
prefix and a bad one is a usage error everywhere; ``| head`` and an early Ctrl+C end quietly.
"""

from __future__ import annotations

import io
import json
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.settings import Settings, save_settings
from desktop.cli import main
from desktop.headless import HeadlessOptions, run_headless
from desktop.run_cli.sessions_cmd import SessionIdError, resolve_session_id
from desktop.run_cli.setup import project_root
from harnesses.sessions import SessionJournal, default_journal_path
from tests.desktop.test_tandem_run_tty import ROOT, _env
from tests.support import items

KEY = "sk-test-edges-key-0123456789abcdef"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _project(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    (repo / "README.md").write_text("hello\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    (repo / "new.txt").write_text("untracked\n")
    return repo


def _script(tmp_path: Path, *outputs: list[dict]) -> str:
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"turns": [{"output": o} for o in outputs]}))
    return f"scripted:{path}"


def _shell(call_id: str, command: str) -> list[dict]:
    return [{"type": "shell_call", "call_id": call_id, "action": {"commands": [command]}}]


def _done(text: str = "all done") -> list[dict]:
    return [{"type": "message", "content": [{"type": "output_text", "text": text}]}]


async def _run(options: HeadlessOptions) -> tuple[int, str]:
    out = io.StringIO()
    code = await run_headless(options, out)
    return code, out.getvalue()


# -- the repository's top level ---------------------------------------------------------------


async def test_a_subfolder_runs_on_the_repository_top_level(tmp_path, capsys):
    repo = _project(tmp_path)
    model = _script(
        tmp_path,
        _shell("c1", "git status --short && git rev-parse --show-toplevel && ls"),
        _done(),
    )
    options = HeadlessOptions(repo / "tests", "look", mode="auto", model=model, interactive=False)
    code, text = await _run(options)
    assert code == 0, text
    assert f"tandem run in {repo} (mode auto, sandbox on)" in text
    assert ".git/config and hooks read-only" in text
    assert f"started in tests/: the workspace is the repository's top level {repo}" in text
    assert "Not a git repository" not in text and "not a git repository" not in text
    assert "  | ?? new.txt" in text and f"  | {repo}\n" in text and "  | README.md" in text
    with SessionJournal(default_journal_path()) as journal:
        (record,) = journal.sessions()
    assert record.repo == str(repo)
    capsys.readouterr()
    assert main(["sessions", "list", "--repo", str(repo / "tests")]) == 0  # from the subfolder
    assert capsys.readouterr().out.startswith(record.id)


def test_project_root_is_the_top_level_but_never_the_home(tmp_path, monkeypatch):
    repo = _project(tmp_path)
    assert project_root(repo / "tests") == repo
    assert project_root(repo) == repo
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_root(plain) == plain.resolve()
    home = tmp_path / "home-dotfiles"
    (home / "work").mkdir(parents=True)
    _git(home, "init", "-q")
    monkeypatch.setenv("HOME", str(home))
    assert project_root(home / "work") == (home / "work").resolve()  # not the whole home


# -- header, summary, rejections, plurals -----------------------------------------------------


async def test_the_header_names_the_model_and_server_never_the_key(
    tmp_path, responses_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo = _project(tmp_path)
    responses_server.enqueue([items.message("hi")], usage=items.usage(120, 30))
    options = HeadlessOptions(
        repo,
        "hello",
        mode="auto",
        model="test-model",
        base_url=responses_server.base_url,
        interactive=False,
    )
    code, text = await _run(options)
    assert code == 0, text
    assert f"model test-model at {responses_server.base_url} (from --base-url)" in text
    assert KEY not in text and KEY[:12] not in text
    summary = text.rstrip().splitlines()[-1]
    assert summary == (
        "tandem run: done (exit 0) · 1 model request, 120 input + 30 output tokens · 0 checkpoints"
    )

    save_settings(Settings(base_url=responses_server.base_url))
    responses_server.enqueue([items.message("hi")])
    options = HeadlessOptions(repo, "again", mode="auto", model="m", interactive=False)
    code, text = await _run(options)
    assert code == 0 and f"model m at {responses_server.base_url} (from Settings)" in text


async def test_a_rejected_command_says_rejected_and_the_summary_says_why(tmp_path):
    repo = _project(tmp_path)
    model = _script(
        tmp_path,
        _shell("c1", "rm -rf tests"),
        [
            {
                "type": "apply_patch_call",
                "call_id": "p1",
                "operation": {"type": "create_file", "path": "n.txt", "diff": "+x\n"},
            }
        ],
        _done(),
    )
    options = HeadlessOptions(repo, "tidy", mode="ask", model=model, interactive=False, yes=True)
    code, text = await _run(options)
    assert code == 3, text
    assert "rejected: the command did not run" in text
    assert "(exit 1)" not in text
    assert "[review] create_file n.txt (1 hunk)" in text
    summary = text.rstrip().splitlines()[-1]
    assert re.fullmatch(
        r"tandem run: stopped \(exit 3: 1 rejection\) · 3 model requests, \d+ input \+ \d+ "
        r"output tokens · [1-9]\d* checkpoints?",
        summary,
    ), summary
    assert (repo / "tests" / "test_x.py").exists()


# -- long output folds --------------------------------------------------------------------------


@pytest.mark.parametrize("full", [False, True], ids=["folded", "full-output"])
async def test_long_command_output_folds_unless_full_output(tmp_path, full):
    repo = _project(tmp_path)
    model = _script(tmp_path, _shell("c1", "seq 1 400"), _done())
    options = HeadlessOptions(
        repo, "count", mode="auto", model=model, interactive=False, full_output=full
    )
    code, text = await _run(options)
    assert code == 0, text
    printed = [line for line in text.splitlines() if line.startswith("  | ")]
    if full:
        assert printed[:400] == [f"  | {n}" for n in range(1, 401)]
        assert "more lines" not in text
    else:
        expected = [f"  | {n}" for n in range(1, 21)]
        expected.append("  | … 370 more lines (--full-output shows them) …")
        expected += [f"  | {n}" for n in range(391, 401)]
        assert printed[: len(expected)] == expected


# -- what to do: the 404 hint and the missing key ------------------------------------------------


async def test_the_404_hint_says_base_url_when_it_came_from_the_flag(
    tmp_path, responses_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo = _project(tmp_path)
    without_v1 = responses_server.base_url.removesuffix("/v1")
    assert without_v1 != responses_server.base_url
    options = HeadlessOptions(
        repo, "hello", mode="auto", model="m", base_url=without_v1, interactive=False
    )
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    code = await run_headless(options, out)
    assert code == 1
    said = err.getvalue()
    assert f"try {without_v1}/v1 with --base-url" in said, said
    assert "in Settings" not in said

    monkeypatch.setenv("OPENAI_BASE_URL", without_v1)
    err.truncate(0)
    options = HeadlessOptions(repo, "hello", mode="auto", model="m", interactive=False)
    assert await run_headless(options, io.StringIO()) == 1
    assert f"try {without_v1}/v1 in OPENAI_BASE_URL" in err.getvalue()


async def test_no_key_names_the_three_ways_and_the_offline_run(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    repo = _project(tmp_path)
    options = HeadlessOptions(repo, "hello", mode="auto", interactive=False)
    code = await run_headless(options, io.StringIO())
    assert code == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "No OpenAI API key" in said
    assert "OPENAI_API_KEY in the environment" in said
    assert "Settings > Model in the window" in said and "settings.toml" in said
    assert "--base-url http://localhost" in said and "needs no key" in said
    assert "--model scripted:FILE" in said


# -- session ids ----------------------------------------------------------------------------------


def test_a_session_id_takes_a_unique_prefix_and_says_when_ambiguous(tmp_path):
    path = tmp_path / "journal.sqlite3"
    with SessionJournal(path) as journal:
        one = journal.create_session(tmp_path, "first task")
        two = journal.create_session(tmp_path, "second task")
    with sqlite3.connect(path) as db:  # two ids sharing their first 6 characters
        db.execute("UPDATE sessions SET id = ? WHERE id = ?", ("abcdef" + one[6:], one))
        db.execute("UPDATE sessions SET id = ? WHERE id = ?", ("abcdef" + two[6:], two))
    one, two = "abcdef" + one[6:], "abcdef" + two[6:]
    assert resolve_session_id(one, journal_path=path) == one
    assert resolve_session_id(one[:9], journal_path=path) == one
    with pytest.raises(SessionIdError, match="'abcd' is ambiguous: 2 sessions") as caught:
        resolve_session_id("abcd", journal_path=path)
    assert one in str(caught.value) and "second task" in str(caught.value)
    with pytest.raises(SessionIdError, match=r"no session 'abc'.*at least 4"):
        resolve_session_id("abc", journal_path=path)
    with pytest.raises(SessionIdError, match="no session '0000'"):
        resolve_session_id("0000", journal_path=path)


# -- the terminal: a closed pipe, an early Ctrl+C -------------------------------------------------


def test_sessions_list_into_head_ends_quietly(tmp_path):
    home = tmp_path / "home"
    env = _env(home)
    journal = _journal_in(env)  # the child's journal (its HOME and XDG folders)
    assert journal.is_relative_to(home)
    with SessionJournal(journal) as made:  # the schema; then many rows at once
        made.create_session(tmp_path, "seed")
    now = time.time()
    rows = [
        (f"{n:032x}", str(tmp_path), f"task number {n} " + "x" * 60, now, now) for n in range(6000)
    ]
    with sqlite3.connect(journal) as db:
        db.executemany(
            "INSERT INTO sessions (id, repo, title, created_at, updated_at, status) "
            "VALUES (?, ?, ?, ?, ?, 'completed')",
            rows,
        )
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop.cli", "sessions", "list", "--all"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # `| head -1`: read one line, then go away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=60)
    assert first.strip(), err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert code == 141


def test_tandem_run_into_head_stops_quietly_and_is_journaled_cancelled(tmp_path):
    repo = _project(tmp_path)
    many = "for i in $(seq 400); do echo line $i; done"
    script = _script(tmp_path, _shell("c1", many), _shell("c2", many), _done())
    env = _env(tmp_path / "home")
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop.cli", "run", "--model", script, "--yes", "--full-output",
         "--repo", str(repo), "print many lines"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # `| head -1`: read one line, then go away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    proc.stderr.close()
    assert first.startswith(b"tandem run in"), err
    assert "Traceback" not in err and "BrokenPipeError" not in err and "failed" not in err, err
    assert code == 141
    with SessionJournal(_journal_in(env)) as journal:
        (session,) = journal.sessions()
        assert session.status == "cancelled"
        kinds = [e.kind for e in journal.events(session.id)]
    assert "run_cancelled" in kinds and "run_failed" not in kinds


def _journal_in(env: dict[str, str]) -> Path:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from harnesses.sessions import default_journal_path; print(default_journal_path())",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(done.stdout.strip())


def test_ctrl_c_during_start_up_exits_130_without_a_traceback(tmp_path):
    """The interrupt lands inside ``_start_up`` (its first step is stubbed to raise what
    Ctrl+C raises there), where the start-up imports run."""
    code = (
        "import sys\n"
        "from desktop import cli\n"
        "def interrupted(relative):\n"
        "    raise KeyboardInterrupt\n"
        "cli._light_module = interrupted\n"
        "sys.argv = ['tandem', 'run', 'hello']\n"
        "sys.exit(cli.main())\n"
    )
    env = _env(tmp_path / "home")
    env.pop("TANDEM_SECRETS_FD", None)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "tandem: interrupted" in done.stderr


def test_a_task_that_is_not_utf8_is_a_usage_error_before_anything_starts(tmp_path):
    """Bytes that are not UTF-8 in the task (a shell quoting Latin-1 text, a stray byte)
    reach Python as lone surrogates; ``tandem run`` refused them halfway with a
    ``UnicodeEncodeError`` once it created the session. Now: exit 2, the bytes named, no
    session made; the same for ``sessions resume``'s message."""
    repo = _project(tmp_path)
    script = _script(tmp_path, _done())
    env = _env(tmp_path / "home")
    bad = b"fix the caf\xe9 menu"
    for argv in (
        [b"run", b"--model", script.encode(), b"--yes", b"--repo", str(repo).encode(), bad],
        [b"sessions", b"resume", b"abc", bad],
    ):
        done = subprocess.run(
            [sys.executable.encode(), b"-m", b"desktop.cli", *argv],
            cwd=ROOT,
            env=env,
            capture_output=True,
            timeout=120,
        )
        err = done.stderr.decode()
        assert done.returncode == 2, err
        assert "not valid UTF-8 (bytes e9 at character 12)" in err
        assert "Traceback" not in err
    journal = _journal_in(env)
    assert not journal.exists() or SessionJournal(journal).sessions() == []
