"""Highlighting helpers for the diff view: pygments token spans per line and word-level diffs (no Qt)."""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.style import Style, StyleMeta
from pygments.styles import get_style_by_name
from pygments.token import (
    Comment,
    Error,
    Generic,
    Keyword,
    Name,
    Number,
    Operator,
    String,
    Text,
    Whitespace,
    _TokenType,
)
from pygments.util import ClassNotFound

__all__ = [
    "DARK_STYLE",
    "Span",
    "SyntaxLines",
    "LineSpans",
    "TokenSpan",
    "TokenStyle",
    "TandemDarkStyle",
    "lexer_for_path",
    "token_style",
    "token_type",
    "unpack_spans",
    "word_diff",
]

Span = tuple[int, int]
"""A character range ``(start, end)`` in one line (end exclusive, in chars)."""

TokenSpan = tuple[int, int, _TokenType]
"""A character range of one line and its pygments token type."""

TokenStyle = tuple[str | None, bool, bool]
"""``(colour "#rrggbb" or None, bold, italic)`` for a token type."""

_WORD_RE = re.compile(r"\w+|\s+|[^\w\s]")
_MAX_WORD_CHARS = 1000
"""Longest line side word-diffed (chars): difflib on words is quadratic in the worst case."""
_MIN_SIMILARITY = 0.3
"""Below this difflib ratio two paired lines count as rewritten: no word highlights."""
_PLAIN = (Text, Whitespace, Text.Whitespace)
_LINE_CACHE_SIZE = 4096

LineSpans = tuple[int, ...]
"""The token spans of one line packed as ``(start, end, token_id, start, end, ...)``.

Flat tuples of ints are untracked by the garbage collector, so the spans of a 10,000-line
file add nothing to full collections (lists of tuples of token types made gen-2 pauses of
50-100 ms); ``token_id`` indexes :func:`token_type`.
"""

_NO_SPANS: LineSpans = ()
_TOKEN_IDS: dict[_TokenType, int] = {}
_TOKEN_TYPES: list[_TokenType] = []


def _token_id(token: _TokenType) -> int:
    found = _TOKEN_IDS.get(token)
    if found is None:
        found = _TOKEN_IDS[token] = len(_TOKEN_TYPES)
        _TOKEN_TYPES.append(token)
    return found


def token_type(token_id: int) -> _TokenType:
    """The pygments token type of a ``token_id`` found in :data:`LineSpans`."""
    return _TOKEN_TYPES[token_id]


def unpack_spans(spans: LineSpans) -> list[TokenSpan]:
    """``spans`` as ``(start, end, token type)`` triples."""
    return [(spans[i], spans[i + 1], _TOKEN_TYPES[spans[i + 2]]) for i in range(0, len(spans), 3)]


_ALIASES = {
    "py": "python", "pyi": "python", "pyw": "python", "js": "javascript", "mjs": "javascript",
    "cjs": "javascript", "jsx": "jsx", "ts": "typescript", "tsx": "tsx", "json": "json",
    "toml": "toml", "yaml": "yaml", "yml": "yaml", "md": "markdown", "rs": "rust", "go": "go",
    "java": "java", "kt": "kotlin", "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "hpp": "cpp",
    "cs": "csharp", "rb": "ruby", "php": "php", "sh": "bash", "bash": "bash", "zsh": "zsh",
    "html": "html", "htm": "html", "css": "css", "scss": "scss", "sql": "sql", "xml": "xml",
    "ini": "ini", "cfg": "ini", "swift": "swift", "lua": "lua",
}  # fmt: skip
"""Common extensions → pygments alias: ``get_lexer_by_name`` skips the scan of every
lexer's file patterns that ``get_lexer_for_filename`` does on first use (about 150 ms)."""


