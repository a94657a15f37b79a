"""Attack class: secret reads when the workspace contains the secrets (a home-folder workspace).

The user opened their home folder, so ``~/.ssh/id_rsa`` is "inside the workspace". In *ask*
and *read-only* modes a command a built-in read-only rule allows runs unsandboxed, so the
policy itself must keep the sandbox's secret paths (``~/.ssh``, ``~/.aws``, credential stores
under ``~/.config``, Tandem's settings) out of those rules' reach. Each case is a spelling
that reads a secret there; first it runs unjudged, to prove it really prints the secret (where
it does), then the promise: the policy asks, names the secret, and the gated run prints
nothing.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from core.policy import Decision, decide_command
from core.settings import settings_dir
from harnesses.shell.secret_paths import plan_hidden
from harnesses.workspace import Workspace
from tests.security._policy_box import ASKING_MODES, SECRET

_SECRETS = {
    ".ssh/id_rsa": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n",
    ".aws/credentials": f"[default]\naws_secret_access_key = {SECRET}\n",
    ".config/gh/hosts.yml": f"github.com:\n  oauth_token: {SECRET}\n",
    ".config/tandem/settings.toml": f'api_key = "{SECRET}"\n',
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home folder that is also the workspace, with secrets and a small project."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for name, text in _SECRETS.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert settings_dir() == home / ".config" / "tandem"
    (home / "src").mkdir()
    (home / "src" / "main.py").write_text("print('foo')\n")
    (home / "README.md").write_text("hello foo\n")
    (home / ".env").write_text("DEBUG=1\n")  # the project's own file, not a user secret
    return home


def _secrets(home: Path) -> list[Path]:
    """What the sandbox hides for this workspace (the list the policy is given)."""
    return [h.path for h in plan_hidden(home, home=home).hidden]


def _decide(line: str, mode: str, home: Path, workspace: Path | None = None) -> Decision:
    return decide_command(
        line,
        mode,
        sandbox_available=False,
        workspace=workspace or home,
        env={"HOME": str(home)},
        secret_paths=_secrets(home),
    )


def _run(line: str, home: Path) -> str:
    done = subprocess.run(
        ["bash", "-c", line],
        cwd=home,
        env={"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"},
        capture_output=True,
        text=True,
        timeout=20,
        stdin=subprocess.DEVNULL,
    )
    return done.stdout + done.stderr


# (line, whether the unjudged run prints the secret, the hidden path the reason names)
READS = [
    pytest.param("cat ~/.ssh/id_rsa", True, "~/.ssh", id="tilde"),
    pytest.param("cat $HOME/.ssh/id_rsa", True, "~/.ssh", id="dollar-home"),
    pytest.param("cat .ssh/id_rsa", True, "~/.ssh", id="relative"),
    pytest.param("cat ./.ssh/../.ssh/id_rsa", True, "~/.ssh", id="dotdot-back-in"),
    pytest.param("cd .ssh && cat id_rsa", True, "~/.ssh", id="cd-into-secret"),
    pytest.param("cd ~/.ssh; ls", False, "~/.ssh", id="cd-then-list"),
    pytest.param("cat < .aws/credentials", True, "~/.aws", id="input-redirect"),
    pytest.param("wc -c 0<.aws/credentials", False, "~/.aws", id="fd0-redirect"),
    pytest.param("grep -r token .", True, "~/.", id="grep-recursive-dot"),
    pytest.param("grep -r token ~", True, "~/.", id="grep-recursive-home"),
    pytest.param("grep -r token", True, "~/.", id="grep-recursive-no-operand"),
    pytest.param("grep --recursive token .config", True, "~/.config", id="grep-long-recursive"),
    pytest.param("grep -d recurse token .", True, "~/.", id="grep-directories-recurse"),
    pytest.param("grep -r oauth .c*", True, "~/.config", id="grep-recursive-glob"),
    pytest.param("head -c 100 ./.config/gh/hosts.yml", True, "~/.config/gh/hosts.yml",
                 id="head-dot-slash"),
    pytest.param("cat .config/tandem/settings.toml", True, "~/.config/tandem",
                 id="tandem-settings"),
    pytest.param("cat .ss*/id_rsa", True, "~/.ssh", id="glob-in-dir-name"),
    pytest.param("cat .aws/*", True, "~/.aws", id="glob-in-secret-dir"),
    pytest.param("ls .ssh", False, "~/.ssh", id="list-secret-dir"),
    pytest.param("ls -R", False, "~/.", id="ls-recursive"),
    pytest.param("ls -a --recursive .config", False, "~/.config", id="ls-long-recursive"),
    pytest.param("find . -name 'id_*'", False, "~/.", id="find-names"),
    pytest.param("find -type f", False, "~/.", id="find-no-start"),
    pytest.param("du -a", False, "~/.", id="du"),
    pytest.param("tree -a", False, "~/.", id="tree"),
    pytest.param("rg --hidden token", False, "~/.", id="rg-hidden"),
    pytest.param("git -C .ssh log", False, "~/.ssh", id="git-C-secret"),
    pytest.param("git -C ~/.ssh status", False, "~/.ssh", id="git-C-tilde-secret"),
    pytest.param("env -C .ssh cat id_rsa", True, "~/.ssh", id="env-chdir-secret"),
    pytest.param("timeout 5 cat .ssh/id_rsa", True, "~/.ssh", id="timeout-wrapper"),
    pytest.param("bash -c 'cat .ssh/id_rsa'", True, "~/.ssh", id="bash-c"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "prints", "shown"), READS)
def test_secret_read_in_a_home_workspace_asks(home: Path, line: str, prints: bool, shown: str):
    if prints:
        assert SECRET in _run(line, home), "the spelling must really read the secret"
    for mode in ASKING_MODES:
        decision = _decide(line, mode, home)
        assert decision.action == "ask", (mode, decision.reason)
        assert "reads a hidden secret path (" + shown in decision.reason, decision.reason


# Lines that already asked for another reason; they must keep asking.
OTHER_ASKS = [
    pytest.param("find . -name 'id_*' -exec cat {} +", id="find-exec"),
    pytest.param("git --git-dir=.ssh log", id="git-dir-option"),
    pytest.param("git --work-tree=.ssh status", id="git-work-tree-option"),
    pytest.param("cat .ssh/id_rsa > copy.txt", id="output-redirect"),
]


@pytest.mark.parametrize("line", OTHER_ASKS)
def test_other_techniques_still_ask(home: Path, line: str):
    for mode in ASKING_MODES:
        assert _decide(line, mode, home).action != "allow", mode


@pytest.mark.parametrize(
    "line", ["cat link/id_rsa", "cat link/*", "cd link && cat id_rsa", "grep -r sk-proj link"]
)
def test_symlink_in_the_workspace_to_a_secret_asks(home: Path, line: str):
    (home / "link").symlink_to(home / ".ssh")
    assert SECRET in _run(line, home)
    for mode in ASKING_MODES:
        decision = _decide(line, mode, home)
        assert decision.action == "ask", (mode, decision.reason)
        assert "hidden secret path (~/.ssh)" in decision.reason


def test_symlinked_secret_file_is_caught_by_its_real_path(home: Path):
    (home / "src" / "key.txt").symlink_to(home / ".ssh" / "id_rsa")
    for line in ("cat src/key.txt", "cat src/*.txt", "head src/k*"):
        assert SECRET in _run(line, home)
        decision = _decide(line, "ask", home)
        assert decision.action == "ask", (line, decision.reason)
    # `grep -r` does not follow links below its operands: allowed, and the secret stays out
    line = "grep -r sk-proj src"
    assert _decide(line, "ask", home).action == "allow"
    assert SECRET not in _run(line, home)


@pytest.mark.parametrize(
    "line",
    ["ls", "ls -la", "ls ~", "ls src", "cat README.md", "cat .env", "grep -rn foo src",
     "find src -name '*.py'", "du -s src", "cat ~/README.md", "wc -l src/main.py"],
)  # fmt: skip
def test_project_reads_in_a_home_workspace_run(home: Path, line: str):
    """Ordinary reads that walk no secret still run without a prompt."""
    for mode in ASKING_MODES:
        decision = _decide(line, mode, home)
        assert decision.action == "allow", (mode, decision.reason)


@pytest.mark.parametrize(
    "line",
    ["cat README.md", "grep -rn foo src", "grep -r foo .", "ls", "ls -R", "find .", "du",
     "rg foo", "tree"],
)  # fmt: skip
def test_project_reads_without_secrets_in_the_workspace_run(home: Path, tmp_path: Path, line: str):
    """A workspace beside the home folder holds no secret: recursive reads stay allowed."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "README.md").write_text("hello foo\n")
    (project / "src" / "main.py").write_text("print('foo')\n")
    for mode in ASKING_MODES:
        decision = _decide(line, mode, home, workspace=project)
        assert decision.action == "allow", (mode, decision.reason)


