"""Real image bytes for tests: encoded by Qt (a QGuiApplication or QApplication must exist)."""

from __future__ import annotations

import os

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QColor, QImage

__all__ = ["noise_png", "png_bytes"]


def _encode(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise RuntimeError("Qt could not encode a PNG")
    buffer.close()
    return bytes(data.data())


def png_bytes(width: int, height: int, color: str = "#2f6fcf") -> bytes:
    """A PNG of ``width`` x ``height`` px filled with ``color`` (small: it compresses)."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor(color))
    return _encode(image)


def noise_png(width: int, height: int) -> bytes:
    """A PNG of random pixels: about ``4 * width * height`` bytes (it does not compress)."""
    raw = os.urandom(width * height * 4)
    return _encode(QImage(raw, width, height, QImage.Format.Format_RGB32).copy())
