"""Attack class: git redirections planted where no post-command sweep sees them.

A sandboxed command's ``.git/commondir`` (or ``config.worktree``, or a new nested repository
with hooks) makes the user's own, unsandboxed git run code from a config the command wrote.
The post-command sweep undoes that, but not (before this fix) when the command is a
background service (it never "ends" for the executor), nor *during* a command, nor after a
crash. The promises, on real bubblewrap, real git and real processes:

* a sandboxed background service stays alive after its command returns, and when it ends
  (on its own, by Kill, or by ``kill_all`` at Tandem's exit) what it planted is undone;
* an ordinary command run while a service is alive first undoes what the service planted;
* a ``commondir`` planted during a command is disarmed the moment it appears (inotify), so
  the user's git run *meanwhile* does not follow it;
* at start-up (``Workspace``) and before every sandboxed command, a ``commondir`` git never
  writes into a main git dir and an inert ``config.worktree`` are renamed aside, not followed.

The marker the payload would create lives outside the workspace and must never appear.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from harnesses.shell import SubprocessShellExecutor, sandbox_available, sandbox_unavailable_reason
from harnesses.shell.git_paths import disarm_planted
from harnesses.spawn import ServiceRegistry
from tests.security._procs import alive_with, marker_seconds, poll
from tests.security._python import SANDBOX_PYTHON
from tests.security._user_git import user_git

pytestmark = pytest.mark.skipif(
    not sandbox_available(), reason=f"bubblewrap unusable: {sandbox_unavailable_reason()}"
)


def user_session(repo: Path, home: Path) -> None:
    """The user's next steps in ``repo``: status (fsmonitor), add, commit (hooks)."""
    (repo / "user.txt").write_text("user edit\n")
    for args in (("status",), ("add", "-A"), ("commit", "-q", "-m", "user commit")):
        user_git(repo, home, *args)


@pytest.fixture
def ws(tmp_path: Path, home: Path) -> Path:
    """A fresh repository with one commit, and a FIFO ``gate`` a command can block on."""
    path = tmp_path / "ws"
    path.mkdir()
    user_git(path, home, "init", "-q", "-b", "main", check=True)
    (path / "file.txt").write_text("one\n")
    user_git(path, home, "add", "file.txt", check=True)
    user_git(path, home, "commit", "-q", "-m", "initial", check=True)
    os.mkfifo(path / "gate")
    (path / ".git/info/exclude").write_text("gate\nready\n")
    return path


def open_gate(ws: Path, timeout_s: float = 10.0) -> bool:
    """Release a command blocked in ``cat gate``: open the FIFO for writing as soon as it has
    a reader (bounded by ``timeout_s`` seconds), then close it. Returns whether it had one."""

    def release() -> bool:
        try:
            fd = os.open(ws / "gate", os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader (yet)
            return False
        os.close(fd)
        return True

    return poll(release, timeout_s=timeout_s)


def fsmonitor_common(marker: Path) -> str:
    """Shell text: a copy of .git whose config runs ``touch marker`` as core.fsmonitor."""
    return (
        "cp -r .git evilcommon && "
        f"printf '[core]\\n\\tfsmonitor = \"touch {marker}; false\"\\n' >> evilcommon/config"
    )


def hook_repo(marker: Path) -> str:
    """Shell text: a new nested repository ``sub`` with an executable pre-commit hook."""
    return (
        "git init -q sub && "
        f"printf '#!/bin/sh\\ntouch {marker}\\n' > sub/.git/hooks/pre-commit && "
        "chmod +x sub/.git/hooks/pre-commit"
    )


async def _ended(services: ServiceRegistry) -> None:
    assert await services.wait_all(timeout_s=30)


# --- sandboxed services stay alive ------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("{py} -u -m http.server 0 --bind 127.0.0.1 &", id="http-server-amp"),
        pytest.param("sh -c 'exec sleep {m}' &", id="sleep-job-amp"),
        pytest.param("setsid -f sh -c 'exec sleep {m}'; true &", id="daemon-forked-away"),
    ],
)
async def test_sandboxed_service_stays_alive_after_its_command(tmp_path: Path, line: str) -> None:
    marker = marker_seconds()
    services = ServiceRegistry()
    executor = SubprocessShellExecutor(tmp_path, sandbox="workspace-write", services=services)
    command = line.replace("{py}", SANDBOX_PYTHON).replace("{m}", marker)
    try:
        out = (await executor.run([command])).output[0]
        assert out.provider_data is not None and out.provider_data["sandboxed"] is True
        assert "started background service #1" in out.stdout, out.stdout
        [service] = services.running()
        if "http.server" in command:
            assert poll(lambda: "Serving HTTP on 127.0.0.1" in service.output(), timeout_s=10)
        else:
            assert poll(lambda: bool(alive_with(marker)), timeout_s=10)
        assert service.running  # still alive after the output came
        assert services.kill(1)
        assert await services.wait_all(timeout_s=10)
        assert not alive_with(marker)
    finally:
        services.kill_all()
        await services.wait_all()


