"""Labels for counts that change while a diff streams in, without re-laying out the window."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QWidget

__all__ = ["ShrinkingLine", "SteadyLabel"]


def _stepped(width: int, step: int) -> int:
    return -(-width // step) * step


class SteadyLabel(QLabel):
    """A ``QLabel`` of a fixed size whose width grows in steps (never shrinks until
    :meth:`unpin`), for counts in the toolbar.

    ``QLabel.setText`` calls ``updateGeometry``, which re-lays out the parent and, up the
    chain, the window's tab widget, whose re-layout repaints the whole tab (Qt's
    ``QTabWidget::setUpLayout``): a count that changed with every chunk of a streamed diff
    repainted the whole diff view 27-49 times a build. A fixed-size widget's
    ``updateGeometry`` does nothing (``QWidgetPrivate::updateGeometry_helper``), so a new
    text repaints the label's own rect only, and the layout is asked again only when the
    text outgrows its step (issue 15).

    Args:
        step: the width's step (px).
        parent: the parent widget.
    """

    def __init__(self, step: int = 48, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._step = max(1, step)
        self._widest = 0
        self._fit()

    def setText(self, text: str) -> None:
        """Show ``text``; the label widens (one re-layout) only when a step is outgrown."""
        if text == self.text():
            return
        super().setText(text)
        self._fit()

    def unpin(self) -> None:
        """Let the width shrink to the text again (another file is shown)."""
        self._widest = 0
        self._fit()

    def sizeHint(self) -> QSize:
        """The text's hint, its width rounded up to a step and at least the widest so far."""
        hint = super().sizeHint()
        self._widest = max(self._widest, _stepped(hint.width(), self._step))
        return QSize(self._widest, hint.height())

    def minimumSizeHint(self) -> QSize:
        """The same as :meth:`sizeHint` (the size is fixed)."""
        return self.sizeHint()

    def _fit(self) -> None:
        hint = self.sizeHint()
        if (hint.width(), hint.height()) != (self.minimumWidth(), self.minimumHeight()):
            self.setFixedSize(hint)


class ShrinkingLine(QLabel):
    """A one-line ``QLabel`` that its layout may shrink (the text is elided; the full text
    is its tooltip's business) and whose text changes repaint it without a re-layout.

    The text is kept here and painted by :meth:`paintEvent` (``QLabel``'s own text stays
    empty, so ``QLabel.setText`` and its ``updateGeometry`` are never called); the width hint
    grows in ``step`` px steps, and only then is the layout asked again. Colours and font
    come from the style sheet as for any ``QLabel``.

    Args:
        step: the width hint's step (px).
        parent: the parent widget.
    """

    def __init__(self, step: int = 48, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._step = max(1, step)
        self._text = ""
        self._hint = 0

    def text(self) -> str:
        """The text shown (whole, before any elision)."""
        return self._text

    def setText(self, text: str) -> None:
        """Show ``text``: a repaint of this label, a re-layout only when a step is outgrown."""
        if text == self._text:
            return
        self._text = text
        wanted = _stepped(self.fontMetrics().horizontalAdvance(text) + 4, self._step)
        if wanted > self._hint:
            self._hint = wanted
            self.updateGeometry()
        self.update()

    def unpin(self) -> None:
        """Let the width hint shrink to the text again (another file is shown)."""
        self._hint = 0
        self._text = ""  # the next text sets the hint (and asks the layout once)

    def sizeHint(self) -> QSize:
        """Width: the widest text so far, in steps (px); height: one line."""
        return QSize(self._hint, self.fontMetrics().height() + 2)

    def minimumSizeHint(self) -> QSize:
        """No width of its own (the minimum width set on it applies)."""
        return QSize(0, self.fontMetrics().height() + 2)

    def paintEvent(self, event: QPaintEvent) -> None:
        """The text, elided at the right to the label's width, vertically centred."""
        painter = QPainter(self)
        rect = self.contentsRect()
        shown = self.fontMetrics().elidedText(self._text, Qt.TextElideMode.ElideRight, rect.width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, shown)
        painter.end()
