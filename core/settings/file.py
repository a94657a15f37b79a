"""The settings file: ``settings.toml`` in the platform config dir, read and written atomically.

:func:`load_settings` reads it (the environment's ``OPENAI_API_KEY`` wins over a stored key),
:func:`save_settings` writes it privately (0600, fsynced, ``os.replace``); an invalid file is
kept aside, never overwritten. The model is :class:`.model.Settings`.
"""

from __future__ import annotations

import logging
import os
import time
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._util import write_private_file
from ..errors import UserError
from ..mcp.config import LocalMcpServer, hosted_servers_toml, local_servers_toml, tables_from_toml
from ..redaction import register_secret
from ..secret_handoff import handed_over
from ..toml_text import toml_literal, toml_string
from .model import (
    _CHECKPOINT_FIELDS,
    _STORED_FIELDS,
    API_KEY_ENV,
    McpServer,
    Settings,
    settings_path,
)

__all__ = ["load_settings", "save_settings"]

logger = logging.getLogger("core")


def _to_toml(settings: Settings, stored_key: str | None) -> str:
    """The file text: flat ``key = value`` lines (``None`` values left out), then one
    ``[[mcp_servers]]`` table per MCP server."""
    values: dict[str, Any] = {
        "model": settings.model,
        "base_url": settings.base_url,
        "api_key": stored_key,
        "approval_mode": settings.approval_mode.value,
        "sandbox_enabled": settings.sandbox_enabled,
        "chromium_path": settings.chromium_path,
        "codex_path": settings.codex_path,
        "codex_use_login": settings.codex_use_login or None,
        "use_previous_response_id": settings.use_previous_response_id or None,
        "codex_stall_seconds": (
            None if settings.codex_stall_seconds == 60.0 else settings.codex_stall_seconds
        ),
        "rules_file": settings.rules_file,
        "recent_folders": [str(f) for f in settings.recent_folders],
        "last_folder": settings.last_folder,
        "web_search": settings.web_search,
        "code_interpreter": settings.code_interpreter,
        "image_generation": settings.image_generation,
        "explorer": settings.explorer,
        "sandbox_hidden_paths": [str(p) for p in settings.sandbox_hidden_paths] or None,
        "sandbox_shown_paths": [str(p) for p in settings.sandbox_shown_paths] or None,
    }
    for name in (
        *_CHECKPOINT_FIELDS,
        "shell_input_wait_seconds",
        "agents_md_cap_bytes",
        "diff_split_min_columns",
        "no_key_needed",
        "context_threshold",
        "context_strategy",
        "auto_compact",
    ):  # only when not default
        value = getattr(settings, name)
        values[name] = None if value == Settings.model_fields[name].default else value
    lines = ["# Tandem settings (written by the app; edit while it is closed).", ""]
    for key in _STORED_FIELDS:
        value = values.get(key)
        if value is None:
            continue
        if isinstance(value, Path):
            value = str(value)
        lines.append(f"{key} = {toml_literal(value)}")
    # Tables last: every key after a [table] header belongs to that table (issue 18 layout).
    lines += hosted_servers_toml(settings.mcp_servers)
    lines += local_servers_toml(settings.local_mcp_servers)
    if settings.context_windows:  # issue 14: [context_windows] "name or URL" = tokens
        lines += ["", "[context_windows]"]
        lines += [f"{toml_string(k)} = {int(v)}" for k, v in settings.context_windows.items()]
    return "\n".join(lines) + "\n"


def _describe_error(error: Any) -> str:
    loc = ".".join(str(part) for part in error.get("loc", ())) or "settings"
    if loc.startswith("local_mcp_servers"):  # the file's name of the table (issue 18)
        loc = loc.removeprefix("local_")
    message = str(error.get("msg", "invalid value"))
    message = message.removeprefix("Value error, ")
    if error.get("type") == "extra_forbidden":
        parts = tuple(error.get("loc", ()))
        if len(parts) > 2 and parts[0] == "local_mcp_servers":  # issue 18: [mcp_servers.NAME]
            known = ", ".join(LocalMcpServer.model_fields)
            table = ".".join(["mcp_servers", *(str(p) for p in parts[1:-1])])
            return f"unknown key {str(parts[-1])!r} in {table!r} (known keys: {known})"
        if len(parts) > 1 and parts[0] == "mcp_servers":
            known = ", ".join(McpServer.model_fields)
            table = ".".join(str(part) for part in parts[:-1])
            return f"unknown key {str(parts[-1])!r} in {table!r} (known keys: {known})"
        known = ", ".join(_STORED_FIELDS)
        return f"unknown setting {loc!r} (known settings: {known})"
    return f"setting {loc!r}: {message}"


