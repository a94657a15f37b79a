"""LocalMcpServersEditor: Settings > Tools' list of local MCP servers (issue 18).

Add, edit, enable or remove servers, see each one's state, and "Import from Codex"
(``$CODEX_HOME/config.toml``: what it found is listed, the ticked servers are imported).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.errors import UserError
from core.mcp.codex_import import CodexImport, codex_config_path, read_codex_servers
from core.mcp.config import LocalMcpServer, check_server_name

__all__ = ["CodexImportDialog", "LocalMcpServerDialog", "LocalMcpServersEditor"]

_ON, _NAME, _WHAT, _STATE = range(4)


class LocalMcpServerDialog(QDialog):
    """Add or edit one server: name, a command line or a URL, env (``KEY=value`` lines),
    enabled tools, approval and the sandbox. Emits :attr:`serverAccepted` ``(name, server)``
    when *OK* finds the fields valid; errors are shown in the dialog. Open with ``open()``."""

    serverAccepted = Signal(str, object)

    def __init__(
        self, name: str = "", server: LocalMcpServer | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("localMcpServerDialog")
        self.setWindowTitle("MCP server")
        self.name_edit = QLineEdit(name)
        self.command_edit = QLineEdit()
        self.command_edit.setPlaceholderText("mcp-server-git --repository .   (or an http:// URL)")
        self.env_edit = QPlainTextEdit()
        self.env_edit.setPlaceholderText("KEY=value, one a line")
        self.env_edit.setFixedHeight(60)
        self.tools_edit = QLineEdit()
        self.tools_edit.setPlaceholderText("all tools (or: git_log, git_status)")
        self.approval_combo = QComboBox()
        for value, text in (
            ("ask", "Ask (read-only tools run)"),
            ("allow", "Allow"),
            ("deny", "Deny"),
        ):
            self.approval_combo.addItem(text, value)
        self.sandbox_check = QCheckBox("Sandbox: workspace read-only, no network")
        self.error = QLabel()
        self.error.setObjectName("fieldError")
        self.error.setWordWrap(True)
        self.error.hide()
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Command or URL", self.command_edit)
        form.addRow("Environment", self.env_edit)
        form.addRow("Enabled tools", self.tools_edit)
        form.addRow("Approval", self.approval_combo)
        form.addRow("", self.sandbox_check)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self._ok)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self._base = server
        if server is not None:
            self.command_edit.setText(
                server.url or shlex.join([server.command or "", *server.args])
            )
            self.env_edit.setPlainText("\n".join(f"{k}={v}" for k, v in server.env.items()))
            self.tools_edit.setText(", ".join(server.enabled_tools or []))
            self.approval_combo.setCurrentIndex(self.approval_combo.findData(server.approval))
            self.sandbox_check.setChecked(server.sandbox)

    def result_server(self) -> tuple[str, LocalMcpServer]:
        """The fields as ``(name, server)``; other keys of the edited server are kept.

        Raises:
            ValueError: a field is invalid (the message names it).
        """
        name = check_server_name(self.name_edit.text().strip())
        what = self.command_edit.text().strip()
        if not what:
            raise ValueError("give a command or a URL")
        data: dict[str, Any] = self._base.model_dump() if self._base is not None else {}
        data.update(command=None, url=None, args=[])
        if what.startswith(("http://", "https://")):
            data["url"] = what
        else:
            try:
                argv = shlex.split(what)
            except ValueError as exc:
                raise ValueError(f"command: {exc}") from None
            data["command"], data["args"] = argv[0], argv[1:]
        env: dict[str, str] = {}
        for line in self.env_edit.toPlainText().splitlines():
            if line.strip():
                key, sep, value = line.partition("=")
                if not sep:
                    raise ValueError(f"environment: {line.strip()!r} is not KEY=value")
                env[key.strip()] = value
        data["env"] = env
        tools = [t.strip() for t in self.tools_edit.text().split(",") if t.strip()]
        data["enabled_tools"] = tools or None
        data["approval"] = self.approval_combo.currentData()
        data["sandbox"] = self.sandbox_check.isChecked()
        try:
            return name, LocalMcpServer.model_validate(data)
        except ValidationError as exc:
            raise ValueError(
                "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
            ) from None

    @Slot()
    def _ok(self) -> None:
        try:
            name, server = self.result_server()
        except ValueError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.serverAccepted.emit(name, server)
        self.accept()


class CodexImportDialog(QDialog):
    """What a Codex config offers, one tickable row per server (all ticked), the skipped
    tables listed below. *Import* emits :attr:`serversChosen` ``{name: server}``."""

    serversChosen = Signal(object)

    def __init__(self, found: CodexImport, source: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("codexImportDialog")
        self.setWindowTitle("Import MCP servers from Codex")
        self.found = found
        self.list = QListWidget()
        for name, server in found.servers.items():
            item = QListWidgetItem(f"{name}  —  {server.summary()}")
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.list.addItem(item)
        notes = [f"Skipped {n}: {why}" for n, why in found.skipped.items()]
        notes += [f"{n}: ignored {', '.join(keys)}" for n, keys in found.ignored_keys.items()]
        self.heading = QLabel(
            f"{len(found.servers)} server(s) in {source}"
            if found.servers
            else f"No MCP servers in {source}"
        )
        self.notes = QLabel("\n".join(notes))
        self.notes.setWordWrap(True)
        self.notes.setVisible(bool(notes))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.import_button = buttons.addButton("Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.setEnabled(bool(found.servers))
        buttons.accepted.connect(self._import)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.list)
        layout.addWidget(self.notes)
        layout.addWidget(buttons)

    def chosen(self) -> dict[str, LocalMcpServer]:
        """The ticked servers."""
        out: dict[str, LocalMcpServer] = {}
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.checkState() == Qt.CheckState.Checked:
                name = str(item.data(Qt.ItemDataRole.UserRole))
                out[name] = self.found.servers[name]
        return out

    @Slot()
    def _import(self) -> None:
        self.serversChosen.emit(self.chosen())
        self.accept()


class LocalMcpServersEditor(QWidget):
    """The table of local servers (On, Name, Command / URL, State) with *Add*, *Edit*,
    *Remove* and *Import from Codex*. :meth:`servers` returns ``{name: LocalMcpServer}``.

    Args:
        codex_reader: reads the Codex config (default :func:`read_codex_servers` of
            ``$CODEX_HOME/config.toml``); replaceable for tests.
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        codex_reader: Callable[[], CodexImport] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("localMcpServersEditor")
        self._codex_reader = codex_reader or read_codex_servers
        self._servers: dict[str, LocalMcpServer] = {}
        self._states: dict[str, str] = {}
        self.dialog: QDialog | None = None
        self.table = QTableWidget(0, 4)
        self.table.setObjectName("localMcpTable")
        self.table.setHorizontalHeaderLabels(["On", "Name", "Command / URL", "State"])
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(_ON, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(_NAME, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(_WHAT, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(_STATE, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setMinimumHeight(120)
        self.table.itemChanged.connect(self._toggled)
        self.table.itemSelectionChanged.connect(self._selection)
        self.table.cellDoubleClicked.connect(lambda row, _c: self.edit_server(row))
        self.add_button = QPushButton("Add…")
        self.edit_button = QPushButton("Edit…")
        self.remove_button = QPushButton("Remove")
        self.import_button = QPushButton("Import from Codex…")
        self.import_button.setObjectName("importFromCodexButton")
        self.import_button.setToolTip(f"Read the MCP servers of {codex_config_path()}")
        self.add_button.clicked.connect(lambda: self.edit_server(None))
        self.edit_button.clicked.connect(lambda: self.edit_server(self.table.currentRow()))
        self.remove_button.clicked.connect(self.remove_selected)
        self.import_button.clicked.connect(self.import_from_codex)
        buttons = QVBoxLayout()
        for button in (self.add_button, self.edit_button, self.remove_button, self.import_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self._selection()

    # -- data -------------------------------------------------------------------------------
    def set_servers(self, servers: Mapping[str, LocalMcpServer]) -> None:
        """Show ``servers`` (in order)."""
        self._servers = dict(servers)
        self._fill()

    def servers(self) -> dict[str, LocalMcpServer]:
        """The servers as edited, with their *On* boxes applied to ``enabled``."""
        return dict(self._servers)

    @Slot(object)
    def set_statuses(self, statuses: Sequence[Any]) -> None:
        """Show each server's state (``ServerStatus`` values: ``name``, ``line()``)."""
        self._states = {s.name: s.line().partition(": ")[2] for s in statuses}
        for row in range(self.table.rowCount()):
            name = self._row_name(row)
            cell = self.table.item(row, _STATE)
            if cell is not None:
                text = self._states.get(name, "" if self._servers[name].enabled else "disabled")
                cell.setText(_shown_state(text))  # issue 18: a failure's stderr, shown
                cell.setToolTip(text)
                self.table.resizeRowToContents(row)

    # -- actions ----------------------------------------------------------------------------
    def edit_server(self, row: int | None) -> None:
        """Open the server dialog for ``row`` (``None``: a new server)."""
        name = self._row_name(row) if row is not None and row >= 0 else ""
        dialog = LocalMcpServerDialog(name, self._servers.get(name), self)
        dialog.serverAccepted.connect(lambda new, server: self._put(name, new, server))
        self.dialog = dialog
        dialog.open()

    @Slot()
    def remove_selected(self) -> None:
        """Remove the selected server."""
        row = self.table.currentRow()
        if row >= 0:
            self._servers.pop(self._row_name(row), None)
            self._fill()

    @Slot()
    def import_from_codex(self) -> None:
        """Read the Codex config and open the import dialog (errors are shown in it)."""
        try:
            found = self._codex_reader()
        except UserError as exc:
            found = CodexImport(skipped={"config.toml": str(exc)})
        dialog = CodexImportDialog(found, str(codex_config_path()), self)
        dialog.serversChosen.connect(self.add_servers)
        self.dialog = dialog
        dialog.open()

    @Slot(object)
    def add_servers(self, servers: Mapping[str, LocalMcpServer]) -> None:
        """Add (or replace, by name) ``servers``."""
        self._servers.update(servers)
        self._fill()

    # -- internals --------------------------------------------------------------------------
    def _put(self, old: str, name: str, server: LocalMcpServer) -> None:
        if old and old != name:
            self._servers = {
                (name if k == old else k): (server if k == old else v)
                for k, v in self._servers.items()
            }
        else:
            self._servers[name] = server
        self._fill()

    def _row_name(self, row: int) -> str:
        item = self.table.item(row, _NAME)
        return item.text() if item is not None else ""

    def _fill(self) -> None:
        self.table.blockSignals(True)
        self.table.setRowCount(0)
        for name, server in self._servers.items():
            row = self.table.rowCount()
            self.table.insertRow(row)
            on = QTableWidgetItem()
            on.setFlags(
                Qt.ItemFlag.ItemIsUserCheckable
                | Qt.ItemFlag.ItemIsEnabled
                | Qt.ItemFlag.ItemIsSelectable
            )
            on.setCheckState(Qt.CheckState.Checked if server.enabled else Qt.CheckState.Unchecked)
            self.table.setItem(row, _ON, on)
            self.table.setItem(row, _NAME, QTableWidgetItem(name))
            what = server.summary() + ("  [sandbox]" if server.sandbox else "")
            self.table.setItem(row, _WHAT, QTableWidgetItem(what))
            state = self._states.get(name, "" if server.enabled else "disabled")
            self.table.setItem(
                row, _STATE, QTableWidgetItem(state.splitlines()[0][:80] if state else "")
            )
        self.table.blockSignals(False)
        self._selection()

    @Slot(QTableWidgetItem)
    def _toggled(self, item: QTableWidgetItem) -> None:
        if item.column() != _ON:
            return
        name = self._row_name(item.row())
        enabled = item.checkState() == Qt.CheckState.Checked
        self._servers[name] = self._servers[name].model_copy(update={"enabled": enabled})

    @Slot()
    def _selection(self) -> None:
        selected = self.table.currentRow() >= 0 and bool(self.table.selectedItems())
        self.edit_button.setEnabled(selected)
        self.remove_button.setEnabled(selected)


def _shown_state(text: str, stderr_lines: int = 3) -> str:
    """A state cell: the state line (80 chars at most) and, for a failure, its last
    ``stderr_lines`` lines of detail (the server's stderr), each cut at 100 chars."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    tail = [f"  {line.strip()[:100]}" for line in lines[1:][-stderr_lines:]]
    return "\n".join([lines[0][:80], *tail])
