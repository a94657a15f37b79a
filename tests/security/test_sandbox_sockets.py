"""Attack class: a sandboxed command reaches a Unix socket outside the sandbox.

A read-only bind does not stop ``connect()``: through the session bus (``systemd-run --user``),
an ssh/gpg agent or ``docker.sock`` a command acts outside the sandbox. The promises, under
real bubblewrap: the runtime dir (``$XDG_RUNTIME_DIR``, ``/run/user``), the system bus and the
listed daemon sockets are masked (``connect()`` fails, the folders look empty), the variables
that name such sockets are not in a sandboxed command's environment, and name resolution
(``/etc/resolv.conf``) still works with the network on.

Listening sockets live where the test may write (the workspace stands in for the places
outside it: everything under ``/tmp`` outside the workspace is gone in the sandbox anyway),
and the default list is pointed there with ``monkeypatch`` where the real paths would need
root.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnesses.shell import (
    SubprocessShellExecutor,
    sandbox_available,
    sandbox_unavailable_reason,
    secret_paths,
)
from harnesses.shell.executor import SANDBOX_DROPPED_ENV
from harnesses.shell.secret_paths import DEFAULT_SOCKET_PATHS, plan_sockets
from tests.security._python import SANDBOX_PYTHON

pytestmark = pytest.mark.skipif(
    not sandbox_available(), reason=f"bubblewrap unusable: {sandbox_unavailable_reason()}"
)

MODES = ["read-only", "workspace-write"]
_CONNECT = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_UNIX)\n"
    "try:\n"
    "    s.connect(sys.argv[1]); s.sendall(b'cmd'); print('CONNECTED')\n"
    "except OSError as e:\n"
    "    print('REFUSED', e.errno)\n"
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "connect.py").write_text(_CONNECT)
    return path


@pytest.fixture
def listener() -> Iterator[list[socket.socket]]:
    """Listening Unix sockets opened by a test (connect succeeds into the backlog)."""
    opened: list[socket.socket] = []
    yield opened
    for sock in opened:
        sock.close()


def listen(path: Path, opened: list[socket.socket]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.listen(8)
    opened.append(sock)
    return path


async def connect(ws: Path, mode: str, target: str, *, network: bool = False) -> str:
    executor = SubprocessShellExecutor(ws, sandbox=mode, network=network)  # type: ignore[arg-type]
    out = (await executor.run([f"{SANDBOX_PYTHON} connect.py {target}"])).output[0]
    assert out.provider_data is not None and out.provider_data["sandboxed"] is True
    return out.stdout + out.stderr


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "target",
    [
        pytest.param("{rt}/bus", id="session-bus-path"),
        pytest.param("{rt}/gnupg/S.gpg-agent", id="gpg-agent-path"),
        pytest.param("{rt}/keyring/ssh", id="ssh-agent-path"),
        pytest.param('"$(printf %s {rt})/bus"', id="built-at-run-time"),
    ],
)
async def test_runtime_dir_sockets_refuse(
    ws: Path, listener, monkeypatch: pytest.MonkeyPatch, mode: str, target: str
) -> None:
    runtime = ws / "run-user-1000"
    for rel in ("bus", "gnupg/S.gpg-agent", "keyring/ssh"):
        listen(runtime / rel, listener)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    text = await connect(ws, mode, target.replace("{rt}", str(runtime)))
    assert "CONNECTED" not in text and "REFUSED" in text, text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "rel",
    [
        pytest.param("run/docker.sock", id="docker-sock-file"),
        pytest.param("run/podman/podman.sock", id="podman-dir"),
        pytest.param("run/dbus/system_bus_socket", id="system-bus-dir"),
        pytest.param("run/snapd.socket", id="glob-run-star-socket"),
        pytest.param("run/containerd.sock", id="glob-run-star-sock"),
    ],
)
async def test_listed_daemon_sockets_refuse(
    ws: Path, listener, monkeypatch: pytest.MonkeyPatch, mode: str, rel: str
) -> None:
    fake_run = ws / "run"
    patterns = [
        str(fake_run / "docker.sock"),
        str(fake_run / "podman"),
        str(fake_run / "dbus"),
        str(fake_run / "*.sock"),
        str(fake_run / "*.socket"),
    ]
    monkeypatch.setattr(secret_paths, "DEFAULT_SOCKET_PATHS", tuple(patterns))
    path = listen(ws / rel, listener)
    text = await connect(ws, mode, str(path))
    assert "CONNECTED" not in text and "REFUSED" in text, text


def test_default_list_names_the_dangerous_sockets() -> None:
    for path in (
        "/run/user",
        "/run/dbus",
        "/run/docker.sock",
        "/var/run/docker.sock",
        "/run/containerd",
        "/run/podman",
        "/run/systemd/private",
        "/run/*.sock",
    ):
        assert path in DEFAULT_SOCKET_PATHS


def test_name_resolution_folder_is_never_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secret_paths, "DEFAULT_SOCKET_PATHS", ("/run/systemd", "/run/*"))
    masked = {s.target for s in plan_sockets(Path("/nonexistent-ws"), environ={})}
    resolve = Path(os.path.realpath("/run/systemd/resolve"))
    assert resolve not in masked
    assert not any(resolve != m and m in resolve.parents for m in masked)


@pytest.mark.skipif(not os.path.isdir("/run/dbus"), reason="no /run/dbus here")
@pytest.mark.parametrize("mode", MODES)
async def test_real_system_bus_folder_looks_empty(ws: Path, mode: str) -> None:
    executor = SubprocessShellExecutor(ws, sandbox=mode)  # type: ignore[arg-type]
    out = (await executor.run(["ls -A /run/dbus /run/user; echo done"])).output[0]
    assert out.stdout.strip().splitlines() == ["/run/dbus:", "", "/run/user:", "done"], out.stdout


@pytest.mark.parametrize("name", sorted(SANDBOX_DROPPED_ENV))
@pytest.mark.parametrize("mode", MODES)
async def test_socket_variables_are_not_passed(
    ws: Path, monkeypatch: pytest.MonkeyPatch, name: str, mode: str
) -> None:
    value = f"unix:path=/run/user/1000/{name.lower()}"
    monkeypatch.setenv(name, value)
    executor = SubprocessShellExecutor(ws, sandbox=mode)  # type: ignore[arg-type]
    out = (await executor.run(["env"])).output[0]
    assert f"{name}=" not in out.stdout and value not in out.stdout


async def test_resolv_conf_still_readable_with_network(ws: Path, listener, monkeypatch) -> None:
    runtime = ws / "rt"
    listen(runtime / "bus", listener)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    executor = SubprocessShellExecutor(ws, sandbox="workspace-write", network=True)
    out = (await executor.run(["cat /etc/resolv.conf > /dev/null && echo readable"])).output[0]
    assert out.stdout.strip() == "readable", out.stderr
    text = await connect(ws, "workspace-write", str(runtime / "bus"), network=True)
    assert "CONNECTED" not in text and "REFUSED" in text, text
