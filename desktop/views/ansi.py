"""Streaming ANSI SGR parser: terminal output text in, styled runs out (no Qt)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import NamedTuple, TypeAlias

from core.redaction import redact_text

__all__ = [
    "LINE_RESET",
    "Color",
    "LineReset",
    "AnsiParser",
    "Segment",
    "Style",
    "StyledRun",
    "display_text",
    "palette_rgb",
    "parse_ansi",
    "strip_ansi",
]

#: A colour: an xterm palette index 0-255 (0-15 are the theme's 16 colours) or ``(r, g, b)``.
Color: TypeAlias = int | tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Style:
    """Graphic rendition of a run (SGR state); ``None`` colours mean the theme's default."""

    fg: Color | None = None
    bg: Color | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    inverse: bool = False
    strike: bool = False


DEFAULT_STYLE = Style()


class StyledRun(NamedTuple):
    """Text (never containing control characters other than ``\\n`` and ``\\t``) in one style."""

    text: str
    style: Style


@dataclass(frozen=True, slots=True)
class LineReset:
    """A carriage return not followed by a newline: later text overwrites the current line.

    Consumers clear the line back to the last ``\\n`` (progress bars redraw whole lines, so a
    full clear is the useful approximation of column-wise overwrite).
    """


LINE_RESET = LineReset()

Segment: TypeAlias = StyledRun | LineReset

# An SGR sequence (group 1: its parameters) or a control character: C0 except \t and \n, DEL,
# C1. Text between tokens is plain.
_TOKEN = re.compile(r"\x1b\[([0-9;:]*)m|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Complete escape sequences starting at an ESC (ECMA-48: CSI, OSC, DCS/SOS/PM/APC, nF/Fp/Fe/Fs).
_ESCAPE = re.compile(
    r"\x1b\[(?P<params>[0-?]*)[ -/]*(?P<final>[@-~])"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[PX^_].*?\x1b\\"
    r"|\x1b(?:[ -/]+[0-~]|[0-OQ-WYZ\\`-~])",
    re.DOTALL,
)
# What may still become an escape sequence when more text arrives.
_ESCAPE_PREFIX = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[PX^_].*?\x1b?|[ -/]*)", re.DOTALL
)
#: Longest unfinished escape sequence kept across chunks (chars); beyond it the ESC is dropped.
MAX_PENDING_CHARS = 16 * 1024

_BASIC_FG = {30 + i: i for i in range(8)} | {90 + i: 8 + i for i in range(8)}
_BASIC_BG = {40 + i: i for i in range(8)} | {100 + i: 8 + i for i in range(8)}
_FLAGS_ON = {
    1: "bold",
    2: "dim",
    3: "italic",
    4: "underline",
    7: "inverse",
    9: "strike",
    21: "underline",
}
_FLAGS_OFF = {
    23: ("italic",),
    24: ("underline",),
    27: ("inverse",),
    29: ("strike",),
    22: ("bold", "dim"),
}


