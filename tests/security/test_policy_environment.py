"""Attack class: shell-behaviour variables in Tandem's environment (red-team hole 5).

Tandem is started from the user's shell, whose environment can hold variables that change
what a ``bash -c`` line does without appearing in it: ``CDPATH`` (``cd .ssh`` lands in
``~/.ssh``), ``OLDPWD`` (``cd -``), ``BASH_ENV`` (a file sourced before every line),
exported functions (``BASH_FUNC_echo%%`` replaces ``echo``), ``SHELLOPTS``… The policy
reads the line as written, so it judged ``cd .ssh && cat id_rsa`` harmless while the
command printed the key.

Promise: no command gets those variables (``build_env`` drops them), and the policy judges
every command with the exact environment the executor gives it: a line the policy allows
in *ask* mode without a prompt, run by the real executor, prints no secret.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harnesses.shell import SubprocessShellExecutor
from harnesses.shell.environment import SHELL_BEHAVIOUR, build_env
from harnesses.workspace import Workspace

SECRET = "sk-proj-TANDEMENVSECRET0123456789"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home holding ``~/.ssh/id_rsa`` with :data:`SECRET`, set as ``HOME``."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return home


@pytest.fixture
def ws(tmp_path: Path, home: Path) -> Path:
    """A git repository with one commit (``README.md``)."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "README.md").write_text("hello\n")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


def _plain_bash(line: str, cwd: Path) -> str:
    """``line`` run by bash with Tandem's own environment, unfiltered (proves the trick)."""
    done = subprocess.run(
        ["bash", "-c", line], cwd=cwd, capture_output=True, text=True, timeout=20,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return done.stdout + done.stderr


async def _executor_output(ws: Path, line: str) -> str:
    result = await SubprocessShellExecutor(ws, sandbox="off").run([line])
    return "".join(o.stdout + o.stderr for o in result.output)


async def _gate(workspace: Workspace, line: str) -> str:
    """Run ``line`` through the workspace's executor only if its policy allows it without a
    prompt (what the agent gets in *ask* mode)."""
    decision = workspace.decide_commands([line])
    if decision.action != "allow":
        return ""
    workspace.executor.sandbox = "off"
    result = await workspace.executor.run([line])
    return "".join(o.stdout + o.stderr for o in result.output)


def _workspace(ws: Path, tmp_path: Path) -> Workspace:
    return Workspace(ws, mode="ask", sandbox_enabled=False, data_dir=tmp_path / "data")


# -- the red-team reproducer ---------------------------------------------------------------


async def test_cdpath_reproducer_through_the_workspace(
    ws: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CDPATH=.:$HOME`` in Tandem's environment, ask mode, sandbox off."""
    monkeypatch.setenv("CDPATH", f".:{home}")
    line = "cd .ssh && cat id_rsa"
    assert SECRET in _plain_bash(line, ws), "CDPATH must really reach the key"
    assert SECRET not in await _gate(_workspace(ws, tmp_path), line)


async def test_cdpath_reproducer_through_the_real_executor(
    ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CDPATH", f".:{home}")
    for line in ("cd .ssh && cat id_rsa", "cd .ssh; cat id_rsa", "pushd .ssh && cat id_rsa"):
        assert SECRET in _plain_bash(line, ws), line
        assert SECRET not in await _executor_output(ws, line), line


# -- other variables of the same kind ---------------------------------------------------------


async def test_oldpwd_cd_dash_does_not_reach_the_key(
    ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLDPWD", str(home / ".ssh"))
    line = "cd - >/dev/null && cat id_rsa"
    assert SECRET in _plain_bash(line, ws)
    assert SECRET not in await _executor_output(ws, line)


async def test_bash_env_is_not_sourced_before_a_harmless_line(
    ws: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rc = tmp_path / "rc.sh"
    rc.write_text(f"cat {home / '.ssh' / 'id_rsa'}\n")
    monkeypatch.setenv("BASH_ENV", str(rc))
    assert SECRET in _plain_bash("echo hi", ws)
    assert SECRET not in await _gate(_workspace(ws, tmp_path), "echo hi")
    assert SECRET not in await _executor_output(ws, "echo hi")


async def test_exported_function_does_not_replace_a_builtin(
    ws: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BASH_FUNC_echo%%", f"() {{ cat {home / '.ssh' / 'id_rsa'}; }}")
    assert SECRET in _plain_bash("echo hi", ws)
    assert SECRET not in await _gate(_workspace(ws, tmp_path), "echo hi")


async def test_no_shell_behaviour_variable_reaches_a_command(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every listed name, planted with a unique value, is absent from the command's ``env``
    (``PWD`` is bash's own, set to the working directory)."""
    planted = {name: f"planted-{name.lower()}" for name in SHELL_BEHAVIOUR}
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    out = await _executor_output(ws, "env")
    leaked = sorted(name for name, value in planted.items() if value in out)
    assert leaked == []
    assert f"PWD={ws}" in out


def test_extra_variables_cannot_bring_them_back() -> None:
    env = build_env(
        {"PATH": "/bin", "CDPATH": "/x"}, extra={"BASH_ENV": "/x", "IFS": "/", "TERM": "xterm"}
    )
    assert not {"CDPATH", "BASH_ENV", "IFS"} & set(env)
    assert env["TERM"] == "xterm" and env["PATH"] == "/bin"


# -- the policy sees what the command gets ----------------------------------------------------


async def test_policy_expands_with_the_executors_environment(
    ws: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The executor's own ``env`` (here ``HOME``) is what the policy expands ``~`` with:
    Tandem's ``HOME`` is the workspace, the command's is the home holding the key."""
    monkeypatch.setenv("HOME", str(ws))
    (home / "notes.txt").write_text(SECRET + "\n")
    (ws / "notes.txt").write_text("workspace notes\n")
    workspace = _workspace(ws, tmp_path)
    workspace.executor.env = {"HOME": str(home)}
    line = "cat ~/notes.txt"
    result = await workspace.executor.run([line])
    assert SECRET in result.output[0].stdout, "the command must really read the home file"
    assert SECRET not in await _gate(workspace, line)


async def test_known_variables_still_resolve(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain variable from Tandem's environment is expanded, not guessed: a path inside
    the workspace is allowed, one outside asks."""
    monkeypatch.setenv("PROJECT_NOTES", str(ws / "README.md"))
    monkeypatch.setenv("ELSEWHERE", str(tmp_path / "home" / ".ssh" / "id_rsa"))
    workspace = _workspace(ws, tmp_path)
    assert workspace.decide_commands(["cat $PROJECT_NOTES"]).action == "allow"
    assert workspace.decide_commands(["cat $ELSEWHERE"]).action == "ask"
