"""``tandem run`` on a pseudo-terminal: per-hunk review (a/r/e/c) through the review queue,
and ``tandem sessions list|show|resume`` after a CLI run (issue 16, Build item 2)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.support import items

ROOT = Path(__file__).resolve().parents[2]


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    env |= {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TERM": "dumb",
        **extra,
    }
    return env


class _Tty:
    """A ``tandem`` process on a pseudo-terminal, read with bounded polling."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "desktop.cli", *args],
            cwd=ROOT,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
        )
        os.close(slave)
        self.text = ""

    def expect(self, needle: str, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while needle not in self.text:
            left = deadline - time.monotonic()
            assert left > 0, f"{needle!r} not seen; got:\n{self.text[-3000:]}"
            ready, _, _ = select.select([self.master], [], [], min(left, 1.0))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the process ended (EIO)
                    chunk = b""
                if not chunk and self.proc.poll() is not None:
                    assert needle in self.text, f"{needle!r} not seen; got:\n{self.text[-3000:]}"
                self.text += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        self.text_after = self.text.split(needle, 1)[1]
        self.text = self.text_after  # the next expect looks after this one

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def finish(self) -> int:
        try:
            while True:  # drain so the process never blocks on a full pty
                ready, _, _ = select.select([self.master], [], [], 1.0)
                if ready:
                    try:
                        if not os.read(self.master, 65536):
                            break
                    except OSError:
                        break
                elif self.proc.poll() is not None:
                    break
            return self.proc.wait(timeout=60)
        finally:
            os.close(self.master)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def _lines(n: int) -> str:
    return "".join(f"l{i}\n" for i in range(1, n + 1))


_DIFF = " l1\n-l2\n+L2\n l3\n@@\n l9\n-l10\n+L10\n l11\n@@\n l18\n-l19\n+L19\n l20\n"


def test_per_hunk_review_on_a_pseudo_terminal(tmp_path, responses_server):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "f.txt").write_text(_lines(20))
    home = tmp_path / "home"
    home.mkdir()
    responses_server.enqueue(
        [
            items.apply_patch_call(
                {"type": "update_file", "path": "f.txt", "diff": _DIFF}, call_id="p1"
            )
        ]
    )
    responses_server.enqueue([items.message("reviewed")])
    tty = _Tty(
        [
            "run",
            "edit f",
            "--repo",
            str(repo),
            "--mode",
            "ask",
            "--model",
            "m",
            "--base-url",
            responses_server.base_url,
        ],
        _env(home, OPENAI_API_KEY="test-key"),
    )
    tty.expect("hunk 1/3")
    tty.send("e")  # edit hunk 1: type its new side (context too), end with "."
    tty.expect("end with a line '.'")
    for line in ("l1", "EDITED", "l3", "l4", "l5", "."):
        tty.send(line)
    tty.expect("hunk 2/3")
    tty.send("c")
    tty.expect("comment for the model")
    tty.send("keep l10 as it is")
    tty.expect("hunk 2/3")  # asked again after the comment
    tty.send("r")
    tty.expect("hunk 3/3")
    tty.send("a")
    tty.expect("reviewed")
    assert tty.finish() == 0  # part of a patch rejected is not a stopped run
    lines = (repo / "f.txt").read_text().splitlines()
    assert lines[1] == "EDITED" and lines[9] == "l10" and lines[18] == "L19"
    carried = [
        i
        for i in responses_server.requests[1].body["input"]
        if i.get("type") == "apply_patch_call_output"
    ]
    assert carried and "hunk 2: keep l10 as it is" in json.dumps(carried)


