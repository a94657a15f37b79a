"""Attack class: processes that outlive their command (PRODUCT.md "Safety model", issue 11).

Each case starts a process that tries to survive the command (``setsid``, ``setsid -f``,
``nohup ... &``, a double fork, a Python daemon, ``disown``, killing its own supervisor,
ignoring SIGTERM through a timeout, clearing its environment with ``env -i`` so that no
marker is left), waits in the command until the escapee is up (it touches a ``ready`` file),
and the promise is: once the command has returned, no process with the case's unique marker
(a ``sleep`` duration) is alive. Sandbox off and on; with the sandbox off, the command's PID
namespace (``harnesses/spawn/supervisor.py``) is what holds against ``env -i`` + ``setsid`` +
``kill -9 $PPID`` (red-team hole 6), even when Tandem exits right after.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from harnesses.shell import SubprocessShellExecutor, sandbox_available
from harnesses.spawn import can_isolate
from tests.security._procs import alive_with, marker_seconds, poll

#: Bounded wait inside the command until the escapee has started (``ready`` exists).
WAIT_READY = "for i in $(seq 200); do [ -e ready ] && break; sleep 0.01; done"
#: The escapee: marks readiness, then becomes ``sleep <marker>``.
ESCAPEE = "sh -c 'touch ready; exec sleep {m}'"

#: Without a PID namespace (an unprivileged Tandem), an ``env -i`` + ``setsid`` escapee whose
#: supervisor was killed is a known limit (``harnesses/spawn/strays.py``).
NEEDS_NAMESPACE = pytest.mark.skipif(not can_isolate(), reason="no PID namespace: known limit")

TECHNIQUES = [
    pytest.param("setsid " + ESCAPEE + " & " + WAIT_READY, id="setsid"),
    pytest.param("setsid -f " + ESCAPEE + "; " + WAIT_READY, id="setsid-f"),
    pytest.param("nohup " + ESCAPEE + " >/dev/null 2>&1 & " + WAIT_READY, id="nohup-bg"),
    pytest.param("( ( " + ESCAPEE + " & ) & ); " + WAIT_READY, id="double-fork"),
    pytest.param(
        "python3 -c 'import os,sys\n"
        "if os.fork(): sys.exit(0)\n"
        "os.setsid()\n"
        "if os.fork(): os._exit(0)\n"
        'open("ready","w").close()\n'
        'os.execvp("sleep", ["sleep", "{m}"])\'; ' + WAIT_READY,
        id="python-fork-setsid-daemon",
    ),
    pytest.param(ESCAPEE + " >/dev/null 2>&1 & disown; " + WAIT_READY, id="disown"),
    pytest.param(
        "setsid -f " + ESCAPEE + "; " + WAIT_READY + "; kill -9 $PPID", id="kill-supervisor"
    ),
    pytest.param(
        "setsid -f sh -c 'trap \"\" TERM; touch ready; exec sleep {m}'; "
        + WAIT_READY
        + "; kill -9 $PPID; sleep 5",
        id="kill-supervisor-then-linger",
    ),
    pytest.param(
        "trap '' TERM; setsid -f sh -c 'trap \"\" TERM; touch ready; exec sleep {m}'; "
        + WAIT_READY
        + "; sleep 30",
        id="ignore-sigterm-through-timeout",
    ),
    pytest.param(
        "setsid -f " + ESCAPEE + " >/dev/null 2>&1 </dev/null; " + WAIT_READY,
        id="setsid-f-detached-pipes",
    ),
    # Red-team hole 6: no marker in its environment (env -i), a session of its own (setsid),
    # and its supervisor killed, so neither Tandem's stray sweep nor a session id knows it.
    pytest.param(
        "setsid -f env -i /bin/bash -c 'touch ready; exec -a orphan_escape_test sleep {m}'; "
        + WAIT_READY
        + "; kill -9 $PPID",
        id="env-i-setsid-f-kill-supervisor",
        marks=NEEDS_NAMESPACE,
    ),
    pytest.param(
        "setsid -f env -i /bin/bash -c 'touch ready; exec -a orphan_escape_test sleep {m}'; "
        + WAIT_READY
        + "; kill -9 $PPID; sleep 0.3",
        id="env-i-setsid-f-kill-supervisor-then-linger",
        marks=NEEDS_NAMESPACE,
    ),
    pytest.param(
        "env -i /usr/bin/python3 -c 'import os,sys\n"
        "if os.fork(): sys.exit(0)\n"
        "os.setsid()\n"
        "if os.fork(): os._exit(0)\n"
        'open("ready","w").close()\n'
        'os.execv("/bin/sleep", ["sleep", "{m}"])\'; ' + WAIT_READY + "; kill -9 $PPID",
        id="env-i-python-daemon-kill-supervisor",
        marks=NEEDS_NAMESPACE,
    ),
    pytest.param(
        "setsid -f env -i /bin/sh -c 'touch ready; exec /bin/sleep {m}'; "
        + WAIT_READY
        + "; kill -9 $PPID 1; kill -KILL -- -$$",
        id="env-i-setsid-f-kill-parent-init-and-group",
        marks=NEEDS_NAMESPACE,
    ),
]

SANDBOX = [
    pytest.param("off", id="sandbox-off"),
    pytest.param(
        "workspace-write",
        id="sandbox-on",
        marks=pytest.mark.skipif(not sandbox_available(), reason="bubblewrap unusable here"),
    ),
]


@pytest.mark.parametrize("sandbox", SANDBOX)
@pytest.mark.parametrize("template", TECHNIQUES)
async def test_nothing_survives_the_command(tmp_path: Path, template: str, sandbox: str) -> None:
    marker = marker_seconds()
    executor = SubprocessShellExecutor(tmp_path, sandbox=sandbox, kill_grace_ms=200)  # type: ignore[arg-type]
    try:
        result = await executor.run([template.replace("{m}", marker)], timeout_ms=3_000)
        assert (tmp_path / "ready").exists(), result.output[0].stderr  # the escapee did start
        assert poll(lambda: not alive_with(marker)), f"survivors: {alive_with(marker)}"
    finally:
        for pid in alive_with(marker):  # never leave a process behind, even on failure
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("sandbox", SANDBOX)
@pytest.mark.parametrize(
    "template",
    [
        pytest.param("setsid -f " + ESCAPEE + "; sleep 30", id="window-kill-setsid-f"),
        pytest.param(
            "trap '' TERM; setsid -f sh -c 'trap \"\" TERM; touch ready; exec sleep {m}'; sleep 30",
            id="window-kill-ignoring-sigterm",
        ),
    ],
)
async def test_the_windows_kill_takes_everything(
    tmp_path: Path, template: str, sandbox: str
) -> None:
    import asyncio

    from harnesses.shell import ShellCommandStarted
    from harnesses.workspace import Workspace

    marker = marker_seconds()
    started: list[int] = []
    workspace = Workspace(
        tmp_path,
        mode="full",
        data_dir=tmp_path.parent / f"{tmp_path.name}-data",
        listener=lambda e: started.append(e.pid) if isinstance(e, ShellCommandStarted) else None,
    )
    workspace.executor.sandbox = sandbox  # type: ignore[assignment]
    workspace.executor.kill_grace_ms = 200
    run = asyncio.create_task(workspace.executor.run([template.replace("{m}", marker)]))
    try:
        for _ in range(500):  # bounded: until the escapee is up
            if started and (tmp_path / "ready").exists() and alive_with(marker):
                break
            await asyncio.sleep(0.01)
        assert started and alive_with(marker)
        assert workspace.kill_process_group(started[0])  # the terminal's Kill button
        result = await asyncio.wait_for(run, 5)
        assert result.output[0].outcome.exit_code != 0
        assert poll(lambda: not alive_with(marker)), alive_with(marker)
    finally:
        run.cancel()
        for pid in alive_with(marker):
            os.kill(pid, signal.SIGKILL)


def test_a_supervisor_whose_tandem_is_already_gone_starts_nothing(tmp_path: Path) -> None:
    import subprocess
    import sys

    from harnesses.spawn import SUPERVISOR

    marker = marker_seconds()
    # PARENT_PID names a process that is not the supervisor's parent: the race where Tandem
    # died between fork and PR_SET_PDEATHSIG. The program must never start.
    argv = [sys.executable, "-S", "-I", str(SUPERVISOR), "1", "200", "command", "--"]
    done = subprocess.run(
        [*argv, "sh", "-c", f"touch {tmp_path}/started; exec sleep {marker}"],
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 128 + signal.SIGTERM
    assert not (tmp_path / "started").exists() and not alive_with(marker)


ESCAPE_HOST = """
import asyncio, sys
from harnesses.shell import SubprocessShellExecutor

