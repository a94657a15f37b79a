"""Commands never wait for a human they can't reach (issue 13 Build 4).

Real git repositories in tmp_path, real ssh-keygen, a real (tiny) HTTP server asking for
credentials, the real executor, sandboxed (bubblewrap) and not. Each command that would wait
for an editor, a pager, a prompt or a terminal must return, with a message saying why, well
before the executor's own timeout (set far out, so a hang shows as ``asyncio.wait_for``
running out and failing the test). Durations are measured in ``bench/interactive.py``.
"""

from __future__ import annotations

import asyncio
import http.server
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnesses.shell import SubprocessShellExecutor
from harnesses.shell.environment import (
    BATCH_SSH_COMMAND,
    NO_INPUT_HELPER,
    build_env,
    git_config_sets_ssh_command,
    git_ssh_command,
)
from harnesses.shell.interactive import (
    INPUT_WAIT_HINT,
    InputWaitWatch,
    process_tree,
    read_eof_note,
)
from harnesses.shell.sandbox import sandbox_available
from tests.security._python import SANDBOX_PYTHON

#: A hang shows as this bound running out (the executor's own timeout is further out).
DEADLINE_S = 30.0
EDITOR_MESSAGE = "tandem: no interactive editor"
PROMPT_MESSAGE = "tandem: nobody can answer"

