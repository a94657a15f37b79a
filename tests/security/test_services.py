"""Attack class: background services as a way to outlive the command or Tandem.

Only a command line whose last top-level operator is ``&`` starts a service (bashlex decides);
a service is listed, keeps running after its command, is killed by its Kill (with everything
it forked, ``setsid`` included), and never outlives Tandem (a SIGKILL of ``tandem run``
included). Every other backgrounded process dies with its command.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harnesses.shell import SubprocessShellExecutor
from harnesses.spawn import ServiceRegistry, starts_service
from tests.security._procs import alive_with, marker_seconds, poll

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the services view test


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("npm run dev &", id="npm-dev-amp"),
        pytest.param("python -m http.server 8000 &", id="http-server-amp"),
        pytest.param("nohup ./serve > log 2>&1 &", id="nohup-amp"),
        pytest.param("cd web && npm run dev &", id="and-list-amp"),
        pytest.param("make build; ./serve &", id="semicolon-then-amp"),
        pytest.param("echo start\n./serve &", id="second-line-amp"),
        pytest.param("./serve &  # comment", id="amp-then-comment"),
    ],
)
def test_a_trailing_ampersand_starts_a_service(command: str) -> None:
    assert starts_service(command)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("sleep 60 & echo started", id="amp-mid-line"),
        pytest.param("( sleep 60 & )", id="amp-inside-subshell"),
        pytest.param("echo '&'", id="quoted-amp"),
        pytest.param("echo x \\&", id="escaped-amp"),
        pytest.param("a && b", id="and-and"),
        pytest.param("./serve &\necho after", id="amp-then-another-line"),
        pytest.param("echo 'unterminated &", id="unparsable-fails-closed"),
        pytest.param("", id="empty"),
    ],
)
def test_other_lines_are_ordinary_commands(command: str) -> None:
    assert not starts_service(command)


def _kill(marker: str) -> None:
    for pid in alive_with(marker):
        os.kill(pid, signal.SIGKILL)


async def test_a_service_outlives_its_command_until_killed(tmp_path: Path) -> None:
    marker = marker_seconds()
    services = ServiceRegistry()
    executor = SubprocessShellExecutor(tmp_path, services=services)
    try:
        result = await executor.run([f"sh -c 'echo up; exec sleep {marker}' &"])
        out = result.output[0]
        assert out.outcome.exit_code == 0
        assert "started background service #1 (pid " in out.stdout and "up" in out.stdout
        assert alive_with(marker)  # it outlived its command
        [service] = services.running()
        assert service.command.startswith("sh -c") and "up" in service.output()
        assert services.kill(1)
        assert poll(lambda: not alive_with(marker))
        assert await services.wait_all() and services.get(1).killed
    finally:
        services.kill_all()
        _kill(marker)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("setsid -f sh -c 'exec sleep {m}' &", id="setsid-f-inside-service"),
        pytest.param("( ( sh -c 'exec sleep {m}' & ) & ) &", id="double-fork-inside-service"),
        pytest.param(
            "sh -c 'trap \"\" TERM; exec sleep {m}' & sh -c 'exec sleep {m}' &",
            id="two-jobs-one-ignoring-sigterm",
        ),
    ],
)
async def test_kill_takes_everything_the_service_forked(tmp_path: Path, command: str) -> None:
    marker = marker_seconds()
    services = ServiceRegistry()
    executor = SubprocessShellExecutor(tmp_path, services=services)
    try:
        await executor.run([command.replace("{m}", marker)])
        assert poll(lambda: bool(alive_with(marker)))
        services.kill_all()
        assert poll(lambda: not alive_with(marker)), alive_with(marker)
    finally:
        services.kill_all()
        _kill(marker)


async def test_a_real_http_server_reports_its_first_output(tmp_path: Path) -> None:
    services = ServiceRegistry()
    executor = SubprocessShellExecutor(tmp_path, services=services)
    try:
        command = f"{sys.executable} -u -m http.server --bind 127.0.0.1 0 &"
        out = (await executor.run([command])).output[0]
        assert "started background service #1" in out.stdout
        assert poll(lambda: "Serving HTTP on 127.0.0.1" in services.get(1).output())
    finally:
        services.kill_all()
        assert await services.wait_all()


async def test_a_service_that_exits_at_once_is_reported_as_ended(tmp_path: Path) -> None:
    services = ServiceRegistry()
    executor = SubprocessShellExecutor(tmp_path, services=services)
    out = (await executor.run(["sh -c 'echo bye; exit 3' &"])).output[0]
    assert "already exited" in out.stdout and "bye" in out.stdout
    assert not services.running()


def _session(tmp_path: Path, commands: list[list[str]]) -> Path:
    turns: list[dict[str, object]] = [
        {"output": [{"type": "shell_call", "call_id": f"c{i}", "action": {"commands": c}}]}
        for i, c in enumerate(commands)
    ]
    turns.append(
        {"output": [{"type": "message", "content": [{"type": "output_text", "text": "ok"}]}]}
    )
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"turns": turns}))
    return path


def _tandem_run(tmp_path: Path, session: Path) -> subprocess.Popen[str]:
    (tmp_path / "repo").mkdir(exist_ok=True)
    return subprocess.Popen(
        [
            *(
                sys.executable,
                "-m",
                "desktop.cli",
                "run",
                "serve",
                "--repo",
                str(tmp_path / "repo"),
            ),
            *("--mode", "full", "--model", f"scripted:{session}"),
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_tandem_run_lists_and_kills_its_services_at_exit(tmp_path: Path) -> None:
    marker = marker_seconds()
    proc = _tandem_run(tmp_path, _session(tmp_path, [[f"sh -c 'exec sleep {marker}' &"]]))
    try:
        out, _ = proc.communicate(timeout=60)
        assert "[service] started background service #1" in out
        assert "running at exit" in out and "[service] killed #1" in out
        assert poll(lambda: not alive_with(marker))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        _kill(marker)


def test_a_service_never_outlives_a_sigkilled_tandem(tmp_path: Path) -> None:
    service, command = marker_seconds(), marker_seconds()
    session = _session(
        tmp_path,
        [[f"setsid -f sh -c 'exec sleep {service}' &"], [f"sh -c 'exec sleep {command}'"]],
    )
    proc = _tandem_run(tmp_path, session)
    try:
        assert poll(lambda: bool(alive_with(service) and alive_with(command)), timeout_s=30)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert poll(lambda: not alive_with(service) and not alive_with(command), timeout_s=2.0)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
        _kill(service)
        _kill(command)


async def test_the_window_lists_a_service_and_its_kill_button_kills_it(
    tmp_path: Path, qtbot
) -> None:
    from desktop.views.services_view import ServicesView

    marker = marker_seconds()
    services = ServiceRegistry()
    view = ServicesView(services)
    qtbot.addWidget(view)
    try:
        assert view.isHidden()  # nothing started yet
        await SubprocessShellExecutor(tmp_path, services=services).run(
            [f"setsid -f sh -c 'exec sleep {marker}' &"]
        )
        qtbot.waitUntil(lambda: view.list.count() == 1, timeout=2000)
        assert "#1" in view.list.item(0).text() and "running" in view.list.item(0).text()
        view.list.setCurrentRow(0)
        assert view.kill_button.isEnabled()
        view.kill_button.click()
        assert await services.wait_all()
        assert poll(lambda: not alive_with(marker))
        qtbot.waitUntil(lambda: "killed" in view.list.item(0).text(), timeout=2000)
        assert not view.kill_button.isEnabled()
    finally:
        services.kill_all()
        _kill(marker)
