"""The one typed settings model and where its file lives (the file itself: :mod:`.file`)."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from ..mcp.config import LocalMcpServer
from ..policy.modes import ApprovalMode
from ..redaction import register_secret

__all__ = [
    "API_KEY_ENV",
    "APP_NAME",
    "ApiKey",
    "DEFAULT_MODEL",
    "MAX_RECENT_FOLDERS",
    "McpServer",
    "SETTINGS_FILE_NAME",
    "Settings",
    "data_dir",
    "mask_secret",
    "settings_dir",
    "settings_path",
]

logger = logging.getLogger("core")

APP_NAME = "tandem"
"""The name of the platform config and data folders."""

SETTINGS_FILE_NAME = "settings.toml"
"""The settings file's name inside :func:`settings_dir`."""

DEFAULT_MODEL = "gpt-5.5"
"""The model used when the settings name none."""

API_KEY_ENV = "OPENAI_API_KEY"
"""The environment variable whose value, when set, wins over the stored API key."""

MAX_RECENT_FOLDERS = 10
"""How many recent folders are kept (most recent first)."""

_MASK = "••••"
_STORED_FIELDS = (
    "model",
    "base_url",
    "api_key",
    "approval_mode",
    "sandbox_enabled",
    "chromium_path",
    "codex_path",
    "codex_use_login",
    "use_previous_response_id",
    "codex_stall_seconds",
    "rules_file",
    "recent_folders",
    "last_folder",
    "web_search",
    "code_interpreter",
    "image_generation",
    "explorer",
    "mcp_servers",
    "hosted_mcp_servers",
    "sandbox_hidden_paths",
    "sandbox_shown_paths",
    "checkpoint_cap_bytes",
    "checkpoint_keep_count",
    "checkpoint_keep_days",
    "checkpoint_min_age_minutes",
    "shell_input_wait_seconds",
    "agents_md_cap_bytes",
    "diff_split_min_columns",
    "no_key_needed",
    "context_threshold",
    "context_strategy",
    "auto_compact",
    "context_windows",
)
_CHECKPOINT_FIELDS = (
    "checkpoint_cap_bytes",
    "checkpoint_keep_count",
    "checkpoint_keep_days",
    "checkpoint_min_age_minutes",
)
_MCP_LABEL = re.compile(r"[A-Za-z0-9_-]+")