SANDBOXES = [
    "off",
    pytest.param(
        "workspace-write",
        marks=pytest.mark.skipif(not sandbox_available(), reason="bubblewrap unusable"),
    ),
]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
    )
    return done.stdout


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose git config names a real interactive editor and pager (as many users'
    do), with ``EDITOR``/``VISUAL``/``PAGER`` pointing at them in Tandem's environment."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = T\n\temail = t@example.invalid\n"
        "[core]\n\teditor = vim\n\tpager = less\n[init]\n\tdefaultBranch = main\n"
    )
    monkeypatch.setenv("HOME", str(home))
    for name in ("EDITOR", "VISUAL"):
        monkeypatch.setenv(name, "vim")
    monkeypatch.setenv("PAGER", "less")
    monkeypatch.setenv("GIT_PAGER", "less")
    return home


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    """A repository with two commits and a staged change."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    # also in the repository: the sandbox's private /tmp hides a home under tmp_path
    for key, value in (("user.name", "T"), ("user.email", "t@example.invalid")):
        _git(repo, "config", key, value)
    _git(repo, "config", "core.editor", "vim")
    _git(repo, "config", "core.pager", "less")
    for name in ("one", "two"):
        (repo / name).write_text(name + "\n")
        _git(repo, "add", name)
        _git(repo, "commit", "-q", "-m", name)
    (repo / "three").write_text("three\n")
    _git(repo, "add", "three")
    return repo


async def _run(
    executor: SubprocessShellExecutor, command: str
) -> tuple[str, str, int | None, dict[str, object]]:
    result = await asyncio.wait_for(executor.run([command]), DEADLINE_S)
    entry = result.output[0]
    assert entry.outcome.type == "exit", f"{command!r} timed out: {entry.stderr}"
    return entry.stdout, entry.stderr, entry.outcome.exit_code, entry.provider_data or {}


def _executor(repo: Path, sandbox: str, **kwargs: object) -> SubprocessShellExecutor:
    return SubprocessShellExecutor(
        repo,
        sandbox=sandbox,  # type: ignore[arg-type]
        require_sandbox=sandbox != "off",
        default_timeout_ms=120_000,
        **kwargs,  # type: ignore[arg-type]
    )


# -- the environment ---------------------------------------------------------------------------


def test_environment_replaces_editors_pagers_and_prompts() -> None:
    env = build_env(
        {
            "PATH": "/bin",
            "EDITOR": "vim",
            "VISUAL": "code --wait",
            "GIT_EDITOR": "nano",
            "PAGER": "less",
            "GIT_ASKPASS": "/usr/lib/code/askpass.sh",
            "SSH_ASKPASS": "/usr/bin/ssh-askpass",
        }
    )
    helper = str(NO_INPUT_HELPER)
    assert env["EDITOR"] == env["VISUAL"] == env["GIT_ASKPASS"] == env["SSH_ASKPASS"] == helper
    assert env["GIT_EDITOR"] == env["GIT_SEQUENCE_EDITOR"]
    assert helper in env["GIT_EDITOR"]
    assert env["SSH_ASKPASS_REQUIRE"] == "force"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["PAGER"] == env["GIT_PAGER"] == env["MANPAGER"] == "cat"
    assert env["DEBIAN_FRONTEND"] == "noninteractive"
    assert env["PIP_NO_INPUT"] == "1" and env["npm_config_yes"] == "true"
    assert env["GIT_SSH_COMMAND"] == BATCH_SSH_COMMAND
    assert env["PATH"] == "/bin"


def test_extra_values_still_win() -> None:
    env = build_env({"PATH": "/bin"}, extra={"EDITOR": "ed", "GIT_PAGER": "less"})
    assert env["EDITOR"] == "ed" and env["GIT_PAGER"] == "less"


@pytest.mark.parametrize(
    ("given", "configured", "expected"),
    [
        ({}, False, BATCH_SSH_COMMAND),
        ({}, True, None),  # core.sshCommand in git config: GIT_SSH_COMMAND would override it
        ({"GIT_SSH": "/opt/wrap-ssh"}, False, None),  # GIT_SSH_COMMAND would override it
        ({"GIT_SSH_COMMAND": "ssh -i ~/.ssh/work"}, False, "ssh -i ~/.ssh/work -o BatchMode=yes"),
        (
            {"GIT_SSH_COMMAND": "/usr/bin/ssh -p 2222"},
            True,
            "/usr/bin/ssh -p 2222 -o BatchMode=yes",
        ),
        ({"GIT_SSH_COMMAND": "ssh -oBatchMode=no"}, False, "ssh -oBatchMode=no"),
        ({"GIT_SSH_COMMAND": "plink -batch"}, False, "plink -batch"),
        ({"GIT_SSH_COMMAND": "my-wrapper 'unclosed"}, False, "my-wrapper 'unclosed"),
    ],
)
def test_git_ssh_command_keeps_the_users_own(
    given: dict[str, str], configured: bool, expected: str | None
) -> None:
    assert git_ssh_command(given, ssh_configured=configured) == expected
    env = build_env({"PATH": "/bin", **given}, ssh_configured=configured)
    assert env.get("GIT_SSH_COMMAND") == expected


def test_git_config_ssh_command_is_found(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    home.mkdir()
    env = {"HOME": str(home), "GIT_CONFIG_SYSTEM": str(tmp_path / "none")}
    assert not git_config_sets_ssh_command(env, [repo])
    (repo / ".git" / "config").write_text("[core]\n\tSSHCommand = ssh -i k\n")
    assert git_config_sets_ssh_command(env, [repo])
    assert not git_config_sets_ssh_command(env)
    (home / ".gitconfig").write_text("[core]\n\tsshcommand = ssh -i k\n")
    assert git_config_sets_ssh_command(env)
    by_env = {"HOME": "/none", "GIT_CONFIG_SYSTEM": "/none", "GIT_CONFIG_KEY_0": "core.sshCommand"}
    assert git_config_sets_ssh_command(by_env)


async def test_the_executor_leaves_a_configured_ssh_command(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert _executor(ws, "off").command_env(sandboxed=False)["GIT_SSH_COMMAND"] == (
        BATCH_SSH_COMMAND
    )
    with (home / ".gitconfig").open("a") as handle:
        handle.write("[core]\n\tsshCommand = ssh -i ~/.ssh/work\n")
    assert "GIT_SSH_COMMAND" not in _executor(ws, "off").command_env(sandboxed=False)


def test_helper_refuses_with_a_message(tmp_path: Path) -> None:
    assert os.access(NO_INPUT_HELPER, os.X_OK), "tandem-no-input must keep its executable bit"
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("# write a message\n")
    done = subprocess.run([NO_INPUT_HELPER, str(message)], capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == ""
    assert EDITOR_MESSAGE in done.stderr and "-m" in done.stderr
    assert message.read_text() == "# write a message\n"
    done = subprocess.run([NO_INPUT_HELPER, "Password for 'https://x': "], capture_output=True)
    assert done.returncode == 1 and done.stdout == b""  # an askpass answer would be stdout
    assert PROMPT_MESSAGE.encode() in done.stderr and b"Password for" in done.stderr


# -- the commands of the issue, through the real executor ---------------------------------------


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_stdin_is_dev_null_and_there_is_no_terminal(repo: Path, sandbox: str) -> None:
    executor = _executor(repo, sandbox)
    out, _, _, _ = await _run(executor, "readlink /proc/self/fd/0; tty; read x; echo read=$?")
    assert out.splitlines() == ["/dev/null", "not a tty", "read=1"]
    _, err, _, _ = await _run(executor, "read x </dev/tty; echo read=$?")
    assert "/dev/tty: No such device or address" in err


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_read_says_it_got_end_of_input(repo: Path, sandbox: str) -> None:
    _, err, code, _ = await _run(_executor(repo, sandbox), "read x")
    assert code == 1 and "`read` got end of input: stdin is /dev/null" in err


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("read -r name", 1),
        ("set -e; if read x; then echo y; fi; exit 1", 1),
        ("true && read x", 1),
    ],
)
def test_read_note_is_given_for_a_bare_read(line: str, code: int) -> None:
    assert "`read` got end of input" in read_eof_note(line, code)


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("read x", 0),
        ("read x", None),  # timed out
        ("read x < empty.txt", 1),  # its input was a file
        ("printf '' | read x", 1),
        ("readlink missing", 1),
        ("grep -q thread log.txt", 1),
        ("echo read x; false", 1),
    ],
)
def test_read_note_is_not_given_otherwise(line: str, code: int | None) -> None:
    assert read_eof_note(line, code) == ""


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_git_commit_without_message_fails_fast(repo: Path, sandbox: str) -> None:
    head = _git(repo, "rev-parse", "HEAD")
    _, err, code, _ = await _run(_executor(repo, sandbox), "git commit")
    assert code != 0
    assert EDITOR_MESSAGE in err and "-m" in err
    assert "Please supply the message using either -m or -F option" in err
    assert _git(repo, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_interactive_rebase_fails_fast_and_leaves_no_rebase(repo: Path, sandbox: str) -> None:
    _git(repo, "commit", "-q", "-m", "three")
    head = _git(repo, "rev-parse", "HEAD")
    _, err, code, _ = await _run(_executor(repo, sandbox), "git rebase -i HEAD~1")
    assert code != 0
    assert EDITOR_MESSAGE in err and "git-rebase-todo" in err
    assert _git(repo, "rev-parse", "HEAD") == head
    assert not (repo / ".git" / "rebase-merge").exists()
    assert _git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_git_log_does_not_page(repo: Path, sandbox: str) -> None:
    """Also on a terminal (where git pages): ``core.pager = less`` and ``PAGER=less`` would
    wait for a key; the terminal-wait watch is off here, so only ``GIT_PAGER=cat`` helps."""
    executor = _executor(repo, sandbox, input_wait_s=None)
    for line in ("git log", _in_pty("git", "log")):
        out, _, code, _ = await _run(executor, line)
        assert code == 0, line
        assert out.count("commit ") == 2 and "    one" in out, line


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_ssh_keygen_prompt_is_refused_with_a_message(repo: Path, sandbox: str) -> None:
    if shutil.which("ssh-keygen") is None:
        pytest.fail("ssh-keygen missing: scripts/bootstrap.sh installs openssh-client")
    out, err, code, _ = await _run(_executor(repo, sandbox), "ssh-keygen -q -t ed25519 -f key")
    assert PROMPT_MESSAGE in err and "Enter passphrase" in err
    # ssh-keygen takes a refused answer as an empty passphrase (readpass.c); the key exists
    assert code == 0 and (repo / "key.pub").exists()
    out, err, code, _ = await _run(_executor(repo, sandbox), "ssh-keygen -q -t ed25519 -f key")
    assert "Overwrite (y/n)?" in out + err and code != 0


class _AuthRequired(http.server.BaseHTTPRequestHandler):
    """Answers every request with 401 and a Basic challenge (like a private remote)."""

    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="private"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def private_remote() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AuthRequired)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/private.git"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_git_push_needing_credentials_fails_fast(
    repo: Path, sandbox: str, private_remote: str
) -> None:
    _git(repo, "remote", "add", "origin", private_remote)
    _, err, code, _ = await _run(_executor(repo, sandbox, network=True), "git push origin HEAD")
    assert code != 0
    assert "could not read Username" in err and "terminal prompts disabled" in err
    assert PROMPT_MESSAGE in err and "Username for" in err


# -- a terminal the command made itself ---------------------------------------------------------


def _in_pty(*argv: str) -> str:
    """A shell line running ``argv`` on a pty of its own (``pty.spawn``): a real terminal."""
    # the base interpreter: a venv under /tmp is hidden by the sandbox's private /tmp
    return f"{SANDBOX_PYTHON} -c 'import pty, sys; pty.spawn(sys.argv[1:])' " + " ".join(argv)


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_a_read_on_a_made_up_terminal_is_ended_with_the_hint(
    repo: Path, sandbox: str
) -> None:
    """The default wait (3 s): the pty's ``read`` would otherwise wait for 120 s."""
    _, err, code, data = await _run(_executor(repo, sandbox), _in_pty("bash", "-c", "'read x'"))
    assert INPUT_WAIT_HINT in err
    assert code == 143  # SIGTERM
    wait = data["input_wait"]
    assert isinstance(wait, dict) and wait["process"] == "bash" and wait["syscall"] == "read"
    assert str(wait["terminal"]).startswith("/dev/pts/")