# --- what a service plants is undone when it ends ---------------------------------------------


def _plant_at_exit(marker: Path) -> str:
    return (
        'trap "echo ../evilcommon > .git/commondir" EXIT; '
        f"{fsmonitor_common(marker)}; cat gate > /dev/null &"
    )


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(_plant_at_exit, id="trap-exit-commondir"),
        pytest.param(
            lambda m: (
                f"{fsmonitor_common(m)}; (cat gate > /dev/null; "
                "echo ../evilcommon > .git/commondir) &"
            ),
            id="subshell-commondir-after-gate",
        ),
        pytest.param(
            lambda m: f"{hook_repo(m)}; cat gate > /dev/null &", id="nested-repo-with-hook"
        ),
        pytest.param(
            lambda m: f"(cat gate > /dev/null; {hook_repo(m)}) &", id="nested-repo-after-gate"
        ),
    ],
)
async def test_service_plants_are_undone_when_it_ends(
    ws: Path, home: Path, marker: Path, line
) -> None:
    services = ServiceRegistry()
    executor = SubprocessShellExecutor(ws, sandbox="workspace-write", services=services)
    try:
        out = (await executor.run([line(marker)])).output[0]
        assert "started background service #1" in out.stdout, out.stdout
        assert await asyncio.to_thread(open_gate, ws)
        await _ended(services)
        assert not os.path.lexists(ws / ".git/commondir")
        user_session(ws, home)
        if (ws / "sub/.git").is_dir():
            user_session(ws / "sub", home)
        assert not marker.exists()
        assert services.get(1).repairs  # said, in the list and the log
    finally:
        services.kill_all()
        await services.wait_all()


async def test_kill_all_sweeps_before_returning(ws: Path, home: Path, marker: Path) -> None:
    services = ServiceRegistry()
    executor = SubprocessShellExecutor(ws, sandbox="workspace-write", services=services)
    try:
        command = f"{hook_repo(marker)} && touch ready; cat gate > /dev/null &"
        await executor.run([command])
        assert poll(lambda: (ws / "ready").exists(), timeout_s=10)
        services.kill_all()  # Tandem's exit: the event loop may stop right after
        user_session(ws / "sub", home)
        assert not marker.exists()
        assert services.get(1).repairs
    finally:
        services.kill_all()
        await services.wait_all()


async def test_next_command_undoes_what_a_running_service_planted(
    ws: Path, home: Path, marker: Path
) -> None:
    services = ServiceRegistry()
    executor = SubprocessShellExecutor(ws, sandbox="workspace-write", services=services)
    try:
        await executor.run([f"{hook_repo(marker)} && touch ready; cat gate > /dev/null &"])
        assert poll(lambda: (ws / "ready").exists(), timeout_s=10)
        nxt = (await executor.run(["true"])).output[0]
        assert nxt.provider_data is not None and nxt.provider_data.get("sandbox_repairs")
        user_session(ws / "sub", home)
        assert not marker.exists()
    finally:
        services.kill_all()
        await services.wait_all()


