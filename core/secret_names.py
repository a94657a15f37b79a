"""Which environment variable names hold secrets (standard library only, loadable by path)."""

from __future__ import annotations

__all__ = ["ALWAYS_SECRET_NAMES", "SECRET_NAME_MARKERS", "is_secret_name"]

#: Names that are secrets whatever they look like (PRODUCT.md "Secrets").
ALWAYS_SECRET_NAMES = frozenset({"OPENAI_API_KEY", "CODEX_API_KEY"})

#: A variable whose upper-cased name contains one of these is a secret.
SECRET_NAME_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable called ``name`` holds a secret.

    A case-insensitive substring test: ``OPENAI_API_KEY``, ``GITHUB_TOKEN``, ``DB_PASSWORD``,
    ``AWS_SECRET_ACCESS_KEY``, ``my_credentials`` are secrets; ``PATH``, ``HOME`` and git's
    ``GIT_CONFIG_KEY_<n>`` (a config name: dropping it alone would leave ``GIT_CONFIG_COUNT``
    pointing at a missing key, and every git command would fail) are not.
    This module imports nothing from Tandem, so the start-up re-exec can load it by file path
    before ``core`` is imported.
    """
    upper = name.upper()
    if upper in ALWAYS_SECRET_NAMES:
        return True
    if upper.startswith("GIT_CONFIG_KEY_") and upper[15:].isdigit():
        return False  # a config *name* (git-config(1) ENVIRONMENT); its count and value pass too
    return any(marker in upper for marker in SECRET_NAME_MARKERS)