def palette_rgb(index: int) -> tuple[int, int, int]:
    """RGB of an xterm 256-colour index 16-255 (6x6x6 cube, then 24 greys).

    Raises:
        ValueError: for an index outside 16-255 (0-15 belong to the theme).
    """
    if 16 <= index <= 231:
        index -= 16
        levels = (0, 95, 135, 175, 215, 255)
        return levels[index // 36], levels[index // 6 % 6], levels[index % 6]
    if 232 <= index <= 255:
        grey = 8 + 10 * (index - 232)
        return grey, grey, grey
    raise ValueError(f"palette index {index} is not in 16-255")


def _extended_color(params: list[list[int | None]], i: int) -> tuple[Color | None, int]:
    """Decode ``38;5;n`` / ``38;2;r;g;b`` (or the ``38:5:n`` / ``38:2:[cs:]r:g:b`` forms).

    Returns the colour (``None`` if malformed) and how many extra parameters were consumed.
    """
    sub = params[i]
    if len(sub) > 1:  # colon form: everything is in this one parameter
        kind = sub[1]
        values = [v or 0 for v in sub[2:]]
        if kind == 5 and values:
            return min(values[0], 255), 0
        if kind == 2 and len(values) >= 3:
            r, g, b = values[-3:]
            return (min(r, 255), min(g, 255), min(b, 255)), 0
        return None, 0
    kind = params[i + 1][0] if i + 1 < len(params) else None
    if kind == 5 and i + 2 < len(params):
        return min(params[i + 2][0] or 0, 255), 2
    if kind == 2 and i + 4 < len(params):
        r, g, b = (min(params[i + k][0] or 0, 255) for k in (2, 3, 4))
        return (r, g, b), 4
    return None, len(params) - i - 1  # malformed: swallow the rest, as xterm does


# (id(style), params) -> (style, result); styles are interned so ids are stable keys, and the
# entry keeps `style` alive so its id cannot be reused while cached.
_SGR_CACHE: dict[tuple[int, str], tuple[Style, Style]] = {}
_INTERNED: dict[Style, Style] = {DEFAULT_STYLE: DEFAULT_STYLE}
_CACHE_MAX = 4096


def _sgr(style: Style, raw: str) -> Style:
    """:func:`_apply_sgr`, memoised; equal results are the same (interned) object."""
    entry = _SGR_CACHE.get((id(style), raw))
    if entry is not None and entry[0] is style:
        return entry[1]
    if len(_SGR_CACHE) >= _CACHE_MAX:
        _SGR_CACHE.clear()
    new = _apply_sgr(style, raw)
    new = _INTERNED.setdefault(new, new)
    _SGR_CACHE[(id(style), raw)] = (style, new)
    return new


def _apply_sgr(style: Style, raw: str) -> Style:
    """The style after the SGR sequence ``ESC [ raw m`` (ECMA-48 §8.3.117, xterm extensions)."""
    if not raw:
        return DEFAULT_STYLE
    params: list[list[int | None]] = [
        [int(x) if x.isdigit() else None for x in p.split(":")] for p in raw.split(";")
    ]
    i = 0
    while i < len(params):
        code = params[i][0] or 0
        if code == 0:
            style = DEFAULT_STYLE
        elif code in _BASIC_FG:
            style = replace(style, fg=_BASIC_FG[code])
        elif code in _BASIC_BG:
            style = replace(style, bg=_BASIC_BG[code])
        elif code in (38, 48, 58):
            color, used = _extended_color(params, i)
            i += used
            if color is not None and code == 38:
                style = replace(style, fg=color)
            elif color is not None and code == 48:
                style = replace(style, bg=color)
        elif code == 39:
            style = replace(style, fg=None)
        elif code == 49:
            style = replace(style, bg=None)
        elif code == 4 and len(params[i]) > 1:  # 4:0 off, 4:1..5 underline styles
            style = replace(style, underline=bool(params[i][1]))
        elif code in _FLAGS_ON:
            style = replace(style, **{_FLAGS_ON[code]: True})
        elif code in _FLAGS_OFF:
            style = replace(style, **dict.fromkeys(_FLAGS_OFF[code], False))
        i += 1
    return style


class AnsiParser:
    """Turns a stream of decoded terminal output into :class:`StyledRun`s and line resets.

    Stateful across :meth:`feed` calls: the current style, an escape sequence split between
    chunks and a trailing ``\\r`` (to recognise ``\\r\\n`` split across chunks) carry over.
    SGR (``ESC [ ... m``) sets the style: reset, bold, dim, italic, underline, inverse,
    strike, 16 colours, 256 colours and truecolor. Every other CSI, OSC, DCS, SOS, PM, APC
    and two-character escape is removed, as are control characters except ``\\t`` and
    ``\\n``; ``\\r\\n`` is a newline and a lone ``\\r`` yields :data:`LINE_RESET`.
    """

    __slots__ = ("_cr", "_pending", "style")

    def __init__(self) -> None:
        self.style = DEFAULT_STYLE
        self._pending = ""
        self._cr = False

    def feed(self, text: str) -> list[Segment]:
        """Parse the next chunk (chars); returns the segments complete so far, in order.

        Adjacent text in one style comes out as one run.
        """
        if self._pending:
            text = self._pending + text
            self._pending = ""
        out: list[Segment] = []
        if not text:
            return out
        if self._cr:
            self._cr = False
            if text[0] == "\n":
                pass  # \r\n split across chunks: just the newline
            else:
                out.append(LINE_RESET)
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        pos = 0
        size = len(text)
        style = self.style
        pieces: list[str] = []  # text in `style` not yet emitted
        for m in _TOKEN.finditer(text):
            start = m.start()
            if start > pos:
                pieces.append(text[pos:start])
            pos = m.end()
            params = m.group(1)
            if params is not None:  # SGR
                new = _sgr(style, params)
                if new is not style:
                    if pieces:
                        out.append(StyledRun("".join(pieces), style))
                        pieces = []
                    style = new
                continue
            char = text[start]
            if char == "\x1b":
                esc = _ESCAPE.match(text, start)
                if esc is not None:
                    pos = esc.end()
                    if esc.group("final") == "m":  # SGR with unusual bytes
                        new = _sgr(style, esc.group("params"))
                        if new is not style and pieces:
                            out.append(StyledRun("".join(pieces), style))
                            pieces = []
                        style = new
                elif size - start <= MAX_PENDING_CHARS and _ESCAPE_PREFIX.fullmatch(text, start):
                    self._pending = text[start:]
                    pos = size
                    break
            elif char == "\r":
                if pos == size:
                    self._cr = True
                else:
                    if pieces:
                        out.append(StyledRun("".join(pieces), style))
                        pieces = []
                    out.append(LINE_RESET)
        if pos < size:
            pieces.append(text[pos:])
        if pieces:
            out.append(StyledRun("".join(pieces), style))
        self.style = style
        return out

    def reset(self) -> None:
        """Forget the style and any partial sequence."""
        self.style = DEFAULT_STYLE
        self._pending = ""
        self._cr = False


def parse_ansi(text: str) -> list[Segment]:
    """Parse one complete text (a fresh :class:`AnsiParser`, a trailing ``\\r`` dropped)."""
    return AnsiParser().feed(text)


def strip_ansi(text: str) -> str:
    """``text`` without escape sequences or control characters; ``\\r`` overwrites the line."""
    lines: list[str] = [""]
    for seg in parse_ansi(text):
        if isinstance(seg, LineReset):
            lines[-1] = ""
            continue
        parts = seg.text.split("\n")
        lines[-1] += parts[0]
        lines.extend(parts[1:])
    return "\n".join(lines)


#: Bidi embedding, override and isolate controls: a model could reorder what a line seems to
#: say with them (``"\u202egnp.exe"`` shows as ``exe.png``), so displayed text drops them.
_BIDI_CONTROLS = dict.fromkeys([*range(0x202A, 0x202F), *range(0x2066, 0x206A)], None)


def display_text(text: str) -> str:
    """Model or tool text made safe to display: terminal escape sequences and bidi controls
    removed (see :func:`strip_ansi`), and secrets redacted (every registered secret value and
    the common secret shapes, :func:`core.redaction.redact_text`; issue 11 "Redaction")."""
    return redact_text(strip_ansi(text)).translate(_BIDI_CONTROLS)
