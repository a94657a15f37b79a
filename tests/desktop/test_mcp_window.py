"""Local MCP servers in the window (issue 18 items 2, 4): the filesystem server's call asks,
its card shows server, tool, arguments and result; the top bar shows the states; Settings >
Tools lists local servers and imports them from Codex. Screenshots go to ``$TANDEM_SHOTS``
when set (``docs/screenshots`` by hand), else to ``tmp_path``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core import Agent
from core.mcp.config import LocalMcpServer
from core.settings import Settings
from desktop.controller import Controller
from desktop.dialogs.settings_dialog import SettingsDialog
from desktop.main_window import MainWindow
from desktop.mcp_session import MCP_CONFIG, WindowMcp
from harnesses.workspace import Workspace
from tests.support import items
from tests.support.mcp_procs import live_servers
from tests.support.mcp_published import FILESYSTEM, need

CODEX = """
[mcp_servers.git]
command = "mcp-server-git"
args = ["--repository", "."]
enabled_tools = ["git_log"]

[mcp_servers.docs]
url = "http://127.0.0.1:8931/mcp"
bearer_token_env_var = "DOCS_TOKEN"

[mcp_servers.notes]
command = "notes-mcp"
[mcp_servers.notes.env]
NOTES_DIR = "~/notes"
"""


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("TANDEM_SHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def _until(predicate: Any, timeout: float = 30.0) -> None:
    async def wait() -> None:
        while not predicate():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(wait(), timeout)


def _record(signal: Any) -> list[tuple[Any, ...]]:
    seen: list[tuple[Any, ...]] = []
    signal.connect(lambda *args: seen.append(args))
    return seen


async def test_filesystem_server_call_asks_and_shows_a_card(
    responses_server, model, tmp_path, qtbot
):
    need(FILESYSTEM)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text("buy milk\n")
    workspace = Workspace(repo, mode="ask", data_dir=tmp_path / ".data")
    settings = Settings(
        local_mcp_servers={
            # a loaded machine once took over the default 10 s to start node (a full run)
            "fs": LocalMcpServer(command=str(FILESYSTEM), args=[str(repo)], startup_timeout_sec=60),
            "off": LocalMcpServer(command="nowhere", enabled=False),
        }
    )
    mcp = WindowMcp(settings, repo, lambda: workspace.mode)

    def factory(ws: Workspace) -> Agent[Any]:
        return Agent(
            name="Tandem", model=model, mcp_servers=mcp.agent_servers(), mcp_config=MCP_CONFIG
        )

    controller = Controller(workspace, factory)
    window = MainWindow(controller, settings)
    qtbot.addWidget(window)
    mcp.attach(window)
    started, updated, bodies, approvals = (
        _record(controller.toolStarted),
        _record(controller.toolUpdated),
        _record(controller.toolBody),
        _record(controller.approvalRequested),
    )
    target = str(repo / "todo.txt")
    responses_server.enqueue(
        [
            items.function_call(
                "mcp_fs__read_text_file", {"path": str(repo / "notes.txt")}, call_id="c_read"
            ),
            items.function_call(
                "mcp_fs__write_file", {"path": target, "content": "milk\n"}, call_id="c_write"
            ),
        ]
    )
    responses_server.enqueue([items.message("Wrote todo.txt")])
    try:
        window.show()
        mcp.start()
        await _until(lambda: "fs: ready, 14 tools" in window.top_bar.mcp_status.lines, 90.0)
        assert window.top_bar.mcp_status.text() == "MCP 1/1"
        assert "off: disabled" in window.top_bar.mcp_status.lines
        controller.submit("Copy my notes into a todo list")
        await _until(lambda: approvals)
        request = approvals[0][0]
        assert request.id == "c_write"  # read_text_file declares readOnlyHint: no question
        assert request.title == "Use the MCP tool write_file"
        assert request.body.startswith('server: fs\ntool: write_file\narguments: {\n  "path"')
        controller.decide("c_write", "allow_once", "")
        await _until(lambda: not controller.is_running)
        assert (repo / "todo.txt").read_text() == "milk\n"
        assert ("c_read", "mcp", "fs > read_text_file", "MCP server fs") in started
        assert ("c_write", "mcp", "fs > write_file", "MCP server fs") in started
        done = {u[0]: u for u in updated if u[1] in ("completed", "failed")}
        assert done["c_read"][1] == "completed" and done["c_read"][3] == "buy milk"
        assert isinstance(done["c_read"][2], int)  # the duration in ms
        final = [b for b in bodies if b[0] == "c_read"][-1][1]
        assert final.output == "buy milk\n" and '"path"' in final.code
        window.conversation.reveal("c_read")
        card = window.conversation.tool_card("c_read")
        if not card.is_body_visible():
            card.toggle_body()
        await asyncio.sleep(0)  # one turn of the loop: the card lays out
        window.grab().save(str(_shots(tmp_path) / "tandem-mcp-card.png"))
    finally:
        await controller.shutdown()
        await mcp.aclose()
    assert not live_servers("mcp-server-filesystem")


def test_settings_tools_lists_local_servers_and_imports_from_codex(qtbot, tmp_path, monkeypatch):
    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text(CODEX)
    monkeypatch.setenv("CODEX_HOME", str(home))
    settings = Settings(
        local_mcp_servers={
            "time": LocalMcpServer(command="mcp-server-time"),
            "fs": LocalMcpServer(command="mcp-server-filesystem", args=["."], sandbox=True),
        }
    )
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    editor = dialog.local_mcp_editor
    assert [editor.table.item(r, 1).text() for r in range(editor.table.rowCount())] == [
        "time",
        "fs",
    ]

    class _Status:
        def __init__(self, name: str, text: str) -> None:
            self.name, self._text = name, text

        def line(self) -> str:
            return f"{self.name}: {self._text}"

    editor.set_statuses([_Status("time", "ready, 2 tools"), _Status("fs", "failed: EACCES")])
    assert editor.table.item(0, 3).text() == "ready, 2 tools"
    qtbot.mouseClick(editor.import_button, Qt.MouseButton.LeftButton)
    found = editor.dialog
    assert found is not None and found.list.count() == 3
    found.list.item(2).setCheckState(Qt.CheckState.Unchecked)  # not "notes"
    qtbot.mouseClick(found.import_button, Qt.MouseButton.LeftButton)
    assert list(editor.servers()) == ["time", "fs", "git", "docs"]
    assert editor.servers()["git"] == LocalMcpServer(
        command="mcp-server-git", args=["--repository", "."], enabled_tools=["git_log"]
    )
    editor.table.item(0, 0).setCheckState(Qt.CheckState.Unchecked)  # turn "time" off
    applied = _record(dialog.settingsApplied)
    dialog.tabs.setCurrentIndex(
        [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())].index("Tools")
    )
    dialog.resize(900, 760)
    dialog.show()
    dialog.grab().save(str(_shots(tmp_path) / "tandem-settings-mcp.png"))
    assert dialog.apply()
    new = applied[0][0]
    assert list(new.local_mcp_servers) == ["time", "fs", "git", "docs"]
    assert new.local_mcp_servers["time"].enabled is False
    assert new.local_mcp_servers["docs"].bearer_token_env_var == "DOCS_TOKEN"


def test_add_and_edit_a_server_in_its_dialog(qtbot):
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    editor = dialog.local_mcp_editor
    editor.edit_server(None)
    form = editor.dialog
    form.name_edit.setText("git")
    form.command_edit.setText("mcp-server-git --repository '/my repo'")
    form.env_edit.setPlainText("GIT_PAGER=cat\nbroken line")
    form._ok()
    assert "is not KEY=value" in form.error.text() and form.isVisible() is not None
    form.env_edit.setPlainText("GIT_PAGER=cat")
    form.tools_edit.setText("git_log, git_status")
    form.approval_combo.setCurrentIndex(form.approval_combo.findData("allow"))
    form._ok()
    assert editor.servers()["git"] == LocalMcpServer(
        command="mcp-server-git",
        args=["--repository", "/my repo"],
        env={"GIT_PAGER": "cat"},
        enabled_tools=["git_log", "git_status"],
        approval="allow",
    )
    editor.table.selectRow(0)
    editor.edit_server(0)
    again = editor.dialog
    assert again.command_edit.text() == "mcp-server-git --repository '/my repo'"
    again.name_edit.setText("vcs")
    again.command_edit.setText("http://127.0.0.1:9/mcp")
    again._ok()
    assert (
        list(editor.servers()) == ["vcs"]
        and editor.servers()["vcs"].url == "http://127.0.0.1:9/mcp"
    )
    editor.table.selectRow(0)
    editor.remove_selected()
    assert editor.servers() == {}
