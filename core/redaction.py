"""Secret redaction: a registry of known secret values plus common secret shapes, in one pass."""

from __future__ import annotations

import dataclasses
import enum
import itertools
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import Any

from ._redaction_shapes import find_spans
from .secret_names import ALWAYS_SECRET_NAMES, SECRET_NAME_MARKERS, is_secret_name

__all__ = [
    "ALWAYS_SECRET_NAMES",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "SECRET_NAME_MARKERS",
    "RedactingFilter",
    "RedactingStream",
    "forget_secrets",
    "install_log_redaction",
    "is_secret_name",
    "redact",
    "redact_text",
    "redacting",
    "register_environment",
    "register_secret",
    "secret_count",
]

_log = logging.getLogger("core")

REDACTED = "[REDACTED]"
"""What a scrubbed secret is replaced with."""

MIN_SECRET_LENGTH = 4
"""Registered values shorter than this (in characters) are refused with a warning.

Replacing ``"a"`` or ``"ab"`` wherever it occurs would destroy every text, and a 1-3
character secret gives no protection anyway; a 4+ character value (a 6-character gateway key,
say) is redacted exactly."""

_NOT_SECRET_VALUES = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null"})


# -- the registry ---------------------------------------------------------------------------


class _Registry:
    """Known secret values (value -> source), with a cached longest-first tuple."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: dict[str, str] = {}
        self._ordered: tuple[str, ...] = ()

    def add(self, value: str, source: str) -> bool:
        with self._lock:
            if value in self._sources:
                return True
            self._sources[value] = source
            self._ordered = tuple(sorted(self._sources, key=len, reverse=True))
        return True

    def forget(self, source: str | None) -> None:
        with self._lock:
            if source is None:
                self._sources.clear()
            else:
                self._sources = {v: s for v, s in self._sources.items() if s != source}
            self._ordered = tuple(sorted(self._sources, key=len, reverse=True))

    @property
    def values(self) -> tuple[str, ...]:
        return self._ordered  # an immutable snapshot; replaced, never mutated


_REGISTRY = _Registry()


def register_secret(value: str | None, *, source: str) -> bool:
    """Add ``value`` to the known secrets, redacted exactly wherever it occurs from now on.

    Thread-safe; registering a value twice is harmless. The value is taken as given and,
    when different, also stripped of surrounding whitespace.

    Args:
        value: the secret (``None`` and ``""`` are ignored).
        source: where it came from, for the warning and :func:`forget_secrets`
            (e.g. ``"env:OPENAI_API_KEY"``, ``"settings:api_key"``, ``"handoff"``).

    Returns:
        ``True`` when the value is (now) registered; ``False`` when it was refused: shorter
        than :data:`MIN_SECRET_LENGTH`, or a part of :data:`REDACTED` itself (a warning
        naming ``source`` and the length, never the value, is logged on ``"core"``).
    """
    if not value:
        return False
    ok = False
    for candidate in dict.fromkeys((value, value.strip())):
        if len(candidate) < MIN_SECRET_LENGTH or candidate in REDACTED:
            _log.warning(
                "secret from %s not registered for redaction: %d characters is too short",
                source,
                len(candidate),
            )
            continue
        ok = _REGISTRY.add(candidate, source) or ok
    return ok


def register_environment(environ: Mapping[str, str] | None = None) -> int:
    """Register the value of every variable named like a secret (:func:`is_secret_name`).

    Values that are clearly not secrets are skipped silently: booleans and ``none``/``null``,
    plain numbers, absolute paths (``AWS_SHARED_CREDENTIALS_FILE=/home/u/.aws/credentials``)
    and values shorter than :data:`MIN_SECRET_LENGTH`.

    Args:
        environ: the environment; default ``os.environ``.

    Returns:
        How many values were registered.
    """
    env = os.environ if environ is None else environ
    count = 0
    for name, value in list(env.items()):
        if not is_secret_name(name):
            continue
        plain = value.strip()
        if (
            len(plain) < MIN_SECRET_LENGTH
            or plain.lower() in _NOT_SECRET_VALUES
            or plain.isdigit()
            or (os.path.isabs(plain) and not any(c.isspace() for c in plain))
        ):
            continue
        count += register_secret(value, source=f"env:{name}")
    return count


def forget_secrets(source: str | None = None) -> None:
    """Drop the registered values of ``source`` (all of them with ``None``); for tests and
    for a key the user removed."""
    _REGISTRY.forget(source)


def secret_count() -> int:
    """How many values are registered."""
    return len(_REGISTRY.values)


# -- text -----------------------------------------------------------------------------------


def redact_text(text: str, extra_secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret and every secret-shaped substring replaced by
    ``"[REDACTED]"``.

    Exact values first (the registry's, then ``extra_secrets``; longest first, each
    4+ characters), then the shapes of :mod:`core._redaction_shapes` in one merged pass:
    ``name = value`` assignments (TOML, INI, ``.env``, YAML, JSON, ``export``) whose name
    holds ``token``/``secret``/``password``/``passwd``/``passphrase``/``credential``/
    ``_key``/``api_key``/``auth``, ``Authorization:``/``Cookie:`` header values, ``Bearer``/
    ``Basic`` credentials, provider key prefixes (``sk-``, ``sk-proj-``, ``sk-ant-``,
    ``sk-or-``, ``gsk_``, ``xai-``, ``AIza``, ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``,
    ``github_pat_``, ``glpat-``, ``xox[baprs]-``, ``hf_``, Stripe ``sk_live_``…), AWS
    ``AKIA``/``ASIA`` ids, JWTs, PEM private key blocks and the password of
    ``scheme://user:password@host`` URLs.

    Linear in ``len(text)``: literal searches and possessive, bounded quantifiers only, so
    no input makes it backtrack (see ``bench/redaction.py``).

    Args:
        text: any text (tool output, a log line, a traceback).
        extra_secrets: more literal values to remove (shorter than 4 characters: ignored).

    Returns:
        The redacted text (``text`` itself when nothing was found).
    """
    values = _REGISTRY.values
    extra = tuple(s for s in extra_secrets if len(s) >= MIN_SECRET_LENGTH and s not in REDACTED)
    if extra:
        values = tuple(sorted({*values, *extra}, key=len, reverse=True))
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    spans = find_spans(text)
    if not spans:
        return text
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append(REDACTED)
        last = end
    parts.append(text[last:])
    return "".join(parts)


