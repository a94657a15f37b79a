"""The window's local MCP servers: built from the settings, started in the background, their
states shown in the top bar and in Settings > Tools, stopped with the window (issue 18)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.policy.modes import ApprovalMode
from core.settings import Settings
from harnesses.mcp import MCP_CONFIG, LocalMcpServers
from harnesses.mcp.project import PROJECT_FILE, TrustStore, project_servers, read_project_file

__all__ = ["MCP_CONFIG", "WindowMcp"]

logger = logging.getLogger("desktop")


class WindowMcp:
    """Owns the :class:`LocalMcpServers` of one window and every task it starts.

    Project servers (``.tandem/mcp.toml``) are used when the user trusted them. The first time
    a window opens a repository whose file is new or changed, a non-modal question asks (as
    ``tandem run`` does on its terminal); *Trust* and *Don't trust* are remembered per
    repository until the file changes, *Not now* asks again next time.

    Args:
        settings: the settings whose ``local_mcp_servers`` are run.
        root: the repository folder; mode: the approval mode in force (a callable).
    """

    def __init__(self, settings: Settings, root: Path, mode: Callable[[], ApprovalMode]) -> None:
        self.root = root
        self.mode = mode
        self.settings = settings
        self.trust = TrustStore()
        #: The trust question while it is shown (``None`` otherwise).
        self.trust_question: Any = None
        self.window: Any = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.servers = self._build(settings)

    def _build(self, settings: Settings) -> LocalMcpServers:
        project, _, _ = project_servers(self.root, self.trust, None)
        servers = LocalMcpServers(
            {**project, **settings.local_mcp_servers},
            workspace=self.root,
            mode=self.mode,
            hidden_paths=list(settings.sandbox_hidden_paths),
            shown_paths=list(settings.sandbox_shown_paths),
        )
        servers.listeners.append(lambda _status: self.show())
        return servers

    def agent_servers(self) -> list[Any]:
        """Every enabled server for ``Agent(mcp_servers=...)``; each starts on first use if
        the background start has not run yet (failed ones are left out of the turn)."""
        for server in self.servers.servers.values():
            server.start_on_first_use()  # type: ignore[attr-defined]
        return list(self.servers.servers.values())

    def attach(self, window: Any) -> None:
        """Show the states in ``window``'s top bar (and its Settings dialog once opened)."""
        self.window = window
        self.show()
        self.ask_trust()

    def ask_trust(self) -> None:
        """Ask whether to run the repository's own servers, when the file is new or changed
        since the last answer (a window-modal, non-blocking question)."""
        found = read_project_file(self.root)
        if found is None or not found.servers or self.window is None:
            return
        if self.trust.decision(self.root, found.digest) is not None or self.trust_question:
            return
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QMessageBox

        names = "\n".join(f"• {n}: {s.summary()}" for n, s in found.servers.items())
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Trust this repository's MCP servers?",
            f"{PROJECT_FILE} in this repository adds MCP servers that run as programs on "
            f"your machine:\n{names}",
            QMessageBox.StandardButton.NoButton,
            self.window,
        )
        box.setObjectName("mcpTrustQuestion")
        box.setInformativeText(
            "Trust them only if you trust the repository. The answer is remembered for this "
            "repository until the file changes; their tool calls still follow the approval rules."
        )
        trust = box.addButton("Trust", QMessageBox.ButtonRole.AcceptRole)
        trust.setObjectName("mcpTrust")
        refuse = box.addButton("Don't trust", QMessageBox.ButtonRole.RejectRole)
        refuse.setObjectName("mcpDistrust")
        later = box.addButton("Not now", QMessageBox.ButtonRole.DestructiveRole)
        later.setObjectName("mcpTrustLater")
        box.setDefaultButton(later)
        box.setWindowModality(Qt.WindowModality.WindowModal)

        def answered(_result: int) -> None:
            self.trust_question = None
            clicked = box.clickedButton()
            if clicked is trust or clicked is refuse:
                self.trust.remember(self.root, found.digest, clicked is trust)
            if clicked is trust:
                self.replace(self.settings)

        box.finished.connect(answered)
        self.trust_question = box
        box.open()

    def show(self) -> None:
        """Push the current states to the top bar and the Settings dialog."""
        if self.window is None:
            return
        statuses = self.servers.statuses()
        top = getattr(self.window, "top_bar", None)
        if top is not None and hasattr(top, "mcp_status"):
            top.mcp_status.set_statuses(statuses)
        dialog = getattr(self.window, "_settings_dialog", None)
        editor = getattr(dialog, "local_mcp_editor", None)
        if editor is not None:
            editor.set_statuses(statuses)

    def start(self) -> None:
        """Start every server in the background (a task kept until it ends)."""
        if not self.servers.servers:
            return
        self._keep(asyncio.ensure_future(self._start(self.servers)))

    async def _start(self, servers: LocalMcpServers) -> None:
        await servers.start()
        self.show()

    def replace(self, settings: Settings) -> None:
        """New settings: stop the old servers (in the background), build and start new ones."""
        old = self.servers
        self.settings = settings
        self.servers = self._build(settings)
        self._keep(asyncio.ensure_future(old.aclose()))
        self.start()
        self.show()

    def _keep(self, task: asyncio.Future[Any]) -> None:
        assert isinstance(task, asyncio.Task)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        """Wait for the background work (bounded by the servers' start-up timeouts), then stop
        every server."""
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.servers.aclose()
