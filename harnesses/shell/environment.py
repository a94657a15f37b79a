"""The environment shell commands run with: non-interactive defaults, secrets scrubbed."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from core.secret_names import ALWAYS_SECRET_NAMES, SECRET_NAME_MARKERS, is_secret_name

__all__ = [
    "ALWAYS_SCRUBBED",
    "NON_INTERACTIVE_DEFAULTS",
    "SECRET_MARKERS",
    "build_env",
    "is_secret",
]

#: Never passed to commands, even when listed in ``allow_env`` (PRODUCT.md "Secrets").
ALWAYS_SCRUBBED = ALWAYS_SECRET_NAMES

#: A variable whose upper-cased name contains one of these is dropped unless allowed.
SECRET_MARKERS = SECRET_NAME_MARKERS

#: Set for every command so tools never wait for a terminal or a pager.
NON_INTERACTIVE_DEFAULTS: Mapping[str, str] = {
    "CI": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "TERM": "dumb",
}


def is_secret(name: str) -> bool:
    """Whether ``name`` looks like a secret: :func:`core.secret_names.is_secret_name` (the
    same test decides what redaction registers)."""
    return is_secret_name(name)


def build_env(
    base: Mapping[str, str],
    *,
    allow_env: Collection[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for one command.

    Args:
        base: the inherited environment (usually ``os.environ``).
        allow_env: names kept even though they look like secrets (``OPENAI_API_KEY`` and
            ``CODEX_API_KEY`` are dropped regardless).
        extra: values set last (they override the non-interactive defaults, e.g. ``TERM``).

    Returns:
        A new dict: ``base`` without secrets, plus :data:`NON_INTERACTIVE_DEFAULTS`, plus
        ``extra``.
    """
    allowed = set(allow_env) - ALWAYS_SCRUBBED
    env = {k: v for k, v in base.items() if k in allowed or not is_secret(k)}
    env.update(NON_INTERACTIVE_DEFAULTS)
    if extra:
        env.update({k: v for k, v in extra.items() if k not in ALWAYS_SCRUBBED})
    return env