# --- during a command: disarmed the moment it appears -----------------------------------------


@pytest.mark.parametrize(
    "plant",
    [
        pytest.param("echo ../evilcommon > .git/commondir", id="write-commondir"),
        pytest.param(
            "echo ../evilcommon > staged && mv staged .git/commondir", id="rename-into-place"
        ),
        pytest.param(
            "echo ../evilcommon > .git/staged && ln .git/staged .git/commondir", id="hard-link"
        ),
        pytest.param("echo ../evilcommon > staged && ln -s ../staged .git/commondir", id="symlink"),
    ],
)
async def test_commondir_planted_during_a_command_is_never_followed(
    ws: Path, home: Path, marker: Path, plant: str
) -> None:
    executor = SubprocessShellExecutor(ws, sandbox="workspace-write")
    command = f"{fsmonitor_common(marker)} && {plant} && touch ready && cat gate > /dev/null"
    task = asyncio.ensure_future(executor.run([command], timeout_ms=60_000))
    try:
        ready = await asyncio.to_thread(poll, lambda: (ws / "ready").exists(), 30)
        assert ready and not task.done()
        gone = await asyncio.to_thread(poll, lambda: not os.path.lexists(ws / ".git/commondir"))
        assert gone, "the planted commondir is still there while the command runs"
        user_session(ws, home)  # the user's (or an IDE's) git, meanwhile
        assert not marker.exists()
    finally:
        await asyncio.to_thread(open_gate, ws, 5.0 if not task.done() else 0.0)
        result = await task
    assert "removed planted" in result.output[0].stderr


# --- start-up and plan-time disarming ---------------------------------------------------------


def _simulate_crash_plant(ws: Path, marker: Path) -> None:
    """What a command left behind when Tandem died before its sweep (written directly)."""
    subprocess.run(["sh", "-c", fsmonitor_common(marker)], cwd=ws, check=True)
    (ws / ".git/commondir").write_text("../evilcommon\n")


def test_startup_sweep_disarms_a_planted_commondir(ws: Path, home: Path, marker: Path) -> None:
    from harnesses.workspace import Workspace

    _simulate_crash_plant(ws, marker)
    workspace = Workspace(ws, mode="auto", data_dir=ws.parent / "data")
    assert any("commondir" in text for text in workspace.startup_repairs)
    assert not os.path.lexists(ws / ".git/commondir")
    assert (ws / ".git/commondir.disabled-by-tandem").read_text() == "../evilcommon\n"
    user_session(ws, home)
    assert not marker.exists()


@pytest.mark.parametrize("mode", ["read-only", "workspace-write"])
async def test_plan_never_follows_a_planted_commondir(
    ws: Path, home: Path, marker: Path, mode: str
) -> None:
    _simulate_crash_plant(ws, marker)
    out = (await SubprocessShellExecutor(ws, sandbox=mode).run(["true"])).output[0]
    assert "commondir" in out.stderr
    user_session(ws, home)
    assert not marker.exists()


def test_startup_sweep_disarms_an_inert_config_worktree(ws: Path, home: Path) -> None:
    (ws / ".git/config.worktree").write_text('[core]\n\tfsmonitor = "touch /nowhere"\n')
    repairs = disarm_planted(ws)
    assert repairs and not os.path.lexists(ws / ".git/config.worktree")


def test_startup_sweep_keeps_what_git_wrote(ws: Path, home: Path, tmp_path: Path) -> None:
    user_git(ws, home, "config", "extensions.worktreeConfig", "true", check=True)
    user_git(ws, home, "config", "--worktree", "user.name", "Kept", check=True)
    user_git(ws, home, "worktree", "add", "-q", "wt", check=True)
    before = (ws / ".git/config.worktree").read_text()
    assert disarm_planted(ws) == []
    assert disarm_planted(ws / "wt") == []
    assert (ws / ".git/config.worktree").read_text() == before
    assert (ws / ".git/worktrees/wt/commondir").is_file()
    assert "Kept" in user_git(ws, home, "config", "user.name")
