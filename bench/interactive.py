"""How fast commands that would wait for a human return (issue 13 Build 4, Done-means).

Runs each command of the issue through the real :class:`SubprocessShellExecutor`, unsandboxed
and (when bubblewrap works) in ``workspace-write``, in a throw-away repository whose git config
names ``vim`` as editor and ``less`` as pager, and prints the median wall time of ``--runs``
runs in milliseconds, the ratio to the 5 s budget, the exit code and the first line saying
why. Then the same lines with what Tandem set before (the user's editor and pager through the
executor's ``env``, no terminal-wait watch) and a short ``--before-timeout``, to show which
ones used to hang; and the cost of the terminal-wait watch on a quiet 1 s command.

Usage: ``python -m bench.interactive [--runs 3] [--before-timeout 6]``
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from harnesses.shell import SubprocessShellExecutor
from harnesses.shell.sandbox import sandbox_available

BUDGET_MS = 5000
_WHY = ("tandem:", "fatal:", "error:", "Overwrite", "No such device")
#: What git used before Tandem set its own editor and pager (the user's, from git config).
_BEFORE_ENV = {"GIT_EDITOR": "vim", "GIT_SEQUENCE_EDITOR": "vim", "GIT_PAGER": "less"}


class _AuthRequired(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="private"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:
        return


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _repo(root: Path, remote: str) -> Path:
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    for key, value in (
        ("user.name", "B"),
        ("user.email", "b@example.invalid"),
        ("core.editor", "vim"),
        ("core.pager", "less"),
    ):
        _git(repo, "config", key, value)
    for name in ("one", "two", "three"):
        (repo / name).write_text(name + "\n")
        _git(repo, "add", name)
        _git(repo, "commit", "-q", "-m", name)
    _git(repo, "remote", "add", "origin", remote)
    return repo


def _pty(line: str) -> str:
    return f"{sys.executable} -c 'import pty, sys; pty.spawn(sys.argv[1:])' {line}"


CASES: list[tuple[str, str]] = [
    ("git commit (no -m)", "git commit --allow-empty"),
    ("git rebase -i HEAD~1", "git rebase -i HEAD~1"),
    ("git log (pager, on a pty)", _pty("git log")),
    ("read x", "read x"),
    ("read x </dev/tty", "read x </dev/tty"),
    ("ssh-keygen (prompt)", "rm -f key key.pub; ssh-keygen -q -f key"),
    ("git push (401)", "git push origin HEAD"),
    ("pty: bash read", _pty("bash -c 'read x'")),
    ("pty: ssh-keygen overwrite", _pty("ssh-keygen -f key")),
]


def _why(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if any(mark in line for mark in _WHY):
            return line[:90]
    return f"output: {lines[0][:80]}" if lines else "(no output)"


async def _case(executor: SubprocessShellExecutor, line: str, runs: int) -> tuple[float, str]:
    times: list[float] = []
    summary = ""
    for _ in range(runs):
        started = time.monotonic()
        result = await executor.run([line])
        times.append((time.monotonic() - started) * 1000)
        entry = result.output[0]
        code = entry.outcome.exit_code if entry.outcome.type == "exit" else "timeout"
        summary = f"exit {code}: {_why(entry.stdout + entry.stderr)}"
    return statistics.median(times), summary


async def _main(runs: int, before_timeout_s: float) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AuthRequired)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    remote = f"http://127.0.0.1:{server.server_address[1]}/private.git"
    sandboxes = ["off", "workspace-write"] if sandbox_available() else ["off"]
    with tempfile.TemporaryDirectory() as tmp:
        repo = _repo(Path(tmp), remote)
        print(f"{'case':28} {'sandbox':16} {'median ms':>9} {'/5 s':>5}  result")
        for sandbox in sandboxes:
            executor = SubprocessShellExecutor(
                repo,
                sandbox=sandbox,
                network=True,
                default_timeout_ms=60_000,  # type: ignore[arg-type]
            )
            for name, line in CASES:
                ms, summary = await _case(executor, line, runs)
                print(f"{name:28} {sandbox:16} {ms:9.0f} {ms / BUDGET_MS:5.2f}  {summary}")
        print(
            f"\nbefore (the user's editor and pager, no terminal-wait watch; askpass as now), "
            f"timeout {before_timeout_s:g} s:"
        )
        before = SubprocessShellExecutor(
            repo,
            env=_BEFORE_ENV,
            default_timeout_ms=int(before_timeout_s * 1000),
            input_wait_s=None,
        )
        for name, line in CASES:
            ms, summary = await _case(before, line, 1)
            print(f"{name:28} {'off':16} {ms:9.0f} {ms / BUDGET_MS:5.2f}  {summary}")
        print("\nwatch cost on a quiet command (sleep 1, on a pty), median of runs:")
        line = _pty("sleep 1")
        on, _ = await _case(SubprocessShellExecutor(repo), line, runs)
        off, _ = await _case(SubprocessShellExecutor(repo, input_wait_s=None), line, runs)
        print(f"watch on {on:.0f} ms, off {off:.0f} ms, ratio {on / off:.3f}")
    server.shutdown()
    server.server_close()


def main() -> None:
    """Parse the options and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before-timeout", type=float, default=6.0)
    options = parser.parse_args()
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    asyncio.run(_main(max(1, options.runs), options.before_timeout))


if __name__ == "__main__":
    main()