async def main():
    executor = SubprocessShellExecutor(sys.argv[1], kill_grace_ms=200)
    result = await executor.run([sys.argv[2]], timeout_ms=10_000)
    print("exit", result.output[0].outcome.exit_code, flush=True)

asyncio.run(main())
"""


@NEEDS_NAMESPACE
@pytest.mark.parametrize(
    "template",
    [
        pytest.param(
            "setsid -f env -i /bin/bash -c 'touch ready; exec -a orphan_escape_test sleep {m}'; "
            + WAIT_READY
            + "; kill -9 $PPID",
            id="red-team-reproducer",
        ),
        pytest.param(
            "setsid -f env -i /bin/bash -c 'touch ready; exec -a orphan_escape_test sleep {m}'; "
            + WAIT_READY
            + "; kill -9 $PPID; touch killed; sleep 30",
            id="host-killed-mid-command",
        ),
    ],
)
def test_an_env_i_escapee_does_not_outlive_tandem(tmp_path: Path, template: str) -> None:
    """Red-team hole 6, as reported: sandbox off, the command clears its environment, starts a
    new session and SIGKILLs its supervisor; then the host (Tandem) exits (normally, or by
    SIGKILL mid-command). The promise: no process of the command is left, within 2 s."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    marker = marker_seconds()
    host = subprocess.Popen(
        [sys.executable, "-c", ESCAPE_HOST, str(tmp_path), template.replace("{m}", marker)],
        env={**os.environ, "PYTHONPATH": str(root)},
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert poll(lambda: (tmp_path / "ready").exists() and bool(alive_with(marker)), 30)
        if "sleep 30" in template:  # Tandem dies mid-command, after the supervisor kill
            assert poll(lambda: (tmp_path / "killed").exists(), 30)
            host.kill()
        host.wait(timeout=30)
        assert poll(lambda: not alive_with(marker), timeout_s=2.0), (
            f"survivors: {alive_with(marker)}"
        )
    finally:
        if host.poll() is None:
            host.kill()
        host.communicate()
        for pid in alive_with(marker):
            os.kill(pid, signal.SIGKILL)


@NEEDS_NAMESPACE
@pytest.mark.parametrize("mode", ["command", "service"])
def test_a_sigkilled_supervisor_takes_its_namespace(tmp_path: Path, mode: str) -> None:
    """The supervisor itself is SIGKILLed (it has no chance to clean up): the namespace's init
    dies by its parent-death signal, and the kernel kills every process of the namespace,
    an ``env -i`` + ``setsid`` one included."""
    import subprocess

    from harnesses.spawn import SUPERVISOR, supervised_argv

    marker = marker_seconds()
    script = (
        f"setsid -f env -i /bin/sh -c 'touch {tmp_path}/ready; exec /bin/sleep {marker}'; "
        f"exec sleep {marker}"
    )
    argv = supervised_argv(["bash", "-c", script], mode=mode, grace_ms=200)  # type: ignore[arg-type]
    assert argv[3] == str(SUPERVISOR) and argv[6].startswith(mode)
    supervisor = subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        assert poll(lambda: (tmp_path / "ready").exists() and len(alive_with(marker)) >= 2, 30)
        supervisor.kill()
        supervisor.wait(timeout=10)
        assert poll(lambda: not alive_with(marker), timeout_s=2.0), alive_with(marker)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
        for pid in alive_with(marker):
            os.kill(pid, signal.SIGKILL)
