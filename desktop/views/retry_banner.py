"""RetryBanner: "retrying in N s" with a countdown while a model request is retried, then the
failure that says what to do; offers *Retry* and *Open Settings* (issue 16, item 4)."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

__all__ = ["RetryBanner"]


class RetryBanner(QFrame):
    """A strip above the composer, hidden until a model request fails.

    :meth:`show_retry` takes a :class:`core.models.errors.RetryNotice` and counts its pause
    down once a second ("… retrying in 3 s (retry 1 of 3)"); *Retry* then ends the pause at
    once (``notice.retry_now``). :meth:`show_failure` takes the final
    :class:`core.models.errors.ModelErrorInfo`; *Retry* then asks for the run again
    (:attr:`retryRequested`). *Open Settings* (:attr:`settingsRequested`) shows when the fix
    is in Settings. :meth:`clear` hides it (a run succeeded, or a new one started).

    Signals:
        retryRequested(): *Retry* after the final failure (run the last message again).
        settingsRequested(): *Open Settings*.
    """

    retryRequested = Signal()
    settingsRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("retryBanner")
        self.setStyleSheet(
            "#retryBanner { background: #3a2f14; border: 1px solid #8a6d1f; border-radius: 6px; }"
            "#retryBanner[state='failed'] { background: #3a1a1a; border-color: #9a3b3b; }"
            "#retryBanner QLabel { color: #f2e6c9; }"
        )
        self.message = QLabel()
        self.message.setObjectName("retryMessage")
        self.message.setWordWrap(True)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setObjectName("retryButton")
        self.settings_button = QPushButton("Open Settings")
        self.settings_button.setObjectName("retrySettingsButton")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.addWidget(self.message, 1)
        layout.addWidget(self.retry_button)
        layout.addWidget(self.settings_button)
        self.retry_button.clicked.connect(self._retry)
        self.settings_button.clicked.connect(self.settingsRequested)
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self.tick)
        self._notice: Any = None
        self._remaining = 0
        self.state = "hidden"
        self.hide()

    @Slot(object)
    def show_retry(self, notice: Any) -> None:
        """Show a retry's pause (``notice``: ``delay_s``, ``attempt``, ``max_retries``,
        ``info.message``, ``retry_now``) and count it down."""
        self._notice = notice
        self._remaining = max(1, math.ceil(float(notice.delay_s)))
        self._set_state("retrying")
        self.settings_button.setVisible(bool(getattr(notice.info, "open_settings", False)))
        self.retry_button.setToolTip("Try again now instead of waiting")
        self._render()
        self._timer.start()
        self.show()

    @Slot(object)
    def show_failure(self, info: Any) -> None:
        """Show the final failure (``info``: ``message``, ``open_settings``)."""
        self._timer.stop()
        self._notice = None
        self._set_state("failed")
        self.message.setText(str(info.message))
        self.settings_button.setVisible(bool(getattr(info, "open_settings", True)))
        self.retry_button.setToolTip("Send the last message again")
        self.show()

    @Slot()
    def clear(self) -> None:
        """Hide the banner and stop the countdown."""
        self._timer.stop()
        self._notice = None
        self._set_state("hidden")
        self.hide()

    @Slot(bool)
    def running_changed(self, running: bool) -> None:
        """A run started (the banner goes) or ended (a countdown goes; a failure stays)."""
        if running or self.state == "retrying":
            self.clear()

    @Slot()
    def progress(self) -> None:
        """The model answers again: a countdown goes."""
        if self.state == "retrying":
            self.clear()

    @Slot()
    def tick(self) -> None:
        """One second of the countdown passed."""
        if self._notice is None:
            self._timer.stop()
            return
        self._remaining = max(0, self._remaining - 1)
        self._render()
        if self._remaining == 0:
            self._timer.stop()

    def _render(self) -> None:
        notice = self._notice
        when = f"retrying in {self._remaining} s" if self._remaining else "retrying now"
        self.message.setText(
            f"{notice.info.message} — {when} (retry {notice.attempt} of {notice.max_retries})"
        )

    def _retry(self) -> None:
        if self._notice is not None:
            self._notice.retry_now()
            self._remaining = 0
            self._render()
            self._timer.stop()
        else:
            self.retryRequested.emit()

    def _set_state(self, state: str) -> None:
        self.state = state
        self.setProperty("state", state)
        self.style().unpolish(self)
        self.style().polish(self)
