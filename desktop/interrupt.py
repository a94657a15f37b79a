"""Ctrl+C in the terminal that started the window: the window closes as its close button does.

Python runs a signal handler only when the main thread next executes bytecode, and Qt's event
loop may sleep in C for as long as nothing happens; Python's default SIGINT handler then
raises ``KeyboardInterrupt`` inside whichever slot runs next, which Qt prints and ignores (the
window stayed open with a traceback on the terminal). :class:`SigintCloser` replaces that
handler: the signal's wake-up byte (``signal.set_wakeup_fd``) wakes the event loop through a
``QSocketNotifier``, and each Ctrl+C is handed to a callback on the GUI thread with its count:

1. the first asks the window to close, as its close button does (it asks first when a run is
   going on or a change waits for review);
2. the second closes it without asking (the run is stopped and journaled as on *Stop*);
3. the third ends the process at once with the default SIGINT action (the journal is
   crash-safe: the next launch reopens the session as interrupted).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from collections.abc import Callable
from types import FrameType
from typing import Any

from PySide6.QtCore import QObject, QSocketNotifier, QTimer

__all__ = ["SigintCloser"]

HARD_EXIT_COUNT = 3
"""The Ctrl+C that ends the process without any clean-up."""


class SigintCloser(QObject):
    """Hands SIGINT to ``on_interrupt(count)`` on the GUI thread (see the module docstring).

    Install it on the main thread once the Qt application exists; :meth:`uninstall` puts the
    previous handler and wake-up descriptor back.

    Args:
        on_interrupt: called on the GUI thread with 1 for the first Ctrl+C, 2 for the second;
            the third never reaches it (the process ends).
        parent: the owning ``QObject`` (the application).

    Raises:
        ValueError: not called on the main thread (``signal.signal`` refuses).
    """

    def __init__(self, on_interrupt: Callable[[int], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._on_interrupt = on_interrupt
        self.count = 0
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        self._previous_handler = signal.signal(signal.SIGINT, self._handle)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        self._notifier = QSocketNotifier(self._reader.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._drain)

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        self.count += 1
        if self.count >= HARD_EXIT_COUNT:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
            return
        count = self.count
        QTimer.singleShot(0, self, lambda: self._on_interrupt(count))

    def _drain(self) -> None:
        """Empty the wake-up socket (the handler itself runs as this slot's bytecode does)."""
        with contextlib.suppress(OSError):
            while self._reader.recv(512):
                pass

    def uninstall(self) -> None:
        """Restore the previous SIGINT handler and wake-up descriptor; close the sockets."""
        self._notifier.setEnabled(False)
        with contextlib.suppress(ValueError, TypeError):
            signal.set_wakeup_fd(self._previous_fd)
            signal.signal(signal.SIGINT, self._previous_handler)
        self._reader.close()
        self._writer.close()
