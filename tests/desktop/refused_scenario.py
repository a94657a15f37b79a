"""A window run against a closed port, in its own process (issue 16: no traceback on stderr).

``python -m tests.desktop.refused_scenario TMP`` starts the real window and controller on a
real OpenAI client whose base URL is a port nothing listens on, sends a task, and prints
``NOTICE <level> <text>`` for each notice and ``BANNER <text>`` for the retry banner's text
once the run has ended. Python's logging is left as the app leaves it (no handler), so a
``logger.exception`` would reach stderr exactly as it does for a user.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import openai
import qasync
from PySide6.QtWidgets import QApplication

from core import Agent, OpenAIResponsesModel
from core.settings import Settings
from desktop.controller import Controller
from desktop.main_window import MainWindow
from harnesses.sessions import SessionJournal
from harnesses.workspace import Workspace


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _run(root: Path) -> None:
    repo = root / "repo"
    repo.mkdir()
    workspace = Workspace(repo, mode="ask", data_dir=root / "data")
    client = openai.AsyncOpenAI(
        base_url=f"http://127.0.0.1:{_closed_port()}/v1", api_key="test-key", max_retries=0
    )
    model = OpenAIResponsesModel("test-model", client)
    journal = SessionJournal(root / "journal.sqlite3")
    session = journal.create_session(repo, "refused")
    controller = Controller(
        workspace,
        lambda ws: Agent(name="Tandem", model=model, tools=ws.tools()),
        journal=journal,
        session_id=session,
    )
    window = MainWindow(controller, Settings())
    window.show()
    controller.notice.connect(lambda text, level: print("NOTICE", level, text, flush=True))
    ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    controller.runningChanged.connect(lambda on: on or ended.done() or ended.set_result(None))
    controller.submit("hello")
    await asyncio.wait_for(ended, 60)
    banner = window.retry_banner
    print("BANNER", banner.isVisibleTo(window), flush=True)
    await controller.shutdown()
    await client.close()
    window.close()
    journal.close()


def main(argv: list[str]) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(_run(Path(argv[0])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