def lexer_for_path(path: str) -> Lexer | None:
    """The pygments lexer for a file name, or ``None`` (unknown type or plain text).

    Only the name is used (guessing from the content would try every lexer); lexers are
    cached per name pattern and reused (they keep no state between texts).
    """
    name = path.rsplit("/", 1)[-1]
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return _lexer(_ALIASES.get(extension, ""), "" if extension in _ALIASES else name)


@lru_cache(maxsize=256)
def _lexer(alias: str, name: str) -> Lexer | None:
    try:
        if alias:
            lexer = get_lexer_by_name(alias, stripnl=False, ensurenl=False)
        else:
            lexer = get_lexer_for_filename(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    return None if lexer.name == "Text only" else lexer


@lru_cache(maxsize=8192)
def word_diff(old: str, new: str) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    """The changed words between a deleted line and the added line that replaces it.

    Lines are split into words, runs of whitespace and single punctuation characters, and
    compared with difflib; lines less than 30 % alike count as rewritten and give no spans.
    The cost is bounded per line: a side longer than ``_MAX_WORD_CHARS`` (1,000 chars, what
    the painter draws) gives no spans.

    Args:
        old: the deleted line (no terminator).
        new: the added line (no terminator).

    Returns:
        ``(old_spans, new_spans)``: merged character ranges that differ on each side.
    """
    if len(old) > _MAX_WORD_CHARS or len(new) > _MAX_WORD_CHARS:
        return (), ()
    a, b = _WORD_RE.findall(old), _WORD_RE.findall(new)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    if matcher.ratio() < _MIN_SIMILARITY:
        return (), ()
    a_at, b_at = _offsets(a), _offsets(b)
    old_spans: list[Span] = []
    new_spans: list[Span] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        _add_span(old_spans, a_at[i1], a_at[i2])
        _add_span(new_spans, b_at[j1], b_at[j2])
    return tuple(old_spans), tuple(new_spans)  # cached: tuples stay out of the GC's way


def _offsets(tokens: Sequence[str]) -> list[int]:
    out = [0]
    for token in tokens:
        out.append(out[-1] + len(token))
    return out


def _add_span(spans: list[Span], start: int, end: int) -> None:
    if start >= end:
        return
    if spans and spans[-1][1] == start:
        spans[-1] = (spans[-1][0], end)
    else:
        spans.append((start, end))


class TandemDarkStyle(Style):
    """Token colours for code on the app's dark palette (One Dark hues, GitHub-dark tones).

    On the diff's line backgrounds (context ``#15171c``, deleted ``#2c1a1e``, added
    ``#14261c``) every colour has a WCAG contrast of at least 5:1, on the word highlights
    (``#5e242b``, ``#1c4a2b``) at least 4:1 (comments, the dimmest, 3.3:1); plain text is
    ``#c9d1d9``. Keywords are purple rather than GitHub's red, so they stay distinct on
    deleted lines.
    """

    name = "tandem-dark"
    background_color = "#15171c"
    highlight_color = "#264f78"
    styles = {
        Text: "#c9d1d9",
        Error: "#ff7b72",
        Comment: "italic #8b949e",
        Comment.Preproc: "noitalic #d2a8ff",
        Comment.Special: "italic #a5b1bf",
        Keyword: "#d2a8ff",
        Keyword.Constant: "#ffa657",
        Keyword.Type: "#e3b341",
        Operator.Word: "#d2a8ff",
        Name.Builtin: "#56d4dd",
        Name.Builtin.Pseudo: "italic #f29e98",
        Name.Function: "#79c0ff",
        Name.Function.Magic: "#79c0ff",
        Name.Class: "#e3b341",
        Name.Exception: "#e3b341",
        Name.Decorator: "#56d4dd",
        Name.Constant: "#ffa657",
        Name.Variable: "#f29e98",
        Name.Variable.Magic: "#56d4dd",
        Name.Tag: "#f29e98",
        Name.Attribute: "#e3b341",
        Name.Label: "#ffa657",
        Name.Entity: "#ffa657",
        Number: "#ffa657",
        String: "#a5d6a0",
        String.Affix: "#d2a8ff",
        String.Escape: "#56d4dd",
        String.Interpol: "#56d4dd",
        String.Regex: "#56d4dd",
        String.Symbol: "#56d4dd",
        Generic.Heading: "bold #79c0ff",
        Generic.Subheading: "bold #79c0ff",
        Generic.Emph: "italic",
        Generic.Strong: "bold",
        Generic.Deleted: "#ff7b72",
        Generic.Inserted: "#7ee787",
        Generic.Error: "#ff7b72",
        Generic.Prompt: "#8b949e",
        Generic.Output: "#8b949e",
    }


DARK_STYLE = TandemDarkStyle.name
"""Name of :class:`TandemDarkStyle` for :func:`token_style` (not registered with pygments)."""

_OWN_STYLES: dict[str, type[Style]] = {DARK_STYLE: TandemDarkStyle}


@lru_cache(maxsize=512)
def token_style(style_name: str, token: _TokenType) -> TokenStyle:
    """How a pygments style shows a token type (parents' settings inherited).

    Args:
        style_name: a pygments style name, e.g. ``"default"``, or :data:`DARK_STYLE`.
        token: the token type.

    Returns:
        ``(colour, bold, italic)``; colour is ``"#rrggbb"`` or ``None`` for the default.
    """
    style: StyleMeta = _OWN_STYLES.get(style_name) or get_style_by_name(style_name)
    found = style.style_for_token(token)
    colour = found.get("color")
    return (f"#{colour}" if colour else None, bool(found.get("bold")), bool(found.get("italic")))


class _LineSplitter:
    """Collects ``get_tokens_unprocessed`` output into packed spans per line."""

    __slots__ = ("current", "line_start", "lines")

    def __init__(self) -> None:
        self.lines: list[LineSpans] = []
        self.current: list[int] = []
        self.line_start = 0

    def take(self, position: int, token: _TokenType, value: str) -> None:
        for index, piece in enumerate(value.split("\n")):
            if index:
                self.lines.append(tuple(self.current))
                self.current = []
                self.line_start = position
            if piece and token not in _PLAIN:
                column = position - self.line_start
                self.current += (column, column + len(piece), _token_id(token))
            position += len(piece) + 1

    def finish(self) -> None:
        if self.current:
            self.lines.append(tuple(self.current))
            self.current = []


class SyntaxLines:
    """Token spans per line of one text, lexed incrementally within a time budget.

    The whole text is lexed from the top by :meth:`advance` calls (so multi-line strings and
    comments come out right). Lines needed before that lexing reaches them are lexed as
    blocks by :meth:`lex_lines` (in the context of the block only); a line whose text differs
    from the text's line (an edited hunk) is lexed on its own. Both are cached.

    Args:
        lexer: the pygments lexer, or ``None`` for no highlighting.
        lines: the text's lines without terminators.
    """

    def __init__(self, lexer: Lexer | None, lines: Sequence[str]) -> None:
        self._lexer = lexer
        self._lines = list(lines)
        self._full = _LineSplitter()
        self._block: dict[int, LineSpans] = {}
        self._single: dict[str, LineSpans] = {}
        self._tokens: Iterator[tuple[int, _TokenType, str]] | None = None
        if lexer is not None and self._lines:
            self._tokens = lexer.get_tokens_unprocessed("\n".join(self._lines) + "\n")

    @property
    def done(self) -> bool:
        """Whether the whole text has been lexed (always true without a lexer)."""
        return self._tokens is None

    @property
    def lexed_lines(self) -> int:
        """How many lines (from the top) have been lexed in context so far."""
        return len(self._full.lines)

    def advance(self, budget_ms: float) -> bool:
        """Lex for about ``budget_ms`` milliseconds (ms).

        Returns:
            Whether the text is now completely lexed.
        """
        if self._tokens is None:
            return True
        deadline = time.perf_counter() + budget_ms / 1000
        count = 0
        take = self._full.take
        for position, token, value in self._tokens:
            take(position, token, value)
            count += 1
            if count % 64 == 0 and time.perf_counter() > deadline:
                return False
        self._tokens = None
        self._full.finish()
        self._block.clear()
        return True

    def missing(self, line_nos: Iterable[int]) -> list[int]:
        """Which of ``line_nos`` (1-based) have no spans yet, sorted."""
        done = len(self._full.lines)
        count = len(self._lines)
        if self._lexer is None:
            return []
        return sorted(n for n in set(line_nos) if done < n <= count and n not in self._block)

    def lex_lines(
        self, line_nos: Iterable[int], budget_ms: float, *, gap: int = 8, block: int = 12
    ) -> int:
        """Lex the given lines (1-based) ahead of :meth:`advance`, in blocks, for a while.

        Line numbers closer than ``gap`` lines are lexed together (at most ``block`` lines
        per lexer call), so a page costs a few lexer calls rather than one per line. The
        clock is read every few tokens, inside a block too: past ``budget_ms`` milliseconds
        the lines finished so far keep their spans and the rest wait for the next call (at
        least one line is lexed per call, so lexing always moves on).

        Returns:
            How many lines got spans.
        """
        needed = self.missing(line_nos)
        deadline = time.perf_counter() + budget_ms / 1000
        lexed = 0
        index = 0
        while index < len(needed):
            first = last = needed[index]
            index += 1
            while (
                index < len(needed)
                and needed[index] - last <= gap
                and needed[index] - first < block
            ):
                last = needed[index]
                index += 1
            got = self._lex_block(first, last, deadline)
            lexed += got
            if got < last - first + 1 or time.perf_counter() > deadline:
                break
        return lexed

    def _lex_block(self, first: int, last: int, deadline: float = float("inf")) -> int:
        """Lex lines ``first..last`` (1-based) as one text; past ``deadline``
        (``time.perf_counter`` s) stop once a line is done. Returns how many lines (from
        ``first``) got spans."""
        assert self._lexer is not None
        splitter = _LineSplitter()
        text = "\n".join(self._lines[first - 1 : last]) + "\n"
        count = 0
        for position, token, value in self._lexer.get_tokens_unprocessed(text):
            splitter.take(position, token, value)
            count += 1
            if count % 16 == 0 and splitter.lines and time.perf_counter() > deadline:
                break  # the lines done so far are kept; the rest come next time
        else:
            splitter.finish()
        done = splitter.lines[: last - first + 1]
        for offset, spans in enumerate(done):
            self._block[first + offset] = spans
        return len(done)

    def spans(self, line_no: int, text: str, *, lex: bool = True) -> LineSpans | None:
        """Token spans of ``text``, which the caller shows as line ``line_no`` (1-based).

        Args:
            line_no: the line's number in this text.
            text: the line as shown (when it differs from the text's line, as in an edited
                hunk, it is lexed on its own).
            lex: lex line ``line_no`` on its own now if no spans are known yet; with
                ``False`` such a line gives ``None`` (the caller shows it plain and lexes it
                later with :meth:`lex_lines`).

        Returns:
            Packed spans in order (empty without a lexer), or ``None`` as described for
            ``lex``.
        """
        if self._lexer is None:
            return _NO_SPANS
        index = line_no - 1
        if 0 <= index < len(self._lines) and self._lines[index] == text:
            if index < len(self._full.lines):
                return self._full.lines[index]
            found = self._block.get(line_no)
            if found is not None:
                return found
            if not lex:
                return None
        cached = self._single.get(text)
        if cached is None:
            if len(self._single) >= _LINE_CACHE_SIZE:
                self._single.clear()
            splitter = _LineSplitter()
            for position, token, value in self._lexer.get_tokens_unprocessed(text + "\n"):
                splitter.take(position, token, value)
            splitter.finish()
            cached = splitter.lines[0] if splitter.lines else _NO_SPANS
            self._single[text] = cached
        return cached
