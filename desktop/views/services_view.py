"""ServicesView: the background services the agent started (``cmd &``), each with a Kill button.

Shown under the terminal in the Terminal tab while any service was started (issue 11: "a
background service that the agent starts on purpose is listed in the window with a Kill
button"). It observes a ``harnesses.spawn.ServiceRegistry``; the registry's listener may run on
any thread, so changes reach the widget through a queued Qt signal.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

__all__ = ["ServicesView"]


def _describe(service: Any) -> str:
    state = (
        "running"
        if service.running
        else ("killed" if service.killed else f"exited {service.exit_code}")
    )
    return f"#{service.number}  pid {service.pid}  [{state}]  {service.command}"


class ServicesView(QWidget):
    """A list of services (number, pid, state, command) and a Kill button for the selected one.

    Args:
        registry: the ``ServiceRegistry`` to show (``Workspace.services``); the view subscribes
            to it and unsubscribes when destroyed.

    Signals:
        killRequested(int): the user asked to kill service ``#n`` (the view also kills it).
    """

    killRequested = Signal(int)
    _changed = Signal()

    def __init__(self, registry: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.registry = registry
        self.title = QLabel("Background services")
        self.list = QListWidget()
        self.kill_button = QPushButton("Kill")
        self.kill_button.setEnabled(False)
        row = QHBoxLayout()
        row.addWidget(self.title, 1)
        row.addWidget(self.kill_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.list)
        self.kill_button.clicked.connect(self._kill_selected)
        self.list.currentItemChanged.connect(lambda *_: self._update_button())
        self._changed.connect(self.refresh, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = registry.add_listener(lambda _service: self._changed.emit())
        self.destroyed.connect(lambda *_: self._unsubscribe())
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        """Re-read the registry; the view is hidden while no service was ever started."""
        selected = self.selected_number()
        self.list.clear()
        for service in self.registry.list():
            item = QListWidgetItem(_describe(service))
            item.setData(Qt.ItemDataRole.UserRole, service.number)
            item.setToolTip(service.output()[-2000:] or "(no output yet)")
            self.list.addItem(item)
            if service.number == selected:
                self.list.setCurrentItem(item)
        running = len(self.registry.running())
        self.title.setText(f"Background services ({running} running)")
        self.setVisible(self.list.count() > 0)
        self._update_button()

    def selected_number(self) -> int | None:
        """The number of the selected service, or ``None``."""
        item = self.list.currentItem()
        return None if item is None else int(item.data(Qt.ItemDataRole.UserRole))

    def _update_button(self) -> None:
        number = self.selected_number()
        service = self.registry.get(number) if number is not None else None
        self.kill_button.setEnabled(bool(service is not None and service.running))

    def _kill_selected(self) -> None:
        number = self.selected_number()
        if number is not None:
            self.registry.kill(number)
            self.killRequested.emit(number)
            self.refresh()
