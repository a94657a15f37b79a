"""Rich-text pieces the transcript shares: Markdown rendering, text blocks and link lists."""

from __future__ import annotations

import html
import logging
import math
from collections.abc import Sequence
from urllib.parse import urlsplit

from PySide6.QtCore import QEvent, QSize, Qt, QUrl
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QKeyEvent,
    QPalette,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextFrameFormat,
    QTextOption,
)
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QSizePolicy,
    QTextBrowser,
    QTextEdit,
    QToolButton,
    QWidget,
)

from desktop.activity import Link
from desktop.activity import domain as url_domain

from .ansi import display_text

_log = logging.getLogger("desktop")

__all__ = [
    "DIM_COLOR",
    "DocumentHeights",
    "LINK_COLOR",
    "breakable",
    "display_text",
    "SAFE_SCHEMES",
    "ElidedLabel",
    "TextBlock",
    "ToggleButton",
    "link_label",
    "links_html",
    "is_safe_url",
    "mono_font",
    "open_safe_url",
    "render_markdown",
    "set_shown",
]

#: Colour of links in transcript text (CSS hex).
LINK_COLOR = "#79c0ff"
#: Colour of secondary text: numbers, domains, scores (CSS hex).
DIM_COLOR = "#8b949e"
_CODE_BG = "#0f1115"
_INLINE_CODE_BG = "#262a32"


def mono_font() -> QFont:
    """The system's fixed-pitch font, half a point smaller (at least 9 pt)."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setPointSizeF(max(9.0, font.pointSizeF() - 0.5))
    return font


def render_markdown(doc: QTextDocument, text: str) -> None:
    """Fill ``doc`` with ``text`` (GitHub-flavoured Markdown), styled for the dark theme.

    Fenced and indented code blocks become boxed, monospace and wrapping (long lines wrap
    rather than widen the transcript); inline code gets a monospace font and a background.
    """
    doc.setMarkdown(display_text(text), QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
    mono = mono_font()
    inline = QTextCharFormat()
    inline.setFont(mono)
    inline.setBackground(QColor(_INLINE_CODE_BG))
    inline.setForeground(QColor("#e6edf3"))
    link = QTextCharFormat()
    link.setForeground(QColor(LINK_COLOR))
    cursor = QTextCursor(doc)
    runs: list[tuple[int, int]] = []
    block = doc.begin()
    while block.isValid():
        fmt = block.blockFormat()
        if fmt.hasProperty(QTextFormat.Property.BlockCodeFence) or fmt.nonBreakableLines():
            fmt.setNonBreakableLines(False)
            cursor.setPosition(block.position())
            cursor.setBlockFormat(fmt)
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
            chars = QTextCharFormat()
            chars.setFont(mono)
            chars.setForeground(QColor("#d6dde6"))
            cursor.mergeCharFormat(chars)
            end = block.position() + block.length() - 1
            if runs and runs[-1][1] + 1 == block.position():
                runs[-1] = (runs[-1][0], end)
            else:
                runs.append((block.position(), end))
        else:
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                if frag.charFormat().isAnchor():  # readable on the dark theme
                    cursor.setPosition(frag.position())
                    cursor.setPosition(
                        frag.position() + frag.length(), QTextCursor.MoveMode.KeepAnchor
                    )
                    cursor.mergeCharFormat(link)
                if frag.charFormat().fontFixedPitch():
                    cursor.setPosition(frag.position())
                    cursor.setPosition(
                        frag.position() + frag.length(), QTextCursor.MoveMode.KeepAnchor
                    )
                    cursor.mergeCharFormat(inline)
                it += 1
        block = block.next()
    box = QTextFrameFormat()
    box.setBackground(QColor(_CODE_BG))
    box.setBorder(1)
    box.setBorderBrush(QColor("#2d323b"))
    box.setPadding(6)
    box.setMargin(2)
    box.setTopMargin(4)
    box.setBottomMargin(4)
    squash = QTextBlockFormat()  # the empty blocks a frame needs around it take no space
    squash.setLineHeight(0, QTextBlockFormat.LineHeightTypes.FixedHeight.value)
    for start, end in reversed(runs):  # from the end, so earlier positions stay valid
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        frame = cursor.insertFrame(box)
        for position in (frame.firstPosition() - 1, frame.lastPosition() + 1):
            around = doc.findBlock(position)
            if around.isValid() and not around.text():
                cursor.setPosition(around.position())
                cursor.setBlockFormat(squash)


def set_shown(widget: QWidget, visible: bool) -> None:
    """Change visibility only when it changes (each change re-lays out the ancestors)."""
    if widget.isHidden() == visible:
        widget.setVisible(visible)


def breakable(text: str, run: int = 40) -> str:
    """``text`` with a zero-width space every ``run`` characters of an unbroken word, so a
    long token (a URL, a hash, base64) wraps instead of widening its box."""
    words = []
    for word in text.split(" "):
        if len(word) > run:
            word = "\u200b".join(word[i : i + run] for i in range(0, len(word), run))
        words.append(word)
    return " ".join(words)


#: URL schemes a click may hand to the system (anything else, e.g. ``javascript:``,
#: ``data:`` or ``file:``, from a model or a web page, is shown but not opened).
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})


def is_safe_url(url: str) -> bool:
    """Whether ``url`` may be opened by a click: an ``http``/``https``/``mailto`` URL."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    if parts.scheme.lower() not in SAFE_SCHEMES:
        return False
    return parts.scheme.lower() == "mailto" or bool(parts.netloc)