@pytest.mark.parametrize("sandbox", SANDBOXES)
async def test_ssh_keygen_on_a_terminal_is_ended_with_the_hint(repo: Path, sandbox: str) -> None:
    (repo / "key").write_text("existing\n")
    out, err, _, data = await _run(
        _executor(repo, sandbox, input_wait_s=1.0), _in_pty("ssh-keygen", "-f", "key")
    )
    assert "Overwrite (y/n)?" in out
    assert INPUT_WAIT_HINT in err
    assert isinstance(data["input_wait"], dict) and data["input_wait"]["process"] == "ssh-keygen"
    assert (repo / "key").read_text() == "existing\n"


async def test_a_quiet_command_on_a_terminal_that_reads_nothing_is_left_alone(
    repo: Path,
) -> None:
    out, err, code, data = await _run(
        _executor(repo, "off", input_wait_s=0.3), _in_pty("bash", "-c", "'sleep 1.5; echo done'")
    )
    assert code == 0 and "done" in out
    assert INPUT_WAIT_HINT not in err and "input_wait" not in data


async def test_a_terminal_reader_that_keeps_writing_is_left_alone(repo: Path) -> None:
    """Output resets the wait: a prompt loop printing every 0.1 s runs to its end."""
    line = "'for i in $(seq 12); do echo tick; read -t 0.1 x; done; echo end'"
    out, _, code, data = await _run(
        _executor(repo, "off", input_wait_s=0.5), _in_pty("bash", "-c", line)
    )
    assert code == 0 and "end" in out
    assert "input_wait" not in data


