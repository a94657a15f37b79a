"""The diff view's palette and drawing constants (the app's dark theme, resources/styles/dark.qss)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor

from desktop.views.diff_highlight import DARK_STYLE

__all__ = [
    "ACTIONS",
    "BUTTONS",
    "COLOURS",
    "FILLER_HATCH",
    "FULL_LEX_LINES",
    "LEX_SLICE_MS",
    "MAX_CHARS",
    "QCOLOURS",
    "STYLE",
    "TAB",
    "row_colours",
]

STYLE = DARK_STYLE  # pygments style for token colours (dark background)
MAX_CHARS = 1000  # longest line drawn (chars); the rest is elided
TAB = "    "
LEX_SLICE_MS = 5.0  # syntax lexing per event-loop turn (ms)
FULL_LEX_LINES = 12_000
"""Sides up to this many lines are lexed whole in the background (multi-line strings right);
longer ones only where rows are shown, a few lines of context each: pygments lexes about
8,000 lines a second here, and a 50,000-line side kept the GUI thread busy for 6 s (issue 15)."""
COLOURS = {  # the app's dark palette (resources/styles/dark.qss)
    "text": "#c9d1d9",
    "bright": "#f0f6fc",
    "muted": "#8b949e",
    "lineno": "#6e7681",
    "lineno_changed": "#9da7b3",
    "border": "#2d323b",
    "border_strong": "#353b45",
    "canvas": "#15171c",
    "surface": "#1b1e24",
    "context": "#15171c",
    "gutter": "#181a20",
    "filler": "#191b21",
    "filler_hatch": "#22262d",
    "del": "#2c1a1e",
    "del_gutter": "#3d1f24",
    "del_word": "#5e242b",
    "del_sign": "#ff7b72",
    "add": "#14261c",
    "add_gutter": "#1a3524",
    "add_word": "#1c4a2b",
    "add_sign": "#7ee787",
    "hunk": "#171f2a",
    "hunk_current": "#1c2b3d",
    "hunk_text": "#8ba3bf",
    "hunk_text_current": "#a5d6ff",
    "accent": "#539bf5",
    "accept": "#7ee787",
    "reject": "#ff7b72",
    "neutral": "#8b949e",
    "button": "#262a32",
    "button_text": "#c9d1d9",
}
QCOLOURS = {name: QColor(value) for name, value in COLOURS.items()}
BUTTONS = {
    # action: (text, border, background when on, text when on); off buttons are "button"
    "accept": ("#7ee787", "#2e6b3f", "#238636", "#ffffff"),
    "reject": ("#ff7b72", "#6e2c2c", "#b62324", "#ffffff"),
    "edit": ("#c9d1d9", "#353b45", "#30353f", "#f0f6fc"),
    "comment": ("#c9d1d9", "#353b45", "#30353f", "#f0f6fc"),
}
ACTIONS = (
    ("accept", "Accept", "Accept this hunk (A)"),
    ("reject", "Reject", "Reject this hunk (R)"),
    ("edit", "Edit", "Edit the proposed lines of this hunk (E)"),
    ("comment", "Comment", "Comment on this hunk for the agent (C)"),
)


FILLER_HATCH = QBrush(QCOLOURS["filler_hatch"], Qt.BrushStyle.BDiagPattern)
"""Diagonal lines over the filler of a side that has no line in a row."""


def row_colours(kind: str) -> tuple[QColor, QColor]:
    """``(code background, gutter background)`` of a line of ``kind``."""
    if kind == "delete":
        return QCOLOURS["del"], QCOLOURS["del_gutter"]
    if kind == "add":
        return QCOLOURS["add"], QCOLOURS["add_gutter"]
    return QCOLOURS["context"], QCOLOURS["gutter"]
