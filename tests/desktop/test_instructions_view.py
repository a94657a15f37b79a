"""The window lists the AGENTS.md files of the run (issue 16, item 1) and sends them, in order,
in the request's instructions; a keyless localhost server needs no key in the window either."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from core.settings import Settings, save_settings, settings_dir
from desktop.app import AppOptions, _Session
from desktop.views.instructions_view import InstructionsButton
from harnesses.instructions import load_instructions
from tests.desktop.shots import save_shot

_MESSAGE = [{"type": "message", "content": [{"type": "output_text", "text": "ok"}]}]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    codex = tmp_path / "codex"
    codex.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex))
    settings_dir().mkdir(parents=True, exist_ok=True)
    (settings_dir() / "AGENTS.md").write_text("GLOBAL TANDEM RULES\n")
    (codex / "AGENTS.md").write_text("GLOBAL CODEX RULES\n")
    (repo / "AGENTS.md").write_text("ROOT RULES\n")
    (repo / "app" / "AGENTS.md").write_text("APP PLAIN\n")
    (repo / "app" / "AGENTS.override.md").write_text("APP OVERRIDE RULES\n")
    return repo


async def test_window_lists_files_and_request_carries_them(repo, tmp_path, qtbot, responses_server):
    settings_path = tmp_path / "settings.toml"
    save_settings(  # no key: the local Responses server is on 127.0.0.1
        Settings(model="test-model", base_url=responses_server.base_url, explorer=False),
        settings_path,
    )
    session = _Session(
        AppOptions(
            repo / "app", journal_path=tmp_path / "journal.sqlite3", settings_path=settings_path
        )
    )
    window = session.window
    qtbot.addWidget(window)
    opened: list[Path] = []
    window.instructions._opener = opened.append
    try:
        button = window.instructions
        assert button.text() == "AGENTS.md \u00d74"
        assert [line.split(" — ")[0] for line in button.lines] == [
            str(settings_dir() / "AGENTS.md"),  # tmp_path is not under $HOME here
            str(tmp_path / "codex" / "AGENTS.md"),
            "AGENTS.md",  # project files: relative to the repository root
            "app/AGENTS.override.md",
        ]
        assert "replaces AGENTS.md" in button.lines[3]
        if os.environ.get("TANDEM_SCREENSHOT_DIR"):  # scripts/screenshots.sh: the list open
            window.resize(1440, 900)
            window.show()
            button.show_menu()
            save_shot(window, "tandem-agents-md.png", screen=True)
            button.menu.close()

        finished = asyncio.Event()
        session.controller.runningChanged.connect(lambda running: running or finished.set())
        (repo / "AGENTS.md").write_text("ROOT RULES, EDITED BEFORE THE RUN\n")
        responses_server.enqueue(_MESSAGE)
        session.controller.submit("hello")
        await asyncio.wait_for(finished.wait(), 30)
        sent = responses_server.requests[-1].body["instructions"]
        markers = [
            "GLOBAL TANDEM RULES",
            "GLOBAL CODEX RULES",
            "ROOT RULES, EDITED BEFORE THE RUN",
            "APP OVERRIDE RULES",
        ]
        assert [sent.index(m) for m in markers] == sorted(sent.index(m) for m in markers)
        assert "APP PLAIN" not in sent
        headers = {k.lower(): v for k, v in responses_server.requests[-1].headers.items()}
        assert headers["authorization"] == "Bearer no-key-needed"  # keyless localhost

        (repo / "app" / "AGENTS.override.md").unlink()  # the plain file comes back next run
        finished.clear()
        responses_server.enqueue(_MESSAGE)
        session.controller.submit("again")
        await asyncio.wait_for(finished.wait(), 30)
        assert "APP PLAIN" in responses_server.requests[-1].body["instructions"]
        assert "replaces" not in button.lines[3] and button.lines[3].startswith("app/AGENTS.md")

        button.menu.actions()[0].trigger()  # a click opens the file
        assert opened == [settings_dir() / "AGENTS.md"]
    finally:
        await session.close()


def test_button_shows_truncation_and_the_budget(repo, tmp_path, qtbot):
    (repo / "AGENTS.md").write_text("x" * 5000)
    opened: list[Path] = []
    button = InstructionsButton(opener=opened.append)
    qtbot.addWidget(button)
    button.set_instructions(load_instructions(repo, cap_bytes=1024))
    assert button.text().endswith(" !")
    assert button.property("state") == "truncated"
    assert any("truncated to" in line for line in button.lines)
    texts = [a.text() for a in button.menu.actions()]
    assert any("of 1024 bytes used" in t for t in texts)
    with qtbot.waitSignal(button.fileOpened) as signal:
        button.menu.actions()[2].trigger()
    assert signal.args == [str(repo / "AGENTS.md")] and opened == [repo / "AGENTS.md"]


def test_button_without_files(tmp_path, qtbot, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "none"))
    button = InstructionsButton(opener=lambda _p: None)
    qtbot.addWidget(button)
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / ".git").mkdir()
    button.set_instructions(load_instructions(folder, config_dir=tmp_path / "cfg"))
    assert button.text() == "no AGENTS.md" and button.property("state") == "none"


async def test_tandem_run_prints_the_files(repo, responses_server, capsys):
    import io

    from desktop.headless import HeadlessOptions, run_headless

    responses_server.enqueue(_MESSAGE)
    out = io.StringIO()
    options = HeadlessOptions(
        repo / "app", "hi", base_url=responses_server.base_url, interactive=False, sandbox=False
    )
    code = await run_headless(options, out=out)
    assert code == 0, capsys.readouterr().err
    lines = [line for line in out.getvalue().splitlines() if line.startswith("instructions: ")]
    assert len(lines) == 4
    assert lines[3] == "instructions: app/AGENTS.override.md (project, 19 B, replaces AGENTS.md)"
    assert "APP OVERRIDE RULES" in responses_server.requests[-1].body["instructions"]
