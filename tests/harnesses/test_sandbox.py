"""The bubblewrap sandbox with real ``bwrap``: filesystem modes, network, process cleanup."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnesses.shell import (
    ShellCommandStarted,
    ShellEvent,
    SubprocessShellExecutor,
    bwrap_argv,
    find_bwrap,
    sandbox_available,
    sandbox_unavailable_reason,
)

from .test_shell_executor import alive, live_members, wait_for

needs_bwrap = pytest.mark.skipif(
    not sandbox_available(), reason=f"bubblewrap unusable: {sandbox_unavailable_reason()}"
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "existing.txt").write_text("hello\n")
    return ws


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    """A directory outside the workspace and outside /tmp (which the sandbox replaces)."""
    path = Path(tempfile.mkdtemp(prefix="tandem-fake-home-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_find_bwrap_and_argv_shape(tmp_path: Path) -> None:
    bwrap = find_bwrap()
    if bwrap is None:
        pytest.skip("bwrap not installed")
    assert Path(bwrap).is_absolute()
    ro = bwrap_argv(bwrap, "read-only", tmp_path, network=False)
    assert ro[:3] == [bwrap, "--ro-bind", "/"]
    assert ["--ro-bind", str(tmp_path), str(tmp_path)] == ro[ro.index(str(tmp_path)) - 1 :][:3]
    assert "--unshare-net" in ro and "--die-with-parent" in ro and ro[-1] == "--"
    assert ro.index("--tmpfs") < ro.index(str(tmp_path))
    rw = bwrap_argv(bwrap, "workspace-write", tmp_path, network=True)
    assert ["--bind", str(tmp_path), str(tmp_path)] == rw[rw.index(str(tmp_path)) - 1 :][:3]
    assert "--unshare-net" not in rw


@needs_bwrap
async def test_read_only_refuses_writes(workspace: Path) -> None:
    executor = SubprocessShellExecutor(workspace, sandbox="read-only")
    result = await executor.run(["cat existing.txt", "touch x"])
    read, write = result.output
    assert read.stdout == "hello\n"
    assert write.outcome.exit_code not in (0, None)
    assert "Read-only file system" in write.stderr
    assert not (workspace / "x").exists()
    assert write.provider_data is not None
    assert write.provider_data["sandboxed"] is True
    assert write.provider_data["sandbox_mode"] == "read-only"
    assert write.provider_data["working_directory"] == str(workspace)


@needs_bwrap
async def test_workspace_write_allows_the_workspace_only(
    workspace: Path, outside_dir: Path
) -> None:
    executor = SubprocessShellExecutor(
        workspace, sandbox="workspace-write", env={"HOME": str(outside_dir)}
    )
    result = await executor.run(["touch x && echo made", 'touch "$HOME/y"', "touch /root/z"])
    inside, home, root = result.output
    assert inside.stdout == "made\n" and (workspace / "x").exists()
    assert home.outcome.exit_code not in (0, None) and "Read-only file system" in home.stderr
    assert not (outside_dir / "y").exists()
    assert root.outcome.exit_code not in (0, None)
    assert not Path("/root/z").exists()


@needs_bwrap
async def test_private_tmp_does_not_leak(workspace: Path) -> None:
    marker = f"tandem-sandbox-{time.monotonic_ns()}"
    executor = SubprocessShellExecutor(workspace, sandbox="workspace-write")
    result = await executor.run([f"echo secret > /tmp/{marker} && cat /tmp/{marker}"])
    assert result.output[0].stdout == "secret\n"
    assert not Path("/tmp", marker).exists()


@needs_bwrap
async def test_secrets_are_absent_inside_the_sandbox(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-sandbox-test")
    executor = SubprocessShellExecutor(workspace, sandbox="read-only")
    result = await executor.run(['echo "key=${OPENAI_API_KEY:-none} tmp=$TMPDIR"'])
    assert result.output[0].stdout == "key=none tmp=/tmp\n"


async def _connect_attempt(workspace: Path, *, network: bool) -> tuple[int | None, bool]:
    connected = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connected.set()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        executor = SubprocessShellExecutor(workspace, sandbox="workspace-write", network=network)
        result = await executor.run(
            [f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"], timeout_ms=10_000
        )
        if result.output[0].outcome.exit_code == 0:
            await asyncio.wait_for(connected.wait(), 5)
        return result.output[0].outcome.exit_code, connected.is_set()
    finally:
        server.close()
        await server.wait_closed()


@needs_bwrap
async def test_network_off_blocks_localhost(workspace: Path) -> None:
    code, connected = await _connect_attempt(workspace, network=False)
    assert code not in (0, None)
    assert not connected


@needs_bwrap
async def test_network_on_reaches_localhost(workspace: Path) -> None:
    code, connected = await _connect_attempt(workspace, network=True)
    assert code == 0
    assert connected


@needs_bwrap
async def test_sandboxed_timeout_and_background_cleanup(workspace: Path) -> None:
    events: list[ShellEvent] = []
    executor = SubprocessShellExecutor(workspace, sandbox="workspace-write", listener=events.append)
    started = time.monotonic()
    result = await executor.run(["sleep 30; echo never"], timeout_ms=500)
    assert time.monotonic() - started < 2.0
    assert result.output[0].outcome.type == "timeout"
    start = next(e for e in events if isinstance(e, ShellCommandStarted))
    assert start.sandboxed is True
    assert await wait_for(lambda: not live_members(start.pid))

    events.clear()
    result = await executor.run(["sleep 30 >/dev/null 2>&1 & echo started"])
    assert result.output[0].stdout == "started\n"
    pgid = next(e for e in events if isinstance(e, ShellCommandStarted)).pid
    assert await wait_for(lambda: not live_members(pgid))
    assert not alive(pgid)


def _repo(path: Path) -> Path:
    import subprocess

    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_argv_masks_and_git_binds_come_after_the_workspace(
    tmp_path: Path, outside_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harnesses.shell.sandbox import plan_sandbox

    if not sandbox_available():
        pytest.skip("bubblewrap unusable")
    home = outside_dir / "home"  # masks under /tmp are skipped: the sandbox's /tmp is fresh
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("machine x password y\n")
    monkeypatch.setenv("HOME", str(home))
    ws = _repo(tmp_path / "ws")
    rw = list(plan_sandbox("workspace-write", ws, network=False).prefix)
    ws_bind = rw.index(str(ws))
    git_dir = str(ws / ".git")
    assert rw[rw.index(git_dir) - 1] == "--bind"  # pinned: cannot be renamed or removed
    for name in ("config", "hooks", "info"):
        index = rw.index(f"{git_dir}/{name}")
        assert rw[index - 1] == "--ro-bind" and index > rw.index(git_dir) > ws_bind
    ssh = rw.index(str(home / ".ssh"))
    assert rw[ssh - 1] == "--tmpfs" and rw[ssh + 1 : ssh + 3] == [
        "--remount-ro",
        str(home / ".ssh"),
    ]
    netrc = rw.index(str(home / ".netrc"))
    source = Path(rw[netrc - 1])
    assert source.is_file() and source.stat().st_size == 0 and rw[netrc - 2] == "--ro-bind"
    ro = list(plan_sandbox("read-only", ws, network=False).prefix)
    assert git_dir not in ro  # the whole workspace is read-only already; no rw pin
    assert str(home / ".ssh") in ro


def test_empty_mask_source_is_recreated_when_changed() -> None:
    from harnesses.shell.sandbox import empty_file

    path = empty_file()
    path.chmod(0o644)
    path.write_text("leaked\n")
    again = empty_file()
    assert again == path and again.read_bytes() == b""


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        pytest.param(
            "auto", "sandbox: workspace-write, network off, hiding 2 secret paths", id="auto"
        ),
        pytest.param("read-only", "sandbox: read-only, network off, hiding 2", id="read-only"),
        pytest.param("full", "sandbox: off", id="full"),
    ],
)
def test_summary_headline_names_what_is_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, expected: str
) -> None:
    from harnesses.workspace import Workspace

    if not sandbox_available():
        pytest.skip("bubblewrap unusable")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".aws").mkdir()
    monkeypatch.setenv("HOME", str(home))
    ws = _repo(tmp_path / "ws")
    summary = Workspace(ws, mode=mode).sandbox_summary()
    line = summary.headline()
    assert line.startswith(expected), line
    if mode != "full":
        assert "(~/.ssh, ~/.aws)" in line and line.endswith(".git/config and hooks read-only")
        assert ".git/config" in summary.protected and ".git/hooks/" in summary.protected
        assert "~/.ssh" in summary.details()
    assert not (ws / ".git" / "commondir").exists()
