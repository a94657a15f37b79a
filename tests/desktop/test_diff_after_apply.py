"""After *Apply reviewed* the Diff tab still shows what landed, until the next run (issue 16)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from harnesses.sessions import SessionJournal
from tests.desktop import app_scenario
from tests.desktop.test_app import next_signal, run_qasync
from tests.desktop.test_card_truth import run_ended


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
    )


def _turns() -> list[dict[str, Any]]:
    again = {"type": "message", "content": [{"type": "output_text", "text": "Nothing to do."}]}
    return [*app_scenario.turns(), {"output": [again]}]


def test_the_applied_file_stays_read_only_with_its_landed_counts(tmp_path: Path, qtbot) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text(app_scenario.notes_text())
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    journal = SessionJournal(tmp_path / "journal.sqlite3")
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, _turns())
        qtbot.addWidget(window)
        window.show()
        diff = window.diff_view
        shown = next_signal(controller.proposalSubmitted)
        asked = next_signal(controller.approvalRequested)
        done = run_ended(controller)
        controller.submit("edit the notes")
        await shown
        diff.wait_built()
        qtbot.waitUntil(lambda: not diff.building("notes.txt"))
        diff.accept_current()
        diff.reject_current()  # hunk 2 does not land
        diff.accept_current()
        closed = next_signal(controller.proposalClosed)
        diff.apply_reviewed()
        await closed
        seen["files"] = [f.path for f in diff.applied_files()]
        seen["header"] = diff._file_header.text()
        seen["counts"] = diff.counts("notes.txt")
        seen["title"] = diff._title.full_text
        seen["progress"] = diff._progress.text()
        seen["item"] = diff._file_list.count()
        seen["apply_enabled"] = diff._apply_btn.isEnabled()
        seen["file_progress"] = diff._file_progress(diff.current_file())
        before = diff.decisions("notes.txt")
        changed: list[Any] = []
        diff.decisionChanged.connect(lambda *a: changed.append(a))
        diff._set_current(1)
        diff.accept_current()  # an applied file takes no more decisions
        diff.edit_current()
        seen["locked"] = diff.decisions("notes.txt") == before and not changed
        seen["editing"] = diff._edit_panel.isVisible()
        applied: list[Any] = []
        diff.applyRequested.connect(lambda *a: applied.append(a))
        diff.apply_reviewed()
        seen["reapplied"] = applied
        await asked
        window.approvals.allow_once()
        await done
        seen["after_run"] = [f.path for f in diff.applied_files()]
        if os.environ.get("TANDEM_SCREENSHOT_DIR"):
            window.grab().save(
                os.path.join(os.environ["TANDEM_SCREENSHOT_DIR"], "diff-applied.png")
            )
        again = run_ended(controller)
        controller.submit("anything else?")  # the next run: the applied file leaves
        await again
        seen["next_run"] = diff._file_list.count()
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()
    assert (
        "BETA" in (repo / "notes.txt").read_text()
        and "FILLER 6" not in (repo / "notes.txt").read_text()
    )
    assert seen["files"] == ["notes.txt"]  # today: "Changed files (0)"
    assert seen["header"] == "Changed files (1)" and seen["item"] == 1
    assert seen["counts"] == (2, 2)  # hunks 1 and 3 landed, one line each way
    assert "applied" in seen["title"]
    assert seen["progress"].startswith("Applied 2 of 3 hunks")
    assert seen["file_progress"] == "\u2713 applied 2 of 3"
    assert not seen["apply_enabled"] and seen["reapplied"] == []
    assert seen["locked"] and not seen["editing"]
    assert seen["after_run"] == ["notes.txt"]  # still there when the run has ended
    assert seen["next_run"] == 0


def test_a_fully_rejected_review_leaves_the_list(tmp_path: Path, qtbot) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text(app_scenario.notes_text())
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    journal = SessionJournal(tmp_path / "journal.sqlite3")
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, _turns())
        qtbot.addWidget(window)
        diff = window.diff_view
        shown = next_signal(controller.proposalSubmitted)
        done = run_ended(controller)
        controller.submit("edit the notes")
        await shown
        qtbot.waitUntil(lambda: not diff.building("notes.txt"))
        for _ in range(3):
            diff.reject_current()
        closed = next_signal(controller.proposalClosed)
        diff.apply_reviewed()
        await closed
        seen["count"] = diff._file_list.count()
        seen["applied"] = diff.is_applied("notes.txt")
        await controller.shutdown()
        await done
        window.close()

    run_qasync(scenario)
    journal.close()
    assert seen == {"count": 0, "applied": False}
    assert (repo / "notes.txt").read_text() == app_scenario.notes_text()
