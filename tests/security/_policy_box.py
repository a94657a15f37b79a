"""A real workspace, a fake home full of secrets, and a gate that runs a line only if the policy allows it."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from core.policy import Decision, decide_command

__all__ = ["ASKING_MODES", "MARKER", "SECRET", "Box", "make_box"]

SECRET = "sk-proj-TANDEMTESTSECRET0123456789"
MARKER = "OUTSIDE-MARKER-7f3a"
ASKING_MODES = ("ask", "read-only")
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


@dataclass(frozen=True, slots=True)
class Box:
    """One attack's world: ``root`` (a git repo), ``home`` (secrets), ``outside`` (a
    folder beside the workspace holding ``target.txt`` with :data:`MARKER`)."""

    root: Path
    home: Path
    outside: Path

    @property
    def env(self) -> dict[str, str]:
        """The environment the commands run with (and the policy expands with)."""
        return {"HOME": str(self.home), "PATH": os.environ["PATH"], **_GIT_ENV}

    def fill(self, template: str) -> str:
        """``template`` with ``{home}``, ``{home_rel}`` (no leading slash), ``{outside}``
        and ``{outside_rel}`` replaced by this box's paths."""
        for name, path in (("home", self.home), ("outside", self.outside)):
            template = template.replace(f"{{{name}_rel}}", str(path).lstrip("/"))
            template = template.replace(f"{{{name}}}", str(path))
        return template

    def decide(self, line: str, mode: str) -> Decision:
        """The policy's verdict on ``line`` in ``mode``, no sandbox (the worst case)."""
        return decide_command(
            line,
            mode,
            sandbox_available=False,
            workspace=self.root,
            env={"HOME": str(self.home)},
        )

    def run(self, line: str) -> str:
        """Run ``line`` with bash in the workspace, unjudged; stdout + stderr."""
        done = subprocess.run(
            ["bash", "-c", line],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=20,
            stdin=subprocess.DEVNULL,
        )
        return done.stdout + done.stderr

    def gate(self, line: str, mode: str) -> str:
        """Run ``line`` only if the policy lets it run without a prompt (what the agent gets)."""
        decision = self.decide(line, mode)
        return self.run(line) if decision.action == "allow" else ""

    def git(self, *args: str) -> None:
        """Run git in the workspace (test set-up only)."""
        subprocess.run(["git", *args], cwd=self.root, env=self.env, check=True, capture_output=True)


def make_box(tmp_path: Path) -> Box:
    """Build the workspace (committed ``README.md``, ``src/main.py``, ``data.json``) and a
    home with ``~/.ssh/id_rsa``, ``~/.config/tandem/settings.toml``, ``~/.aws/credentials``,
    ``~/.config/gh/hosts.yml``, ``~/.netrc`` and ``~/.git-credentials``, all holding
    :data:`SECRET`."""
    root, home, outside = tmp_path / "ws", tmp_path / "home", tmp_path / "outside"
    for folder in (root / "src", home, outside):
        folder.mkdir(parents=True)
    (root / "README.md").write_text("hello foo\n")
    (root / "src" / "main.py").write_text("print('foo')\n")
    (root / "data.json").write_text('{"a": 1}\n')
    (outside / "target.txt").write_text(MARKER + "\n")
    secrets = {
        ".ssh/id_rsa": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n",
        ".config/tandem/settings.toml": f'api_key = "{SECRET}"\n',
        ".aws/credentials": f"[default]\naws_secret_access_key = {SECRET}\n",
        ".config/gh/hosts.yml": f"github.com:\n  oauth_token: {SECRET}\n",
        ".netrc": f"machine example.com login u password {SECRET}\n",
        ".git-credentials": f"https://u:{SECRET}@example.com\n",
    }
    for name, text in secrets.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    box = Box(root, home, outside)
    box.git("init", "-q", "-b", "main")
    box.git("add", "-A")
    box.git("commit", "-qm", "init")
    return box
