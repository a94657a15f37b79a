"""A repository's own MCP servers (``.tandem/mcp.toml``): off until the user trusts them.

The answer is remembered per repository, together with a SHA-256 of the file: when the file
changes (a pull brought a new server, another command), the user is asked again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from core._util import write_private_file
from core.mcp.config import LocalMcpServer, check_server_name
from core.settings import data_dir

__all__ = ["PROJECT_FILE", "ProjectServers", "TrustStore", "project_servers", "read_project_file"]

#: The project's MCP file, relative to the repository root.
PROJECT_FILE = Path(".tandem") / "mcp.toml"


@dataclass(frozen=True, slots=True)
class ProjectServers:
    """What ``.tandem/mcp.toml`` holds.

    Attributes:
        path: the file; servers: valid servers by name; errors: ``{name: reason}`` of the
            invalid tables (or ``{"": reason}`` for a file that is not TOML);
        digest: SHA-256 hex of the file's bytes.
    """

    path: Path
    servers: dict[str, LocalMcpServer]
    errors: dict[str, str]
    digest: str


def read_project_file(root: Path) -> ProjectServers | None:
    """The repository's ``.tandem/mcp.toml`` (``[mcp_servers.NAME]`` tables), ``None`` if absent."""
    path = root / PROJECT_FILE
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    digest = hashlib.sha256(raw).hexdigest()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return ProjectServers(path, {}, {"": f"not valid TOML: {exc}"}, digest)
    servers: dict[str, LocalMcpServer] = {}
    errors: dict[str, str] = {}
    tables = data.get("mcp_servers")
    for name, table in (tables if isinstance(tables, dict) else {}).items():
        try:
            check_server_name(name)
            servers[name] = LocalMcpServer.model_validate(table)
        except (ValueError, ValidationError) as exc:
            errors[name] = str(exc).splitlines()[0] if isinstance(exc, ValueError) else str(exc)
    return ProjectServers(path, servers, errors, digest)


class TrustStore:
    """``{repository realpath: {"digest": sha256, "trusted": bool}}`` in a private JSON file.

    Args:
        path: the file (default ``data_dir() / "mcp-trust.json"``).
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else data_dir() / "mcp-trust.json"

    def _load(self) -> dict[str, dict[str, object]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def decision(self, root: Path, digest: str) -> bool | None:
        """``True``/``False`` when the user answered for this repository and this file, else ``None``."""
        entry = self._load().get(os.path.realpath(root))
        if not isinstance(entry, dict) or entry.get("digest") != digest:
            return None
        return bool(entry.get("trusted"))

    def remember(self, root: Path, digest: str, trusted: bool) -> None:
        """Store the answer (the file is written atomically, mode 0600)."""
        data = self._load()
        data[os.path.realpath(root)] = {"digest": digest, "trusted": trusted}
        write_private_file(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def project_servers(
    root: Path,
    store: TrustStore,
    ask: Callable[[ProjectServers], bool | None] | None,
) -> tuple[dict[str, LocalMcpServer], ProjectServers | None, bool]:
    """The project's servers the user trusts: ``(servers, file, trusted)``.

    ``ask`` is called on first use (or after the file changed) and its answer remembered;
    ``None`` from it (or no ``ask``: a run without a terminal) means "not now": nothing is
    remembered and the servers stay off.
    """
    found = read_project_file(root)
    if found is None or not found.servers:
        return {}, found, False
    decision = store.decision(root, found.digest)
    if decision is None and ask is not None:
        decision = ask(found)
        if decision is not None:
            store.remember(root, found.digest, decision)
    if not decision:
        return {}, found, False
    return dict(found.servers), found, True
