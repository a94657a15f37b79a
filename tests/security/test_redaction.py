"""Attack class: secrets leaking into what Tandem stores or prints (issue 11, "Redaction").

Ten secrets are planted in their usual shapes: the environment key, the settings file's key, a
6-character gateway key in a secret-named variable, a TOML ``api_key = "..."`` line, a
``.env`` line, a YAML ``token:``, an ``Authorization: Bearer`` header, an ``sk-proj-`` key, an
MCP server's token (its URL password in the settings) and a PEM private key, plus a password
URL. The model (the real ``openai`` client against the local Responses server) puts them in
its tool arguments and makes the tools print them; the promise is that none of them appears
in the journal file's bytes, the logs, ``tandem run``'s output, error messages or a crash
traceback.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core import Agent, function_tool
from core.redaction import install_log_redaction, register_environment
from tests.support import items

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the window test runs the controller

ENV_KEY = "sk-envKEYRk28dn3Lq0Zt"
SETTINGS_KEY = "stored-Key-88xQv"
SHORT_GATEWAY = "gw7Q2x"
TOML_VALUE = "tomlVal-19Xc"
DOTENV_VALUE = "dotenvPw-55k"
YAML_VALUE = "yamlTok-771r"
BEARER_VALUE = "bearTok-93zQ"
SK_PROJ = "sk-proj-Pj7Hq2Zs9Kd4Lm1Nx8"
MCP_TOKEN = "mcpTok-5521ab"
PEM_BODY = "MIIEowIBAAKCAQEAx9Fq3Secret"
URL_PASSWORD = "urlPw-6617q"

SECRETS = {
    "env-key": ENV_KEY,
    "settings-key": SETTINGS_KEY,
    "short-gateway-key": SHORT_GATEWAY,
    "toml-api-key": TOML_VALUE,
    "dotenv-line": DOTENV_VALUE,
    "yaml-token": YAML_VALUE,
    "authorization-bearer": BEARER_VALUE,
    "sk-proj": SK_PROJ,
    "mcp-token": MCP_TOKEN,
    "pem-private-key": PEM_BODY,
    "password-url": URL_PASSWORD,
}

LEAKY_FILE = f"""\
# config.toml
api_key = "{TOML_VALUE}"
# .env
DATABASE_PASSWORD={DOTENV_VALUE}
# deploy.yaml
  token: {YAML_VALUE}
