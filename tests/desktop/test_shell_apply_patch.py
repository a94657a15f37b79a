"""Shell-invoked and pasted ``apply_patch`` envelopes wait in the Diff tab in ask mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from desktop.views.composer import Composer, is_patch_text
from harnesses.sessions import SessionJournal
from tests.desktop import app_scenario
from tests.desktop.test_app import next_signal, run_qasync

ENVELOPE = "\n".join(
    [
        "*** Begin Patch",
        "*** Update File: notes.txt",
        "@@",
        " alpha",
        "-beta",
        "+BETA",
        " gamma",
        "*** End Patch",
    ]
)


def shell_turns() -> list[dict[str, Any]]:
    command = f"apply_patch <<'EOF'\n{ENVELOPE}\nEOF\n"
    call = {"type": "shell_call", "call_id": "s1", "action": {"commands": [command]}}
    done = {"type": "message", "content": [{"type": "output_text", "text": "Patched."}]}
    return [{"output": [call]}, {"output": [done]}]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "notes.txt").write_text(app_scenario.notes_text())
    return folder


def test_shell_apply_patch_waits_in_the_diff_tab(repo, tmp_path, qtbot):
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, shell_turns())
        qtbot.addWidget(window)
        window.show()
        proposal = next_signal(controller.proposalSubmitted)
        controller.submit("change beta")
        (submitted,) = await proposal
        assert window.tabs.currentIndex() == 0  # the Diff tab
        shown = window.diff_view.current_file()
        assert shown is not None and shown.path == "notes.txt"
        assert submitted.path == "notes.txt" and len(submitted.hunks) == 1
        assert window.approvals.current() is None  # the review is the approval, no prompt
        assert (repo / "notes.txt").read_text() == app_scenario.notes_text()  # still waiting
        done = next_signal(controller.runningChanged)
        window.diff_view.setFocus()
        QTest.keyClick(window.diff_view, Qt.Key.Key_A)  # accept the hunk
        window.diff_view.apply_reviewed()
        await done
        expected = app_scenario.notes_text().replace("beta", "BETA", 1)
        assert (repo / "notes.txt").read_text() == expected
        sent = controller.scripted_model.requests[1]["input"]
        output = next(i for i in sent if i.get("type") == "shell_call_output")
        assert output["output"][0]["stdout"] == (
            "Success. Updated the following files:\nM notes.txt\n"
        )
        assert output["output"][0]["outcome"] == {"type": "exit", "exit_code": 0}
        assert await controller.workspace.checkpoints.list(), "checkpointed before the turn"
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()


def test_pasted_patch_is_reviewed_not_sent(repo, tmp_path, qtbot):
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, shell_turns())
        qtbot.addWidget(window)
        window.show()
        proposal = next_signal(controller.proposalSubmitted)
        window.composer.set_text(f"```\n{ENVELOPE}\n```")
        QTest.keyClick(window.composer.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        (submitted,) = await proposal
        assert submitted.path == "notes.txt" and window.tabs.currentIndex() == 0
        assert not controller.scripted_model.requests  # never sent as a prompt
        notice = next_signal(controller.notice)
        window.diff_view.setFocus()
        QTest.keyClick(window.diff_view, Qt.Key.Key_A)
        window.diff_view.apply_reviewed()
        text, level = await notice
        assert level == "info" and "M notes.txt" in text
        assert "BETA" in (repo / "notes.txt").read_text()
        assert not controller.scripted_model.requests
        checkpoints = await controller.workspace.checkpoints.list()
        assert [c.label for c in checkpoints] == ["before pasted patch"]
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ENVELOPE, True),
        (f"\n  {ENVELOPE}\n", True),
        (f"```diff\n{ENVELOPE}\n```", True),
        (f"apply_patch <<'EOF'\n{ENVELOPE}\nEOF", True),
        (f"please apply this:\n{ENVELOPE}", False),
        ("*** Begin Patch and then explain it", False),
        ("fix the failing test", False),
    ],
    ids=["bare", "padded", "fenced", "heredoc", "prose-first", "no-end", "prompt"],
)
def test_is_patch_text(text, expected):
    assert is_patch_text(text) is expected


def test_composer_emits_patch_instead_of_prompt(qtbot):
    composer = Composer()
    qtbot.addWidget(composer)
    prompts: list[str] = []
    patches: list[str] = []
    composer.submitted.connect(prompts.append)
    composer.patchSubmitted.connect(patches.append)
    composer.set_text(ENVELOPE)
    composer.submit()
    composer.set_text("explain the code")
    composer.submit()
    assert patches == [ENVELOPE] and prompts == ["explain the code"]
    assert composer.text() == ""
