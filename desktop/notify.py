"""Desktop notifications through the system tray, only while the window is not active."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

__all__ = ["Notifier"]

_DEFAULT_TIMEOUT_MS = 8000


class Notifier(QObject):
    """Shows a tray notification when something needs the user and the window is not active.

    Without a system tray (the offscreen platform, many tiling window managers) every
    :meth:`notify` is a no-op returning ``False``. The text shown should not carry secrets or
    full commands: notifications can appear on a locked screen.

    Args:
        window: the main window; no notification is shown while it is the active window.
        tray: the tray icon to show messages with; default: one made here (with the window's
            or the application's icon) when the platform has a system tray, else none.
    """

    def __init__(self, window: QWidget, tray: QSystemTrayIcon | None = None) -> None:
        super().__init__(window)
        self._window = window
        if tray is None and QSystemTrayIcon.isSystemTrayAvailable():
            icon = window.windowIcon()
            if icon.isNull():
                icon = QApplication.windowIcon()
            tray = QSystemTrayIcon(icon if not icon.isNull() else QIcon(), self)
            tray.activated.connect(lambda _reason: self._raise_window())
            tray.messageClicked.connect(self._raise_window)
            tray.show()
        self._tray = tray

    @property
    def available(self) -> bool:
        """Whether notifications can be shown at all."""
        return self._tray is not None

    def notify(self, title: str, message: str, *, timeout_ms: int = _DEFAULT_TIMEOUT_MS) -> bool:
        """Show ``title``/``message`` unless the window is active or there is no tray.

        Args:
            title: short heading, e.g. ``"Tandem needs approval"``.
            message: one line, e.g. ``"Run a shell command (2 pending)"``.
            timeout_ms: how long the platform should show it, in milliseconds (a hint).

        Returns:
            Whether a notification was shown.
        """
        if self._tray is None or self._window.isActiveWindow():
            return False
        self._tray.showMessage(
            title, message, QSystemTrayIcon.MessageIcon.Information, max(0, timeout_ms)
        )
        return True

    def _raise_window(self) -> None:
        if self._window.isMinimized():
            self._window.showNormal()
        self._window.raise_()
        self._window.activateWindow()