def _read_table(path: Path) -> dict[str, Any] | None:
    """The parsed file, or ``None`` when it does not exist.

    Raises:
        UserError: the file cannot be read or is not valid TOML.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UserError(f"cannot read settings file {path}: {exc.strerror or exc}") from exc
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UserError(f"settings file {path} is not UTF-8 text: {exc.reason}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UserError(
            f"settings file {path} is not valid TOML ({exc}); fix or remove it"
        ) from exc


def load_settings(path: str | os.PathLike[str] | None = None) -> Settings:
    """Read the settings file (defaults when it does not exist); ``$OPENAI_API_KEY`` wins
    over a stored key.

    The file is never changed by reading it.

    Args:
        path: the TOML file; default :func:`settings_path`.

    Returns:
        The validated settings (``api_key_source`` tells where the key came from).

    Raises:
        UserError: the file cannot be read, is not TOML, or holds an unknown or invalid
            setting; the message names the file and the setting, e.g.
            ``settings file …/settings.toml: setting 'base_url': 'ftp://x' is not an
            http:// or https:// URL with a host``.
    """
    file = Path(path) if path is not None else settings_path()
    table = _read_table(file) or {}
    if "api_key_source" in table:
        raise UserError(f"settings file {file}: unknown setting 'api_key_source'")
    if isinstance(table.get("api_key"), str):  # issue 11: even when the environment's wins
        register_secret(table["api_key"].strip(), source="settings:api_key")
    env_key = (handed_over(API_KEY_ENV) or os.environ.get(API_KEY_ENV, "")).strip()
    notes: list[str] = []
    data = tables_from_toml(dict(table), notes)  # issue 18: [mcp_servers.NAME] + hosted ones
    if notes:
        data["migration_notes"] = notes
        for note in notes:
            logger.info("settings file %s: %s", file, note)
    if env_key:
        data["api_key"] = env_key
        data["api_key_source"] = "env"
    elif data.get("api_key"):
        data["api_key_source"] = "file"
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_describe_error(e) for e in exc.errors())
        raise UserError(f"settings file {file}: {problems}") from None
    logger.debug("settings loaded from %s (api key source: %s)", file, settings.api_key_source)
    return settings


def _stored_key(settings: Settings, table: dict[str, Any] | None) -> str | None:
    """The key to write: never the environment's; a key typed by the user otherwise."""
    if settings.api_key_source == "env":
        old = (table or {}).get("api_key")
        return old if isinstance(old, str) and old else None
    if settings.api_key is None:
        return None
    return settings.api_key.get_secret_value()


def save_settings(settings: Settings, path: str | os.PathLike[str] | None = None) -> Path:
    """Write ``settings`` to the TOML file atomically, with mode 0600.

    The text goes to a temporary file in the same folder (mode 0600), is flushed and
    fsynced, then replaces the old file with ``os.replace``: a crash leaves the old or the
    new file, never a torn one. A key that came from ``$OPENAI_API_KEY`` is not written (a
    key stored earlier is kept). An existing file that cannot be read as valid settings is
    first copied aside as ``settings.toml.invalid-<UTC timestamp>``, so nothing the user
    wrote is lost. The writer is built in (flat ``key = value`` lines; ``tomli_w`` is not a
    dependency); ``tomllib`` reads the result back.

    Args:
        settings: what to write.
        path: the TOML file; default :func:`settings_path` (its folder is created, 0700).

    Returns:
        The file written.

    Raises:
        UserError: the folder or file cannot be written.
    """
    file = Path(path) if path is not None else settings_path()
    table: dict[str, Any] | None = None
    if file.is_file():
        try:
            table = _read_table(file)
            Settings.model_validate(
                tables_from_toml({k: v for k, v in (table or {}).items() if k != "api_key"})
            )
        except (UserError, ValidationError):
            table = None
            _keep_invalid(file)
    text = _to_toml(settings, _stored_key(settings, table))
    try:
        write_private_file(file, text)
    except OSError as exc:
        raise UserError(f"cannot write settings file {file}: {exc.strerror or exc}") from exc
    logger.debug("settings saved to %s", file)
    return file


def _keep_invalid(file: Path) -> None:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    backup = file.with_name(f"{file.name}.invalid-{stamp}")
    n = 1
    while backup.exists():
        n += 1
        backup = file.with_name(f"{file.name}.invalid-{stamp}-{n}")
    try:
        data = file.read_bytes()
        fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise UserError(
            f"settings file {file} is invalid and could not be kept aside as {backup}: "
            f"{exc.strerror or exc}; not overwriting it"
        ) from exc
    logger.warning("invalid settings file kept as %s", backup)
