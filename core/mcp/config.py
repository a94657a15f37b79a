"""``[mcp_servers.NAME]``: a local MCP server in the settings file, with the Codex CLI's keys.

The Codex CLI (``~/.codex/config.toml``) keys are ``command``, ``args``, ``env``,
``env_vars``, ``cwd``, ``url``, ``bearer_token_env_var``, ``http_headers``,
``startup_timeout_sec`` (default 10), ``tool_timeout_sec`` (default 60), ``enabled``,
``enabled_tools`` and ``disabled_tools``. Tandem adds ``approval`` (``allow``/``ask``/``deny``
for every tool of the server; default ``ask``), ``tools`` (the same per tool name) and
``sandbox`` (run a stdio server in bubblewrap: workspace read-only, no network).

Before issue 18 the hosted MCP servers were a ``[[mcp_servers]]`` list; they now live in
``[hosted_mcp_servers.LABEL]`` tables and an old file is read with a note
(:func:`tables_from_toml`).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..toml_text import toml_key, toml_literal

__all__ = [
    "CODEX_KEYS",
    "LocalMcpServer",
    "ToolApproval",
    "check_server_name",
    "hosted_servers_toml",
    "local_servers_toml",
    "tables_from_toml",
]

ToolApproval = Literal["allow", "ask", "deny"]

CODEX_KEYS = (
    "command",
    "args",
    "env",
    "env_vars",
    "cwd",
    "url",
    "bearer_token_env_var",
    "http_headers",
    "startup_timeout_sec",
    "tool_timeout_sec",
    "enabled",
    "enabled_tools",
    "disabled_tools",
)
"""The ``[mcp_servers.NAME]`` keys Tandem shares with the Codex CLI (others are not imported)."""

_NAME = re.compile(r"[A-Za-z0-9_-]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_server_name(name: str) -> str:
    """A server name (the ``NAME`` of ``[mcp_servers.NAME]``): letters, digits, ``_``, ``-``.

    Raises:
        ValueError: another character, or empty.
    """
    if not _NAME.fullmatch(name or ""):
        raise ValueError(f"MCP server name {name!r} may only contain letters, digits, '_' and '-'")
    return name


class LocalMcpServer(BaseModel):
    """One local MCP server: a stdio ``command`` or a streamable HTTP ``url`` (exactly one).

    Attributes:
        command / args / cwd: how to start a stdio server (no shell).
        env: variables given to a stdio server, on top of a clean environment.
        env_vars: names of variables passed from Tandem's environment (secrets only when
            named here).
        url: a streamable HTTP endpoint (``http``/``https``).
        bearer_token_env_var: the variable holding a bearer token for ``url``.
        http_headers: fixed headers sent to ``url``.
        startup_timeout_sec: start plus ``initialize`` limit in seconds (default 10; > 0).
        tool_timeout_sec: limit of one tool call in seconds (default 60; > 0).
        enabled: start this server (default ``True``).
        enabled_tools: the only tools offered (``None``: all); disabled_tools: tools hidden.
        approval: ``allow``/``ask``/``deny`` for the server's tools (default ``ask``; tools
            declaring ``readOnlyHint`` are allowed in the ask mode and above).
        tools: per-tool ``allow``/``ask``/``deny``, overriding ``approval``.
        sandbox: run a stdio server in bubblewrap, workspace read-only, no network.

    Raises:
        pydantic.ValidationError: neither or both of ``command`` and ``url``; a bad URL,
            timeout or variable name.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    env_vars: list[str] = Field(default_factory=list)
    cwd: str | None = None
    url: str | None = None
    bearer_token_env_var: str | None = None
    http_headers: dict[str, str] = Field(default_factory=dict)
    startup_timeout_sec: float = Field(default=10.0, gt=0)
    tool_timeout_sec: float = Field(default=60.0, gt=0)
    enabled: bool = True
    enabled_tools: list[str] | None = None
    disabled_tools: list[str] = Field(default_factory=list)
    approval: ToolApproval = "ask"
    tools: dict[str, ToolApproval] = Field(default_factory=dict)
    sandbox: bool = False

    @field_validator("command", "url", "cwd", "bearer_token_env_var")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value.strip() or None if isinstance(value, str) else value

    @field_validator("env_vars")
    @classmethod
    def _env_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not an environment variable name")
        return value

    @field_validator("env")
    @classmethod
    def _env_keys(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not an environment variable name")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> LocalMcpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of 'command' (stdio) or 'url' (streamable HTTP)")
        if self.url is not None and not re.match(r"https?://[^/\s]+", self.url):
            raise ValueError(f"{self.url!r} is not an http:// or https:// URL with a host")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``"stdio"`` for a ``command``, ``"http"`` for a ``url``."""
        return "stdio" if self.command is not None else "http"

    def tool_approval(self, tool: str) -> ToolApproval:
        """The rule for ``tool``: its ``tools`` entry, else ``approval``."""
        return self.tools.get(tool, self.approval)

    def summary(self) -> str:
        """``command arg...`` or the URL, for lists."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return str(self.url)


def tables_from_toml(data: dict[str, Any], notes: list[str] | None = None) -> dict[str, Any]:
    """Map the file's tables to :class:`~core.settings.Settings` fields.

    ``[mcp_servers.NAME]`` tables become ``local_mcp_servers``; ``[hosted_mcp_servers.LABEL]``
    become the hosted list ``mcp_servers`` (label = the table name unless given). An old
    ``[[mcp_servers]]`` list is kept as the hosted list and a note is appended to ``notes``.
    """
    out = dict(data)
    local = out.pop("mcp_servers", None)
    hosted = out.pop("hosted_mcp_servers", None)
    hosted_list: list[Any] = []
    if isinstance(local, list):  # the file of a Tandem before issue 18
        hosted_list.extend(local)
        if notes is not None and local:
            notes.append(
                "hosted MCP servers moved from [[mcp_servers]] to [hosted_mcp_servers.LABEL]; "
                "the file is rewritten in the new form when settings are next saved"
            )
        local = None
    if isinstance(hosted, dict):
        for label, table in hosted.items():
            hosted_list.append({"label": label, **table} if isinstance(table, dict) else table)
    elif hosted is not None:
        hosted_list.append(hosted)  # let validation name the wrong shape
    if hosted_list:
        out["mcp_servers"] = hosted_list
    if local is not None:
        out["local_mcp_servers"] = local
    return out


def local_servers_toml(servers: dict[str, LocalMcpServer]) -> list[str]:
    """``[mcp_servers.NAME]`` tables for the file, keys with default values left out."""
    lines: list[str] = []
    for name, server in servers.items():
        lines += ["", f"[mcp_servers.{toml_key(name)}]"]
        dumped = server.model_dump(exclude_defaults=True, exclude_none=True)
        for key, value in dumped.items():
            lines.append(f"{key} = {toml_literal(value)}")
    return lines


def hosted_servers_toml(servers: list[Any]) -> list[str]:
    """``[hosted_mcp_servers.LABEL]`` tables for the hosted servers (``McpServer`` models)."""
    lines: list[str] = []
    for server in servers:
        lines += ["", f"[hosted_mcp_servers.{toml_key(server.label)}]"]
        for key, value in server.model_dump(exclude_none=True).items():
            if key != "label":
                lines.append(f"{key} = {toml_literal(value)}")
    return lines
