"""V4A line matching levels: the reference's exact / ``rstrip`` / ``strip`` passes and Tandem's
further whitespace and Unicode-punctuation passes, with lazily built per-level views of a file."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = [
    "EXACT",
    "INNER_WHITESPACE",
    "LEVEL_NAMES",
    "REFERENCE_LEVELS",
    "STRIP",
    "TRAILING_WHITESPACE",
    "UNICODE",
    "LineViews",
    "level_key",
    "normalised_kinds",
]

EXACT = 0
TRAILING_WHITESPACE = 1  # reference: ``rstrip()`` (fuzz 1)
STRIP = 2  # reference: ``strip()`` (fuzz 100)
INNER_WHITESPACE = 3  # Tandem: also runs of spaces/tabs inside the line count as one space
UNICODE = 4  # Tandem: look-alike dashes, quotes and spaces read as their ASCII forms
REFERENCE_LEVELS = (EXACT, TRAILING_WHITESPACE, STRIP)
"""The passes ``agents.apply_diff`` 0.24 tries, in order (spec §5.4 step 5)."""

LEVEL_NAMES = {
    EXACT: "exact",
    TRAILING_WHITESPACE: "trailing_whitespace",
    STRIP: "whitespace",
    INNER_WHITESPACE: "inner_whitespace",
    UNICODE: "unicode",
}
"""Stable names of the levels, as reported in structured results."""

_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u00b4\uff07"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb\uff02"
_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" + (
    "\u202f\u205f\u3000"
)
_KINDS = {
    "dashes": _DASHES,
    "quotes": _SINGLE_QUOTES + _DOUBLE_QUOTES,
    "spaces": _SPACES,
}
_TRANSLATION = str.maketrans(
    {
        **dict.fromkeys(_DASHES, "-"),
        **dict.fromkeys(_SINGLE_QUOTES, "'"),
        **dict.fromkeys(_DOUBLE_QUOTES, '"'),
        **dict.fromkeys(_SPACES, " "),
    }
)
_BLANK_RUN = re.compile(r"[ \t]+")


def _inner(line: str) -> str:
    return _BLANK_RUN.sub(" ", line.strip())


def _unicode(line: str) -> str:
    return _BLANK_RUN.sub(" ", line.translate(_TRANSLATION).strip())


_KEYS: dict[int, Callable[[str], str]] = {
    TRAILING_WHITESPACE: str.rstrip,
    STRIP: str.strip,
    INNER_WHITESPACE: _inner,
    UNICODE: _unicode,
}


def level_key(level: int) -> Callable[[str], str]:
    """The comparison key of ``level`` (identity for :data:`EXACT`).

    Raises:
        KeyError: an unknown level.
    """
    if level == EXACT:
        return str
    return _KEYS[level]


def normalised_kinds(pairs: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """Which look-alike kinds (``"dashes"``, ``"quotes"``, ``"spaces"``) the pairs differ by.

    Args:
        pairs: ``(file line, diff line)`` pairs that matched only at :data:`UNICODE`.

    Returns:
        The kinds present in those lines, in a fixed order.
    """
    text = "".join(a + b for a, b in pairs)
    return tuple(kind for kind, chars in _KINDS.items() if any(c in text for c in chars))


class LineViews:
    """A file's lines plus, per level, the mapped lines and the first index of each value.

    Every view is built once, on first use (O(n) each), so most diffs only ever build the
    exact ones.
    """

    __slots__ = ("_covered", "_first", "_mapped", "lines")

    def __init__(self, lines: list[str]) -> None:
        """Args:
        lines: the file's lines (``text.split("\\n")`` after CRLF normalisation).
        """
        self.lines = lines
        self._mapped: dict[int, list[str]] = {EXACT: lines}
        self._first: dict[int, dict[str, int]] = {}
        self._covered: dict[int, int] = {}

    def mapped(self, level: int) -> list[str]:
        """The lines under ``level``'s key."""
        view = self._mapped.get(level)
        if view is None:
            key = level_key(level)
            view = self._mapped[level] = [key(line) for line in self.lines]
        return view

    def occurs_before(self, level: int, value: str, cursor: int) -> bool:
        """Whether some line of ``lines[:cursor]`` has ``value`` as its ``level`` key.

        The first-index table grows only as far as the largest cursor asked about, so the
        checks of a whole diff cost O(largest cursor) together, whatever order they come in.
        """
        if cursor <= 0:
            return False
        table = self._first.get(level)
        if table is None:
            table = self._first[level] = {}
            self._covered[level] = 0
        covered = self._covered[level]
        if cursor > covered:
            mapped = self.mapped(level)
            for index in range(covered, min(cursor, len(mapped))):
                table.setdefault(mapped[index], index)
            self._covered[level] = max(covered, cursor)
        return table.get(value, cursor) < cursor

    def find_window(self, level: int, window: list[str], start: int, length: int) -> int:
        """First ``i >= start`` with the ``level`` keys of ``lines[i:i+len(window)]`` equal to
        ``window`` (already mapped), the window fitting in ``lines[:length]``; or -1."""
        lines = self.mapped(level)
        size = len(window)
        stop = length - size + 1
        first, last = window[0], window[-1]
        position = start
        while position < stop:
            try:
                position = lines.index(first, position, stop)
            except ValueError:
                return -1
            if lines[position + size - 1] == last and lines[position : position + size] == window:
                return position
            position += 1
        return -1