# -- structured values ----------------------------------------------------------------------

_SECRET_WORDS = frozenset(
    {"token", "secret", "password", "passwd", "authorization", "cookie", "apikey", "credentials"}
)
_SECRET_PAIRS = frozenset({("api", "key"), ("private", "key"), ("access", "key")})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _is_secret_key(key: str) -> bool:
    words = [w.lower() for w in _WORD.findall(key)]
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words))


def redact(value: Any, extra_secrets: Iterable[str] = (), *, by_key: bool = True) -> Any:
    """A JSON-ready copy of ``value`` with secrets removed.

    Mappings keep their keys; the value of a key named like a secret (``api_key``,
    ``apiKey``, ``access_token``, ``client_secret``, ``Authorization``, ``password``,
    ``cookie``…) becomes ``"[REDACTED]"`` unless it is a number, a boolean or ``None`` (so
    usage counts such as ``input_tokens`` survive: ``tokens`` is not ``token``). Every string
    passes through :func:`redact_text`. Dataclasses become dicts, enums their values, paths
    strings, tuples and sets lists, bytes ``"<N bytes>"``; anything else ``str(value)``.

    Args:
        value: the payload.
        extra_secrets: literal secrets to remove wherever they appear.
        by_key: also redact by key name (off for run states, whose keys are structural).
    """
    return _redact(value, tuple(extra_secrets), by_key)


def _redact(value: Any, secrets: tuple[str, ...], by_key: bool) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, enum.Enum):
        return _redact(value.value, secrets, by_key)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            if (
                by_key
                and _is_secret_key(name)
                and not (item is None or isinstance(item, bool | int | float))
            ):
                out[name] = REDACTED
            else:
                out[name] = _redact(item, secrets, by_key)
        return out
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return _redact(fields, secrets, by_key)
    if isinstance(value, list | tuple | set | frozenset):
        return [_redact(item, secrets, by_key) for item in value]
    if isinstance(value, PurePath):
        return redact_text(str(value), secrets)
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes>"
    return redact_text(str(value), secrets)


def install_log_redaction() -> None:
    """Start-up hook of the window and the CLI (call it once, early; idempotent).

    Registers the environment's secrets (:func:`register_environment`), redacts every log
    record when it is created (a log record factory, so any logger and any handler added
    later is covered) and through a :class:`RedactingFilter` on the root handlers and on the
    ``core``, ``harnesses`` and ``desktop`` loggers, and installs ``sys.excepthook``,
    ``threading.excepthook`` and ``sys.unraisablehook`` that print redacted tracebacks.
    """
    install()


# Last, because these helpers call back into this module's functions.
from ._redaction_install import RedactingFilter, RedactingStream, install, redacting  # noqa: E402