def test_secret_path_containing_the_workspace_is_ignored(home: Path):
    """A workspace inside a secret folder cannot be hidden from itself (as in the sandbox)."""
    inner = home / ".aws" / "project"
    inner.mkdir()
    (inner / "notes.txt").write_text("x\n")
    decision = decide_command(
        "cat notes.txt",
        "ask",
        sandbox_available=False,
        workspace=inner,
        env={"HOME": str(home)},
        secret_paths=[home / ".aws", "~/.ssh"],
    )
    assert decision.action == "allow", decision.reason


def test_tilde_entries_expand_with_home(home: Path):
    decision = decide_command(
        "cat .ssh/id_rsa",
        "ask",
        sandbox_available=False,
        workspace=home,
        env={"HOME": str(home)},
        secret_paths=["~/.ssh"],
    )
    assert decision.action == "ask"
    assert "hidden secret path (~/.ssh)" in decision.reason


def test_full_and_sandboxed_auto_are_not_judged(home: Path):
    """Full access reads freely (PRODUCT.md); auto with a sandbox hides the secrets itself."""
    secrets = _secrets(home)
    full = decide_command(
        "cat .ssh/id_rsa", "full", sandbox_available=False, workspace=home, secret_paths=secrets
    )
    auto = decide_command(
        "cat .ssh/id_rsa", "auto", sandbox_available=True, workspace=home, secret_paths=secrets
    )
    assert full.action == "allow" and auto.action == "allow"
    assert auto.sandbox == "workspace-write"


