"""Attack class: reading the API key from an ancestor's environment, and surviving Tandem.

With the sandbox off (``--no-sandbox``) or in full mode, a command could read
``/proc/<pid>/environ`` of every process it can see. ``tandem run`` is launched as a real
subprocess with ``OPENAI_API_KEY`` (and a ``GH_TOKEN``) in *its* environment, or in the
environment of a ``bash`` *above* it (``bash -c 'tandem run ...'``: red-team hole 7, which a
re-exec cannot clean); its command walks ``/proc/$PPID/environ`` up to pid 1, and reads every
``/proc/*/environ`` it can see. The promise: no secret value appears (and the key still reached
the model client, through the start-up hand-over). Where Tandem can create namespaces, the
command runs in a PID namespace with a fresh ``/proc`` (``harnesses/spawn/supervisor.py``): no
process outside it is visible. Then: a SIGKILL of ``tandem run`` mid-command leaves no process
of the command alive within 2 s.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from harnesses.shell import SubprocessShellExecutor, is_secret
from harnesses.spawn import ISOLATION_ENV, can_isolate
from tests.security._procs import alive_with, marker_seconds, poll
from tests.support import items

ROOT = Path(__file__).resolve().parents[2]
TANDEM_SCRIPT = Path(sys.executable).with_name("tandem")

#: Prints the environment of the shell and of every ancestor up to pid 1 (included: in a PID
#: namespace, that is the namespace's init). ``test``, not ``[``: the policy asks for ``[``.
WALK_ANCESTORS = (
    'p=$$; while test "$p" -gt 0; do echo "== pid $p"; tr "\\0" "\\n" < /proc/$p/environ; '
    "p=$(awk '/^PPid:/{print $2}' /proc/$p/status); done"
)
#: Prints the environment of every process visible in ``/proc``.
WALK_ALL = 'for f in /proc/[0-9]*/environ; do echo "== $f"; tr "\\0" "\\n" < "$f"; done'
#: Where the probes write what they read (the workspace): Tandem's output redaction must not
#: be what hides a secret, so the tests read this file, which nothing redacts.
LEAK_FILE = "leak.txt"


def _to_file(probe: str) -> str:
    """``probe`` with its output written to :data:`LEAK_FILE` in the workspace."""
    return f"{{ {probe}; }} > {LEAK_FILE} 2>&1"


def _leaked(tmp_path: Path) -> str:
    """What the probe wrote (empty when it did not run)."""
    path = tmp_path / "repo" / LEAK_FILE
    return path.read_text(errors="replace") if path.exists() else ""


#: Without a PID namespace (an unprivileged Tandem) hole 7 is a known limit.
NEEDS_NAMESPACE = pytest.mark.skipif(not can_isolate(), reason="no PID namespace: known limit")


def _secrets() -> dict[str, str]:
    tag = uuid.uuid4().hex
    return {"OPENAI_API_KEY": f"sk-proj-{tag}", "GH_TOKEN": f"ghp_{tag[::-1]}"}


def _session(tmp_path: Path, commands: list[str]) -> Path:
    turns = [
        {"output": [{"type": "shell_call", "call_id": "c1", "action": {"commands": commands}}]},
        {"output": [{"type": "message", "content": [{"type": "output_text", "text": "done"}]}]},
    ]
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"turns": turns}))
    return path


def _launch(
    tmp_path: Path,
    how: str,
    args: list[str],
    secrets: dict[str, str],
    *,
    above: int = 0,
    extra_env: dict[str, str] | None = None,
) -> subprocess.Popen[str]:
    """Start ``tandem run probe`` with ``secrets`` in its environment; ``above`` > 0 wraps it
    in that many shells (``bash -c '...; exit $?'``, which forks rather than execs), each
    holding ``secrets`` in its own environment."""
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    inherited = {k: v for k, v in os.environ.items() if not is_secret(k)}  # only ours count
    env = {
        **inherited,
        **secrets,
        "TANDEM_PROBE": "visible",
        "PYTHONPATH": str(ROOT),
        **(extra_env or {}),
    }
    assert not any(name in os.environ for name in secrets)  # pytest itself holds no key
    prefix = (
        [str(TANDEM_SCRIPT)] if how == "console-script" else [sys.executable, "-m", "desktop.cli"]
    )
    argv = [*prefix, "run", "probe", "--repo", str(repo), "--full-output", *args]  # every line read
    for _ in range(above):
        argv = ["bash", "-c", f"{shlex.join(argv)}; exit $?"]
    return subprocess.Popen(
        argv,
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str]) -> str:
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out + err


LAUNCHES = [
    pytest.param("python-m", ["--mode", "full"], id="python-m-full-mode"),
    pytest.param("python-m", ["--mode", "full", "--no-sandbox"], id="python-m-no-sandbox"),
    pytest.param("console-script", ["--mode", "full"], id="console-script-full-mode"),
    pytest.param(
        "console-script", ["--mode", "full", "--no-sandbox"], id="console-script-no-sandbox"
    ),
]


@pytest.mark.parametrize(("how", "args"), LAUNCHES)
def test_no_ancestor_environ_holds_a_secret(tmp_path: Path, how: str, args: list[str]) -> None:
    secrets = _secrets()
    session = _session(tmp_path, [WALK_ANCESTORS, _to_file(WALK_ALL)])
    text = _finish(_launch(tmp_path, how, [*args, "--model", f"scripted:{session}"], secrets))
    assert "TANDEM_PROBE=visible" in text  # the walk did print environments
    leaked = _leaked(tmp_path)
    assert "TANDEM_PROBE=visible" in leaked
    for value in secrets.values():
        assert value not in leaked
    if can_isolate():  # the walk ends at the namespace's init: nothing outside is visible
        assert "== pid 1\n" in text and text.count("== pid") >= 2
        assert "== /proc/1/environ" in leaked and "TANDEM_SECRETS_FD=" not in leaked
    else:
        assert text.count("== pid") >= 3  # shell, supervisor, tandem at least
        assert "TANDEM_SECRETS_FD=" in text  # Tandem re-executed itself, handing values over
    for value in secrets.values():
        assert value not in text


def test_without_a_namespace_tandem_still_re_executes_clean(tmp_path: Path) -> None:
    """``TANDEM_PID_NAMESPACE=off``: commands see the host's processes; Tandem's own environ
    (re-executed without the secrets) and its supervisor's still hold none."""
    secrets = _secrets()
    session = _session(tmp_path, [WALK_ANCESTORS])
    args = ["--mode", "full", "--no-sandbox", "--model", f"scripted:{session}"]
    text = _finish(_launch(tmp_path, "python-m", args, secrets, extra_env={ISOLATION_ENV: "off"}))
    assert text.count("== pid") >= 3 and "TANDEM_SECRETS_FD=" in text
    for value in secrets.values():
        assert value not in text


