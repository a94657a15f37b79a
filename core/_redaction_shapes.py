"""The secret shapes :func:`core.redaction.redact_text` removes, found in linear time.

Every pattern starts with a literal, so ``re`` finds candidates with its fast literal search,
and uses only possessive or bounded quantifiers after it, so no candidate can make it
backtrack over the text. The case-insensitive shapes run on an ASCII-lowered copy of the text
(same length, so spans map back one to one); when lowering would change the length (a few
non-ASCII letters do), they run with ``re.IGNORECASE`` on the text itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

__all__ = ["Span", "find_spans", "merge_spans"]

Span = tuple[int, int]
_Accept = Callable[[str, "re.Match[str]"], Iterator[Span]]

# -- building blocks (all on lowered text) ----------------------------------------------------

# The rest of a name after its marker (bounded: a longer name is not analysed further), an
# optional closing quote of a JSON/YAML key, then the separator.
_SEP = r"[\w.\-]{0,48}+[\"']?[ \t]{0,16}+(?::|=|:=|=>)[ \t]{0,16}+"
# The value: a quoted string (an unclosed one runs to the end of the line) or a bare word.
_VALUE = (
    r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.)*+)\"?"
    r"|'(?P<sq>[^'\n]*+)'?"
    r"|`(?P<bq>[^`\n]*+)`?"
    r"|(?P<bare>[^\s\"'`]++))"
)
# A header value: an optional auth scheme, then a quoted string or the rest of the line.
_HEADER_VALUE = (
    r"(?:(?:bearer|basic|token|digest|negotiate|apikey|key)[ \t]++)?"
    r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.)*+)\"?|'(?P<sq>[^'\n]*+)'?|(?P<bare>[^\r\n\"'`]++))"
)

# After a ``token`` name, a count (``max_tokens = 100``, ``"input_tokens": 12,``) is no secret.
_NOT_A_COUNT = r"(?![+-]?\d[\d_.]*+(?:[\s,;)\]}]|\Z))"
# Values that are not secrets even after a secret-looking name.
_PLAIN_VALUES = frozenset(
    {"true", "false", "none", "null", "nil", "yes", "no", "on", "off", "[redacted]", ""}
)
_NUMBER = re.compile(r"[+-]?\d[\d_.]*")


class _Shape:
    """One pattern: ``regex`` on the lowered text, ``accept(text, match)`` -> spans, where
    ``text`` is the original text and ``match`` is on the lowered one."""

    __slots__ = ("accept", "literal", "regex")

    def __init__(self, literal: str, pattern: str, accept: _Accept) -> None:
        self.literal = literal
        self.regex = re.compile(pattern)
        self.accept = accept


def _value_spans(match: re.Match[str], *, numbers_ok: bool) -> Iterator[Span]:
    for group in ("dq", "sq", "bq", "bare", "adq", "asq", "abq", "abare"):
        if group in match.re.groupindex and match.group(group) is not None:
            value = match.group(group)
            plain = value.strip().rstrip(",;)]}").lower()
            if plain in _PLAIN_VALUES or (numbers_ok and _NUMBER.fullmatch(plain)):
                return
            start, end = match.span(group)
            if end > start:
                yield start, end
            return


def _assignment(*, numbers_ok: bool = False, before: str = "") -> _Accept:
    """Accept a ``marker... = value`` match; ``before``: characters one of which must precede
    the marker (empty: anything)."""

    def accept(text: str, match: re.Match[str]) -> Iterator[Span]:
        if before:
            start = match.start()
            prev = match.string[start - 1] if start else ""
            if prev not in before:
                return iter(())
        return _value_spans(match, numbers_ok=numbers_ok)

    return accept


def _whole(group: int = 0, *, boundary: bool = True) -> _Accept:
    """Accept the whole match (or ``group``) when not glued to a preceding letter or digit."""

    def accept(text: str, match: re.Match[str]) -> Iterator[Span]:
        start = match.start()
        if boundary and start and match.string[start - 1].isalnum():
            return
        yield match.span(group)

    return accept


def _sk(text: str, match: re.Match[str]) -> Iterator[Span]:
    """``sk-…`` (OpenAI, Anthropic, OpenRouter…), ``sk_live_…`` (Stripe), ``gsk_…`` (Groq):
    not glued to a preceding letter or digit, except the ``g`` of ``gsk_``."""
    start = match.start()
    low = match.string
    if start and low[start - 1] == "g" and low[start + 2] == "_":
        start -= 1
    if start and low[start - 1].isalnum():
        return
    yield start, match.end()


def _basic(text: str, match: re.Match[str]) -> Iterator[Span]:
    """A ``Basic`` credential: base64 with a digit, ``+``, ``/`` or ``=``, or with 2+ capitals
    after its first letter (``dXNlcjpwYXNz``), so ``Basic configuration`` is left alone."""
    start, end = match.span(1)
    value = text[start:end]
    if any(c.isdigit() or c in "+/=" for c in value) or sum(c.isupper() for c in value[1:]) >= 2:
        yield start, end


def _pem_blocks(low: str) -> Iterator[Span]:
    """PEM private key blocks, BEGIN line to END line (to the end of the text when the END
    line is missing); the search resumes after each block, so each character is read once."""
    pos = 0
    while (begin := _PEM_BEGIN.search(low, pos)) is not None:
        end = _PEM_END.search(low, begin.end())
        pos = end.end() if end else len(low)
        yield begin.start(), pos


_PEM_BEGIN = re.compile(r"-----begin[a-z0-9 ]{0,40}private key-----")
_PEM_BEGIN_IGNORECASE = re.compile(_PEM_BEGIN.pattern, re.IGNORECASE)
_PEM_END_IGNORECASE = re.compile(r"-----end[a-z0-9 ]{0,40}private key-----", re.IGNORECASE)
_PEM_END = re.compile(r"-----end[a-z0-9 ]{0,40}private key-----")


def _shapes() -> tuple[_Shape, ...]:
    """The table: one literal search per entry (entries share a literal where they can)."""
    header = r"[\"']?[ \t]{0,16}+[:=][ \t]{0,16}+" + _HEADER_VALUE
    key_words = "|".join(
        f"(?<={w}key)" for w in ("_", "-", "api", "access", "private", "signing", "master")
    )
    shapes = [
        # -- assignments: TOML/INI/.env/YAML/JSON, name first, value replaced ------------
        _Shape("token", "token" + _SEP + _NOT_A_COUNT + _VALUE, _assignment(numbers_ok=True)),
        _Shape("secret", "secret" + _SEP + _VALUE, _assignment()),
        _Shape("pass", r"pass(?:w(?:or)?d|phrase)" + _SEP + _VALUE, _assignment()),
        _Shape("credential", "credential" + _SEP + _VALUE, _assignment()),
        # ``api_key``, ``STRIPE_KEY``, ``x-api-key``, ``apiKey``, ``privateKey``…, not ``monkey``
        _Shape("key", f"key(?:{key_words})" + _SEP + _VALUE, _assignment()),
        _Shape("pwd", r"pwd(?<=[_\-.]pwd)" + _SEP + _VALUE, _assignment()),
        # ``MY_SERVICE_PASS=…``, ``db.pass: …`` (not ``_password``, ``bypass``, ``_passage``)
        _Shape("pass", r"pass(?<=[_\-.]pass)(?![a-z])" + _SEP + _VALUE, _assignment()),
        # connection strings: Azure ``AccountKey=…;`` and ``SharedAccessSignature=…``
        _Shape("accountkey", r"accountkey=([^;\s'\"]++)", _whole(1, boundary=False)),
        _Shape(
            "sharedaccesssignature",
            r"sharedaccesssignature=([^;\s'\"]++)",
            _whole(1, boundary=False),
        ),
        # ``curl -u user:pass``, ``--user user:pass``: the password part
        _Shape(
            "-",
            r"-(?:u|-user)(?<![\w\-]-u)(?<![\w\-]--user)[ \t=]++[^\s:'\"]{1,128}+:([^\s'\"]{1,256}+)",
            _whole(1, boundary=False),
        ),
        # ``mysql -pS3cret`` (and mysqldump, mysqladmin): the password glued to ``-p``
        _Shape(
            "mysql",
            r"mysql(?:dump|admin|sh)?+(?:[ \t]++[^\s]++){0,8}?[ \t]++-p([^\s'\"\-][^\s'\"]*+)",
            _whole(1, boundary=False),
        ),
        # ``auth = …``, ``"auth": …`` (docker), and ``Authorization:`` header values
        _Shape(
            "auth",
            r"auth(?:orization"
            + header
            + "|(?![a-z])"
            + _SEP
            + _VALUE.replace("?P<", "?P<a")
            + ")",
            _assignment(),
        ),
        _Shape("cookie", "cookie" + header, _assignment()),
        # command-line flags with the value after a space: ``--password hunter2``,
        # ``--api-key sk…``, ``--auth-token x`` (``--token-file f``, ``--max-tokens 9`` kept)
        _Shape(
            "--",
            r"--(?:[a-z0-9]++-){0,3}+(?:pass(?:w(?:or)?d|phrase)|token|secret"
            r"|(?:api)?key(?:(?<=-api-key)|(?<=-apikey)|(?<=-access-key)|(?<=-private-key)))"
            r"[ \t]++" + _VALUE,
            _assignment(numbers_ok=True),
        ),
        # -- bare auth schemes -------------------------------------------------------------
        _Shape("bearer", r"bearer[ \t]++([\w.~+/=\-]{6,}+)", _whole(1)),
        _Shape("basic", r"basic[ \t]++([a-z0-9+/]{8,}+=*+)", _basic),
        # -- provider key prefixes --------------------------------------------------------
        _Shape("sk", r"sk(?:-[\w\-]{6,}+|_(?:live_|test_)?[a-z0-9]{10,}+)", _sk),
        _Shape("xai-", r"x(?:ai-[a-z0-9]{10,}+|ox[baprs]-[a-z0-9\-]{10,}+)", _whole()),
        _Shape("aiza", r"aiza[\w\-]{30,}+", _whole()),
        _Shape(
            "g",
            r"g(?:h[pousr]_[a-z0-9]{20,}+|ithub_pat_\w{20,}+|lpat-[\w\-]{20,}+)",
            _whole(),
        ),
        _Shape("hf_", r"hf_[a-z0-9]{30,}+", _whole()),
        _Shape("npm_", r"npm_[a-z0-9]{30,}+", _whole()),
        _Shape("akia", r"a[ks]ia[0-9a-z]{16}(?![0-9a-z])", _whole()),
        # -- JWTs, URL passwords (PEM blocks: _pem_blocks) -----------------------------------
        # (the look-behind: inside a run of word characters only its first "eyj" is tried)
        _Shape("eyj", r"eyj(?<![\w\-]eyj)[\w\-]{8,}+\.[\w\-]{8,}+\.[\w\-]*+", _whole()),
        _Shape("://", r"://[^/\s:@]{1,256}+:([^/\s@]{1,256}+)@", _whole(1, boundary=False)),
    ]
    return tuple(shapes)


_SHAPES = _shapes()
_SHAPES_IGNORECASE = tuple(_Shape(s.literal, "(?i)" + s.regex.pattern, s.accept) for s in _SHAPES)


def _pem_blocks_ignorecase(text: str) -> Iterator[Span]:
    pos = 0
    while (begin := _PEM_BEGIN_IGNORECASE.search(text, pos)) is not None:
        end = _PEM_END_IGNORECASE.search(text, begin.end())
        pos = end.end() if end else len(text)
        yield begin.start(), pos


def _lowered(text: str) -> str | None:
    if text.isascii():
        return text.lower()
    low = text.lower()
    return low if len(low) == len(text) else None


def find_spans(text: str) -> list[Span]:
    """The sorted, merged ``(start, end)`` character spans of secrets in ``text``.

    Linear in ``len(text)`` (each shape is a literal search plus bounded work per
    candidate; a candidate never rescans text that a match consumed).
    """
    low = _lowered(text)
    shapes = _SHAPES
    if low is None:
        low, shapes = text, _SHAPES_IGNORECASE
    spans: list[Span] = []
    for shape in shapes:
        for match in shape.regex.finditer(low):
            spans.extend(shape.accept(text, match))
    spans.extend(_pem_blocks(low) if shapes is _SHAPES else _pem_blocks_ignorecase(low))
    return merge_spans(spans)


def merge_spans(spans: list[Span]) -> list[Span]:
    """``spans`` (``(start, end)`` character offsets) sorted, with overlapping or touching
    ones joined; sorts the list in place."""
    if not spans:
        return spans
    spans.sort()
    merged = [spans[0]]
    for start, end in spans[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end:
            if end > last_end:
                merged[-1] = (last_start, end)
        else:
            merged.append((start, end))
    return merged
