"""File > Export session… suggests a folder outside the repository, remembered (issue 16)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.settings import data_dir
from desktop.export_folder import remember_export_folder, suggested_export_path
from harnesses.sessions import SessionJournal


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


@pytest.fixture
def documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "Documents"  # not created: each test says whether it exists
    monkeypatch.setenv("XDG_DOCUMENTS_DIR", str(folder))
    return folder


def _open_export(window) -> Path:
    menu = next(a for a in window.menuBar().actions() if a.text() == "&File").menu()
    next(a for a in menu.actions() if a.text() == "&Export session…").trigger()
    dialog = window.export_dialog
    (chosen,) = dialog.selectedFiles()
    return Path(chosen)


def test_the_window_suggests_outside_the_repo_and_remembers_the_folder(
    tmp_path: Path, qtbot, documents: Path
) -> None:
    from tests.desktop import app_scenario

    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    journal = SessionJournal(tmp_path / "journal.sqlite3")
    controller, window = app_scenario.build(repo, journal, app_scenario.turns())
    qtbot.addWidget(window)
    try:
        first = _open_export(window)
        assert not _inside(first, repo)  # today: <repo>/tandem-session-….json
        assert first.parent == data_dir() / "exports" and first.parent.is_dir()
        assert first.name == f"tandem-session-{controller.session_id[:8]}.json"
        elsewhere = tmp_path / "bug-reports"
        elsewhere.mkdir()
        dialog = window.export_dialog
        dialog.fileSelected.disconnect(controller.export_session)  # no run loop here: no write
        dialog.fileSelected.emit(str(elsewhere / "mine.json"))  # the user picks a file there
        dialog.reject()
        second = _open_export(window)
        assert second.parent == elsewhere  # remembered
        window.export_dialog.reject()
    finally:
        journal.close()
        window.close()


def test_documents_is_the_default_when_it_exists(tmp_path: Path, documents: Path) -> None:
    documents.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    path = suggested_export_path("abcdef0123456789", repo, state_dir=tmp_path / "state")
    assert path == documents / "tandem-session-abcdef01.json"


def test_nothing_inside_the_repo_is_suggested_or_remembered(
    tmp_path: Path, documents: Path
) -> None:
    documents.mkdir()
    state = tmp_path / "state"
    repo = tmp_path  # a repository that holds the Documents folder
    path = suggested_export_path("s1", repo, state_dir=state)
    assert path.parent == state / "exports" and not _inside(path, repo / "Documents")
    remember_export_folder(repo / "sub" / "x.json", repo, state_dir=state)
    assert not (state / "last-export-folder").exists()
    outside = tmp_path.parent / f"{tmp_path.name}-out"
    outside.mkdir()
    remember_export_folder(outside / "x.json", repo, state_dir=state)
    assert suggested_export_path("s1", repo, state_dir=state).parent == outside
    outside.rmdir()  # a remembered folder that is gone is not suggested
    assert suggested_export_path("s1", repo, state_dir=state).parent == state / "exports"
