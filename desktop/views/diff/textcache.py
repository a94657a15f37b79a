"""Cached text layouts of the diff rows: one laid-out ``QTextLayout`` per shown line, static texts."""

from __future__ import annotations

import time
from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRect, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QStaticText,
    QTextCharFormat,
    QTextLayout,
    QTextOption,
)

from .palette import TAB as _TAB

__all__ = ["LineLayout", "TextCache", "draw_runs"]

Run = tuple[float, str, int]
"""``(x px, fractional, text, style id)``: one run of a line's shown text in one style."""

_MAX_LAYOUTS = 2_000
"""Line layouts kept (a page shows about 100 lines); the cache is emptied past this."""
_MAX_STATIC = 4_000
"""Static texts (line numbers, header labels) kept; emptied past this."""


class LineLayout:
    """One line's text laid out once, with its syntax colours and word-highlight extents.

    Drawing it is one ``QTextLayout.draw`` call (the glyph runs are shaped when it is made,
    not at each paint).

    Attributes:
        layout: the laid-out text (one line, no wrapping, origin at its top-left); plain
            text (style 0) has no format and takes the painter's pen.
        words: ``(x1, x2)`` px extents of the changed words, from the text's left edge.
    """

    __slots__ = ("layout", "words")

    def __init__(self, layout: QTextLayout, words: tuple[tuple[int, int], ...]) -> None:
        self.layout = layout
        self.words = words


class TextCache:
    """Layouts of shown lines and static texts, valid for one font and one set of styles.

    A line's layout is keyed by its shown text, its syntax runs and its changed-word spans;
    everything that changes the pixels of a line (the font, the token styles, the theme) goes
    through :meth:`reset`, which empties the cache. The row width and horizontal offset are
    not part of a layout (it is drawn at an origin and clipped to its column), so a resize or
    a horizontal scroll reuses every layout.

    Args:
        font: the code font.
        styles: ``(colour, italic)`` per style id (index 0: plain text); read when a layout is
            made, so it may grow after construction.
    """

    def __init__(self, font: QFont, styles: Sequence[tuple[QColor, bool]]) -> None:
        self._layouts: dict[
            tuple[str, tuple[Run, ...], tuple[tuple[int, int], ...]], LineLayout
        ] = {}
        self._seen: set[tuple[str, tuple[Run, ...], tuple[tuple[int, int], ...]]] = set()
        self._static: dict[tuple[str, int], tuple[QStaticText, int]] = {}
        self._styles = styles
        self.font = QFont(font)
        self.fm = QFontMetrics(self.font)
        self._formats: dict[int, QTextCharFormat] = {}
        self._option = QTextOption()
        self._option.setWrapMode(QTextOption.WrapMode.NoWrap)
        self.made = 0  # layouts made (tests and benchmarks read it)
        #: seconds spent making layouts since the caller last set it to 0 (a paint's budget)
        self.spent = 0.0

    def reset(self, font: QFont, styles: Sequence[tuple[QColor, bool]]) -> None:
        """Drop every cached layout and static text: ``font`` or ``styles`` changed."""
        self._layouts.clear()
        self._seen.clear()
        self._static.clear()
        self._formats.clear()
        self._styles = styles
        self.font = QFont(font)
        self.fm = QFontMetrics(self.font)

    def __len__(self) -> int:
        return len(self._layouts)

    def line(
        self,
        text: str,
        runs: tuple[Run, ...],
        words: Sequence[tuple[int, int]],
        *,
        make: bool = True,
        at_once: bool = False,
    ) -> LineLayout | None:
        """The cached layout of a line shown as ``runs`` (from ``RowPainter._runs``).

        A layout is made the second time a line is asked for (the first time gives ``None``
        and the caller draws the line with :func:`draw_runs`): a line painted once, as when
        scrolling through, costs no more than drawing it.

        Args:
            text: the line's shown text (tabs not yet expanded), which ``words`` index.
            runs: the line's runs ``(x px, text with tabs expanded, style id)``.
            words: changed-word spans ``(start, end)`` in ``text`` (chars), or empty.
            make: whether a missing layout may be made now (``False``: ``None``).
            at_once: make a missing layout the first time it is asked for.

        Returns:
            The layout, or ``None`` (not made yet).
        """
        key = (text, runs, tuple(words))
        found = self._layouts.get(key)
        if found is not None or not make:
            return found
        if not at_once and key not in self._seen:
            if len(self._seen) >= _MAX_LAYOUTS:
                self._seen.clear()
            self._seen.add(key)
            return None
        self._seen.discard(key)
        return self._make(key)

    def _make(self, key: tuple[str, tuple[Run, ...], tuple[tuple[int, int], ...]]) -> LineLayout:
        started = time.perf_counter()
        text, runs, words = key
        shown = "".join(piece for _x, piece, _style in runs)
        layout = QTextLayout(shown, self.font)
        layout.setTextOption(self._option)
        layout.setCacheEnabled(True)
        ranges = []
        start = 0
        for _x, piece, style_id in runs:
            if style_id:  # plain text (style 0) is drawn in the painter's pen
                fmt_range = QTextLayout.FormatRange()
                fmt_range.start, fmt_range.length = start, len(piece)
                fmt_range.format = self._format(style_id)
                ranges.append(fmt_range)
            start += len(piece)
        if ranges:
            layout.setFormats(ranges)
        layout.beginLayout()
        line = layout.createLine()
        if line.isValid():
            line.setPosition(QPointF(0, 0))
        layout.endLayout()
        fm = self.fm
        extents = tuple(
            (
                fm.horizontalAdvance(text[:a].replace("\t", _TAB)),
                fm.horizontalAdvance(text[:b].replace("\t", _TAB)),
            )
            for a, b in words
        )
        if len(self._layouts) >= _MAX_LAYOUTS:
            self._layouts.clear()
        made = self._layouts[key] = LineLayout(layout, extents)
        self.made += 1
        self.spent += time.perf_counter() - started
        return made

    def static(
        self, text: str, font_id: int = 0, font: QFont | None = None
    ) -> tuple[QStaticText, int]:
        """A static text of ``text`` in ``font`` (the code font by default) and its width (px).

        ``font_id`` tells fonts apart in the cache (0: the code font).
        """
        key = (text, font_id)
        found = self._static.get(key)
        if found is None:
            use = font if font is not None else self.font
            static = QStaticText(text)
            static.setTextFormat(Qt.TextFormat.PlainText)
            static.prepare(font=use)
            if len(self._static) >= _MAX_STATIC:
                self._static.clear()
            found = self._static[key] = (static, QFontMetrics(use).horizontalAdvance(text))
        return found

    def _format(self, style_id: int) -> QTextCharFormat:
        found = self._formats.get(style_id)
        if found is None:
            colour, italic = self._styles[style_id]
            found = QTextCharFormat()
            found.setForeground(colour)
            if italic:
                found.setFontItalic(True)
            self._formats[style_id] = found
        return found


