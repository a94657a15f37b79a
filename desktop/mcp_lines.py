"""``tandem run``'s lines for local MCP servers: states, calls, results, project trust."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from core.mcp.config import LocalMcpServer
from harnesses.mcp import LocalMcpServers
from harnesses.mcp.project import PROJECT_FILE, TrustStore, project_servers, read_project_file

from .views.ansi import display_text

__all__ = ["McpPrinter", "output_text", "trusted_project_servers"]

_LIMIT = 2000  # characters of a result printed


def output_text(output: Any) -> str:
    """A function-tool output of an MCP tool as text: text parts joined, images as
    ``[image]``, anything else as JSON."""
    if isinstance(output, str):
        return output
    parts = output if isinstance(output, list) else [output]
    texts: list[str] = []
    for part in parts:
        if isinstance(part, dict) and part.get("type") in ("text", "input_text"):
            texts.append(str(part.get("text", "")))
        elif isinstance(part, dict) and part.get("type") in ("image", "input_image"):
            texts.append("[image]")
        else:
            texts.append(json.dumps(part, default=str))
    return "\n".join(texts)


class McpPrinter:
    """Prints MCP server states and calls; other events are left to ``print_item``.

    Lines: ``[mcp] git: ready, 12 tools``; ``[mcp] git > git_log {"repo_path": "."}``;
    ``  | <result lines>`` and ``  (git_log: 0.12 s)`` (or ``  (git_log failed: 0.1 s)``).
    """

    def __init__(self, servers: LocalMcpServers, out: TextIO) -> None:
        self.servers = servers
        self.out = out
        self._calls: dict[str, tuple[str, str, float]] = {}

    def print_states(self) -> None:
        """One ``[mcp]`` line per configured server."""
        for status in self.servers.statuses():
            print(display_text(f"[mcp] {status.line()}"), file=self.out)

    def handle(self, event: Any) -> bool:
        """Print ``event`` when it is an MCP call or its output; ``True`` when printed."""
        raw = getattr(getattr(event, "item", None), "raw_item", None)
        if not isinstance(raw, dict):
            return False
        name = getattr(event, "name", "")
        if name == "tool_called" and raw.get("type") == "function_call":
            found = self.servers.describe_call(
                str(raw.get("name")), str(raw.get("arguments") or "")
            )
            if found is None:
                return False
            server, tool, pretty = found
            self._calls[str(raw.get("call_id"))] = (server, tool, time.monotonic())
            compact = json.dumps(json.loads(pretty)) if pretty.startswith("{") else pretty
            print(display_text(f"[mcp] {server} > {tool} {compact}"), file=self.out)
            return True
        if name == "tool_output" and str(raw.get("call_id")) in self._calls:
            server, tool, started = self._calls.pop(str(raw.get("call_id")))
            text = output_text(getattr(event.item, "output", raw.get("output")))
            failed = text.startswith(("Error: MCP tool", "An error occurred while"))
            clipped = text[:_LIMIT] + ("…" if len(text) > _LIMIT else "")
            for line in display_text(clipped).splitlines():
                print(f"  | {line}".rstrip(), file=self.out)
            took = time.monotonic() - started
            print(f"  ({tool}{' failed' if failed else ''}: {took:.2f} s)", file=self.out)
            return True
        return False


async def trusted_project_servers(
    root: Path,
    *,
    interactive: bool,
    prompt: Callable[[str], str],
    out: TextIO,
    store: TrustStore | None = None,
) -> dict[str, LocalMcpServer]:
    """The servers of ``root``'s ``.tandem/mcp.toml`` the user trusts (issue 18 item 2).

    First use asks on the terminal (``y`` trust, ``n`` not; remembered per repository until
    the file changes); without a terminal they stay off and a line says so.
    """
    store = store or TrustStore()
    found = read_project_file(root)
    if found is None or not found.servers:
        return {}
    answer: bool | None = store.decision(root, found.digest)
    names = ", ".join(f"{n} ({s.summary()})" for n, s in found.servers.items())
    if answer is None and interactive:
        print(display_text(f"[mcp] {PROJECT_FILE} adds MCP servers: {names}"), file=out)
        reply = (
            (await asyncio.to_thread(prompt, "  trust this repository's servers [y/n]: "))
            .strip()
            .lower()
        )
        answer = reply in ("y", "yes")
    servers, _, trusted = project_servers(
        root, store, (lambda _f: answer) if answer is not None else None
    )
    if not trusted:
        print(display_text(f"[mcp] {PROJECT_FILE} servers off (not trusted): {names}"), file=out)
    return servers
