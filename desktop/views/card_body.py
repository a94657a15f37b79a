"""CardBodyView: a tool card's expandable body (sources, search hits, code, output, images)."""

from __future__ import annotations

import html
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import cast

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QFontMetrics, QImage, QPixmap, QResizeEvent, QTextDocument, QTextOption
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QLabel,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.activity import CardBody, image_format

from .rich_text import (
    DIM_COLOR,
    DocumentHeights,
    display_text,
    link_label,
    links_html,
    mono_font,
    set_shown,
)

_log = logging.getLogger("desktop")

__all__ = ["CardBodyView"]

_IMAGE_MAX = QSize(360, 480)  # px: inline images are scaled down (never up) to fit this box
_OUTPUT_LINES = 16  # lines of output shown before the output box scrolls


#: Images up to this size (bytes) are decoded on the GUI thread; larger ones in a worker.
_SYNC_DECODE_BYTES = 256 * 1024
_DECODER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tandem-image")


def _decode(data: bytes) -> QImage | None:
    """``data`` as an image scaled down to the inline box (thread-safe), or ``None``; the
    bytes themselves are kept for *Save image…*."""
    image = QImage.fromData(data)
    if image.isNull():
        return None
    if image.width() > _IMAGE_MAX.width() or image.height() > _IMAGE_MAX.height():
        image = image.scaled(
            _IMAGE_MAX,
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    return image


class _Decoded(QObject):
    """Carries a worker's decoded image to the GUI thread (a queued signal)."""

    done = Signal(object)


class _OutputBox(QTextBrowser):
    """Monospace, wrapping plain text in a box; at most ``_OUTPUT_LINES`` lines, then it scrolls.

    Code and output are shown as plain text, escape sequences and bidi controls removed: a
    Markdown render of a long code cell took seconds (5,000 lines: 15 s) and froze the window.
    """

    def __init__(self, name: str = "cardOutput") -> None:
        super().__init__()
        self.setObjectName(name)
        self.setFont(mono_font())
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)  # the transcript measures entries by height-for-width
        self.setSizePolicy(policy)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.document().setDocumentMargin(4)
        self._heights = DocumentHeights(self)

    def show_text(self, text: str) -> None:
        """Show ``text`` (hidden when empty); unchanged text is not laid out again."""
        shown = display_text(text).removesuffix("\n")  # no blank line under the last one
        if self.toPlainText() != shown:
            self.setPlainText(shown)
        set_shown(self, bool(text))

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        """The document's height (px) at ``width`` px, at most ``_OUTPUT_LINES`` lines."""
        cap = _OUTPUT_LINES * QFontMetrics(self.font()).lineSpacing() + 8
        return min(self._heights.at(width), cap + 2 * self.frameWidth())

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and hasattr(self, "_heights"):
            self._heights.reset()

    def minimumSizeHint(self) -> QSize:
        return QSize(60, QFontMetrics(self.font()).lineSpacing() + 8)

    def sizeHint(self) -> QSize:
        return QSize(200, self.heightForWidth(max(self.width(), 200)))