async def test_a_terminal_reader_whose_sibling_thread_computes_is_left_alone(
    repo: Path, tmp_path: Path
) -> None:
    """CPU resets the wait: the main thread waits on the pty while another thread works."""
    script = tmp_path / "busy.py"
    script.write_text(
        "import os, sys, threading, time\n"
        "def spin():\n"
        "    end = time.monotonic() + 1.5\n"
        "    while time.monotonic() < end:\n"
        "        pass\n"
        "    os.write(1, b'spun\\n')\n"
        "    os._exit(0)\n"
        "threading.Thread(target=spin).start()\n"
        "sys.stdin.readline()\n"
    )
    out, _, code, data = await _run(
        _executor(repo, "off", input_wait_s=0.5), _in_pty(SANDBOX_PYTHON, str(script))
    )
    assert code == 0 and "spun" in out
    assert "input_wait" not in data


async def test_the_watch_can_be_turned_off(repo: Path) -> None:
    executor = _executor(repo, "off", input_wait_s=None)
    result = await asyncio.wait_for(
        executor.run([_in_pty("bash", "-c", "'read x'")], timeout_ms=1500), DEADLINE_S
    )
    entry = result.output[0]
    assert entry.outcome.type == "timeout"
    assert INPUT_WAIT_HINT not in entry.stderr


