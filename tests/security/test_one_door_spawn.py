"""Attack class: an agent process started around the spawner (CONVENTIONS item 16).

Every child process Tandem starts for the agent goes through ``harnesses.spawn`` (a supervisor
that kills the whole tree and dies with Tandem). A scan of ``core/``, ``harnesses/`` and
``desktop/`` (by AST, so comments and docstrings do not count) asserts that nothing else
starts processes, apart from a short list of non-agent doors, each with its reason. At run
time, the parent of a command is its supervisor, sandboxed or not.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from harnesses.shell import SubprocessShellExecutor, sandbox_available

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "harnesses", "desktop")

#: Attribute or function names that start a process (subprocess, asyncio, os, pty, Qt).
STARTERS = frozenset(
    {
        "Popen",
        "run",
        "call",
        "check_call",
        "check_output",
        "getoutput",
        "getstatusoutput",
        "create_subprocess_exec",
        "create_subprocess_shell",
        "subprocess_exec",
        "subprocess_shell",
        "fork",
        "forkpty",
        "posix_spawn",
        "posix_spawnp",
        "system",
        "popen",
        "execv",
        "execve",
        "execvp",
        "execvpe",
        "execl",
        "execle",
        "execlp",
        "execlpe",
        "spawnv",
        "spawnve",
        "spawnvp",
        "spawnvpe",
        "spawnl",
        "spawnle",
        "spawn",
        "startDetached",
        "QProcess",
    }
)
#: Modules whose use marks a file as starting processes.
MODULES = frozenset({"subprocess", "pty", "multiprocessing"})

#: Files allowed to start processes, and why. Anything else is an agent process around the door.
ALLOWED = {
    "harnesses/spawn/spawner.py": "the door itself: the supervisor via loop.subprocess_exec",
    "harnesses/spawn/supervisor.py": "inside the door: posix_spawnp of the supervised program",
    "core/secret_handoff.py": "Tandem re-executing itself without secrets (execve)",
    "harnesses/vcs/runner.py": "Tandem's own hardened git runner (the git door of item 16)",
    "harnesses/shell/sandbox.py": "probing bwrap with `true` (Tandem's own, no agent input)",
    "desktop/main_window.py": "QProcess.startDetached of a new Tandem window (not an agent)",
    "desktop/demo.py": "the demo checks its sample repo's tests itself (not an agent)",
    "desktop/views/diff/process.py": "the diff view's build process: Tandem's own module, "
    "no agent input on its command line (issue 15)",
}


def starters_in(source: str) -> set[str]:
    """Process-starting names used by ``source``: imports of MODULES, calls of STARTERS on
    ``subprocess``/``os``/``asyncio``/``pty``/a loop, and ``QProcess``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] in MODULES}
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in MODULES:
                found.add(node.module)
            found |= {a.name for a in node.names if a.name == "QProcess"}
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = func.value if isinstance(func, ast.Attribute) else None
            owner_name = getattr(owner, "id", getattr(owner, "attr", ""))
            if name in STARTERS and name not in ("run", "call", "spawn"):
                found.add(f"{owner_name}.{name}" if owner_name else name)
            elif name in ("run", "call", "spawn") and owner_name in ("subprocess", "pty", "os"):
                found.add(f"{owner_name}.{name}")
    return found


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


@pytest.mark.parametrize(
    "planted",
    [
        pytest.param("import subprocess\nsubprocess.run(['sh'])\n", id="subprocess-run"),
        pytest.param("import asyncio\nasyncio.create_subprocess_exec('sh')\n", id="asyncio-exec"),
        pytest.param("import asyncio\nasyncio.create_subprocess_shell('x')\n", id="asyncio-shell"),
        pytest.param("import os\nos.posix_spawn('/bin/sh', [], {})\n", id="posix-spawn"),
        pytest.param("import os\nos.fork()\n", id="os-fork"),
        pytest.param("import os\nos.system('x')\n", id="os-system"),
        pytest.param("import os\nos.execvp('sh', ['sh'])\n", id="os-exec"),
        pytest.param("from subprocess import Popen\nPopen(['sh'])\n", id="from-import-popen"),
        pytest.param("loop.subprocess_exec(f, 'sh')\n", id="loop-subprocess-exec"),
        pytest.param("from PySide6.QtCore import QProcess\n", id="qprocess"),
        pytest.param("import pty\npty.spawn('sh')\n", id="pty-spawn"),
    ],
)
def test_the_scan_sees_every_way_to_start_a_process(planted: str) -> None:
    assert starters_in(planted)


def test_nothing_else_starts_agent_processes() -> None:
    offenders = {}
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        found = starters_in(path.read_text(encoding="utf-8"))
        if found and rel not in ALLOWED:
            offenders[rel] = sorted(found)
    assert not offenders, f"processes started around harnesses.spawn: {offenders}"


SANDBOX = [
    pytest.param("off", id="sandbox-off"),
    pytest.param(
        "workspace-write",
        id="sandbox-on",
        marks=pytest.mark.skipif(not sandbox_available(), reason="bubblewrap unusable here"),
    ),
]


@pytest.mark.parametrize("sandbox", SANDBOX)
async def test_a_command_runs_under_its_supervisor(tmp_path: Path, sandbox: str) -> None:
    executor = SubprocessShellExecutor(tmp_path, sandbox=sandbox)  # type: ignore[arg-type]
    probe = "echo marker=$TANDEM_SPAWNED; tr '\\0' ' ' < /proc/$PPID/cmdline"
    out = (await executor.run([probe])).output[0].stdout
    assert f"marker={os.getpid()}" in out  # started by the spawner of this process
    if sandbox == "off":  # inside the sandbox the parent is bwrap, in its own PID namespace
        assert "supervisor.py" in out and f" {os.getpid()} " in out
