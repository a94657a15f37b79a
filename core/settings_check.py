"""The one check of the model connection settings, shared by ``tandem run`` and the Settings
dialog: the base URL's shape and whether an API key is needed (issue 16, item 4)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from .errors import UserError

__all__ = [
    "LOCAL_HOSTS",
    "base_url_hint",
    "check_base_url",
    "is_local_url",
    "key_required",
    "missing_key_message",
    "missing_key_message_cli",
]

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
"""Hosts whose server needs no API key (a local Ollama, LM Studio, vLLM or gateway)."""


def check_base_url(text: str | None) -> str | None:
    """``text`` as a base URL: stripped, without a trailing ``/``; ``None`` for empty.

    Args:
        text: what the user typed (a flag, an environment variable, the dialog's field).

    Returns:
        The URL, or ``None`` (the OpenAI default) for ``None``, ``""`` or spaces.

    Raises:
        UserError: not an ``http://``/``https://`` URL with a host, or a bad port; the
            message proposes the likely fix, e.g. ``'localhost:1234' has no scheme: did you
            mean http://localhost:1234/v1?``.
    """
    if text is None or not text.strip():
        return None
    value = text.strip()
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        if "://" not in value:
            raise UserError(_no_scheme(value)) from None
        raise UserError(f"{value!r} is not a valid URL ({exc})") from None
    if "://" not in value:
        raise UserError(_no_scheme(value))
    if parts.scheme not in ("http", "https"):
        raise UserError(f"{value!r} is not an http:// or https:// URL (scheme {parts.scheme!r})")
    if not parts.hostname:
        raise UserError(f"{value!r} has no host name")
    if port == 0:
        raise UserError(f"{value!r}: port 0 is not a port a server listens on")
    return value.rstrip("/")


def _no_scheme(value: str) -> str:
    guess = "http://" + value.rstrip("/")
    host = urlsplit(guess).hostname or ""
    if not is_local_url(guess) and not host.startswith("192.168."):
        guess = "https://" + value.rstrip("/")
    if not urlsplit(guess).path:
        guess += "/v1"
    return f"{value!r} has no scheme: did you mean {guess}?"


def is_local_url(url: str | None) -> bool:
    """Whether ``url``'s host is ``localhost``, ``127.0.0.1`` (any loopback address) or
    ``::1``; ``False`` for ``None`` or a malformed URL."""
    if not url:
        return False
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host.lower() in LOCAL_HOSTS or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def key_required(base_url: str | None, *, no_key_needed: bool = False) -> bool:
    """Whether requests need an API key: not for a local server (:func:`is_local_url`) nor
    when the user said the server needs none (``Settings.no_key_needed``)."""
    return not (no_key_needed or is_local_url(base_url))


def base_url_hint(base_url: str | None) -> str | None:
    """A warning for a URL that is valid but probably wrong: a local server whose path does
    not end in ``/v1`` (Ollama, LM Studio and vLLM serve the Responses API under ``/v1``);
    else ``None``."""
    if not base_url or not is_local_url(base_url):
        return None
    path = urlsplit(base_url).path.rstrip("/")
    if path.endswith("/v1"):
        return None
    return f"{base_url} does not end in /v1; local servers usually serve {base_url.rstrip('/')}/v1"


def missing_key_message(base_url: str | None) -> str:
    """What to do when a key is needed and none is set."""
    where = f" for {base_url}" if base_url else ""
    return (
        f"No API key{where}: set OPENAI_API_KEY, or store a key in Settings > Model. "
        'A server that needs no key: use a localhost base URL or tick "No key needed".'
    )


def missing_key_message_cli(base_url: str | None, settings_file: str) -> str:
    """What ``tandem run`` says when a key is needed and none is set: the three ways to give
    one, and the offline run.

    Args:
        base_url: the base URL in use (``None``: the OpenAI API).
        settings_file: the path of ``settings.toml`` (where the window stores the key).
    """
    where = f" for {base_url}" if base_url else ""
    return (
        f"No OpenAI API key{where}. Give one of: (1) OPENAI_API_KEY in the environment; "
        f"(2) a key stored with Settings > Model in the window (saved in {settings_file}); "
        "(3) a local server that needs no key, e.g. --base-url http://localhost:11434/v1 "
        '(Ollama, LM Studio, vLLM; or tick "No key needed" in Settings). '
        "For an offline run: --model scripted:FILE replays a recorded session."
    )
