"""McpServersEditor: MCP server rows in, plain data out, errors pointed at their row."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QTableWidgetItem

from core.settings import McpServer
from desktop.dialogs.mcp_table import McpServersEditor


def test_rows_round_trip_and_keep_hidden_allowed_tools(qtbot) -> None:
    editor = McpServersEditor()
    qtbot.addWidget(editor)
    editor.set_servers(
        [
            McpServer(label="wiki", url="https://wiki.example/mcp"),
            McpServer(label="gh", url="http://127.0.0.1:7/mcp", require_approval="never", allowed_tools=["search"]),
        ]
    )
    assert editor.table.rowCount() == 2
    assert editor.servers() == [
        {"label": "wiki", "url": "https://wiki.example/mcp", "require_approval": "always", "allowed_tools": None},
        {"label": "gh", "url": "http://127.0.0.1:7/mcp", "require_approval": "never", "allowed_tools": ["search"]},
    ]


def test_add_edit_remove_and_blank_rows(qtbot) -> None:
    editor = McpServersEditor()
    qtbot.addWidget(editor)
    editor.set_servers([])
    assert not editor.remove_button.isEnabled()
    editor.add_server()
    editor.add_server()  # left blank: ignored
    editor.table.setItem(0, 0, QTableWidgetItem("  docs "))
    editor.table.setItem(0, 1, QTableWidgetItem("https://docs.example/mcp"))
    approval = editor.table.cellWidget(0, 2)
    assert isinstance(approval, QComboBox)
    approval.setCurrentText("never")
    assert editor.servers() == [
        {"label": "docs", "url": "https://docs.example/mcp", "require_approval": "never", "allowed_tools": None}
    ]
    editor.table.selectRow(0)
    assert editor.remove_button.isEnabled()
    editor.remove_selected()
    assert editor.table.rowCount() == 1 and editor.servers() == []


def test_errors_point_at_the_row_the_user_sees(qtbot) -> None:
    editor = McpServersEditor()
    qtbot.addWidget(editor)
    editor.set_servers([McpServer(label="a", url="https://a.example")])
    editor.add_server()  # row 2 stays blank: not counted by servers()
    editor.add_server()
    editor.table.setItem(2, 0, QTableWidgetItem("b"))
    editor.table.setItem(2, 1, QTableWidgetItem("ftp://b"))
    assert len(editor.servers()) == 2
    assert editor.locate_error(("mcp_servers", 1, "url"), "not http") == (2, "Row 3 (URL): not http")
    assert editor.locate_error(("mcp_servers",), "duplicate MCP server label 'a'") == (None, "duplicate MCP server label 'a'")
