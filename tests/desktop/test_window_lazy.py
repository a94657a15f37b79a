"""Issue 15, "window up under 1.5 s": the main window builds only what its first frame shows.

The Terminal, Browser and Checkpoints tabs are built when first shown or used (a command's
block, the checkpoints list, a browser session's event), or right after the first paint; what
reaches them before behaves as if they had been there from the start. Launched as a user does
(``tandem FOLDER``), the window paints before ``griffe``, ``openai``, ``bashlex`` and
``playwright`` are imported and before those tabs exist.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from core import Agent, ScriptedModel
from core.settings import Settings
from harnesses.sessions import SessionJournal
from harnesses.workspace import Workspace
from tests.desktop.test_app import next_signal, run_qasync

ROOT = Path(__file__).resolve().parents[2]


def _window(repo: Path, turns: list[dict[str, Any]], **kwargs: Any) -> Any:
    from desktop.controller import Controller
    from desktop.main_window import MainWindow

    workspace = Workspace(repo, mode="full", data_dir=repo.parent / "data")
    model = ScriptedModel(turns)

    def factory(ws: Workspace) -> Agent[Any]:
        return Agent(name="Tandem", model=model, tools=ws.tools())

    journal = SessionJournal(repo.parent / "journal.sqlite3")
    controller = Controller(workspace, factory, journal=journal)
    return controller, MainWindow(controller, Settings(), **kwargs), journal


def _shell_turns() -> list[dict[str, Any]]:
    return [
        {
            "output": [
                {
                    "type": "shell_call",
                    "call_id": "s1",
                    "action": {"commands": ["printf 'lazy hello\\n'"]},
                }
            ]
        },
        {"output": [{"type": "message", "content": [{"type": "output_text", "text": "Done."}]}]},
    ]


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text("hello\n")
    return repo


def test_hidden_tabs_are_not_built_until_shown(tmp_path: Path, qtbot) -> None:
    _controller, window, journal = _window(_repo(tmp_path), [])
    qtbot.addWidget(window)
    try:
        window.show()
        qtbot.waitExposed(window)
        assert window.tabs.currentIndex() == 0 and window.diff_view.isVisible()
        assert (window._terminal, window._browser, window._checkpoints) == (None, None, None)
        assert [window.tabs.tabText(i) for i in range(4)] == [
            "Diff",
            "Terminal",
            "Browser",
            "Checkpoints",
        ]
        window.tabs.setCurrentIndex(3)  # the user opens Checkpoints: built, shown, wired
        assert window._checkpoints is not None and window.checkpoints.isVisible()
        assert window._terminal is None and window._browser is None
        window.tabs.setCurrentIndex(1)
        assert window.terminal.isVisible()
        window.tabs.setCurrentIndex(2)  # no browser session: the placeholder
        assert window.browser.isVisible() and window.browser.text.text()
        assert window.tabs.widget(2).isAncestorOf(window.browser)
    finally:
        window.close()
        journal.close()


def test_state_that_arrives_before_a_tab_is_built_lands_in_it(tmp_path: Path, qtbot) -> None:
    controller, window, journal = _window(_repo(tmp_path), [])
    qtbot.addWidget(window)
    try:
        window.set_browser_message("The browser tool is off: no Chromium here")
        controller.undoRestoreAvailable.emit(True)  # a restore happened
        controller.checkpointsChanged.emit([])
        assert window._browser is None  # the message waits for the tab
        window.build_lazy_tabs()  # what run_app does after the first paint
        assert window.browser.text.text() == "The browser tool is off: no Chromium here"
        assert window.checkpoints.undo_button.isEnabled()
        controller.undoRestoreAvailable.emit(False)  # and it follows later changes
        assert not window.checkpoints.undo_button.isEnabled()
    finally:
        window.close()
        journal.close()


def test_a_command_before_the_terminal_exists_builds_it_and_shows_its_block(
    tmp_path: Path, qtbot
) -> None:
    controller, window, journal = _window(_repo(tmp_path), _shell_turns())
    qtbot.addWidget(window)

    async def scenario() -> None:
        window.show()
        assert window._terminal is None
        stopped = next_signal(controller.runningChanged)
        controller.submit("say hello in the terminal")
        await stopped  # started
        while controller.is_running:  # bounded by run_qasync's 60 s
            await next_signal(controller.runningChanged)

    try:
        run_qasync(scenario)
        assert window._terminal is not None  # built by the command's first signal
        window.terminal.flush()
        (block,) = window.terminal.model.blocks()
        assert "lazy hello" in window.terminal.output_document(block.block_id).toPlainText()
        window.tabs.setCurrentIndex(1)
        assert window.terminal.isVisible() and window.terminal.block_widget(block.block_id)
    finally:
        window.close()
        journal.close()


def test_a_reopened_session_restores_its_blocks_into_a_terminal_built_later(
    tmp_path: Path, qtbot
) -> None:
    repo = _repo(tmp_path)
    controller, window, journal = _window(repo, _shell_turns())
    qtbot.addWidget(window)

    async def run_once() -> None:
        stopped = next_signal(controller.runningChanged)
        controller.submit("say hello in the terminal")
        await stopped
        while controller.is_running:
            await next_signal(controller.runningChanged)
        await journal.asessions(repo)  # the queued writes are in

    try:
        run_qasync(run_once)
        session_id = controller.session_id
        assert session_id
    finally:
        window.close()
        journal.close()

    controller, window, journal = _window(repo, [])  # a new window: nothing built yet
    qtbot.addWidget(window)
    try:
        window.show()
        assert window._terminal is None
        controller.load_session(session_id)
        qtbot.waitUntil(lambda: window._terminal is not None, timeout=10_000)
        window.terminal.flush()
        (block,) = window.terminal.model.blocks()
        assert "lazy hello" in window.terminal.output_document(block.block_id).toPlainText()
    finally:
        window.close()
        journal.close()


def test_a_browser_event_before_the_view_exists_reaches_it_once(tmp_path: Path, qtbot) -> None:
    from desktop.browser_session import BrowserSession
    from harnesses.browser import PlaywrightComputer
    from harnesses.browser.gated import ActionGate

    computer = PlaywrightComputer(profile_dir=tmp_path / "profile")  # not launched
    session = BrowserSession(computer, ActionGate())
    _controller, window, journal = _window(_repo(tmp_path), [], browser_session=session)
    qtbot.addWidget(window)
    try:
        assert window._browser is None
        session.notice.emit("The browser restarted", "warning")  # the first event builds it
        assert window._browser is not None
        ((text, _call),) = window.browser.log_entries()  # delivered once, not twice
        assert "The browser restarted" in text
        session.urlChanged.emit("http://127.0.0.1:9/form")  # later ones: the view's own
        assert window.browser.url.text() == "http://127.0.0.1:9/form"
        assert len(window.browser.log_entries()) == 1
    finally:
        window.close()
        journal.close()


_LAUNCH = textwrap.dedent(
    """
    import json, sys
    import desktop.first_paint as first_paint
    from desktop import cli

    watched = first_paint.after_first_paint

    def watch(window, callback, **kwargs):
        def painted():
            seen = {
                "modules": sorted(
                    m for m in ("griffe", "openai", "bashlex", "playwright") if m in sys.modules
                ),
                "built": [
                    w is not None
                    for w in (window._terminal, window._browser, window._checkpoints, window._notifier)
                ],
            }
            callback()
            seen["built_after"] = [
                w is not None
                for w in (window._terminal, window._browser, window._checkpoints, window._notifier)
            ]
            print("PAINTED " + json.dumps(seen), flush=True)
            window.close()

        watched(window, painted, **kwargs)

    first_paint.after_first_paint = watch
    sys.argv = ["tandem", sys.argv[1]]
    sys.exit(cli.main())
    """
)


def test_the_first_paint_comes_before_the_heavy_imports_and_the_hidden_tabs(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    script = tmp_path / "launch.py"
    script.write_text(_LAUNCH)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, str(script), str(repo)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("PAINTED ")]
    assert out.returncode == 0 and lines, out.stderr[-3000:]
    seen = json.loads(lines[-1].split(" ", 1)[1])
    assert seen["modules"] == []  # none of them before the first paint
    assert seen["built"] == [False, False, False, False]  # the hidden tabs, the tray icon
    assert seen["built_after"] == [True, True, True, True]  # right after it