def test_an_approval_on_a_pseudo_terminal(tmp_path):
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "output": [
                            {
                                "type": "shell_call",
                                "call_id": "c1",
                                "action": {"commands": ["rm -rf data"]},
                            }
                        ]
                    },
                    {
                        "output": [
                            {"type": "message", "content": [{"type": "output_text", "text": "ok"}]}
                        ]
                    },
                ]
            }
        )
    )
    # --yes does not approve a destructive command: it is asked on the terminal
    tty = _Tty(
        [
            "run",
            "t",
            "--repo",
            str(repo),
            "--mode",
            "auto",
            "--yes",
            "--model",
            f"scripted:{script}",
        ],
        _env(home),
    )
    tty.expect("allow once [y], always [a], reject [n]")
    tty.send("n")
    tty.expect("message to the model")
    tty.send("no thanks")
    assert tty.finish() == 3
    assert (repo / "data").is_dir()


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop.cli", *args],
        cwd=ROOT,
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_sessions_list_show_and_resume_after_a_cli_run(tmp_path):
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    first = tmp_path / "first.json"
    first.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "output": [
                            {
                                "type": "shell_call",
                                "call_id": "c1",
                                "action": {"commands": ["echo journaled"]},
                            }
                        ]
                    },
                    {
                        "output": [
                            {
                                "type": "message",
                                "content": [{"type": "output_text", "text": "first answer"}],
                            }
                        ]
                    },
                ]
            }
        )
    )
    run = _cli(
        home,
        "run",
        "count the files",
        "--repo",
        str(repo),
        "--mode",
        "auto",
        "--model",
        f"scripted:{first}",
        "--json",
    )
    assert run.returncode == 0, run.stderr
    started = json.loads(run.stdout.splitlines()[0])
    session_id = started["session_id"]
    listed = _cli(home, "sessions", "list", "--repo", str(repo))
    assert listed.returncode == 0
    row = next(line for line in listed.stdout.splitlines() if line.startswith(session_id))
    assert "completed" in row and "count the files" in row
    shown = _cli(home, "sessions", "show", session_id)
    assert "> count the files" in shown.stdout and "$ echo journaled" in shown.stdout
    assert "first answer" in shown.stdout
    # a bad id is a usage error (2) for every action; a unique prefix names the session
    for action in ("show", "resume", "export"):
        extra = ["-o", str(tmp_path / "x.json")] if action == "export" else []
        bad = _cli(home, "sessions", action, "f" * 32, *extra)
        assert bad.returncode == 2 and "no session 'ffff" in bad.stderr, (action, bad.stderr)
    assert "> count the files" in _cli(home, "sessions", "show", session_id[:6]).stdout
    # resume with a new message: the history goes with it, the same session grows
    second = tmp_path / "second.json"
    second.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "output": [
                            {
                                "type": "message",
                                "content": [{"type": "output_text", "text": "second answer"}],
                            }
                        ]
                    },
                ]
            }
        )
    )
    resumed = _cli(
        home,
        "sessions",
        "resume",
        session_id,
        "and now?",
        "--repo",
        str(repo),
        "--model",
        f"scripted:{second}",
        "--json",
    )
    assert resumed.returncode == 0, resumed.stderr
    events = [json.loads(line) for line in resumed.stdout.splitlines()]
    assert events[0]["session_id"] == session_id and events[0]["resumed"] is True
    assert events[-1]["final_message"] == "second answer"
    again = _cli(home, "sessions", "show", session_id).stdout
    assert again.index("first answer") < again.index("> and now?") < again.index("second answer")
    # nothing to resume without a message when no approval waits: a usage error
    assert (
        _cli(
            home,
            "sessions",
            "resume",
            session_id,
            "--repo",
            str(repo),
            "--model",
            f"scripted:{second}",
        ).returncode
        == 2
    )


def test_ctrl_c_exits_130_and_the_session_says_cancelled(tmp_path):
    import signal

    repo = tmp_path / "repo"
    repo.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "output": [
                            {
                                "type": "shell_call",
                                "call_id": "c1",
                                "action": {"commands": ["echo waiting; sleep 60"]},
                            }
                        ]
                    },
                    {
                        "output": [
                            {
                                "type": "message",
                                "content": [{"type": "output_text", "text": "late"}],
                            }
                        ]
                    },
                ]
            }
        )
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "desktop.cli",
            "run",
            "t",
            "--repo",
            str(repo),
            "--mode",
            "full",
            "--model",
            f"scripted:{script}",
            "--json",
        ],
        cwd=ROOT,
        env=_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines: list[str] = []
        for line in proc.stdout:  # bounded: the command prints at once, then sleeps
            lines.append(line)
            if '"delta": "waiting' in line:
                break
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    ended = json.loads((lines + rest.splitlines())[-1])
    assert ended["type"] == "session.ended" and ended["status"] == "interrupted"
    assert ended["exit_code"] == 130
    listed = _cli(home, "sessions", "list", "--repo", str(repo)).stdout
    assert ended["session_id"] in listed and "cancelled" in listed


def test_ctrl_c_at_an_approval_then_sessions_resume_asks_it_again(tmp_path):
    import signal

    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    first = tmp_path / "first.json"
    first.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "output": [
                            {
                                "type": "shell_call",
                                "call_id": "c1",
                                "action": {"commands": ["rm -rf data"]},
                            }
                        ]
                    },
                ]
            }
        )
    )
    tty = _Tty(
        ["run", "clean up", "--repo", str(repo), "--mode", "auto", "--model", f"scripted:{first}"],
        _env(home),
    )
    tty.expect("allow once [y], always [a], reject [n]")
    tty.proc.send_signal(signal.SIGINT)
    assert tty.finish() == 130
    assert (repo / "data").is_dir()
    listed = _cli(home, "sessions", "list", "--repo", str(repo)).stdout
    row = next(line for line in listed.splitlines() if "clean up" in line)
    session_id = row.split()[0]
    assert "awaiting_approval" in row
    second = tmp_path / "second.json"
    second.write_text(
        json.dumps(
            {
                "turns": [
                    {
                        "output": [
                            {
                                "type": "message",
                                "content": [{"type": "output_text", "text": "cleaned"}],
                            }
                        ]
                    },
                ]
            }
        )
    )
    tty = _Tty(
        ["sessions", "resume", session_id, "--repo", str(repo), "--model", f"scripted:{second}"],
        _env(home),
    )
    tty.expect("waited for approvals; asking again")
    tty.expect("allow once [y], always [a], reject [n]")
    tty.send("y")
    tty.expect("cleaned")
    assert tty.finish() == 0
    assert not (repo / "data").exists()
