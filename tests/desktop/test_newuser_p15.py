"""Regressions found by a new user's trial of issue 15's changes (the Diff tab's apply bar).

- *Accept all* / *Reject all* are disabled while a file's build streams and once nothing is
  pending, but they were painted exactly as when enabled (the stylesheet has a
  ``:disabled`` rule for *Apply reviewed* only): a user presses them and nothing happens.
- Two ``apply_patch`` calls in one turn: the first file's review is shown in the Diff tab,
  but the *last* call's card said "waiting for your review" and the first one's "running".
"""

from __future__ import annotations

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QPushButton

from desktop.views.diff.model import Verdict
from desktop.views.diff.view import DiffView
from harnesses.sessions import SessionJournal
from tests.desktop import app_scenario
from tests.desktop.test_app import next_signal, run_qasync

OLD = "".join(f"line {n}\n" for n in range(40))
NEW = OLD.replace("line 5\n", "LINE 5\n").replace("line 30\n", "LINE 30\n")


def _pixels(button: QPushButton) -> QImage:
    QApplication.processEvents()
    return button.grab().toImage()


def test_accept_all_and_reject_all_look_disabled_when_they_are(qtbot) -> None:
    view = DiffView(build_process=False)
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    view.stream_file("a.txt", OLD, NEW, proposal_id="p1")
    qtbot.waitUntil(lambda: not view.building("a.txt"), timeout=10_000)
    accept = view.findChild(QPushButton, "acceptAllButton")
    reject = view.findChild(QPushButton, "rejectAllButton")
    assert accept is not None and reject is not None
    assert accept.isEnabled() and reject.isEnabled()  # two hunks pending
    enabled = (_pixels(accept), _pixels(reject))
    view.accept_all()
    assert all(d.verdict is Verdict.ACCEPTED for d in view.decisions("a.txt").values())
    assert not accept.isEnabled() and not reject.isEnabled()  # nothing pending
    disabled = (_pixels(accept), _pixels(reject))
    assert enabled[0] != disabled[0], "Accept all looks the same disabled as enabled"
    assert enabled[1] != disabled[1], "Reject all looks the same disabled as enabled"


def _two_patch_turns() -> list[dict]:
    def call(call_id: str, path: str, old: str, new: str) -> dict:
        diff = f"@@\n {old}\n-{old}x\n+{new}\n"
        return {
            "type": "apply_patch_call",
            "call_id": call_id,
            "operation": {"type": "update_file", "path": path, "diff": diff},
        }

    done = {"type": "message", "content": [{"type": "output_text", "text": "Done."}]}
    return [
        {"output": [call("p0", "one.txt", "a", "A"), call("p1", "two.txt", "b", "B")]},
        {"output": [done]},
    ]


def test_the_card_waiting_for_review_is_the_one_shown_in_the_diff_tab(tmp_path, qtbot) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "one.txt").write_text("a\nax\n")
    (repo / "two.txt").write_text("b\nbx\n")
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        controller, window = app_scenario.build(repo, journal, _two_patch_turns())
        qtbot.addWidget(window)
        window.show()
        shown = next_signal(controller.proposalSubmitted)
        controller.submit("edit both")
        (proposal,) = await shown
        window.conversation.flush()
        first, second = (window.conversation.tool_card(c) for c in ("p0", "p1"))
        shown_path = window.diff_view.current_file().path
        assert proposal.path == shown_path == "one.txt"  # the first call's review is shown
        statuses = {"p0": first.status_name, "p1": second.status_name}
        assert statuses["p0"] == "waiting-review", statuses
        assert statuses["p1"] != "waiting-review", statuses
        await controller.shutdown()
        window.close()

    run_qasync(scenario)
    journal.close()


def test_a_checkpoint_holds_a_workspace_with_a_nested_repository_without_commits(tmp_path):
    """``git init`` in a subfolder, no commit yet (a new project inside a folder): every
    checkpoint failed (``git add -A``: "'sub/' does not have a commit checked out"), so
    every destructive command was refused and no turn had a checkpoint."""
    import asyncio
    import subprocess

    from harnesses.checkpoints import CheckpointStore

    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    (workspace / "keep.txt").write_text("keep\n")
    subprocess.run(["git", "init", "-q"], cwd=workspace / "sub", check=True)
    (workspace / "sub" / "f.txt").write_text("x\n")
    store = CheckpointStore(workspace, data_dir=tmp_path / "data")
    checkpoint = asyncio.run(store.create("first"))
    (workspace / "keep.txt").unlink()
    asyncio.run(store.restore(checkpoint))
    assert (workspace / "keep.txt").read_text() == "keep\n"