curl -H "Authorization: Bearer {BEARER_VALUE}" https://api.example.invalid
OPENAI_KEY_BACKUP {SK_PROJ}
-----BEGIN RSA PRIVATE KEY-----
{PEM_BODY}
-----END RSA PRIVATE KEY-----
postgres://app:{URL_PASSWORD}@db.internal/app
"""
BARE = f"{ENV_KEY} {SETTINGS_KEY} {SHORT_GATEWAY} {MCP_TOKEN}"

_CASES = [pytest.param(value, id=name) for name, value in SECRETS.items()]


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "leaky.txt").write_text(LEAKY_FILE)
    return repo


def _settings_file(config_home: Path) -> None:
    folder = config_home / "tandem"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.toml").write_text(
        f'api_key = "{SETTINGS_KEY}"\n\n[[mcp_servers]]\nlabel = "wiki"\n'
        f'url = "https://tandem:{MCP_TOKEN}@mcp.example.invalid/mcp"\n'
    )
    os.chmod(folder / "settings.toml", 0o600)


def _script(server: Any) -> None:
    """The hostile model: secrets in its shell arguments, tools that print them, an answer
    that repeats them."""
    server.enqueue([items.shell_call(["cat leaky.txt", f"echo {BARE}"], call_id="c_leak")])
    server.enqueue([items.message(f"Found: {BARE} {SK_PROJ} Bearer {BEARER_VALUE}")])


def _run_cli(tmp_path: Path, server: Any, repo: Path) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": ENV_KEY,
        "GATEWAY_TOKEN": SHORT_GATEWAY,
    }
    _settings_file(home / ".config")
    return subprocess.run(
        [
            *(sys.executable, "-m", "desktop.cli", "run", "look around", "--repo", str(repo)),
            *("--mode", "auto", "--model", "m", "--base-url", server.base_url),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Any]:
    """One real ``tandem run`` (a subprocess, the console entry point) against the server."""
    from tests.support.responses_server import ResponsesServer

    tmp_path = tmp_path_factory.mktemp("cli")
    with ResponsesServer() as server:
        _script(server)
        proc = _run_cli(tmp_path, server, _repo(tmp_path))
        requests = list(server.requests)
    return proc.stdout, proc.stderr, requests


def test_tandem_run_really_ran_the_leaky_commands(cli_run: tuple[str, str, Any]) -> None:
    stdout, stderr, requests = cli_run
    assert "$ cat leaky.txt" in stdout, stderr
    assert "-----BEGIN RSA PRIVATE KEY-----" not in stdout  # the block went as a whole
    assert "[REDACTED]" in stdout and "Found:" in stdout
    assert requests[0].headers.get("authorization") == f"Bearer {ENV_KEY}"  # the key in use


@pytest.mark.parametrize("secret", _CASES)
def test_tandem_run_output_holds_no_secret(cli_run: tuple[str, str, Any], secret: str) -> None:
    stdout, stderr, _ = cli_run
    assert secret not in stdout
    assert secret not in stderr


def test_model_service_error_echoing_the_key_is_redacted(
    tmp_path: Path, responses_server: Any
) -> None:
    responses_server.enqueue_error(
        status=401, message=f"Incorrect API key provided: {ENV_KEY} (gateway {SHORT_GATEWAY})"
    )
    proc = _run_cli(tmp_path, responses_server, _repo(tmp_path))
    assert proc.returncode != 0
    assert "401" in proc.stderr
    assert ENV_KEY not in proc.stderr + proc.stdout
    assert SHORT_GATEWAY not in proc.stderr + proc.stdout


# -- the window's path: controller -> journal, and the logs ------------------------------------


async def _until(predicate: Any, timeout: float = 60.0) -> None:
    async def wait() -> None:
        while not predicate():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(wait(), timeout)


@pytest.fixture
def _gc_on_the_main_thread() -> Any:
    """As in tests/desktop: automatic GC in a worker thread could destroy Qt objects there."""
    gc.disable()
    yield
    gc.collect()


@pytest.mark.usefixtures("_gc_on_the_main_thread")
async def test_journal_and_logs_hold_no_secret(
    tmp_path: Path, responses_server: Any, model: Any, qtbot: Any, caplog: Any
) -> None:
    """The controller journals a run whose model leaks every secret and whose tool raises
    with secrets in its message; the journal's raw bytes (file, WAL) and the logs hold none."""
    from core.settings import load_settings
    from desktop.controller import Controller
    from harnesses.sessions import SessionJournal
    from harnesses.workspace import Workspace

    install_log_redaction()  # what desktop/app.py and the CLI do at start-up
    register_environment({"OPENAI_API_KEY": ENV_KEY, "GATEWAY_TOKEN": SHORT_GATEWAY})
    _settings_file(Path(os.environ["XDG_CONFIG_HOME"]))
    load_settings()
    repo = _repo(tmp_path)

    @function_tool
    def deploy(target: str) -> str:
        """Deploy to ``target``."""
        logging.getLogger("harnesses.deploy").warning("deploying with %s", target)
        raise RuntimeError(f"deploy failed: token={YAML_VALUE} key {ENV_KEY}")

    def factory(ws: Workspace) -> Agent[Any]:
        return Agent(name="Tandem", model=model, tools=[*ws.tools(), deploy])

    journal = SessionJournal(tmp_path / "journal.sqlite3")
    workspace = Workspace(repo, mode="auto", data_dir=tmp_path / ".data")
    session = journal.create_session(repo, f"fix {SK_PROJ}")
    controller = Controller(workspace, factory, journal=journal, session_id=session)
    responses_server.enqueue(
        [
            items.shell_call(["cat leaky.txt", f"echo {BARE}"], call_id="c_leak"),
            items.function_call("deploy", {"target": f"prod {MCP_TOKEN} {SETTINGS_KEY}"}, "c_d"),
        ]
    )
    responses_server.enqueue([items.message(f"Found: {BARE} {LEAKY_FILE}")])
    with caplog.at_level(logging.DEBUG):
        controller.submit(f"use {ENV_KEY} and {SHORT_GATEWAY}")
        await _until(lambda: not controller.is_running)
        await controller.shutdown()
    journal.flush()
    kinds = [e.kind for e in journal.events(session)]
    assert "user_message" in kinds and "run_finished" in kinds  # the run was journaled
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("journal.sqlite3*"))
    journal.close()
    raw += b"".join(p.read_bytes() for p in tmp_path.glob("journal.sqlite3*"))
    logs = caplog.text + "".join(str(r.__dict__) for r in caplog.records)
    assert b"[REDACTED]" in raw and "deploying with" in logs
    sent = "".join(r.raw.decode(errors="replace") for r in responses_server.requests)
    assert "deploy failed" in sent  # the tool really raised, and the model was told
    leaked = {
        name: ("journal" if value.encode() in raw else "", "logs" if value in logs else "")
        for name, value in SECRETS.items()
        if value.encode() in raw or value in logs
    }
    assert leaked == {}