def test_workspace_passes_the_sandbox_list(home: Path, tmp_path: Path):
    workspace = Workspace(home, mode="ask", sandbox_enabled=False, data_dir=tmp_path / "data")
    assert home / ".ssh" in workspace.secret_paths()
    for line in ("cat ~/.ssh/id_rsa", "grep -r token .", "cat < .aws/credentials"):
        decision = workspace.decide_commands([line])
        assert decision.action == "ask", (line, decision.reason)
        assert "reads a hidden secret path (~/." in decision.reason
    assert workspace.decide_commands(["ls", "cat README.md"]).action == "allow"
    assert workspace.decide_commands(["cat README.md", "cat .ssh/id_rsa"]).action == "ask"

    # the user's own additions and removals (Settings.sandbox_hidden_paths / _shown_paths)
    (home / "notes").mkdir()
    (home / "notes" / "private.txt").write_text(SECRET)
    assert workspace.decide_commands(["cat notes/private.txt"]).action == "allow"
    workspace.set_sandbox_paths([Path("~/notes")], [Path("~/.aws")])
    decision = workspace.decide_commands(["cat notes/private.txt"])
    assert decision.action == "ask" and "(~/notes)" in decision.reason
    assert workspace.decide_commands(["cat .aws/credentials"]).action == "allow"
    # Tandem's own folders cannot be taken back out
    workspace.set_sandbox_paths([], [Path("~/.config/tandem")])
    assert workspace.decide_commands(["cat .config/tandem/settings.toml"]).action == "ask"
