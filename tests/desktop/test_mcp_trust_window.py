"""Issue 18: a repository's own MCP servers (``.tandem/mcp.toml``) are off until the user trusts
them, and the window asks (non-modal), as ``tandem run`` does on its terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from core.policy.modes import ApprovalMode
from core.settings import Settings
from desktop.mcp_session import WindowMcp
from harnesses.mcp.project import TrustStore
from tests.desktop.test_app import run_qasync
from tests.support.mcp_procs import FAULT_SERVER, live_servers


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".tandem").mkdir(parents=True)
    (repo / ".tandem" / "mcp.toml").write_text(
        f"[mcp_servers.proj]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(FAULT_SERVER)}]\n"
    )
    return repo


def _session(repo: Path, tmp_path: Path) -> WindowMcp:
    mcp = WindowMcp(Settings(), repo, lambda: ApprovalMode.ASK)
    mcp.trust = TrustStore(tmp_path / "trust.json")
    mcp.servers = mcp._build(mcp.settings)  # with the test's own trust store
    return mcp


def _answer(mcp: WindowMcp, button: str) -> None:
    question = mcp.trust_question
    assert isinstance(question, QMessageBox) and question.isVisible()
    assert "proj" in question.text()
    question.findChild(QPushButton, button).click()


def test_the_window_asks_and_trust_is_remembered(qtbot, tmp_path):
    repo = _repo(tmp_path)
    window = QWidget()
    qtbot.addWidget(window)
    window.show()

    async def scenario() -> None:
        mcp = _session(repo, tmp_path)
        assert list(mcp.servers.servers) == []  # off until trusted
        mcp.attach(window)
        _answer(mcp, "mcpTrust")
        assert mcp.trust_question is None
        assert list(mcp.servers.servers) == ["proj"]
        await mcp.aclose()
        again = _session(repo, tmp_path)  # a later window: remembered, no question
        again.attach(window)
        assert again.trust_question is None and list(again.servers.servers) == ["proj"]
        await again.aclose()

    run_qasync(scenario)
    assert not live_servers("mcp_server.py")


def test_dont_trust_is_remembered_and_not_now_asks_again(qtbot, tmp_path):
    repo = _repo(tmp_path)
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    mcp = _session(repo, tmp_path)
    mcp.attach(window)
    _answer(mcp, "mcpTrustLater")
    assert list(mcp.servers.servers) == []
    later = _session(repo, tmp_path)
    later.attach(window)
    _answer(later, "mcpDistrust")  # asked again after "Not now"
    assert list(later.servers.servers) == []
    last = _session(repo, tmp_path)
    last.attach(window)
    assert last.trust_question is None and list(last.servers.servers) == []


def test_a_failed_servers_last_stderr_lines_are_shown_in_the_menu(qtbot):
    from desktop.views.mcp_status import McpStatusButton as McpStatus
    from harnesses.mcp.servers import ServerStatus

    pill = McpStatus()
    qtbot.addWidget(pill)
    error = "exited during start-up\nTraceback (most recent call last):\nImportError: no module x"
    pill.set_statuses([ServerStatus("fs", "failed", 0, error), ServerStatus("git", "ready", 12)])
    shown = [a.text() for a in pill.menu.actions()]
    assert shown[0] == "fs: failed: exited during start-up"
    assert "    ImportError: no module x" in shown and "git: ready, 12 tools" in shown
    assert pill.text() == "MCP 1/2 !"
