"""Attack class: a sandboxed command reads the user's secrets or Tandem's own.

A fake home (outside ``/tmp``, which the sandbox replaces anyway) holds every default secret
path with a unique token inside, Tandem's settings file holds an API key, and
``$OPENAI_API_KEY`` is set in Tandem's environment. Each case reads them one way under real
bubblewrap; the promise: no token appears in the command's output or in the workspace.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.settings import settings_dir
from harnesses.shell import SubprocessShellExecutor, sandbox_available, sandbox_unavailable_reason
from harnesses.shell.secret_paths import DEFAULT_HOME_SECRETS, plan_hidden, tandem_private_dirs

pytestmark = pytest.mark.skipif(
    not sandbox_available(), reason=f"bubblewrap unusable: {sandbox_unavailable_reason()}"
)

MODES = ["read-only", "workspace-write"]
ENV_KEY = "sk-proj-ENVKEY" + uuid.uuid4().hex
FILE_KEY = "sk-proj-FILEKEY" + uuid.uuid4().hex
_DIR_LIKE = {
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".oci",
    ".config/doctl",
    ".config/hcloud",
    ".password-store",
    ".local/share/keyrings",
    ".pki",
    ".mozilla",
    ".config/chromium",
    ".config/google-chrome",
    ".config/BraveSoftware",
    ".config/sops/age",
    ".config/op",
    ".gemini",
    ".config/github-copilot",
}


@dataclass
class Home:
    root: Path
    workspace: Path
    token: str
    secrets: list[Path]  # files holding the token


def _fill(path: Path, token: str, as_dir: bool) -> Path:
    if as_dir:
        path.mkdir(parents=True, exist_ok=True)
        (path / "credentials").write_text(f"secret = {token}\n")
        return path / "credentials"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"token={token}\n")
    return path


@pytest.fixture(params=["var-tmp", "tmp"], ids=["home-outside-tmp", "home-under-tmp"])
def home(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Home]:
    """A home with every default secret, Tandem's folders in it, and the workspace under it."""
    parent = "/var/tmp" if request.param == "var-tmp" else str(tmp_path)
    root = Path(tempfile.mkdtemp(prefix="tandem-sec-home-", dir=parent))
    try:
        monkeypatch.setenv("HOME", str(root))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(root / ".config"))
        monkeypatch.setenv("XDG_DATA_HOME", str(root / ".local/share"))
        monkeypatch.setenv("XDG_CACHE_HOME", str(root / ".cache"))
        monkeypatch.setenv("XDG_STATE_HOME", str(root / ".local/state"))
        monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
        token = "TANDEM-SECRET-" + uuid.uuid4().hex
        secrets = []
        aws_real = root / "elsewhere" / "aws"  # ~/.aws is a symlink: its target is masked
        for rel in DEFAULT_HOME_SECRETS:
            path = root / rel
            if rel == ".aws":
                secrets.append(_fill(aws_real, token, as_dir=True))
                path.symlink_to(aws_real)
                continue
            secrets.append(_fill(path, token, as_dir=rel in _DIR_LIKE))
        for folder in tandem_private_dirs():
            secrets.append(_fill(folder / "store.sqlite3", token, as_dir=False))
        settings = settings_dir() / "settings.toml"
        settings.write_text(f'api_key = "{FILE_KEY}"\n')
        (root / ".gitconfig").write_text("[user]\n\tname = Visible\n")
        workspace = root / "projects" / "ws"
        workspace.mkdir(parents=True)
        (workspace / "README").write_text("hello\n")
        yield Home(root, workspace, token, secrets)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _leaks(home: Home, *texts: str) -> list[str]:
    found = []
    for secret in (home.token, ENV_KEY, FILE_KEY):
        if any(secret in text for text in texts):
            found.append(secret[:16])
    for dirpath, _dirs, files in os.walk(home.workspace):
        for name in files:
            if (Path(dirpath) / name).is_symlink():
                continue  # the host would follow it; what the command saw is in its output
            data = (Path(dirpath) / name).read_bytes()
            if any(s.encode() in data for s in (home.token, ENV_KEY, FILE_KEY)):
                found.append(f"workspace file {name}")
    return found


async def _run(home: Home, mode: str, *commands: str) -> tuple[str, list[str]]:
    executor = SubprocessShellExecutor(home.workspace, sandbox=mode)  # type: ignore[arg-type]
    result = await executor.run(list(commands), timeout_ms=30_000)
    assert all(o.provider_data and o.provider_data["sandboxed"] for o in result.output)
    text = "".join(o.stdout + o.stderr for o in result.output)
    return text, _leaks(home, text)


