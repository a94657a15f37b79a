"""Finding the ``codex`` binary: override, ``CODEX_PATH``, ``PATH``, then the project-local install."""

from __future__ import annotations

import os
import platform
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from core.errors import UserError

__all__ = [
    "INSTALL_SCRIPT",
    "LOCAL_INSTALL_DIR",
    "PINNED_CODEX_VERSION",
    "CodexNotFoundError",
    "codex_install_hint",
    "find_codex_binary",
    "local_codex_binary",
    "resolve_codex_binary",
]

#: The ``@openai/codex`` version ``scripts/install_codex.sh`` installs and the tests run against.
PINNED_CODEX_VERSION = "0.171.0"
_ROOT = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = _ROOT / "scripts" / "install_codex.sh"
#: ``npm install --prefix`` folder of the project-local CLI.
LOCAL_INSTALL_DIR = _ROOT / ".tools" / "codex"

# (npm platform package suffix, Rust target triple) per (sys.platform, machine)
_TARGETS = {
    ("linux", "x86_64"): ("linux-x64", "x86_64-unknown-linux-musl"),
    ("linux", "aarch64"): ("linux-arm64", "aarch64-unknown-linux-musl"),
    ("linux", "arm64"): ("linux-arm64", "aarch64-unknown-linux-musl"),
    ("darwin", "x86_64"): ("darwin-x64", "x86_64-apple-darwin"),
    ("darwin", "arm64"): ("darwin-arm64", "aarch64-apple-darwin"),
}


class CodexNotFoundError(UserError):
    """No usable Codex CLI binary was found; the message says how to install one."""


def codex_install_hint() -> str:
    """One sentence telling the user how to get the CLI."""
    return (
        f"Install it with `bash scripts/install_codex.sh` (npm install of @openai/codex@"
        f"{PINNED_CODEX_VERSION} into {LOCAL_INSTALL_DIR}), put `codex` on PATH, or set "
        "CODEX_PATH / codex_options.codex_path_override."
    )


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def local_codex_binary(install_dir: Path = LOCAL_INSTALL_DIR) -> Path | None:
    """The project-local CLI: the vendored static binary, else the npm launcher (needs node)."""
    target = _TARGETS.get((sys.platform, platform.machine().lower()))
    candidates: list[Path] = []
    if target is not None:
        package, triple = target
        modules = install_dir / "node_modules" / "@openai"
        candidates += [
            modules / f"codex-{package}" / "vendor" / triple / "bin" / "codex",
            modules / "codex" / "vendor" / triple / "codex" / "codex",
        ]
    candidates.append(install_dir / "node_modules" / ".bin" / "codex")
    return next((c for c in candidates if _is_executable(c)), None)


def find_codex_binary(
    path_override: str | None = None,
    environ: Mapping[str, str] | None = None,
    install_dir: Path = LOCAL_INSTALL_DIR,
) -> str | None:
    """The binary by precedence: override, ``CODEX_PATH``, ``codex`` on ``PATH``, local install.

    Args:
        path_override: ``codex_options.codex_path_override``.
        environ: where ``CODEX_PATH`` and ``PATH`` are read (default ``os.environ``).
        install_dir: the project-local npm prefix.

    Returns:
        A path string, or ``None`` when nothing usable exists (an explicit override or
        ``CODEX_PATH`` is returned as given, even if missing, so the caller reports it).
    """
    env = os.environ if environ is None else environ
    if path_override:
        return path_override
    if env.get("CODEX_PATH"):
        return env["CODEX_PATH"]
    on_path = shutil.which("codex", path=env.get("PATH"))
    if on_path:
        return on_path
    local = local_codex_binary(install_dir)
    return str(local) if local is not None else None


def resolve_codex_binary(
    path_override: str | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """Like :func:`find_codex_binary`, but the result must be an executable file.

    Raises:
        CodexNotFoundError: nothing found, or the chosen path is not an executable file.
    """
    found = find_codex_binary(path_override, environ)
    if found is None:
        raise CodexNotFoundError(f"Codex CLI not found. {codex_install_hint()}")
    if not _is_executable(Path(found)):
        raise CodexNotFoundError(
            f"Codex CLI at {found} is missing or not executable. {codex_install_hint()}"
        )
    return found