class _Image(QLabel):
    """An inline image at most ``_IMAGE_MAX`` (px), narrower when the transcript is."""

    def __init__(self, pixmap: QPixmap) -> None:
        super().__init__()
        self.setObjectName("cardImage")
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        if pixmap.width() > _IMAGE_MAX.width() or pixmap.height() > _IMAGE_MAX.height():
            pixmap = pixmap.scaled(
                _IMAGE_MAX,
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
        self.full = pixmap
        self.setPixmap(pixmap)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        full = self.full.size()
        return full.height() * min(width, full.width()) // max(1, full.width())

    def sizeHint(self) -> QSize:
        return self.full.size()

    def minimumSizeHint(self) -> QSize:
        return QSize(min(40, self.full.width()), min(20, self.full.height()))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = min(self.width(), self.full.width())
        if width != self.pixmap().width():
            self.setPixmap(
                self.full
                if width == self.full.width()
                else self.full.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
            )


class CardBodyView(QFrame):
    """A tool card's expandable part: links, search hits, code, output, images and lines."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("cardBody")
        self.links = link_label("cardLinks")
        self.hits = QLabel()
        self.hits.setObjectName("cardHits")
        self.hits.setTextFormat(Qt.TextFormat.RichText)
        self.hits.setWordWrap(True)
        self.hits.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.hits.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.code = _OutputBox("cardCode")
        self.output = _OutputBox()
        self.images = QWidget()
        self.images.setObjectName("cardImages")
        self._image_layout = QVBoxLayout(self.images)
        self._image_layout.setContentsMargins(0, 2, 0, 2)
        self._image_layout.setSpacing(6)
        self.lines = QLabel()
        self.lines.setObjectName("cardLines")
        self.lines.setTextFormat(Qt.TextFormat.PlainText)
        self.lines.setWordWrap(True)
        self.lines.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.lines.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._urls: list[str] = []
        self._image_data: list[bytes] = []
        self._slots: list[QVBoxLayout] = []
        self._generation = 0  # bumped when the images change; stale decodes are dropped
        self._decoded = _Decoded(self)
        self._decoded.done.connect(self._on_decoded)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(4)
        for part in (self.links, self.hits, self.code, self.output, self.images, self.lines):
            part.hide()
            layout.addWidget(part)

    def set_body(self, body: CardBody) -> None:
        """Show ``body`` (replacing what was shown)."""
        self._urls = [link.url for link in body.links if link.url]
        self.links.setText(links_html(body.links))
        set_shown(self.links, bool(body.links))
        self.hits.setText(
            "".join(
                f"<div style='margin-bottom:4px'><b>{html.escape(display_text(hit.filename))}</b>"
                + (f" · {hit.score:.2f}" if hit.score is not None else "")
                + f"<br><span style='color:{DIM_COLOR}'>{html.escape(display_text(hit.text))}</span></div>"
                for hit in body.hits
            )
        )
        set_shown(self.hits, bool(body.hits))
        self.code.show_text(body.code)
        self.output.show_text(body.output)
        self._set_images(body.images)
        self.lines.setText("\n".join(f"• {display_text(line)}" for line in body.lines))
        set_shown(self.lines, bool(body.lines))

    def _set_images(self, images: list[bytes]) -> None:
        if images == self._image_data:
            return
        self._image_data = list(images)
        self._generation += 1
        while (item := self._image_layout.takeAt(0)) is not None:
            if (widget := item.widget()) is not None:
                widget.hide()
                widget.deleteLater()
        self._slots = []
        for index, data in enumerate(images):
            slot = QVBoxLayout()
            slot.setContentsMargins(0, 0, 0, 0)
            slot.setSpacing(2)
            holder = QWidget()
            holder.setLayout(slot)
            self._image_layout.addWidget(holder)
            self._slots.append(slot)
            if len(data) <= _SYNC_DECODE_BYTES:  # small: decoding takes a few ms
                self._show_image(index, _decode(data))
            else:  # large (a 4096 px PNG takes ~0.2 s): decode in a worker thread
                waiting = QLabel("loading image…")
                waiting.setObjectName("cardImageError")
                slot.addWidget(waiting)
                _DECODER.submit(self._decode_later, self._generation, index, data)
            holder.show()
        set_shown(self.images, bool(images))

    def _decode_later(self, generation: int, index: int, data: bytes) -> None:
        """In the worker: decode unless a newer body replaced these images (partial images
        arrive faster than they decode; only the latest is worth the time)."""
        if generation != self._generation:
            return
        self._decoded.done.emit((generation, index, _decode(data)))

    def _on_decoded(self, result: object) -> None:
        generation, index, image = cast(tuple[int, int, "QImage | None"], result)
        if generation == self._generation and index < len(self._slots):
            self._show_image(index, image)

    def _show_image(self, index: int, image: QImage | None) -> None:
        slot = self._slots[index]
        while (item := slot.takeAt(0)) is not None:
            if (widget := item.widget()) is not None:
                widget.hide()
                widget.deleteLater()
        if image is None:
            label: QLabel = QLabel("image could not be decoded")
            label.setObjectName("cardImageError")
            slot.addWidget(label)
            label.show()
            return
        label = _Image(QPixmap.fromImage(image))
        slot.addWidget(label)
        label.show()
        save = QToolButton()
        save.setObjectName("saveImage")
        save.setText("Save image…")
        save.setCursor(Qt.CursorShape.PointingHandCursor)
        save.setToolTip("Save the image as a file (the bytes the model returned)")
        save.clicked.connect(lambda _=False, i=index: self._ask_where_to_save(i))
        slot.addWidget(save, 0, Qt.AlignmentFlag.AlignLeft)
        save.show()

    def save_image(self, index: int, path: str | Path) -> None:
        """Write image ``index`` (0-based, in the order shown) to ``path`` as received.

        Raises:
            IndexError: no such image.
            OSError: the file cannot be written.
        """
        Path(path).write_bytes(self._image_data[index])

    def _ask_where_to_save(self, index: int) -> None:
        data = self._image_data[index]
        suffix = image_format(data) or "png"
        dialog = QFileDialog(self.window(), "Save image", f"image-{index + 1}.{suffix}")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def save(path: str) -> None:
            try:
                self.save_image(index, path)
            except OSError as exc:
                self.setToolTip(f"Could not save the image: {exc}")
                _log.warning("could not save an image to %s: %s", path, exc)

        dialog.fileSelected.connect(save)
        dialog.open()  # not modal: the run and the window go on

    def _image_labels(self) -> list[QLabel]:
        return [
            widget
            for slot in self._slots
            for i in range(slot.count())
            if isinstance(widget := slot.itemAt(i).widget(), QLabel)
        ]

    def image_count(self) -> int:
        """How many images are shown as pixmaps."""
        return sum(
            1
            for label in self._image_labels()
            if not label.pixmap().isNull() and not label.isHidden()
        )

    def text(self) -> str:
        """The plain text of every part shown (link titles, domains and URLs included)."""
        parts: list[str] = []
        if not self.links.isHidden():
            doc = QTextDocument()
            doc.setHtml(self.links.text())
            parts += [doc.toPlainText(), *self._urls]
        if not self.hits.isHidden():
            doc = QTextDocument()
            doc.setHtml(self.hits.text())
            parts.append(doc.toPlainText())
        for block in (self.code, self.output):
            if not block.isHidden():
                parts.append(block.toPlainText())
        parts += [label.text() for label in self._image_labels() if label.pixmap().isNull()]
        if not self.lines.isHidden():
            parts.append(self.lines.text())
        return "\n".join(parts)