def open_safe_url(url: object) -> bool:
    """Open ``url`` (a ``QUrl`` or a string) in the system's handler when it is safe.

    Returns:
        Whether it was handed to ``QDesktopServices.openUrl``.
    """
    text = url.toString() if isinstance(url, QUrl) else str(url)
    if not is_safe_url(text):
        _log.warning("refused to open a link with an unsafe scheme: %.80s", text)
        return False
    QDesktopServices.openUrl(QUrl(text))
    return True


def links_html(links: Sequence[Link]) -> str:
    """Numbered lines: a clickable title and its dim domain (a file: just its name).

    Args:
        links: the links, in the order to number them (from 1).

    Returns:
        Rich text (HTML), one ``<div>`` per link; empty for no links.
    """
    rows = []
    for number, link in enumerate(links, 1):
        title = html.escape(breakable(display_text(link.title or link.url or "untitled")))
        if link.url and not is_safe_url(link.url):  # shown, never a link
            text = f'{title} <span style="color:{DIM_COLOR}">· {html.escape(display_text(link.url[:80]))}</span>'
        elif link.url:
            href = html.escape(link.url, quote=True)
            domain = url_domain(link.url)
            text = f'<a href="{href}" style="color:{LINK_COLOR}; text-decoration:none">{title}</a>'
            if domain and domain != link.title:
                text += f' <span style="color:{DIM_COLOR}">· {html.escape(domain)}</span>'
        else:
            text = title
        rows.append(f'<div dir="ltr"><span style="color:{DIM_COLOR}">{number}.</span> {text}</div>')
    return "".join(rows)


def link_label(object_name: str) -> QLabel:
    """A wrapping rich-text label whose links open in the system browser (QDesktopServices)."""
    label = QLabel()
    label.setObjectName(object_name)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    label.setOpenExternalLinks(False)
    label.linkActivated.connect(open_safe_url)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
    return label


