"""A real folder with a session history, for ``bench.gui_latency``'s "window up" figure.

``python -m bench.window_history ROOT`` (run with ``HOME``/``XDG_*`` under ``ROOT``, as the
launch will be) makes ``ROOT/project``: a git repository of ``--files`` source files with
AGENTS.md, and ``--sessions`` sessions journaled by real runs of the real controller (a
scripted model; each run reads a file with a shell command and answers), the last of them
``--last-runs`` runs long, so the launch shows a sessions list, lists checkpoints and reads
AGENTS.md as a user's window does.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["make_history"]

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _repo(folder: Path, files: int) -> None:
    folder.mkdir(parents=True)
    for i in range(files):
        sub = folder / "src" / f"pkg{i % 20}"
        sub.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def f_{i}_{j}(x):\n    return x + {j}\n\n" for j in range(40))
        (sub / f"mod{i}.py").write_text(body)
    (folder / "AGENTS.md").write_text("# Agents\n\nRun `pytest -q` before you finish.\n")
    (folder / "README.md").write_text("A project with a history.\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=folder, env=env, check=True)


def _turns(index: int) -> list[dict[str, Any]]:
    usage = {"input_tokens": 1200, "output_tokens": 80, "total_tokens": 1280}
    shell = {
        "type": "shell_call",
        "call_id": f"s{index}",
        "action": {"commands": [f"cat src/pkg{index % 20}/mod{index}.py | head -n 60"]},
    }
    text = f"Run {index}: the module defines 40 functions; nothing to change."
    answer = {"type": "message", "content": [{"type": "output_text", "text": text}]}
    return [{"output": [shell], "usage": usage}, {"output": [answer], "usage": usage}]


def make_history(root: Path, *, files: int, sessions: int, last_runs: int) -> Path:
    """Build the project and its journaled sessions (see the module docstring).

    Args:
        root: an empty folder; the project is made in ``root/project``. The settings and
            the journal go to the platform dirs, so ``HOME``/``XDG_*`` should point under it.
        files: source files in the repository.
        sessions: sessions to journal (two runs each, the last one ``last_runs`` runs).
        last_runs: runs of the latest session.

    Returns:
        The project folder.

    Raises:
        subprocess.CalledProcessError: git failed; TimeoutError: a run took over 60 s.
    """
    import qasync
    from PySide6.QtWidgets import QApplication

    from core import Agent, ScriptedModel
    from core.settings import Settings, save_settings
    from desktop.controller import Controller
    from desktop.run_cli.setup import workspace_for
    from harnesses.sessions import SessionJournal
    from harnesses.sessions.journal import default_journal_path

    folder = root / "project"
    _repo(folder, files)
    settings = Settings()
    save_settings(settings.with_recent_folder(folder))
    app = QApplication.instance() or QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    journal = SessionJournal(default_journal_path())
    workspace = workspace_for(settings, folder, mode="full")  # no approvals to answer
    runs = 2 * (sessions - 1) + last_runs
    model = ScriptedModel([turn for index in range(runs) for turn in _turns(index)])
    controller = Controller(
        workspace, lambda ws: Agent(name="Tandem", model=model, tools=ws.tools()), journal=journal
    )

    async def one_run(index: int) -> None:
        done = asyncio.get_running_loop().create_future()

        def ended(running: bool) -> None:
            if not running and not done.done():
                done.set_result(None)

        controller.runningChanged.connect(ended)
        controller.submit(f"Read module {index} and tell me what it does")
        await asyncio.wait_for(done, 60)
        controller.runningChanged.disconnect(ended)
        for _ in range(1000):  # bounded: the run task ends right after its signal
            if not controller.is_running:
                return
            await asyncio.sleep(0.01)

    async def all_runs() -> None:
        index = 0
        for number in range(sessions):
            controller.new_session()
            for _ in range(last_runs if number == sessions - 1 else 2):
                await one_run(index)
                index += 1
        await controller.shutdown()

    with loop:
        loop.run_until_complete(all_runs())
    journal.close()
    asyncio.set_event_loop(None)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--sessions", type=int, default=12)
    parser.add_argument("--last-runs", type=int, default=20)
    args = parser.parse_args()
    print(
        make_history(args.root, files=args.files, sessions=args.sessions, last_runs=args.last_runs)
    )


if __name__ == "__main__":
    main()