ABOVE = [
    pytest.param(1, ["--mode", "full", "--no-sandbox"], id="bash-parent-no-sandbox"),
    pytest.param(1, ["--mode", "full"], id="bash-parent-full-mode"),
    pytest.param(2, ["--mode", "full", "--no-sandbox"], id="bash-grandparent-no-sandbox"),
]


@NEEDS_NAMESPACE
@pytest.mark.parametrize("probe", [WALK_ANCESTORS, WALK_ALL], ids=["walk-ppid", "all-environ"])
@pytest.mark.parametrize(("above", "args"), ABOVE)
def test_no_environ_above_tandem_is_visible(
    tmp_path: Path, above: int, args: list[str], probe: str
) -> None:
    """Red-team hole 7: the key sits in a shell *above* Tandem (``env OPENAI_API_KEY=...
    bash -c 'tandem run ...'``). Tandem re-executes clean, but that shell keeps the key; the
    command must not be able to see that shell at all. The probe writes to a file (Tandem's
    output redaction would hide the registered values from ``text``, not from the agent)."""
    secrets = {**_secrets(), "MY_DEPLOY_TOKEN": f"dt-{uuid.uuid4().hex}"}
    session = _session(tmp_path, [_to_file(probe)])
    launch = _launch(
        tmp_path, "python-m", [*args, "--model", f"scripted:{session}"], secrets, above=above
    )
    text, leaked = _finish(launch), _leaked(tmp_path)
    assert "TANDEM_PROBE=visible" in leaked, text  # the probe did read environments
    for value in secrets.values():
        assert value not in leaked and value not in text


