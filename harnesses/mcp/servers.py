"""The local MCP servers of a run: built from the settings, started, watched and stopped.

A stdio server starts under Tandem's supervisor (``harnesses.spawn``: its whole process tree
dies with it and with Tandem), with a clean environment plus its ``env`` and the variables it
names in ``env_vars``, optionally inside bubblewrap (workspace read-only, secret paths hidden,
no network).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.mcp import MCPServer, MCPServerStdio, MCPServerStreamableHttp, prefixed_tool_name
from core.mcp.config import LocalMcpServer
from core.policy.modes import ApprovalMode
from core.redaction import register_secret
from harnesses.shell.sandbox import bwrap_argv, empty_file, find_bwrap, sandbox_available
from harnesses.shell.secret_paths import plan_hidden
from harnesses.spawn.spawner import supervised_argv

from .policy import approval_callable, static_filter

__all__ = ["LocalMcpServers", "ServerStatus", "build_server"]

#: ``Agent.mcp_config`` for Tandem's agent: tools named ``mcp_<server>__<tool>``.
MCP_CONFIG: dict[str, Any] = {"include_server_in_tool_names": True}


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """One server as shown in Settings, the top bar and ``tandem run``.

    Attributes:
        name: the ``[mcp_servers.NAME]`` name.
        state: ``disabled``, ``stopped``, ``starting``, ``ready``, ``failed`` or ``closed``.
        tools: tools offered (after filters) when ready, else 0.
        error: the failure message (with the last stderr lines), else ``None``.
    """

    name: str
    state: str
    tools: int = 0
    error: str | None = None

    def line(self) -> str:
        """``git: ready, 12 tools`` / ``fs: failed: ...`` / ``time: disabled``."""
        if self.state == "ready":
            return f"{self.name}: ready, {self.tools} tool{'s' if self.tools != 1 else ''}"
        if self.state == "failed" and self.error:
            return f"{self.name}: failed: {self.error}"
        return f"{self.name}: {self.state}"


def _program_roots(command: str) -> list[Path]:
    """Folders a sandboxed server's program needs that the sandbox's private ``/tmp`` would
    hide: the install root of a program under ``/tmp`` (the folder holding its
    ``node_modules``, or a venv), else nothing (the rest of ``/`` is visible read-only)."""
    found = shutil.which(command)
    if found is None:
        return []
    roots: list[Path] = []
    for path in {Path(found).absolute(), Path(os.path.realpath(found))}:
        if not str(path).startswith("/tmp/"):
            continue
        parts = path.parts
        if "node_modules" in parts:
            roots.append(Path(*parts[: parts.index("node_modules")]))
        elif (path.parent.parent / "pyvenv.cfg").is_file():
            roots.append(path.parent.parent)
        else:
            roots.append(path.parent)
    return sorted(set(roots))


def _stdio_argv(
    config: LocalMcpServer, workspace: Path, hidden: list[Path], shown: list[Path]
) -> list[str]:
    assert config.command is not None
    argv = [config.command, *config.args]
    if config.sandbox:
        bwrap = find_bwrap()
        if bwrap is None or not sandbox_available():
            raise RuntimeError("sandbox requested but bubblewrap is not available")
        plan = plan_hidden(workspace, extra=hidden, shown=shown)
        prefix = bwrap_argv(
            bwrap,
            "read-only",
            workspace,
            network=False,
            hidden=plan.hidden,
            empty=empty_file(),
            visible=_program_roots(config.command),
        )
        argv = [*prefix, *argv]
    return supervised_argv(argv)


def build_server(
    name: str,
    config: LocalMcpServer,
    *,
    workspace: Path,
    mode: Callable[[], ApprovalMode],
    environ: Mapping[str, str] | None = None,
    hidden_paths: list[Path] | None = None,
    shown_paths: list[Path] | None = None,
) -> MCPServer:
    """The :mod:`core.mcp` server for one ``[mcp_servers.NAME]`` table.

    Raises:
        RuntimeError: a named variable (``env_vars``, ``bearer_token_env_var``) is not set, or
            the sandbox was asked for and bubblewrap is missing.
    """
    environ = os.environ if environ is None else environ
    common: dict[str, Any] = {
        "name": name,
        "cache_tools_list": True,
        "client_session_timeout_seconds": config.tool_timeout_sec,
        "startup_timeout_seconds": config.startup_timeout_sec,
        "tool_timeout_seconds": config.tool_timeout_sec,
        "tool_filter": static_filter(config),
        "require_approval": approval_callable(config, mode),
    }
    if config.command is not None:
        env = {}
        for var in config.env_vars:
            if var not in environ:
                raise RuntimeError(f"environment variable {var} (env_vars) is not set")
            env[var] = environ[var]
            register_secret(environ[var], source=f"mcp:{name}:{var}")
        env.update(config.env)
        argv = _stdio_argv(config, workspace, hidden_paths or [], shown_paths or [])
        cwd = Path(config.cwd).expanduser() if config.cwd else workspace
        return MCPServerStdio(
            params={"command": argv[0], "args": argv[1:], "env": env, "cwd": cwd}, **common
        )
    headers = dict(config.http_headers)
    if config.bearer_token_env_var:
        token = environ.get(config.bearer_token_env_var)
        if not token:
            raise RuntimeError(
                f"environment variable {config.bearer_token_env_var} (bearer_token_env_var) is not set"
            )
        headers["Authorization"] = f"Bearer {token}"
    assert config.url is not None
    return MCPServerStreamableHttp(params={"url": config.url, "headers": headers}, **common)


class LocalMcpServers:
    """The enabled servers of a run; :meth:`start` connects them all, :meth:`aclose` stops them.

    Servers that fail to build or start are kept as ``failed`` (with their message) and left
    out of :meth:`ready`; a server that fails later is restarted on its next use by
    :mod:`core.mcp`.
    """

    def __init__(
        self,
        configs: Mapping[str, LocalMcpServer],
        *,
        workspace: Path,
        mode: Callable[[], ApprovalMode],
        environ: Mapping[str, str] | None = None,
        hidden_paths: list[Path] | None = None,
        shown_paths: list[Path] | None = None,
    ) -> None:
        self.configs = dict(configs)
        self.servers: dict[str, MCPServer] = {}
        self.errors: dict[str, str] = {}
        self.listeners: list[Callable[[ServerStatus], None]] = []
        for name, config in self.configs.items():
            if not config.enabled:
                continue
            try:
                server = build_server(
                    name,
                    config,
                    workspace=workspace,
                    mode=mode,
                    environ=environ,
                    hidden_paths=hidden_paths,
                    shown_paths=shown_paths,
                )
            except (RuntimeError, OSError, ValueError) as exc:
                self.errors[name] = str(exc)
                continue
            server.state_listeners.append(lambda s, n=name: self._changed(n))  # type: ignore[attr-defined]
            self.servers[name] = server

    def _changed(self, name: str) -> None:
        status = self.status(name)
        for listener in list(self.listeners):
            listener(status)

    async def start(self) -> list[ServerStatus]:
        """Connect every server at once and list its tools; returns each server's status."""

        async def one(name: str, server: MCPServer) -> None:
            try:
                await server.connect()
                await server.list_tools()
            except Exception as exc:  # shown as the server's state; the run goes on
                self.errors[name] = str(exc)
            self._changed(name)  # listed: "ready, N tools" (or the failure)

        await asyncio.gather(*(one(n, s) for n, s in self.servers.items()))
        return self.statuses()

    def ready(self) -> list[MCPServer]:
        """The servers that started (for ``Agent(mcp_servers=...)``)."""
        return [
            s
            for n, s in self.servers.items()
            if getattr(s, "state", "") == "ready" and n not in self.errors
        ]

    def status(self, name: str) -> ServerStatus:
        """The status of server ``name``."""
        config = self.configs[name]
        server = self.servers.get(name)
        if not config.enabled:
            return ServerStatus(name, "disabled")
        if server is None:
            return ServerStatus(name, "failed", error=self.errors.get(name))
        state = str(getattr(server, "state", "stopped"))
        if state == "ready":
            cached = getattr(server, "cached_tools", None)
            if cached is None:  # connected, tools not listed yet
                return ServerStatus(name, "starting")
            return ServerStatus(name, state, tools=_count_offered(server, cached))
        error = getattr(server, "last_error", None) or self.errors.get(name)
        return ServerStatus(name, "failed" if error and state != "closed" else state, error=error)

    def statuses(self) -> list[ServerStatus]:
        """Every configured server's status, in settings order."""
        return [self.status(name) for name in self.configs]

    def describe_call(self, tool_name: str, arguments: str) -> tuple[str, str, str] | None:
        """``(server, tool, pretty-printed arguments)`` for a call of an MCP tool, else ``None``."""
        for name, server in self.servers.items():
            for tool in getattr(server, "cached_tools", None) or []:
                if prefixed_tool_name(name, tool.name) == tool_name or tool.name == tool_name:
                    return name, tool.name, _pretty(arguments)
        return None

    async def aclose(self) -> None:
        """Stop every server (their process trees end)."""
        await asyncio.gather(*(s.cleanup() for s in self.servers.values()), return_exceptions=True)


def _count_offered(server: MCPServer, tools: list[Any]) -> int:
    tool_filter = getattr(server, "tool_filter", None)
    if not isinstance(tool_filter, dict):
        return len(tools)
    allowed = tool_filter.get("allowed_tool_names")
    blocked = set(tool_filter.get("blocked_tool_names") or [])
    return sum(1 for t in tools if (allowed is None or t.name in allowed) and t.name not in blocked)


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments or "{}"), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments
