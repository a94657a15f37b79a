"""Screenshots of the Trust II flows (issue 12): a destructive-command prompt with its
recoverability line, and a restore with *Undo restore* enabled.

``python scripts/trust_tour.py OUT_DIR`` builds a throw-away repository with uncommitted,
staged, untracked, stashed and ignored work (one ignored file over the checkpoint cap),
plays a scripted session in the real window in which the agent asks to run
``git clean -fdx``, saves ``tandem-destructive-prompt.png``, approves it, restores the
checkpoint taken before it from the Checkpoints tab and saves ``tandem-restore.png``.
Offline, no key; run it under Xvfb (``scripts/screenshots.sh``) or offscreen. A developer
script, not part of the app: it builds the repository with plain git (``git stash`` included),
which the app itself never runs.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["main"]

_CAP_BYTES = 8 * 1024 * 1024  # a small cap, so one ignored file is over it


def _git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Tour",
        "GIT_AUTHOR_EMAIL": "tour@example.invalid",
        "GIT_COMMITTER_NAME": "Tour",
        "GIT_COMMITTER_EMAIL": "tour@example.invalid",
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _make_repo(repo: Path) -> None:
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("print('v1')\n")
    (repo / ".gitignore").write_text(".env\ndata/\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial")
    (repo / "app.py").write_text("print('stashed idea')\n")
    _git(repo, "stash", "push", "-q", "-m", "an idea")
    (repo / "app.py").write_text("print('staged')\n")
    _git(repo, "add", "app.py")
    (repo / "app.py").write_text("print('staged')\nprint('work in progress')\n")
    (repo / "notes.md").write_text("untracked notes\n")
    (repo / ".env").write_text("DATABASE_URL=postgres://localhost/dev\n")
    (repo / "data").mkdir()
    with open(repo / "data" / "dump.sql", "wb") as handle:  # sparse: big, costs no disk
        handle.truncate(24 * 1024 * 1024)


def _turns() -> list[dict[str, Any]]:
    clean = {"type": "shell_call", "call_id": "s1", "action": {"commands": ["git clean -fdx"]}}
    text = "Cleaned the working tree."
    return [
        {"output": [clean]},
        {"output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}]},
    ]


async def _tour(out: Path, root: Path) -> None:
    from core import Agent, ScriptedModel
    from core.settings import Settings
    from desktop.controller import Controller
    from desktop.main_window import MainWindow
    from harnesses.sessions import SessionJournal
    from harnesses.workspace import Workspace

    repo = root / "shop"
    _make_repo(repo)
    workspace = Workspace(
        repo, mode="auto", data_dir=root / "data", checkpoint_cap_bytes=_CAP_BYTES
    )
    model = ScriptedModel(_turns())
    journal = SessionJournal(root / "journal.sqlite3")
    session = journal.create_session(repo, "Clean the working tree")
    controller = Controller(
        workspace,
        lambda ws: Agent(name="Tandem", model=model, tools=ws.tools()),
        journal=journal,
        session_id=session,
    )
    window = MainWindow(controller, Settings(approval_mode="auto"), branch="main")
    window.show()
    loop = asyncio.get_running_loop()
    asked: asyncio.Future[Any] = loop.create_future()
    controller.approvalRequested.connect(lambda r: asked.done() or asked.set_result(r))
    ended: asyncio.Future[None] = loop.create_future()
    controller.runningChanged.connect(lambda on: on or ended.done() or ended.set_result(None))
    controller.submit("Clean up the working tree, it is full of junk")
    await asked
    await asyncio.sleep(0.6)  # let the panel lay out and paint
    window.grab().save(str(out / "tandem-destructive-prompt.png"))
    window.approvals.allow_once()
    await ended
    checkpoints = await workspace.checkpoints.list()
    guard = next(c for c in checkpoints if c.label == "before destructive command")
    refreshed: asyncio.Future[None] = loop.create_future()
    controller.checkpointsChanged.connect(lambda _c: refreshed.done() or refreshed.set_result(None))
    window.tabs.setCurrentIndex(3)
    controller.restore_checkpoint(guard.id)
    await refreshed
    await asyncio.sleep(0.6)
    window.grab().save(str(out / "tandem-restore.png"))
    print(
        "trust tour: .env back:",
        (repo / ".env").exists(),
        "| undo restore enabled:",
        window.checkpoints.undo_button.isEnabled(),
    )
    await controller.shutdown()
    window.hide()
    journal.close()


def main(argv: list[str] | None = None) -> int:
    """Run the tour; ``argv[0]`` is the folder the screenshots go to."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "demo-screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory(prefix="tandem-tour-") as tmp, loop:
        loop.run_until_complete(asyncio.wait_for(_tour(out, Path(tmp)), 120))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