def _each(home: Home, template: str) -> str:
    """One shell line applying ``template`` (``{f}`` = a secret file) to every secret."""
    return "; ".join(template.format(f=f, n=i) for i, f in enumerate(home.secrets))


TECHNIQUES = [
    pytest.param("cat {f}", id="cat"),
    pytest.param("cat < {f}", id="cat-redirect"),
    pytest.param(
        "cp {f} ./copy{n} 2>/dev/null || cp {f} /tmp/copy{n}; cat ./copy{n} /tmp/copy{n}",
        id="cp-to-workspace",
    ),
    pytest.param("tar -cf - {f} 2>/dev/null | tar -xOf -", id="tar"),
    pytest.param("find $(dirname {f}) -type f -exec cat {{}} +", id="find-exec-cat"),
    pytest.param("ln -sf {f} /tmp/link{n} && cat /tmp/link{n}", id="symlink-made-by-command"),
    pytest.param("ln -sf {f} ./link{n} && cat ./link{n}", id="symlink-in-workspace"),
    pytest.param("cat /proc/self/root{f}", id="proc-self-root"),
    pytest.param("dd if={f} status=none", id="dd"),
    pytest.param("base64 {f} | base64 -d", id="base64"),
    pytest.param("cd $(dirname {f}) && cat $(basename {f})", id="cd-then-relative"),
    pytest.param("ln {f} ./hard{n} && cat ./hard{n}", id="hardlink"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("technique", TECHNIQUES)
async def test_no_hidden_path_can_be_read(home: Home, mode: str, technique: str) -> None:
    text, leaks = await _run(home, mode, _each(home, technique) + "; true")
    assert leaks == [], text[-2000:]


@pytest.mark.parametrize("mode", MODES)
async def test_python_open_reads_nothing(home: Home, mode: str) -> None:
    files = ", ".join(repr(str(f)) for f in home.secrets)
    script = (
        f"for f in [{files}]:\n    try: print(open(f).read())\n    except OSError as e: print(e)\n"
    )
    text, leaks = await _run(home, mode, f"python3 -c {shlex.quote(script)}")
    assert leaks == [], text[-2000:]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "command",
    [
        pytest.param("grep -r TANDEM-SECRET $HOME", id="grep-r-home"),
        pytest.param("grep -ra sk-proj $HOME /proc/self/root$HOME", id="grep-r-keys"),
        pytest.param("tar -cf - -C $HOME . 2>/dev/null | tar -xOf - 2>/dev/null", id="tar-home"),
        pytest.param("cat $XDG_CONFIG_HOME/tandem/settings.toml", id="settings-file"),
        pytest.param("cat ~/.config/tandem/*", id="settings-glob"),
        pytest.param("cat $HOME/elsewhere/aws/credentials", id="symlink-target-direct"),
        pytest.param("cp -r $HOME/.ssh /tmp/ssh && cat /tmp/ssh/*", id="cp-r-dir"),
    ],
)
async def test_broad_reads_find_nothing(home: Home, mode: str, command: str) -> None:
    text, leaks = await _run(home, mode, command + "; true")
    assert leaks == [], text[-2000:]


@pytest.mark.parametrize("rel", [*DEFAULT_HOME_SECRETS, "tandem-settings"])
async def test_each_default_path_is_hidden(home: Home, rel: str) -> None:
    path = settings_dir() / "settings.toml" if rel == "tandem-settings" else home.root / rel
    text, leaks = await _run(home, "workspace-write", f"cat {path} {path}/* 2>&1; true")
    assert leaks == [], text


async def test_masks_look_empty_not_missing(home: Home) -> None:
    text, _ = await _run(
        home,
        "read-only",
        "test -f ~/.netrc && echo netrc-file $(wc -c < ~/.netrc)",
        "test -d ~/.ssh && echo ssh-dir $(ls -A ~/.ssh | wc -l)",
        "cat ~/.gitconfig",  # git's own config stays readable
    )
    if str(home.root).startswith("/tmp/"):
        assert "Visible" not in text  # the whole home is behind the sandbox's private /tmp
    else:
        assert "netrc-file 0" in text and "ssh-dir 0" in text and "Visible" in text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "command",
    [
        pytest.param("env", id="env"),
        pytest.param("cat /proc/self/environ | tr '\\0' '\\n'", id="self-environ"),
        pytest.param("tr '\\0' '\\n' < /proc/$PPID/environ", id="parent-environ"),
        pytest.param(
            "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done", id="every-environ"
        ),
        pytest.param("cat /proc/1/environ; cat /proc/1/cmdline", id="pid-1"),
        pytest.param("cat /proc/[0-9]*/cmdline | tr '\\0' ' '", id="every-cmdline"),
        pytest.param("sh -c 'echo $OPENAI_API_KEY'", id="child-shell"),
    ],
)
async def test_no_key_in_any_visible_process(home: Home, mode: str, command: str) -> None:
    text, leaks = await _run(home, mode, command)
    assert leaks == [], text[-2000:]