class TextBlock(QTextBrowser):
    """Read-only rich text that grows to fit its document (selectable, links emitted)."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("transcriptText")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(open_safe_url)  # Markdown links in answers
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)  # the transcript measures entries by height-for-width
        self.setSizePolicy(policy)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.viewport().setAutoFillBackground(False)
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Link, QColor(LINK_COLOR))
        self.setPalette(palette)
        self.document().setDocumentMargin(2)
        self._heights = DocumentHeights(self, extra=2)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        """The height (px) the whole document needs at ``width`` px (no scrolling)."""
        return self._heights.at(width)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and hasattr(self, "_heights"):
            self._heights.reset()

    def minimumSizeHint(self) -> QSize:
        return QSize(60, self.fontMetrics().lineSpacing() + 6)

    def sizeHint(self) -> QSize:
        return QSize(200, self._heights.at(self.width()))


class DocumentHeights:
    """A text edit's document height per width (px), cached until the document changes.

    Measuring sets the document's text width to the width asked (what ``QTextEdit`` does on
    a resize, with ``LineWrapMode.WidgetWidth``); on a shown edit it is set back afterwards,
    so a query for another width never leaves the text wrapped wrongly on screen. A change
    of the document's content calls ``updateGeometry`` so the layouts above measure again;
    the owner calls :meth:`reset` when its font changes.

    Args:
        edit: the text edit (its frame width is added on both sides).
        extra: px added to the document's height.
    """

    def __init__(self, edit: QTextEdit, *, extra: int = 0) -> None:
        self._edit = edit
        self._extra = extra
        self._cache: dict[int, int] = {}
        edit.document().contentsChanged.connect(self.reset)

    def at(self, width: int) -> int:
        """The document's height (px, frame and ``extra`` included) at ``width`` px."""
        cached = self._cache.get(width)
        if cached is not None:
            return cached
        edit, doc = self._edit, self._edit.document()
        frame = 2 * edit.frameWidth()
        text_width = float(max(1, width - frame))
        old = doc.textWidth()
        if old != text_width:
            doc.setTextWidth(text_width)
        height = math.ceil(doc.size().height()) + self._extra + frame
        if old != text_width and old > 0 and edit.isVisible():
            doc.setTextWidth(old)
        self._cache[width] = height
        return height

    def reset(self) -> None:
        """Forget the heights (the content or the font changed) and ask for a new layout."""
        self._cache.clear()
        self._edit.updateGeometry()


class ElidedLabel(QLabel):
    """A one-line label that elides its text to the width it gets (full text in its tooltip).

    Args:
        text: the full text (newlines are shown as ``⏎``).
        mode: where the ellipsis goes (``ElideMiddle`` suits paths).
        natural_width: ask for the full text's width and shrink only when space runs out
            (default: take whatever width the layout gives).
    """

    def __init__(
        self,
        text: str = "",
        *,
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
        natural_width: bool = False,
    ) -> None:
        super().__init__()
        self._mode = mode
        self._natural = natural_width
        self.setTextFormat(Qt.TextFormat.PlainText)  # commands and queries are never markup
        policy = QSizePolicy.Policy.Preferred if natural_width else QSizePolicy.Policy.Ignored
        self.setSizePolicy(policy, QSizePolicy.Policy.Preferred)
        self.full_text = ""
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        """Show ``text``, elided to the current width (escapes and bidi controls removed)."""
        text = display_text(text)
        self.full_text = text
        self.setToolTip(text if len(text) > 40 else "")
        self._elide()
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        if self._natural:
            line = self.full_text.replace("\n", " ⏎ ")
            hint.setWidth(QFontMetrics(self.font()).horizontalAdvance(line) + 4)
        return hint

    def minimumSizeHint(self) -> QSize:
        return QSize(40, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        line = self.full_text.replace("\n", " ⏎ ")
        width = max(10, self.width())
        self.setText(QFontMetrics(self.font()).elidedText(line, self._mode, width))


class ToggleButton(QToolButton):
    """A flat button that also answers Return and Enter (a ``QToolButton`` takes only Space),
    for the transcript's show/hide toggles."""

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.isAutoRepeat():
            self.animateClick()
            return
        super().keyPressEvent(event)
