""" "Import from Codex": the ``[mcp_servers.NAME]`` tables of ``$CODEX_HOME/config.toml``."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from ..errors import UserError
from .config import CODEX_KEYS, LocalMcpServer, check_server_name

__all__ = ["CodexImport", "codex_config_path", "read_codex_servers"]


def codex_config_path() -> Path:
    """``$CODEX_HOME/config.toml``, ``~/.codex/config.toml`` when ``CODEX_HOME`` is unset."""
    home = os.environ.get("CODEX_HOME")
    return (Path(home) if home else Path.home() / ".codex") / "config.toml"


@dataclass(slots=True)
class CodexImport:
    """What a Codex config offers.

    Attributes:
        servers: the servers Tandem can run, by name, in file order.
        skipped: ``{name: reason}`` for tables that cannot be imported.
        ignored_keys: ``{name: [key, ...]}`` Codex keys Tandem does not use (e.g. ``oauth``).
    """

    servers: dict[str, LocalMcpServer] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    ignored_keys: dict[str, list[str]] = field(default_factory=dict)


def read_codex_servers(path: str | os.PathLike[str] | None = None) -> CodexImport:
    """Read the MCP servers of a Codex CLI config file.

    Only the Codex keys (:data:`core.mcp.config.CODEX_KEYS`) are taken; other keys of a table
    are listed in ``ignored_keys``. A table that is not a valid server (no ``command`` nor
    ``url``, a bad value, a name Tandem cannot use) is listed in ``skipped`` with the reason.

    Args:
        path: the file; default :func:`codex_config_path`.

    Raises:
        UserError: the file cannot be read or is not TOML (a missing file gives an empty
            :class:`CodexImport`).
    """
    file = Path(path) if path is not None else codex_config_path()
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return CodexImport()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read Codex config {file}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"Codex config {file} is not valid TOML ({exc})") from exc
    found = CodexImport()
    tables = data.get("mcp_servers")
    if not isinstance(tables, dict):
        return found
    for name, table in tables.items():
        if not isinstance(table, dict):
            found.skipped[name] = "not a table"
            continue
        try:
            check_server_name(name)
        except ValueError as exc:
            found.skipped[name] = str(exc)
            continue
        extra = sorted(k for k in table if k not in CODEX_KEYS)
        if extra:
            found.ignored_keys[name] = extra
        try:
            found.servers[name] = LocalMcpServer.model_validate(
                {k: v for k, v in table.items() if k in CODEX_KEYS}
            )
        except ValidationError as exc:
            found.skipped[name] = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or name}: {e['msg'].removeprefix('Value error, ')}"
                for e in exc.errors()
            )
    return found
