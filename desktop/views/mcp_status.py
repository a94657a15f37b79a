"""McpStatusButton: the top bar's pill of local MCP servers, with each server's state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

__all__ = ["McpStatusButton"]


class McpStatusButton(QToolButton):
    """``MCP 2/3`` (servers ready / enabled); its menu lists ``git: ready, 12 tools``,
    ``fs: failed: ...`` (with the last stderr lines under it, and all of it in the tooltip)
    and ``time: disabled``.

    Hidden while no local server is configured. Fed with
    :class:`harnesses.mcp.ServerStatus` values through :meth:`set_statuses`.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mcpStatus")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.menu = QMenu(self)
        self.clicked.connect(self.show_menu)
        self.lines: list[str] = []
        self.hide()

    @Slot(object)
    def set_statuses(self, statuses: Sequence[Any]) -> None:
        """Show ``statuses`` (``ServerStatus``: ``name``, ``state``, ``tools``, ``error``)."""
        self.lines = [s.line() for s in statuses]
        enabled = [s for s in statuses if s.state != "disabled"]
        ready = [s for s in enabled if s.state == "ready"]
        failed = [s for s in enabled if s.state == "failed"]
        starting = [s for s in enabled if s.state in ("starting", "stopped")]
        self.setText(f"MCP {len(ready)}/{len(enabled)}" + (" !" if failed else ""))
        state = "failed" if failed else "starting" if starting else "ready"
        self.setProperty("state", state)
        self.setToolTip("\n".join(self.lines) or "No local MCP servers")
        self.menu.clear()
        for line in self.lines:
            rows = [row for row in line.splitlines() if row.strip()] or [line]
            action = self.menu.addAction(rows[0][:120])
            action.setEnabled(False)
            action.setToolTip(line)
            for detail in rows[1:][-4:]:  # issue 18: a failure's last stderr lines, shown
                extra = self.menu.addAction("    " + detail.strip()[:120])
                extra.setEnabled(False)
                extra.setToolTip(line)
        self.setVisible(bool(statuses))
        self.style().unpolish(self)
        self.style().polish(self)

    @Slot()
    def show_menu(self) -> None:
        """Open the list of servers under the pill."""
        self.menu.popup(self.mapToGlobal(self.rect().bottomLeft()))