def test_the_watch_fails_closed_for_a_process_that_is_gone() -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    watch = InputWaitWatch(gone.pid, quiet_s=0.0)
    assert process_tree(gone.pid) == {}
    assert watch.observe(0.0, 0) is None and watch.observe(1.0, 0) is None
    assert watch.observe(2.0, 0) is None


def test_the_setting_matches_the_executors_default() -> None:
    """``Settings.shell_input_wait_seconds`` (core cannot import harnesses) has the same
    default as the executor, and refuses a negative wait."""
    from pydantic import ValidationError

    from core.settings import Settings
    from harnesses.shell.interactive import DEFAULT_INPUT_WAIT_S

    assert Settings().shell_input_wait_seconds == DEFAULT_INPUT_WAIT_S
    assert SubprocessShellExecutor(".").input_wait_s == DEFAULT_INPUT_WAIT_S
    with pytest.raises(ValidationError):
        Settings(shell_input_wait_seconds=-1)


# -- red-team finding 9: only waits for terminal input count -----------------------------------

#: Python waits under a pty that end by themselves (a timer): never an input wait.
TIMED_WAITS = {
    "select-timeout": "import select; select.select([0], [], [], 1.5)",
    "select-no-fds": "import select; select.select([], [], [], 1.5)",
    "poll-timeout": "import select; p = select.poll(); p.register(0); p.poll(1500)",
    "epoll-timeout": "import select; e = select.epoll(); e.register(0); e.poll(1.5)",
    "epoll-no-tty": "import select, os; r, w = os.pipe(); e = select.epoll(); "
    "e.register(r); t = os.fork() or (os.close(w), e.poll(-1)); os._exit(0) if t is None else "
    "(__import__('time').sleep(1.5), os.write(w, b'x'), os.waitpid(t, 0))",
}
#: Waits without a timeout whose read set holds the terminal: input waits.
ENDLESS_WAITS = {
    "select": "import select; select.select([0], [], [])",
    "poll": "import select; p = select.poll(); p.register(0); p.poll()",
    "epoll": "import select; e = select.epoll(); e.register(0); e.poll()",
}


@pytest.mark.parametrize("name", list(TIMED_WAITS))
async def test_a_wait_with_a_timeout_under_a_pty_is_not_killed(repo: Path, name: str) -> None:
    script = repo / "timed.py"
    script.write_text(TIMED_WAITS[name] + "\nprint('finished-7731')\n")
    out, err, code, data = await _run(
        _executor(repo, "off", input_wait_s=0.4), _in_pty(SANDBOX_PYTHON, str(script))
    )
    assert "finished-7731" in out and code == 0, (out, err)
    assert INPUT_WAIT_HINT not in err and "input_wait" not in data


@pytest.mark.parametrize("name", list(ENDLESS_WAITS))
async def test_an_endless_wait_on_the_pty_is_an_input_wait(repo: Path, name: str) -> None:
    script = repo / "endless.py"
    # A loop: pty.spawn may pass the end of its own stdin on as one ^D, which ends one wait.
    script.write_text(f"import os\nwhile True:\n    {ENDLESS_WAITS[name]}; os.read(0, 64)\n")
    _, err, code, data = await _run(
        _executor(repo, "off", input_wait_s=0.4), _in_pty(SANDBOX_PYTHON, str(script))
    )
    assert INPUT_WAIT_HINT in err and code != 0
    assert isinstance(data["input_wait"], dict)
