"""The Codex child environment: inherited or replaced, API key, base URL, private TMPDIR (§9.3)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from core.tools.codex import CodexOptions

__all__ = [
    "KEY_ENV_NAMES",
    "ORIGINATOR",
    "ORIGINATOR_ENV",
    "build_child_env",
    "codex_home",
    "needs_private_tmpdir",
    "resolve_api_key",
]

ORIGINATOR_ENV = "CODEX_INTERNAL_ORIGINATOR_OVERRIDE"
ORIGINATOR = "codex_sdk_ts"
#: The variables the CLI takes a key from; kept out of the commands Codex runs.
KEY_ENV_NAMES = ("CODEX_API_KEY", "OPENAI_API_KEY")
_KEY_NAMES = KEY_ENV_NAMES


def resolve_api_key(options: CodexOptions, parent: Mapping[str, str]) -> str | None:
    """``api_key``, else ``CODEX_API_KEY``/``OPENAI_API_KEY`` of ``options.env``, then of ``parent``."""
    if options.api_key:
        return options.api_key
    for source in (options.env or {}, parent):
        for name in _KEY_NAMES:
            if source.get(name):
                return source[name]
    return None


def build_child_env(
    options: CodexOptions, parent: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of ``codex exec``.

    Args:
        options: ``env`` (replaces ``parent`` entirely when given), ``api_key``, ``base_url``.
        parent: the inherited environment (default ``os.environ``).

    Returns:
        A new dict with ``CODEX_INTERNAL_ORIGINATOR_OVERRIDE`` (if absent), ``CODEX_API_KEY``
        (when a key is known) and ``OPENAI_BASE_URL`` (when ``base_url`` is set; the CLI
        itself ignores it, the argv carries a provider override).
    """
    inherited = os.environ if parent is None else parent
    env = dict(options.env) if options.env is not None else dict(inherited)
    env.setdefault(ORIGINATOR_ENV, ORIGINATOR)
    key = resolve_api_key(options, inherited)
    if key:
        env["CODEX_API_KEY"] = key
    if options.base_url:
        env["OPENAI_BASE_URL"] = options.base_url
    return env


def codex_home(env: Mapping[str, str]) -> Path:
    """``CODEX_HOME``, else ``$HOME/.codex``."""
    if env.get("CODEX_HOME"):
        return Path(env["CODEX_HOME"])
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".codex"


def needs_private_tmpdir(env: Mapping[str, str]) -> bool:
    """Whether ``CODEX_HOME`` sits under the child's temp dir (``TMPDIR`` or ``/tmp``).

    The CLI then refuses to create its sandbox helper binaries and sandboxed commands fail
    (codex-cli-offline.md, pitfall 2); the child then gets a ``TMPDIR`` inside ``CODEX_HOME``.
    """
    home = codex_home(env).resolve()
    temp = Path(env.get("TMPDIR") or "/tmp").resolve()
    return home == temp or home.is_relative_to(temp)