@NEEDS_NAMESPACE
async def test_a_command_sees_only_its_own_processes(tmp_path: Path) -> None:
    """No process outside the command's namespace is in its ``/proc``: not this process (the
    host), not its supervisor, not pid 1 of the host."""
    probe = (
        f'test -e /proc/{os.getpid()} && echo HOST"-"VISIBLE; '
        "for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline; echo; done"
    )
    out = (await SubprocessShellExecutor(tmp_path).run([probe])).output[0].stdout
    assert "HOST-VISIBLE" not in out and "pytest" not in out
    lines = [line for line in out.splitlines() if line.strip()]
    # the namespace's init (the supervisor's fork), the shell, and the shell's own children
    assert lines and "supervisor.py" in lines[0] and len(lines) <= 5, out


def test_without_secrets_there_is_no_re_exec(tmp_path: Path) -> None:
    session = _session(tmp_path, [WALK_ANCESTORS])
    text = _finish(
        _launch(tmp_path, "python-m", ["--mode", "full", "--model", f"scripted:{session}"], {})
    )
    assert "TANDEM_PROBE=visible" in text and "TANDEM_SECRETS_FD" not in text


def test_the_handed_over_key_is_the_settings_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from core import secret_handoff
    from core.settings import load_settings

    monkeypatch.setattr(secret_handoff, "_values", {})
    monkeypatch.setattr(secret_handoff, "_state", {"received": False})
    read_end, write_end = os.pipe()
    os.write(write_end, json.dumps({"OPENAI_API_KEY": "sk-handed-over"}).encode())
    os.close(write_end)
    environ = {secret_handoff.HANDOFF_FD_ENV: str(read_end)}
    assert secret_handoff.receive(environ) and environ == {}  # the variable is gone
    with pytest.raises(OSError):
        os.fstat(read_end)  # and the pipe closed
    settings = load_settings()
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "sk-handed-over"
    assert settings.api_key_source == "env" and "OPENAI_API_KEY" not in os.environ


def test_the_key_still_reaches_the_model_but_no_command(tmp_path: Path, responses_server) -> None:
    secrets = _secrets()
    responses_server.enqueue([items.shell_call([WALK_ANCESTORS], call_id="c_walk")])
    responses_server.enqueue([items.message("done")])
    args = ["--mode", "full", "--model", "m", "--base-url", responses_server.base_url]
    text = _finish(_launch(tmp_path, "python-m", args, secrets))
    assert "TANDEM_PROBE=visible" in text and "done" in text
    auth = [
        r.headers.get("Authorization", r.headers.get("authorization"))
        for r in responses_server.requests
    ]
    assert auth and all(a == f"Bearer {secrets['OPENAI_API_KEY']}" for a in auth)
    # The command's output went back to the model: no secret there either.
    sent = json.dumps([r.body for r in responses_server.requests])
    assert "TANDEM_PROBE=visible" in sent
    for value in secrets.values():
        assert value not in sent and value not in text


KILLED_MID_COMMAND = [
    pytest.param("sh -c 'exec sleep {m}' & sh -c 'exec sleep {m}'", id="foreground-and-background"),
    pytest.param("setsid -f sh -c 'exec sleep {m}'; sh -c 'exec sleep {m}'", id="setsid-f"),
    pytest.param(
        "( ( sh -c 'exec sleep {m}' & ) & ); trap '' TERM; sh -c 'trap \"\" TERM; exec sleep {m}'",
        id="double-fork-ignoring-sigterm",
    ),
]


@pytest.mark.parametrize("sandbox", ["--no-sandbox", "sandbox-on"])
@pytest.mark.parametrize("template", KILLED_MID_COMMAND)
def test_sigkill_of_tandem_run_leaves_nothing(tmp_path: Path, template: str, sandbox: str) -> None:
    marker = marker_seconds()
    session = _session(tmp_path, [template.replace("{m}", marker)])
    # Full mode runs unsandboxed; auto mode runs under bubblewrap (and allows these commands).
    mode = "full" if sandbox == "--no-sandbox" else "auto"
    args = ["--mode", mode, "--model", f"scripted:{session}"]
    proc = _launch(tmp_path, "python-m", args, _secrets())
    try:
        assert poll(lambda: len(alive_with(marker)) >= 2, timeout_s=30), proc.poll()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        killed_at = time.monotonic()
        assert poll(lambda: not alive_with(marker), timeout_s=2.0), alive_with(marker)
        assert time.monotonic() - killed_at < 2.0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.communicate()
        for pid in alive_with(marker):
            os.kill(pid, signal.SIGKILL)


# -- The Codex CLI and Chromium die with Tandem ------------------------------------------------

