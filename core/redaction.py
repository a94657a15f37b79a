"""Secret redaction: a registry of known secret values plus common secret shapes, in one pass."""

from __future__ import annotations

import base64
import dataclasses
import enum
import itertools
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import PurePath
from typing import Any, NamedTuple

from ._redaction_shapes import Span, find_spans, merge_spans
from .secret_names import ALWAYS_SECRET_NAMES, SECRET_NAME_MARKERS, is_secret_name

__all__ = [
    "ALWAYS_SECRET_NAMES",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "SECRET_NAME_MARKERS",
    "RedactingFilter",
    "RedactingStream",
    "StreamRedactor",
    "forget_secrets",
    "install_log_redaction",
    "is_secret_name",
    "redact",
    "redact_text",
    "redacting",
    "register_environment",
    "register_secret",
    "secret_count",
    "secrets_generation",
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


class _Needle(NamedTuple):
    """One literal to find: ``text`` (separators removed), ``fold``: matched case-insensitively
    (hex forms), ``plain``: the literal as registered (with its own whitespace, if any)."""

    text: str
    fold: bool
    plain: str


class _Registry:
    """Known secret values (value -> source) and their derived forms, as cached longest-first
    tuples (replaced on every change, never mutated)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: dict[str, str] = {}
        self._encoded: set[str] = set()
        self._ordered: tuple[str, ...] = ()
        self._needles: tuple[_Needle, ...] = ()
        self._longest = 0
        self.generation = 0  # bumped on every change (caches of scrubbed text key on it)

    def add(self, value: str, source: str, encoded: bool) -> bool:
        with self._lock:
            if value in self._sources and (value in self._encoded or not encoded):
                return True
            self._sources.setdefault(value, source)
            if encoded:
                self._encoded.add(value)
            self._rebuild()
        return True

    def forget(self, source: str | None) -> None:
        with self._lock:
            if source is None:
                self._sources.clear()
                self._encoded.clear()
            else:
                self._sources = {v: s for v, s in self._sources.items() if s != source}
            self._encoded = {v for v in self._encoded if v in self._sources}
            self._rebuild()

    def _rebuild(self) -> None:
        self.generation += 1
        self._ordered = tuple(sorted(self._sources, key=len, reverse=True))
        plain = [v for v in self._ordered if v not in self._encoded]
        self._needles = _needles(self._encoded, derived=True) + _needles(plain, derived=False)
        self._needles = tuple(sorted(set(self._needles), key=lambda n: len(n.text), reverse=True))
        self._longest = max((len(n.plain) for n in self._needles), default=0)

    @property
    def values(self) -> tuple[str, ...]:
        return self._ordered  # an immutable snapshot; replaced, never mutated

    @property
    def needles(self) -> tuple[_Needle, ...]:
        return self._needles

    @property
    def longest(self) -> int:
        """The length of the longest literal (value or derived form), in characters."""
        return self._longest


_REGISTRY = _Registry()


def _encoded_by_default(source: str) -> bool:
    """The API key (environment or settings), MCP passwords and handed-over secrets."""
    if source.startswith(("settings:", "handoff")):
        return True
    return source.startswith("env:") and source[4:].upper() in ALWAYS_SECRET_NAMES


def register_secret(value: str | None, *, source: str, encoded: bool | None = None) -> bool:
    """Add ``value`` to the known secrets, redacted exactly wherever it occurs from now on.

    Thread-safe; registering a value twice is harmless. The value is taken as given and,
    when different, also stripped of surrounding whitespace.

    Args:
        value: the secret (``None`` and ``""`` are ignored).
        source: where it came from, for the warning and :func:`forget_secrets`
            (e.g. ``"env:OPENAI_API_KEY"``, ``"settings:api_key"``, ``"handoff"``).
        encoded: also redact its base64 (3 alignments) and hex forms. Each form costs one
            more search over every text (about 0.2 ms per MB), so the default is on only for
            the API key (``env:OPENAI_API_KEY``/``env:CODEX_API_KEY``, ``settings:*``,
            ``handoff*``); other values are matched exactly (and across separators).

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
        wanted = _encoded_by_default(source) if encoded is None else encoded
        ok = _REGISTRY.add(candidate, source, wanted) or ok
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


def secrets_generation() -> int:
    """A counter that changes whenever the registered values change (add or forget), so a
    cache of scrubbed text (the session journal's) knows when to scrub again."""
    return _REGISTRY.generation


# -- literal values: exact, encoded, and with separators inserted --------------------------

DERIVED_MIN_LENGTH = 8
"""Encoded forms (base64 cores, hex) shorter than this are not registered (too likely by
chance); values shorter than this are also matched only exactly, never across separators."""

# Characters a value may be split by and still be found (ASCII whitespace and zero-width
# characters), plus ANSI escape sequences (CSI, OSC, two-character escapes).
_SEPARATORS = " \t\n\r\x0b\x0c\u200b\u200c\u200d\u2060\ufeff"
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
_DELETE_SEPARATORS = {ord(c): None for c in _SEPARATORS}
_ANSI = r"\x1b(?:\[[0-?]{0,64}+[ -/]{0,16}+[@-~]|\][^\x07\x1b\n]{0,512}+(?:\x07|\x1b\\\\)?|[@-Z\\^_])"
_ANSI_RE = re.compile(_ANSI)
_GAP = f"(?:{_ANSI}|[{_SEPARATORS}])*+"


def _encoded_forms(value: str) -> list[tuple[str, bool]]:
    """The base64 "cores" of ``value`` (UTF-8) at its 3 byte alignments (the characters of
    its encoding that do not depend on the neighbouring bytes) and its hex form (matched
    case-insensitively): ``[(form, fold)]``, each at least :data:`DERIVED_MIN_LENGTH` long."""
    raw = value.encode("utf-8", "surrogatepass")
    forms: list[tuple[str, bool]] = []
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw).decode("ascii")
        first = -(-8 * pad // 6)  # ceil: the first character with no bit of the padding
        last = 8 * (pad + len(raw)) // 6  # floor: past the last character fully of the value
        core = encoded[first:last]
        if len(core) >= DERIVED_MIN_LENGTH:
            forms.append((core, False))
    forms.append((raw.hex(), True))
    return forms


def _needles(values: Iterable[str], *, derived: bool) -> tuple[_Needle, ...]:
    """The literals to search for ``values`` (longest first, duplicates dropped)."""
    found: dict[tuple[str, bool], _Needle] = {}
    for value in values:
        forms = [(value, False)] + (_encoded_forms(value) if derived else [])
        for form, fold in forms:
            text = form.translate(_DELETE_SEPARATORS)
            if len(text) < MIN_SECRET_LENGTH or (fold and len(text) < DERIVED_MIN_LENGTH):
                continue
            key = (text.lower() if fold else text, fold)
            found.setdefault(key, _Needle(key[0], fold, form))
    return tuple(sorted(found.values(), key=lambda n: len(n.text), reverse=True))


@lru_cache(maxsize=1024)
def _gapped(needle: str, fold: bool) -> re.Pattern[str]:
    """``needle`` with any run of separators or escape sequences allowed between its
    characters (possessive: an attempt reads at most the needle plus its gaps)."""
    pattern = _GAP.join(re.escape(c) for c in needle)
    return re.compile(pattern, re.IGNORECASE if fold else 0)


def _find_all(text: str, needle: str) -> Iterable[Span]:
    start = text.find(needle)
    while start != -1:
        yield start, start + len(needle)
        start = text.find(needle, start + len(needle))


def _value_spans(text: str, needles: tuple[_Needle, ...]) -> list[Span]:
    """Spans of the literals in ``text``: exactly, or split by separators/escape codes.

    Linear: one search per literal over ``text`` or over a view of it with the separators
    removed (built once, C speed); a literal seen in the view more often than in ``text``
    is then located with its gapped pattern (bounded work per occurrence of its first
    character).
    """
    spans: list[Span] = []
    if not needles or not text:
        return spans
    low: str | None = None
    view: str | None = None
    view_low: str | None = None
    for needle in needles:
        if len(needle.text) < DERIVED_MIN_LENGTH:  # short: exact only
            hay = text
            if needle.fold:
                low = low if low is not None else text.lower()
                hay = low if len(low) == len(text) else hay
            if needle.text in hay:
                spans.extend(_find_all(hay, needle.text))
            continue
        if view is None:
            view = text
            if "\x1b" in view:
                view = _ANSI_RE.sub("", view)
            view = view.translate(_DELETE_SEPARATORS)
        if needle.fold:
            if view_low is None:
                view_low = view.lower()
            present = needle.text in view_low
        else:
            present = needle.text in view
        if not present:
            continue
        plain = needle.plain
        hay = text
        if needle.fold:
            low = low if low is not None else text.lower()
            hay = low if len(low) == len(text) else text
            plain = plain.lower()
        exact = list(_find_all(hay, plain))
        seen = (view_low if needle.fold else view).count(needle.text)  # type: ignore[union-attr]
        if seen > len(exact) or (hay is not low and needle.fold):
            spans.extend(m.span() for m in _gapped(needle.text, needle.fold).finditer(text))
        else:
            spans.extend(exact)
    return spans


def _apply(text: str, spans: list[Span], end: int | None = None) -> str:
    """``text[:end]`` with each span (sorted, disjoint, within ``end``) replaced."""
    stop = len(text) if end is None else end
    if not spans:
        return text if end is None else text[:stop]
    parts: list[str] = []
    last = 0
    for start, span_end in spans:
        parts.append(text[last:start])
        parts.append(REDACTED)
        last = span_end
    parts.append(text[last:stop])
    return "".join(parts)


def _extra_needles(extra_secrets: Iterable[str]) -> tuple[_Needle, ...]:
    extra = [s for s in extra_secrets if len(s) >= MIN_SECRET_LENGTH and s not in REDACTED]
    return _needles(extra, derived=False) if extra else ()


# -- text -----------------------------------------------------------------------------------


def redact_text(text: str, extra_secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret and every secret-shaped substring replaced by
    ``"[REDACTED]"``.

    Known values (the registry's and ``extra_secrets``, each 4+ characters) are found
    exactly, and registered values also in their encoded forms (standard base64 at the 3
    byte alignments; hex in either case) and, when 8+ characters, with
    whitespace, line breaks, zero-width characters (U+200B-U+200D, U+2060, U+FEFF) or ANSI
    escape sequences inserted anywhere inside. Then the shapes of :mod:`core._redaction_shapes`:
    ``name = value`` assignments (TOML, INI, ``.env``, YAML, JSON, ``export``) whose name
    holds ``token``/``secret``/``password``/``passwd``/``passphrase``/``credential``/
    ``_key``/``api_key``/``auth`` or ends in ``_pass``/``_pwd``, ``Authorization:``/``Cookie:``
    header values, ``Bearer``/``Basic`` credentials, provider key prefixes (``sk-``,
    ``sk-proj-``, ``sk-ant-``, ``sk-or-``, ``gsk_``, ``xai-``, ``AIza``, ``ghp_``/``gho_``/
    ``ghu_``/``ghs_``/``ghr_``, ``github_pat_``, ``glpat-``, ``xox[baprs]-``, ``hf_``, Stripe
    ``sk_live_``…), AWS ``AKIA``/``ASIA`` ids, JWTs, PEM private key blocks, Azure
    ``AccountKey=``/``SharedAccessSignature=``/``sig=``, ``mysql -p…``/``curl -u user:pass``
    and the password of ``scheme://user:password@host`` URLs.

    Linear in ``len(text)``: literal searches and possessive, bounded quantifiers only, so
    no input makes it backtrack (see ``bench/redaction.py``).

    Args:
        text: any text (tool output, a log line, a traceback).
        extra_secrets: more literal values to remove (shorter than 4 characters: ignored).

    Returns:
        The redacted text (``text`` itself when nothing was found).
    """
    spans = _secret_spans(text, _REGISTRY.needles + _extra_needles(extra_secrets))
    return _apply(text, spans) if spans else text


def _secret_spans(text: str, needles: tuple[_Needle, ...]) -> list[Span]:
    spans = _value_spans(text, needles)
    spans.extend(find_spans(text))
    return merge_spans(spans)


class StreamRedactor:
    """Redacts one output stream that arrives in chunks, so a secret split across chunks is
    still caught.

    :meth:`feed` returns the redacted text that is safe to show now and keeps back a tail
    that could still become a secret: the longest suffix that is the start of a known
    literal (at most the longest one's length minus one), the unfinished last line when it
    is short (a ``name = value`` shape could go on; at most :attr:`SHAPE_HOLD` characters),
    and a secret shape that reaches the end of the text (a value, an unterminated PEM block)
    with the :attr:`SHAPE_HOLD` characters before it. What is kept back never exceeds
    :attr:`MAX_HOLD` characters; past that the text is emitted, redacted as far as it goes.
    :meth:`flush` returns the rest at the end of the stream. Each call is linear in the
    chunk plus the kept tail. Not thread-safe: one per stream.

    Args:
        extra_secrets: more literal values to remove, besides the registry's.
    """

    SHAPE_HOLD = 160
    """Characters of context a shape needs before its value (name, separator, scheme)."""
    MAX_HOLD = 16384
    """The most characters ever kept back."""

    def __init__(self, extra_secrets: Iterable[str] = ()) -> None:
        self._carry = ""
        self._extra = _extra_needles(extra_secrets)

    def feed(self, text: str) -> str:
        """Take the next chunk; return the redacted text that can be shown now ("" when all
        of it is kept back)."""
        buf = self._carry + text
        if not buf:
            return ""
        needles = _REGISTRY.needles + self._extra
        values = _value_spans(buf, needles)
        shapes = merge_spans(find_spans(buf))
        spans = merge_spans(values + list(shapes))
        size = len(buf)
        cut = size - self._literal_tail(buf, needles)
        line_start = max(buf.rfind("\n"), buf.rfind("\r")) + 1
        if size - line_start <= self.SHAPE_HOLD:
            cut = min(cut, line_start)
        else:
            cut = min(cut, size - self.SHAPE_HOLD)
        if shapes and shapes[-1][1] == size:  # a shape reaching the end may go on
            cut = min(cut, max(0, shapes[-1][0] - self.SHAPE_HOLD))
        for start, end in reversed(spans):  # never cut a span; keep its context too
            if start < cut < end:
                cut = max(0, start - self.SHAPE_HOLD)
        if size - cut > self.MAX_HOLD:
            cut = size - self.MAX_HOLD
            for start, end in spans:
                if start < cut < end:
                    cut = end
                    break
        self._carry = buf[cut:]
        return _apply(buf, [s for s in spans if s[1] <= cut], cut)

    def flush(self) -> str:
        """The redacted rest, at the end of the stream (the redactor can be reused)."""
        rest, self._carry = self._carry, ""
        return redact_text(rest, (n.plain for n in self._extra)) if rest else ""

    @staticmethod
    def _literal_tail(buf: str, needles: tuple[_Needle, ...]) -> int:
        """The length of the longest suffix of ``buf`` that starts some literal (ignoring
        case for hex forms): at most the longest literal's length minus one."""
        exact, folded, longest = _prefixes(needles)
        for size in range(min(longest - 1, len(buf)), 0, -1):
            tail = buf[-size:]
            if tail in exact or (folded and tail.lower() in folded):
                return size
        return 0


@lru_cache(maxsize=8)
def _prefixes(needles: tuple[_Needle, ...]) -> tuple[frozenset[str], frozenset[str], int]:
    """The proper prefixes of the literals (exact ones, lowered hex ones) and the longest
    literal's length."""
    exact = {n.plain[:i] for n in needles if not n.fold for i in range(1, len(n.plain))}
    folded = {n.plain.lower()[:i] for n in needles if n.fold for i in range(1, len(n.plain))}
    longest = max((len(n.plain) for n in needles), default=0)
    return frozenset(exact), frozenset(folded), longest


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

    Mappings keep their keys (a secret inside a key, such as a tool output keyed by API key,
    is replaced too, so two such keys can become one; a non-string key is spelled as JSON
    spells it: ``true``, ``null``, ``1``); the value of a key named like a secret (``api_key``,
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
        generation = _REGISTRY.generation
        for key, item in value.items():
            given = key if type(key) is str else _key_text(key)
            name = (
                _clean_key(given, secrets, generation)
                if len(given) <= _CACHED_KEY_LENGTH
                else redact_text(given, secrets)
            )
            if (
                by_key
                and _is_secret_key(given)
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


def _key_text(key: Any) -> str:
    """A non-string key as JSON text spells it (``true``, ``null``, ``1``), else ``str(key)``."""
    if key is True or key is False or key is None:
        return "true" if key else ("false" if key is False else "null")
    return str(key)


_CACHED_KEY_LENGTH = 256  # longer keys (rare) are redacted uncached: the cache stays small


@lru_cache(maxsize=4096)
def _clean_key(name: str, secrets: tuple[str, ...], generation: int) -> str:
    """A mapping key with its secrets redacted (keys repeat: ``type``, ``role``...; cached by
    the registry's ``generation``, which changes whenever the known values do)."""
    return redact_text(name, secrets)


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
