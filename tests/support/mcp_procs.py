"""Helpers for MCP tests: the fault server's command, an HTTP server process, leak checks."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["FAULT_SERVER", "fault_params", "http_fault_server", "live_servers"]

FAULT_SERVER = str(Path(__file__).with_name("mcp_server.py"))


def fault_params(*extra: str, env: dict[str, str] | None = None) -> dict[str, object]:
    """``MCPServerStdioParams`` that start the fault server with ``extra`` arguments."""
    params: dict[str, object] = {"command": sys.executable, "args": [FAULT_SERVER, *extra]}
    if env is not None:
        params["env"] = env
    return params


def live_servers(marker: str = "mcp_server.py") -> list[int]:
    """Live (non-zombie) descendants of this test process whose command line contains
    ``marker``, from /proc (other test runs on the machine are not counted)."""
    parents: dict[int, int] = {}
    lines: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
            lines[int(entry)] = cmdline
    me = os.getpid()
    found: list[int] = []
    for pid, cmdline in lines.items():
        if marker not in cmdline or pid == me:
            continue
        parent = parents.get(pid)
        while parent is not None and parent > 1:
            if parent == me:
                found.append(pid)
                break
            parent = parents.get(parent)
    return found


@contextmanager
def http_fault_server(*extra: str) -> Iterator[str]:
    """Run the fault server over streamable HTTP (or ``--sse``) on 127.0.0.1; yield its base
    ``http://127.0.0.1:<port>``; stop and reap it after."""
    mode = [] if "--sse" in extra else ["--http"]
    proc = subprocess.Popen(
        [sys.executable, FAULT_SERVER, *mode, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until the server has bound its socket
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
