"""Run start-up work once the main window has painted for the first time (issue 15)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

__all__ = ["after_first_paint"]


class _FirstPaint(QObject):
    """Watches the application's paint events until one reaches ``window`` or a child."""

    def __init__(self, window: QWidget, callback: Callable[[], None], fallback_ms: int) -> None:
        super().__init__(window)
        self._window = window
        self._callback: Callable[[], None] | None = callback
        self._fallback = QTimer(self)
        self._fallback.setSingleShot(True)
        self._fallback.timeout.connect(self._fire)
        self._fallback.start(fallback_ms)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Paint
            and isinstance(watched, QWidget)
            and watched.window() is self._window
        ):
            self._stop_watching()
            QTimer.singleShot(0, self, self._fire)  # the whole paint pass and its flush first
        return False

    def _stop_watching(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)

    def _fire(self) -> None:
        self._stop_watching()
        self._fallback.stop()
        callback, self._callback = self._callback, None
        if callback is not None:
            callback()
        self.deleteLater()


def after_first_paint(
    window: QWidget, callback: Callable[[], None], *, fallback_ms: int = 1000
) -> None:
    """Call ``callback`` once, on the event loop's first turn after ``window``'s first paint.

    Start-up work that the first frame does not show (the sessions list, checkpoints, tool
    look-ups, warming imports) goes here, so the window is up first (issue 15, "window up
    under 1.5 s"). Call it right after ``window.show()``.

    Args:
        window: a top-level widget; a paint event of it or of any child counts.
        callback: called with no arguments, on the GUI thread, exactly once.
        fallback_ms: milliseconds after which ``callback`` runs anyway (a window that never
            paints: minimised, on a platform without exposure events).

    Raises:
        RuntimeError: no ``QApplication`` exists.
    """
    app = QApplication.instance()
    if app is None:
        raise RuntimeError("after_first_paint needs a QApplication")
    app.installEventFilter(_FirstPaint(window, callback, fallback_ms))