async def test_tandem_processes_are_not_visible(home: Home) -> None:
    text, _ = await _run(
        home,
        "workspace-write",
        "for p in /proc/[0-9]*; do echo \"${p#/proc/}: $(tr '\\0' ' ' < $p/cmdline)\"; done",
    )
    lines = text.strip().splitlines()
    assert 1 <= len(lines) <= 4, lines  # the sandbox's init, the shell, its subshell
    programs = {Path(line.split(": ", 1)[1].split(" ", 1)[0]).name for line in lines}
    assert programs <= {"bwrap", "bash", "tr"}, lines  # no Tandem (python) process


async def test_user_adds_a_path_and_takes_a_default_out(home: Home) -> None:
    extra = home.root / "work" / "token.txt"
    extra.parent.mkdir()
    extra.write_text(f"{home.token}\n")
    executor = SubprocessShellExecutor(
        home.workspace,
        sandbox="read-only",
        hidden_paths=[Path("~/work/token.txt")],
        shown_paths=[Path("~/.gnupg")],
    )
    result = await executor.run([f"cat {extra}; true", "cat ~/.gnupg/credentials"])
    added, shown = result.output
    if str(home.root).startswith("/tmp/"):
        return  # everything under /tmp is replaced by the sandbox's own
    assert home.token not in added.stdout
    assert home.token in shown.stdout  # taken back out by the user: readable again


#: The red-team's files that were readable by default (hole 8), in their real shapes.
RED_TEAM_FILES = {
    "bashrc-export": (".bashrc", "export OPENAI_API_KEY={t}\n"),
    "claude-credentials": (".claude/.credentials.json", '{{"claudeAiOauth": "{t}"}}'),
    "copilot-hosts": (".config/github-copilot/hosts.json", '{{"github.com": "{t}"}}'),
    "sops-age-key": (".config/sops/age/keys.txt", "AGE-SECRET-KEY-{t}\n"),
    "pgpass": (".pgpass", "db:5432:*:app:{t}\n"),
    "fish-history": (".local/share/fish/fish_history", "- cmd: export TOKEN={t}\n"),
    "zshrc": (".zshrc", "export GITHUB_TOKEN={t}\n"),
    "profile": (".profile", "export AWS_SECRET_ACCESS_KEY={t}\n"),
    "my-cnf": (".my.cnf", "[client]\npassword={t}\n"),
    "gemini-oauth": (".gemini/oauth_creds.json", '{{"access_token": "{t}"}}'),
    "containers-auth": (".config/containers/auth.json", '{{"auths": "{t}"}}'),
    "maven-settings": (".m2/settings.xml", "<password>{t}</password>"),
    "gradle-properties": (".gradle/gradle.properties", "signing.password={t}\n"),
    "terraformrc": (".terraformrc", 'credentials "app.terraform.io" {{ token = "{t}" }}'),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", list(RED_TEAM_FILES), ids=list(RED_TEAM_FILES))
async def test_red_team_defaults_are_hidden(home: Home, mode: str, case: str) -> None:
    rel, text = RED_TEAM_FILES[case]
    path = home.root / rel
    if path.is_dir():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.format(t=home.token))
    out, leaks = await _run(home, mode, f"cat {path} 2>&1; grep -r {home.token} ~ 2>&1; true")
    assert leaks == [], out[-2000:]


def test_plan_skips_paths_that_hold_the_workspace(home: Home) -> None:
    in_ssh = plan_hidden(home.root / ".ssh" / "proj")
    assert [p for p, _ in in_ssh.skipped] == [home.root / ".ssh"]
    plan = plan_hidden(home.workspace, extra=[home.root / "projects", Path("/")])
    hidden = {h.path for h in plan.hidden}
    assert home.root / "projects" not in hidden and Path("/") not in hidden
    assert {p for p, _ in plan.skipped} == {home.root / "projects", Path("/")}
    assert home.root / ".aws" in hidden and home.root / ".ssh" in hidden
    assert next(h for h in plan.hidden if h.path == home.root / ".aws").target == Path(
        os.path.realpath(home.root / ".aws")
    )