def draw_runs(
    p: QPainter,
    area: QRect,
    origin: float,
    fonts: tuple[QFont, QFont],
    styles: Sequence[tuple[QColor, bool]],
    text: str,
    runs: tuple[Run, ...],
    words: Sequence[tuple[int, int]],
    word_colour: QColor,
) -> None:
    """Draw one line's code without a layout: a ``drawText`` per run, clipped to ``area``.

    The pixels a :class:`LineLayout` of the same line gives; used for lines a paint has no
    time left to make layouts for (``RowPainter.layout_budget_ms``).

    Args:
        p: the painter.
        area: the code column of the row (px).
        origin: x of the text's left edge (the column's left minus the horizontal offset).
        fonts: the code font and its italic.
        styles: ``(colour, italic)`` per style id.
        text: the shown text (tabs not expanded), which ``words`` index.
        runs: ``(x px, piece, style id)`` runs.
        words: changed-word spans in ``text`` (chars).
        word_colour: the background of changed words.
    """
    fm = QFontMetrics(fonts[0])
    p.setClipRect(area)
    top, height = area.top() + 1, area.height() - 2
    for start, end in words:
        x1 = fm.horizontalAdvance(text[:start].replace("\t", _TAB))
        x2 = fm.horizontalAdvance(text[:end].replace("\t", _TAB))
        p.fillRect(origin + x1, top, max(2, x2 - x1), height, word_colour)
    baseline = area.top() + (area.height() - fm.height()) // 2 + fm.ascent()
    right = area.right()
    italic_on = False
    for x, piece, style_id in runs:
        x += origin
        if x > right:
            break
        colour, italic = styles[style_id]
        if italic != italic_on:
            p.setFont(fonts[1] if italic else fonts[0])
            italic_on = italic
        p.setPen(colour)
        p.drawText(QPointF(x, baseline), piece)
    if italic_on:
        p.setFont(fonts[0])
    p.setClipping(False)
