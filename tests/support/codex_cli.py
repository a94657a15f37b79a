"""The pinned Codex CLI for tests that run it against the local Responses server.

See ``shared/reference/codex-cli-offline.md``: a fresh ``CODEX_HOME`` whose ``config.toml``
turns off analytics and plugins (no network), and provider overrides that make a failed
request fail at once instead of being retried.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harnesses.codex import PINNED_CODEX_VERSION, local_codex_binary

__all__ = ["CONFIG_TOML", "NO_RETRIES", "pinned_codex_binary", "write_codex_home"]

#: ``-c`` overrides (``CodexOptions.config``): no retries of the local provider's requests.
NO_RETRIES = {
    "model_providers.tandem.stream_max_retries": 0,
    "model_providers.tandem.request_max_retries": 0,
}
#: A ``config.toml`` with nothing that reaches the network.
CONFIG_TOML = 'analytics.enabled = false\nweb_search = "disabled"\n[features]\nplugins = false\n'


def pinned_codex_binary() -> str:
    """The installed Codex CLI's path, checked to be the pinned version.

    Fails the test (never skips) when it is missing: ``bash scripts/install_codex.sh``
    installs it, and the README's test command runs that.
    """
    binary = local_codex_binary()
    if binary is None:
        pytest.fail("Codex CLI not installed: run `bash scripts/install_codex.sh`")
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"codex-cli {PINNED_CODEX_VERSION}"
    return str(binary)


def write_codex_home(home: Path, config_toml: str = CONFIG_TOML) -> Path:
    """Make ``home`` a fresh ``CODEX_HOME`` holding ``config_toml``; returns ``home``."""
    home.mkdir(parents=True)
    (home / "config.toml").write_text(config_toml)
    return home
