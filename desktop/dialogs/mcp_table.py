"""McpServersEditor: the settings table of remote MCP servers (label, URL, approval)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.settings import McpServer

__all__ = ["McpServersEditor"]

_LABEL, _URL, _APPROVAL = range(3)
_COLUMN_NAMES = {"label": "Label", "url": "URL", "require_approval": "Approval"}


def _cell_text(table: QTableWidget, row: int, column: int) -> str:
    item = table.item(row, column)
    return item.text().strip() if item is not None else ""


class McpServersEditor(QWidget):
    """A table of remote MCP servers with *Add* / *Remove* buttons beside it.

    Each row is one :class:`~core.settings.McpServer`: an editable label and URL and an
    approval combo (``always`` / ``never``). A server's ``allowed_tools`` are not shown but
    kept with its row, so reading the rows back does not drop them. Rows whose label and URL
    are both blank are ignored. The editor does not validate: :meth:`servers` returns plain
    data for the settings model, and :meth:`locate_error` maps the model's errors back to
    table rows. Focus given to the editor goes to the table.

    Attributes:
        table: the ``QTableWidget`` (columns Label, URL, Approval).
        add_button: appends an empty row (:meth:`add_server`).
        remove_button: removes the selected row (:meth:`remove_selected`); disabled while
            nothing is selected.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mcpServersEditor")
        self.table = self._make_table()
        self.add_button = QPushButton("Add")
        self.add_button.setObjectName("addMcpServerButton")
        self.add_button.setToolTip("Add a remote MCP server")
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("removeMcpServerButton")
        self.remove_button.setToolTip("Remove the selected MCP server")
        for button in (self.add_button, self.remove_button):
            button.setAutoDefault(False)
        self.add_button.clicked.connect(self.add_server)
        self.remove_button.clicked.connect(self.remove_selected)
        self.table.itemSelectionChanged.connect(self._update_remove_button)
        buttons = QWidget()
        column = QVBoxLayout(buttons)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.add_button)
        column.addWidget(self.remove_button)
        column.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)  # as the other settings fields
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.setFocusProxy(self.table)
        self._update_remove_button()

    # -- public ----------------------------------------------------------------------------

    def set_servers(self, servers: Sequence[McpServer]) -> None:
        """Show ``servers``, one row each in order, discarding the current rows."""
        self.table.setRowCount(0)
        for server in servers:
            self._add_row(server)
        self._update_remove_button()

    def servers(self) -> list[dict[str, Any]]:
        """The non-blank rows as ``McpServer`` data, not validated.

        Returns:
            One dict per non-blank row, in table order, with the keys ``label``, ``url``
            (both stripped), ``require_approval`` and ``allowed_tools`` (as given to
            :meth:`set_servers`, ``None`` for rows added here).
        """
        table = self.table
        servers: list[dict[str, Any]] = []
        for row in self._filled_rows():
            label = table.item(row, _LABEL)
            approval = table.cellWidget(row, _APPROVAL)
            servers.append(
                {
                    "label": _cell_text(table, row, _LABEL),
                    "url": _cell_text(table, row, _URL),
                    "require_approval": approval.currentText()
                    if isinstance(approval, QComboBox)
                    else "always",
                    "allowed_tools": label.data(Qt.ItemDataRole.UserRole) if label else None,
                }
            )
        return servers

    def locate_error(self, loc: Sequence[Any], message: str) -> tuple[int | None, str]:
        """The table row of a settings error about ``mcp_servers`` and the message to show.

        Args:
            loc: the pydantic error location, e.g. ``("mcp_servers", 1, "url")``: the index
                counts the rows returned by :meth:`servers`, not the table's rows.
            message: the error text, e.g. ``"'ftp://x' is not an http:// …"``.

        Returns:
            ``(row, text)``: the table row (``None`` for an error about the whole list, e.g.
            a duplicate label) and ``message`` prefixed with where it is, e.g.
            ``Row 2 (URL): 'ftp://x' is not an http:// …`` (``message`` alone when ``row``
            is ``None``).
        """
        loc = tuple(loc)
        rows = self._filled_rows()
        if len(loc) < 2 or not isinstance(loc[1], int) or loc[1] >= len(rows):
            return None, message
        row = rows[loc[1]]
        column = _COLUMN_NAMES.get(str(loc[2]) if len(loc) > 2 else "", "")
        where = f"Row {row + 1}" + (f" ({column})" if column else "")
        return row, f"{where}: {message}"

    @Slot()
    def add_server(self) -> None:
        """Append an empty row and start editing its label."""
        row = self._add_row(None)
        self.table.setCurrentCell(row, _LABEL)
        self.table.editItem(self.table.item(row, _LABEL))

    @Slot()
    def remove_selected(self) -> None:
        """Remove the selected rows."""
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        for row in rows:
            self.table.removeRow(row)
        self._update_remove_button()

    # -- private ---------------------------------------------------------------------------

    def _make_table(self) -> QTableWidget:
        table = QTableWidget(0, 3)
        table.setObjectName("mcpServersTable")
        table.setHorizontalHeaderLabels(["Label", "URL", "Approval"])
        table.verticalHeader().hide()
        table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        header = table.horizontalHeader()
        header.setSectionResizeMode(_LABEL, QHeaderView.ResizeMode.Interactive)
        table.setColumnWidth(_LABEL, 130)
        header.setSectionResizeMode(_URL, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(_APPROVAL, QHeaderView.ResizeMode.ResizeToContents)
        table.setMinimumHeight(90)
        table.setMaximumHeight(140)
        table.setToolTip(
            "Remote MCP servers whose tools OpenAI calls for the agent (needs the OpenAI API). "
            "Label: letters, digits, '_' and '-'. Approval 'always' asks you before each call."
        )
        return table

    def _add_row(self, server: McpServer | None) -> int:
        table = self.table
        row = table.rowCount()
        table.insertRow(row)
        label = QTableWidgetItem(server.label if server else "")
        # Kept with the row (not editable here) so applying does not drop it.
        label.setData(Qt.ItemDataRole.UserRole, server.allowed_tools if server else None)
        if server is not None and server.allowed_tools:
            label.setToolTip("Allowed tools: " + ", ".join(server.allowed_tools))
        table.setItem(row, _LABEL, label)
        table.setItem(row, _URL, QTableWidgetItem(server.url if server else ""))
        approval = QComboBox()
        approval.addItems(["always", "never"])
        approval.setCurrentText(server.require_approval if server else "always")
        approval.setToolTip("always: each call waits for your approval; never: calls run at once")
        table.setCellWidget(row, _APPROVAL, approval)
        return row

    def _filled_rows(self) -> list[int]:
        """The rows that are not blank (the rows :meth:`servers` returns, in order)."""
        return [
            row
            for row in range(self.table.rowCount())
            if any(_cell_text(self.table, row, column) for column in (_LABEL, _URL))
        ]

    def _update_remove_button(self) -> None:
        self.remove_button.setEnabled(bool(self.table.selectedIndexes()))