def settings_dir() -> Path:
    """The platform config folder of Tandem (``$XDG_CONFIG_HOME/tandem`` on Linux)."""
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    """The platform data folder of Tandem (``$XDG_DATA_HOME/tandem`` on Linux): journals,
    shadow checkpoint repositories."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def settings_path() -> Path:
    """The default settings file, ``settings_dir() / "settings.toml"``."""
    return settings_dir() / SETTINGS_FILE_NAME


def mask_secret(secret: str | SecretStr | None) -> str:
    """A secret for display: ``"••••abcd"``, at most its last 4 characters.

    Short secrets show fewer characters (a quarter of their length, rounded down), so a
    secret is never mostly revealed; an empty or missing one gives ``""``.
    """
    if secret is None:
        return ""
    value = secret.get_secret_value() if isinstance(secret, SecretStr) else secret
    if not value:
        return ""
    shown = min(4, len(value) // 4)
    return _MASK + (value[-shown:] if shown else "")


class ApiKey(SecretStr):
    """An API key: ``str``/``repr`` show ``'**********'``; :meth:`masked` shows ``••••abcd``."""

    def masked(self) -> str:
        """The key with everything but at most its last 4 characters hidden."""
        return mask_secret(self)


def _check_http_url(value: str) -> str:
    """``value`` stripped, when it is an ``http``/``https`` URL with a host.

    Raises:
        ValueError: a malformed URL (bad port...), another scheme or no host.
    """
    value = value.strip()
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{value!r} is not an http:// or https:// URL with a host")
    return value


class McpServer(BaseModel):
    """A remote MCP server whose tools OpenAI calls for the agent (a hosted ``mcp`` tool,
    tools-wire-spec §2.5). Immutable; validated at construction.

    Attributes:
        label: the ``server_label``: non-empty, only ``A-Z a-z 0-9 _ -`` (surrounding spaces
            are stripped); unique among :attr:`Settings.mcp_servers`.
        url: the ``server_url``, an ``http``/``https`` URL with a host (kept as typed, only
            stripped of surrounding spaces).
        require_approval: ``"always"`` (default: each call interrupts the run for the user's
            approval) or ``"never"``.
        allowed_tools: the only tool names the model may call on this server, or ``None`` for
            all; an empty list (or one of blank names only) is read as ``None``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    url: str
    require_approval: Literal["always", "never"] = "always"
    allowed_tools: list[str] | None = None

    @field_validator("label")
    @classmethod
    def _label(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("must not be empty")
        if not _MCP_LABEL.fullmatch(value):
            raise ValueError(f"{value!r} may only contain letters, digits, '_' and '-'")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return _check_http_url(value)

    @field_validator("allowed_tools")
    @classmethod
    def _allowed(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        names = [name.strip() for name in value if name.strip()]
        return names or None


def _check_executable(value: Path | None) -> Path | None:
    if value is None:
        return None
    path = value.expanduser()
    if not path.exists():
        raise ValueError(f"{path} does not exist")
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a program")
    if not os.access(path, os.X_OK):
        raise ValueError(f"{path} is not executable")
    return path


class Settings(BaseModel):
    """Tandem's settings (PRODUCT.md "Models", "Safety model").

    Validated at construction and on assignment; an invalid value raises pydantic's
    ``ValidationError`` (``load_settings`` turns it into a :class:`UserError` naming the
    field). ``str``/``repr`` never show the API key.

    Attributes:
        model: the Responses API model name (default ``"gpt-5.5"``).
        base_url: an ``http``/``https`` URL of a server speaking the Responses API, or ``None``
            for the OpenAI default.
        api_key: the key in use: ``$OPENAI_API_KEY`` when set, else the stored one.
        api_key_source: where ``api_key`` came from: ``"env"``, ``"file"`` (stored in the
            settings file; also a key set in code or in the settings dialog) or ``"none"``.
            Not written to the file; a key from the environment is never written either.
        approval_mode: ``read-only``, ``ask`` (default), ``auto`` or ``full``.
        sandbox_enabled: run shell commands under bubblewrap when available (default on).
        chromium_path: the Chromium executable for the browser tool; must exist and be
            executable when set (``~`` is expanded).
        codex_path: the Codex CLI executable; same checks.
        codex_use_login: run the Codex delegate on the user's own Codex CLI sign-in
            (``codex login``, e.g. ChatGPT) instead of Tandem's model, server and key
            (default off; docs/delegates.md).
        codex_stall_seconds: seconds without an event from Codex before its card shows it
            as stalled, with *Stop* (default 60; > 0).
        use_previous_response_id: the model server stores responses (OpenAI with ``store``
            on): after a run's first turn, send only the new items with
            ``previous_response_id`` (``RunConfig.auto_previous_response_id``; default off,
            for servers that keep nothing; a refused id falls back to the full history;
            docs/runner-costs.md).
        rules_file: the JSON file of the user's allow/ask/deny rules; ``None`` means
            ``settings_dir() / "rules.json"`` (see :attr:`rules_path`).
        recent_folders: recently opened folders, most recent first, without duplicates; longer
            lists are cut to the first :data:`MAX_RECENT_FOLDERS`.
        last_folder: the folder opened last, or ``None``.
        web_search: offer OpenAI's hosted web search tool (default off). Hosted tools run
            on OpenAI's side: they need the OpenAI API, not a local Responses server.
        code_interpreter: offer OpenAI's hosted code interpreter (an ``auto`` container;
            default off).
        image_generation: offer OpenAI's hosted image generation (default off).
        mcp_servers: remote MCP servers offered as hosted ``mcp`` tools (:class:`McpServer`;
            default none); labels must be unique. Written as ``[hosted_mcp_servers.LABEL]``
            tables (an old ``[[mcp_servers]]`` list is read, with a migration note).
        local_mcp_servers: local MCP servers by name (:class:`core.mcp.config.LocalMcpServer`,
            the Codex CLI's keys; issue 18), written as ``[mcp_servers.NAME]`` tables.
        migration_notes: what loading changed in the file's form (not written).
        explorer: offer the read-only *Explorer* sub-agent (``explore_repository``; default
            on).
        sandbox_hidden_paths: files or folders the sandbox hides in addition to the defaults
            (``harnesses/shell/secret_paths.py``); absolute or ``~/...``, not ``/``; stored
            as typed (``~`` kept), without duplicates. Applied from the next command on.
        sandbox_shown_paths: default hidden paths the user takes back out (same form).
        checkpoint_cap_bytes: cap on the untracked and ignored bytes one checkpoint copies
            (bytes; default 100 MiB); files over it are skipped and reported.
        checkpoint_keep_count: retention: checkpoints kept per workspace (default 200).
        checkpoint_keep_days: retention: checkpoints older than this are deleted (days;
            default 30).
        checkpoint_min_age_minutes: retention never deletes a checkpoint younger than this
            (minutes; default 60), nor the latest one or the one *Undo restore* needs.
        shell_input_wait_seconds: a shell command found waiting for input on a terminal
            (no output, no CPU) for this many seconds is ended with a hint (seconds;
            default 3; 0 turns it off; docs/shell.md).
        agents_md_cap_bytes: the total cap on the AGENTS.md files added to the agent's
            instructions (bytes; default 32 KiB, Codex's ``project_doc_max_bytes``;
            docs/instructions.md).
        no_key_needed: the server at :attr:`base_url` takes requests without an API key
            (default off; a base URL on localhost, 127.0.0.1 or ::1 needs none anyway;
            :mod:`core.settings_check`).
    """

    model_config = ConfigDict(validate_assignment=True, extra="forbid", frozen=False)

    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key: ApiKey | None = None
    api_key_source: Literal["env", "file", "none"] = Field(default="none", exclude=True)
    approval_mode: ApprovalMode = ApprovalMode.ASK
    sandbox_enabled: bool = True
    chromium_path: Path | None = None
    codex_path: Path | None = None
    codex_use_login: bool = False
    use_previous_response_id: bool = False
    codex_stall_seconds: float = Field(default=60.0, gt=0)
    rules_file: Path | None = None
    recent_folders: list[Path] = Field(default_factory=list)
    last_folder: Path | None = None
    web_search: bool = False
    code_interpreter: bool = False
    image_generation: bool = False
    mcp_servers: list[McpServer] = Field(default_factory=list)
    local_mcp_servers: dict[str, LocalMcpServer] = Field(default_factory=dict)
    migration_notes: list[str] = Field(default_factory=list, exclude=True)
    explorer: bool = True
    sandbox_hidden_paths: list[Path] = Field(default_factory=list)
    sandbox_shown_paths: list[Path] = Field(default_factory=list)
    checkpoint_cap_bytes: int = Field(default=100 * 1024 * 1024, ge=0)
    checkpoint_keep_count: int = Field(default=200, ge=1)
    checkpoint_keep_days: float = Field(default=30.0, gt=0)
    checkpoint_min_age_minutes: float = Field(default=60.0, ge=0)
    shell_input_wait_seconds: float = Field(default=3.0, ge=0)
    agents_md_cap_bytes: int = Field(default=32 * 1024, ge=0)
    #: Issue 16 (docs/diff-view.md): the split diff turns unified when a side would show
    #: fewer characters than this (0: never).
    diff_split_min_columns: int = Field(default=60, ge=0, le=400)
    no_key_needed: bool = False
    #: Issue 14 (docs/context.md): compaction starts at this fraction of the window.
    context_threshold: float = Field(default=0.85, gt=0, le=1)
    #: ``auto`` | ``server`` | ``compact_endpoint`` | ``local``.
    context_strategy: Literal["auto", "server", "compact_endpoint", "local"] = "auto"
    auto_compact: bool = True
    #: Context windows (tokens) by model name or base URL, over the built-in table.
    context_windows: dict[str, int] = Field(default_factory=dict)

    @field_validator("model")
    @classmethod
    def _model(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("must not be empty")
        if any(c.isspace() for c in value):
            raise ValueError("must not contain spaces")
        return value

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        return _check_http_url(value).rstrip("/")

    @field_validator("api_key", mode="before")
    @classmethod
    def _api_key(cls, value: Any) -> Any:
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        if value is None:
            return None
        if not isinstance(value, str):
            raise ValueError("must be a string")
        value = value.strip()
        if not value:
            return None
        if any(c.isspace() for c in value):
            raise ValueError("must not contain spaces or line breaks")
        return value

    @field_validator("approval_mode", mode="before")
    @classmethod
    def _mode(cls, value: Any) -> Any:
        if isinstance(value, str) and not isinstance(value, ApprovalMode):
            choices = ", ".join(m.value for m in ApprovalMode)
            for mode in ApprovalMode:
                if value.strip().lower() == mode.value:
                    return mode
            raise ValueError(f"{value!r} is not one of {choices}")
        return value

    @field_validator("chromium_path", "codex_path")
    @classmethod
    def _executable(cls, value: Path | None) -> Path | None:
        return _check_executable(value)

    @field_validator("rules_file", "last_folder")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        if value is None or str(value) in ("", "."):
            return None
        return value.expanduser()

    @field_validator("recent_folders")
    @classmethod
    def _recent(cls, value: list[Path]) -> list[Path]:
        seen: list[Path] = []
        for folder in value:
            folder = folder.expanduser()
            if folder not in seen:
                seen.append(folder)
        return seen[:MAX_RECENT_FOLDERS]

    @field_validator("sandbox_hidden_paths", "sandbox_shown_paths")
    @classmethod
    def _sandbox_paths(cls, value: list[Path]) -> list[Path]:
        seen: list[Path] = []
        for path in value:
            text = str(path).strip()
            if not text or text == ".":
                continue
            path = Path(text)
            full = path.expanduser()
            if not full.is_absolute():
                raise ValueError(f"{text!r} is not an absolute path or ~/...")
            if full == Path(full.anchor):
                raise ValueError("the whole file system cannot be hidden")
            if path not in seen:
                seen.append(path)
        return seen

    @field_validator("mcp_servers")
    @classmethod
    def _unique_labels(cls, value: list[McpServer]) -> list[McpServer]:
        seen: set[str] = set()
        for server in value:
            if server.label in seen:
                raise ValueError(f"duplicate MCP server label {server.label!r}")
            seen.add(server.label)
        return value

    @field_validator("local_mcp_servers")
    @classmethod
    def _local_names(cls, value: dict[str, LocalMcpServer]) -> dict[str, LocalMcpServer]:
        from ..mcp.config import check_server_name

        for name in value:
            check_server_name(name)
        return value

    @model_validator(mode="after")
    def _key_source(self) -> Settings:
        # Keep the source consistent with the key without re-entering assignment validation.
        if self.api_key is None:
            self.__dict__["api_key_source"] = "none"
        elif self.api_key_source == "none":
            self.__dict__["api_key_source"] = "file"
        _register_secrets(self)
        return self

    @property
    def rules_path(self) -> Path:
        """The rules file in effect: :attr:`rules_file` or ``settings_dir() / "rules.json"``."""
        return self.rules_file if self.rules_file is not None else settings_dir() / "rules.json"

    def masked_api_key(self) -> str:
        """The API key for display (``"••••abcd"``), or ``""`` when there is none."""
        return self.api_key.masked() if self.api_key is not None else ""

    def with_api_key(self, key: str | None) -> Settings:
        """A copy whose key is ``key`` as typed by the user (source ``"file"``; ``None`` or
        ``""`` removes the stored key).

        Raises:
            pydantic.ValidationError: the key contains whitespace.
        """
        data = self._fields_dict()
        data["api_key"] = key
        data["api_key_source"] = "file" if key and key.strip() else "none"
        return Settings.model_validate(data)

    def with_recent_folder(self, folder: str | os.PathLike[str]) -> Settings:
        """A copy with ``folder`` first in :attr:`recent_folders` and as :attr:`last_folder`."""
        path = Path(folder).expanduser()
        data = self._fields_dict()
        data["recent_folders"] = [path, *(f for f in self.recent_folders if f != path)]
        data["last_folder"] = path
        return Settings.model_validate(data)

    def _fields_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in type(self).model_fields}


def _register_secrets(settings: Settings) -> None:
    """Issue 11: the key in use and MCP URL passwords are redacted wherever Tandem writes."""
    if settings.api_key is not None:
        register_secret(settings.api_key.get_secret_value(), source="settings:api_key")
    for server in settings.mcp_servers:
        password = urlsplit(server.url).password
        if password:
            register_secret(password, source=f"settings:mcp:{server.label}")