CODEX_HOST = """
import asyncio, os, sys
from core.tools.codex import CodexExecArgs, CodexOptions, ThreadOptions
from harnesses.codex import SubprocessCodexExec

async def main():
    env = {"PATH": os.environ["PATH"], "HOME": sys.argv[3], "CODEX_HOME": sys.argv[4], "LANG": "C.UTF-8"}
    codex = SubprocessCodexExec(CodexOptions(
        codex_path_override=sys.argv[1], base_url=sys.argv[2], api_key="codex-test-key", env=env,
        config={"model_providers.tandem.stream_max_retries": 0,
                "model_providers.tandem.request_max_retries": 0}))
    args = CodexExecArgs(input="wait", thread_options=ThreadOptions(
        model="gpt-5.5", working_directory=sys.argv[5], skip_git_repo_check=True,
        approval_policy="never", sandbox_mode="danger-full-access"))
    async for line in codex.run(args):
        print(line, flush=True)

asyncio.run(main())
"""

BROWSER_HOST = """
import asyncio, os
from harnesses.browser.computer import PlaywrightComputer

async def main():
    computer = PlaywrightComputer()
    await computer.screenshot()
    print("READY", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != b"Z":
                parents[int(entry)] = int(fields[1])
    found = []
    for pid in parents:
        parent = parents.get(pid)
        while parent is not None and parent > 1:
            if parent == root:
                found.append(pid)
                break
            parent = parents.get(parent)
    return found


def _alive(pids: list[int]) -> list[int]:
    live = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                if handle.read().rsplit(b")", 1)[1].split()[0] != b"Z":
                    live.append(pid)
        except OSError:
            pass
    return live


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def _sigkill_host_and_check(proc: subprocess.Popen[str], wanted: bytes) -> None:
    """SIGKILL ``proc`` once a descendant whose program name holds ``wanted`` runs; nothing of
    its process tree survives (bounded at 10 s: the promise is that it dies with Tandem, not
    how fast; Chromium's Playwright driver took over 2 s once on a loaded CI machine)."""

    def started() -> bool:
        return any(wanted in _cmdline(p).split(b"\0")[0] for p in _descendants(proc.pid))

    try:
        assert poll(started, 30)
        tree = _descendants(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert poll(lambda: not _alive(tree), timeout_s=10.0), [_cmdline(p) for p in _alive(tree)]
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


@pytest.mark.parametrize(
    "template",
    [
        pytest.param("sh -c 'exec sleep {m}' & sh -c 'exec sleep {m}'", id="codex-command-bg"),
        pytest.param(
            "setsid -f sh -c 'exec sleep {m}'; sh -c 'exec sleep {m}'", id="codex-setsid-f"
        ),
    ],
)
def test_sigkill_of_tandem_takes_the_codex_cli(
    tmp_path: Path, responses_server, template: str
) -> None:
    from harnesses.codex import local_codex_binary

    binary = local_codex_binary()
    if binary is None:
        pytest.fail("Codex CLI not installed: run `bash scripts/install_codex.sh`")
    marker = marker_seconds()
    command = {"cmd": template.replace("{m}", marker)}
    responses_server.enqueue([items.function_call("exec_command", command, call_id="x1")])
    responses_server.enqueue([items.message("late")], delay_s=30)
    home, work = tmp_path / "codex-home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / "config.toml").write_text("analytics.enabled = false\n[features]\nplugins = false\n")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-c", CODEX_HOST, str(binary), responses_server.base_url),
            *(str(tmp_path), str(home), str(work)),
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert poll(lambda: len(alive_with(marker)) >= 2, timeout_s=30)  # Codex ran them
        _sigkill_host_and_check(proc, b"codex")
        assert poll(lambda: not alive_with(marker), timeout_s=0.5), alive_with(marker)
    finally:
        for pid in alive_with(marker):
            os.kill(pid, signal.SIGKILL)


def test_sigkill_of_tandem_takes_chromium(tmp_path: Path) -> None:
    pytest.importorskip("playwright")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", BROWSER_HOST],
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _sigkill_host_and_check(proc, b"chrom")


WINDOW_HOST = """
import asyncio, json, os, sys
from pathlib import Path
os.environ["QT_QPA_PLATFORM"] = "offscreen"
import qasync
from PySide6.QtWidgets import QApplication
from core import Agent, ScriptedModel
from core.settings import Settings
from desktop.controller import Controller
from desktop.main_window import MainWindow
from harnesses.sessions import SessionJournal
from harnesses.workspace import Workspace

repo, journal_path, commands = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
app = QApplication.instance() or QApplication([])
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)
workspace = Workspace(repo, mode="full", data_dir=repo.parent / "data")
turns = [{"output": [{"type": "shell_call", "call_id": f"s{i}", "action": {"commands": [c]}}]}
         for i, c in enumerate(commands)]
model = ScriptedModel(turns + [{"output": [{"type": "message", "content": [
    {"type": "output_text", "text": "done"}]}]}])
journal = SessionJournal(journal_path)
controller = Controller(workspace, lambda ws: Agent(name="Tandem", model=model, tools=ws.tools()),
                        journal=journal, session_id=journal.create_session(repo, "kill"))
window = MainWindow(controller, Settings())
window.show()
controller.submit("serve and wait")
with loop:
    loop.run_forever()
"""


def test_sigkill_of_the_window_leaves_nothing(tmp_path: Path) -> None:
    service, command = marker_seconds(), marker_seconds()
    repo = tmp_path / "repo"
    repo.mkdir()
    commands = [
        f"setsid -f sh -c 'exec sleep {service}' &",  # a background service
        f"setsid -f sh -c 'exec sleep {command}'; sh -c 'exec sleep {command}'",
    ]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            WINDOW_HOST,
            str(repo),
            str(tmp_path / "j.sqlite3"),
            json.dumps(commands),
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"},
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        up = poll(lambda: bool(alive_with(service)) and len(alive_with(command)) >= 2, 30)
        assert up, proc.poll()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        gone = poll(lambda: not alive_with(service) and not alive_with(command), timeout_s=2.0)
        assert gone, alive_with(service) + alive_with(command)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
        for pid in alive_with(service) + alive_with(command):
            os.kill(pid, signal.SIGKILL)


# -- red-team finding 6: the Codex CLI's key, in full access --------------------------------

#: Walks every ``/proc/<pid>/environ`` and ``cmdline`` it can read, looking for the needles
#: given *reversed* on its command line (so that its own cmdline does not hold them). Prints
#: a JSON report: ``{"uid", "readable", "comms", "hits": {needle index: [where, ...]}}``.
PROC_PROBE = r"""
import json, os, sys
needles = [a[::-1].encode() for a in sys.argv[1:]]
hits, readable, comms = {}, 0, set()
for pid in filter(str.isdigit, os.listdir("/proc")):
    for part in ("environ", "cmdline"):
        try:
            with open(f"/proc/{pid}/{part}", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        readable += 1
        try:
            comms.add(open(f"/proc/{pid}/comm").read().strip())
        except OSError:
            pass
        for index, needle in enumerate(needles):
            if needle in data:
                hits.setdefault(str(index), []).append(f"{pid}/{part}")
print(json.dumps({"uid": os.getuid(), "readable": readable, "comms": sorted(comms), "hits": hits}))
"""


#: A Python that ``nobody`` may run (``/root/.pyenv``'s is not reachable for it).
SYSTEM_PYTHON = "/usr/bin/python3"
NEEDS_SETPRIV = pytest.mark.skipif(
    os.geteuid() != 0 or not Path(SYSTEM_PYTHON).exists(),
    reason="drops to nobody with setpriv (needs root and /usr/bin/python3)",
)


def _codex_home(tmp_path: Path) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(
        'analytics.enabled = false\nweb_search = "disabled"\n[features]\nplugins = false\n'
    )
    return home


@NEEDS_SETPRIV
@pytest.mark.parametrize("as_user", ["root", "nobody"])
@pytest.mark.parametrize("namespace", ["auto", "off"])
async def test_a_codex_command_in_full_mode_finds_the_key_nowhere_in_proc(
    tmp_path: Path,
    responses_server,
    model,
    monkeypatch: pytest.MonkeyPatch,
    namespace: str,
    as_user: str,
) -> None:
    """The real Codex CLI in full access runs a probe that reads every ``environ`` and
    ``cmdline`` under ``/proc`` (as root, and dropped to ``nobody`` with ``setpriv``): the
    session's key is in none of them (not the supervisor's, its init's, the CLI's, a shell
    snapshot's), yet it reached the server as the bearer token. A canary put in the CLI's
    environment *is* found (as root), so the probe can see what is there."""
    from core import Agent, Runner
    from core.settings import Settings
    from desktop.delegates import codex_delegate
    from harnesses.codex import local_codex_binary
    from harnesses.workspace import Workspace

    binary = local_codex_binary()
    if binary is None:
        pytest.fail("Codex CLI not installed: run `bash scripts/install_codex.sh`")
    key, canary = f"sk-tandem-{uuid.uuid4().hex}", f"canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("CODEX_HOME", str(_codex_home(tmp_path)))
    monkeypatch.setenv("TANDEM_PROBE_CANARY", canary)  # inherited by the Codex process
    monkeypatch.setenv(ISOLATION_ENV, namespace)
    repo = tmp_path / "repo"
    repo.mkdir()
    drop = "setpriv --reuid=nobody --regid=nogroup --clear-groups " if as_user == "nobody" else ""
    cmd = f"{drop}{SYSTEM_PYTHON} -c {shlex.quote(PROC_PROBE)} {shlex.quote(key[::-1])} {shlex.quote(canary[::-1])}"
    server = responses_server
    call = {"inputs": [{"type": "text", "text": "probe", "path": None}], "thread_id": None}
    server.enqueue([items.function_call("codex", json.dumps(call), call_id="k1")])
    server.enqueue([items.function_call("exec_command", {"cmd": cmd, "login": False}, call_id="x1")])
    server.enqueue([items.message("probed")])
    server.enqueue([items.message("fin")])
    settings = Settings(base_url=server.base_url, api_key=key, model="gpt-5.5", codex_path=binary)
    workspace = Workspace(repo, mode="full", data_dir=tmp_path / "data")
    events: list[object] = []
    config = {"model_providers.tandem.stream_max_retries": 0}
    tool = codex_delegate(workspace, settings=settings, on_stream=events.append, config=config)
    assert tool is not None
    await Runner.run(Agent(name="outer", model=model, tools=[tool]), "delegate")

    outputs = [
        getattr(e.event.item, "aggregated_output", "")  # type: ignore[attr-defined]
        for e in events
        if type(getattr(e, "event", None)).__name__ == "ItemCompletedEvent"
        and type(e.event.item).__name__ == "CommandExecutionItem"  # type: ignore[attr-defined]
    ]
    assert len(outputs) == 1, outputs
    report = json.loads(outputs[0].strip().splitlines()[-1])
    assert report["uid"] == (0 if as_user == "root" else 65534)
    assert report["readable"] > 2 and "python3" in report["comms"]
    assert "0" not in report["hits"], report  # the key: nowhere
    if as_user == "root":
        assert report["hits"].get("1"), report  # the canary: in the Codex process's environ
    codex_requests = [r for r in server.requests if r.path.endswith("/responses")][1:3]
    assert codex_requests and all(
        r.headers["authorization"] == f"Bearer {key}" for r in codex_requests
    )
    assert all(key not in json.dumps(r.body) for r in server.requests)


@NEEDS_SETPRIV
def test_a_same_uid_command_cannot_read_its_supervisors_environ(tmp_path: Path) -> None:
    """The supervisor (and its init) are undumpable: a program running as the same non-root
    user cannot read the supervisor's ``environ`` (which holds what Tandem passed), while
    the supervisor still reaps and kills (a background child is gone afterwards)."""
    from harnesses.spawn import supervised_argv

    secret = f"sk-proj-{uuid.uuid4().hex}"
    marker = marker_seconds()
    program = (
        f"sleep {marker} & "
        'if cat /proc/$PPID/environ >/dev/null 2>&1; then echo READ; else echo DENIED; fi; '
        "stat -c %U /proc/$PPID/environ"
    )
    argv = [SYSTEM_PYTHON, *supervised_argv(["sh", "-c", program], isolate=False)[1:]]
    # `nobody` must be able to read the supervisor: a clone may sit in a 0700 folder
    readable = Path(tempfile.mkdtemp(prefix="tandem-sup-"))
    readable.chmod(0o755)
    for n, arg in enumerate(argv):
        if arg.endswith("supervisor.py"):
            copy = readable / "supervisor.py"
            copy.write_bytes(Path(arg).read_bytes())
            copy.chmod(0o644)
            argv[n] = str(copy)
    done = subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *argv],
        env={"PATH": os.environ["PATH"], "TANDEM_TEST_SECRET": secret},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    try:
        # setpriv execs the supervisor in place: its parent is this process, as the argv says.
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["DENIED", "root"], done.stdout
        assert poll(lambda: not alive_with(marker), timeout_s=5), alive_with(marker)
    finally:
        for pid in alive_with(marker):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(readable, ignore_errors=True)
