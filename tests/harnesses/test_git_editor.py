"""GitAwareEditor on real files: confinement, immediate mode, review mode, stale-write guard."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import git
import pytest

from core.tools.editor import ApplyPatchEditor, ApplyPatchOperation, ApplyPatchResult
from harnesses.checkpoints import CheckpointStore
from harnesses.editor import (
    ConfinementError,
    GitAwareEditor,
    Proposal,
    ReviewEvent,
    ReviewOutcome,
    ReviewQueue,
    resolve_in_workspace,
)
from harnesses.editor.hunks import split_lines

LINES = [f"line {i}\n" for i in range(1, 31)]
ORIGINAL = "".join(LINES)

# Three separate changes (lines 2, 15 and 28) → three hunks with 3 lines of context.
THREE_CHANGES = (
    "@@\n line 1\n-line 2\n+LINE TWO\n line 3\n"
    "@@\n line 14\n-line 15\n+LINE FIFTEEN\n line 16\n"
    "@@\n line 27\n-line 28\n+LINE TWENTY-EIGHT\n line 29\n"
)


def _replace(text: str, mapping: dict[int, str]) -> str:
    lines = split_lines(text)
    for number, new in mapping.items():
        lines[number - 1] = new
    return "".join(lines)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text(ORIGINAL)
    return root


def op(
    kind: str, path: str, diff: str | None = None, move_to: str | None = None
) -> ApplyPatchOperation:
    return ApplyPatchOperation(type=kind, path=path, diff=diff, move_to=move_to)  # type: ignore[arg-type]


async def _call(editor: GitAwareEditor, operation: ApplyPatchOperation) -> ApplyPatchResult:
    method = getattr(editor, operation.type)
    return await method(operation)


async def _start_review(
    editor: GitAwareEditor, operation: ApplyPatchOperation
) -> tuple[asyncio.Task[ApplyPatchResult], Proposal]:
    """Start an operation in review mode and wait (on an event) until it is queued."""
    submitted: asyncio.Queue[Proposal] = asyncio.Queue()

    def listener(event: ReviewEvent) -> None:
        if event.type == "submitted":
            submitted.put_nowait(event.proposal)

    remove = editor.queue.add_listener(listener)
    task = asyncio.create_task(_call(editor, operation))
    try:
        proposal = await submitted.get()
    finally:
        remove()
    return task, proposal


# -- confinement ---------------------------------------------------------------------------


def _outside_setup(tmp_path: Path, ws: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (ws / "escape").symlink_to(outside, target_is_directory=True)
    (ws / "leak.txt").symlink_to(outside / "secret.txt")
    repo = git.Repo.init(ws)
    repo.close()
    return outside


def _snapshot(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


@pytest.mark.parametrize("mode", ["immediate", "review"])
@pytest.mark.parametrize(
    ("kind", "path", "reason"),
    [
        ("create_file", "../x.txt", "outside the workspace"),
        ("create_file", "src/../../x.txt", "outside the workspace"),
        ("update_file", "../outside/secret.txt", "outside the workspace"),
        ("create_file", "{abs}", "absolute"),
        ("update_file", "{abs_secret}", "absolute"),
        ("create_file", "escape/new.txt", "symlink"),
        ("update_file", "escape/secret.txt", "symlink"),
        ("update_file", "leak.txt", "symlink"),
        ("delete_file", "escape/secret.txt", "symlink"),
        ("update_file", ".git/config", ".git"),
        ("create_file", ".git/hooks/pre-commit", ".git"),
        ("create_file", "src/.git/x", ".git"),
        ("delete_file", ".git/HEAD", ".git"),
        ("create_file", "src/..", "workspace root"),
        ("create_file", "  ", "empty path"),
    ],
)
async def test_confinement_refuses_and_writes_nothing(
    tmp_path: Path, ws: Path, mode: str, kind: str, path: str, reason: str
) -> None:
    outside = _outside_setup(tmp_path, ws)
    path = path.format(abs=str(tmp_path / "abs.txt"), abs_secret=str(outside / "secret.txt"))
    before_ws, before_out = _snapshot(ws), _snapshot(outside)
    editor = GitAwareEditor(ws, mode=mode)  # type: ignore[arg-type]
    diff = (
        "+pwned\n"
        if kind == "create_file"
        else ("@@\n-secret\n+pwned\n" if kind == "update_file" else None)
    )
    result = await _call(editor, op(kind, path, diff))
    assert result.status == "failed"
    assert reason in (result.output or "")
    assert "Nothing was written" in (result.output or "")
    assert editor.queue.pending() == []
    assert _snapshot(ws) == before_ws
    assert _snapshot(outside) == before_out
    assert not (tmp_path / "x.txt").exists() and not (tmp_path / "abs.txt").exists()


async def test_move_to_outside_is_refused(tmp_path: Path, ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="immediate")
    result = await editor.update_file(op("update_file", "src/a.py", THREE_CHANGES, "../moved.py"))
    assert result.status == "failed"
    assert (ws / "src" / "a.py").read_text() == ORIGINAL
    assert not (tmp_path / "moved.py").exists()


async def test_symlink_inside_workspace_is_followed(ws: Path) -> None:
    (ws / "alias.py").symlink_to(ws / "src" / "a.py")
    editor = GitAwareEditor(ws, mode="immediate")
    result = await editor.update_file(op("update_file", "alias.py", THREE_CHANGES))
    assert result.status == "completed"
    assert (ws / "alias.py").is_symlink()
    assert "LINE FIFTEEN" in (ws / "src" / "a.py").read_text()


async def test_symlinked_directory_inside_workspace_is_followed(ws: Path) -> None:
    (ws / "lib").symlink_to("src", target_is_directory=True)
    (ws / "abs_alias.py").symlink_to(ws / "src" / "a.py")
    editor = GitAwareEditor(ws, mode="immediate")
    result = await editor.update_file(op("update_file", "lib/a.py", THREE_CHANGES))
    assert (result.status, result.output) == ("completed", "Updated src/a.py")
    assert (ws / "lib").is_symlink()
    result = await editor.update_file(op("update_file", "abs_alias.py", "@@\n+top\n"))
    assert (result.status, result.output) == ("completed", "Updated src/a.py")
    assert (ws / "abs_alias.py").is_symlink()
    assert (ws / "src" / "a.py").read_text().startswith("top\nline 1\nLINE TWO\n")


async def test_deleting_a_symlink_to_outside_removes_only_the_link(
    tmp_path: Path, ws: Path
) -> None:
    outside = _outside_setup(tmp_path, ws)
    editor = GitAwareEditor(ws, mode="immediate")
    result = await editor.delete_file(op("delete_file", "leak.txt"))
    assert (result.status, result.output) == ("completed", "Deleted leak.txt")
    assert not os.path.lexists(ws / "leak.txt")
    assert (outside / "secret.txt").read_text() == "secret\n"


async def test_replaced_workspace_folder_is_refused(tmp_path: Path, ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="immediate")
    ws.rename(tmp_path / "moved-away")
    ws.mkdir()
    result = await editor.create_file(op("create_file", "new.txt", "+x\n"))
    assert result.status == "failed"
    assert "moved or replaced" in (result.output or "")
    assert list(ws.iterdir()) == []
    assert not (tmp_path / "moved-away" / "new.txt").exists()


async def test_move_keeps_mode_and_leaves_no_temp_files(ws: Path) -> None:
    (ws / "src" / "a.py").chmod(0o711)
    editor = GitAwareEditor(ws, mode="immediate")
    result = await editor.update_file(op("update_file", "src/a.py", "@@\n+top\n", "deep/er/b.py"))
    assert result.status == "completed", result.output
    moved = ws / "deep" / "er" / "b.py"
    assert stat.S_IMODE(moved.stat().st_mode) == 0o711
    assert not (ws / "src" / "a.py").exists()
    leftovers = [p for p in ws.rglob("*") if p.name.endswith(".tandem-tmp")]
    assert leftovers == []


def test_resolve_in_workspace_walks_like_the_writer(tmp_path: Path, ws: Path) -> None:
    _outside_setup(tmp_path, ws)
    (ws / "lib").symlink_to("src")
    root = Path(os.path.realpath(ws))
    assert resolve_in_workspace(ws, "lib/a.py") == root / "src" / "a.py"
    assert resolve_in_workspace(ws, "new/dir/x.py") == root / "new" / "dir" / "x.py"
    assert resolve_in_workspace(ws, "leak.txt", follow_leaf=False) == root / "leak.txt"
    for bad in ("leak.txt", "escape/x", ".GIT/config", "../x", "src/../a.py"):
        with pytest.raises(ConfinementError):
            resolve_in_workspace(ws, bad)


def test_implements_the_core_seam(ws: Path) -> None:
    assert isinstance(GitAwareEditor(ws), ApplyPatchEditor)
    with pytest.raises(ValueError):
        GitAwareEditor(ws, mode="auto")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        GitAwareEditor(ws / "missing")


# -- immediate mode ------------------------------------------------------------------------


async def test_immediate_create_update_move_delete(ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="immediate")
    created = await editor.create_file(op("create_file", "pkg/sub/new.py", "+x = 1\n+y = 2\n+"))
    assert (created.status, created.output) == ("completed", "Created pkg/sub/new.py")
    assert (ws / "pkg" / "sub" / "new.py").read_text() == "x = 1\ny = 2\n"

    script = ws / "src" / "a.py"
    script.chmod(0o750)
    updated = await editor.update_file(op("update_file", "src/a.py", THREE_CHANGES))
    assert (updated.status, updated.output) == ("completed", "Updated src/a.py")
    assert script.read_text() == _replace(
        ORIGINAL, {2: "LINE TWO\n", 15: "LINE FIFTEEN\n", 28: "LINE TWENTY-EIGHT\n"}
    )
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert not [p for p in (ws / "src").iterdir() if p.name.endswith(".tandem-tmp")]

    moved = await editor.update_file(
        op("update_file", "pkg/sub/new.py", "@@\n-x = 1\n+x = 10\n", "lib/renamed.py")
    )
    assert (moved.status, moved.output) == ("completed", "Updated pkg/sub/new.py → lib/renamed.py")
    assert not (ws / "pkg" / "sub" / "new.py").exists()
    assert (ws / "lib" / "renamed.py").read_text() == "x = 10\ny = 2\n"

    deleted = await editor.delete_file(op("delete_file", "lib/renamed.py"))
    assert (deleted.status, deleted.output) == ("completed", "Deleted lib/renamed.py")
    assert not (ws / "lib" / "renamed.py").exists()


async def test_crlf_file_keeps_its_line_endings(ws: Path) -> None:
    (ws / "win.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    editor = GitAwareEditor(ws, mode="immediate")
    result = await editor.update_file(op("update_file", "win.txt", "@@\n a\n-b\n+B\n"))
    assert result.status == "completed"
    assert (ws / "win.txt").read_bytes() == b"a\r\nB\r\nc\r\n"


@pytest.mark.parametrize(
    ("operation", "message"),
    [
        (op("update_file", "src/a.py", "@@\n-no such line\n+x\n"), "Could not apply the diff"),
        (op("update_file", "src/a.py", "*** Begin Patch\n"), "Could not apply the diff"),
        (op("update_file", "missing.py", "@@\n+x\n"), "does not exist"),
        (op("delete_file", "missing.py"), "does not exist"),
        (op("update_file", "src", "@@\n+x\n"), "is a directory"),
    ],
)
async def test_immediate_failures_leave_files_untouched(
    ws: Path, operation: ApplyPatchOperation, message: str
) -> None:
    before = _snapshot(ws)
    result = await _call(GitAwareEditor(ws, mode="immediate"), operation)
    assert result.status == "failed"
    assert message in (result.output or "")
    assert _snapshot(ws) == before


async def test_move_onto_existing_file_is_refused(ws: Path) -> None:
    (ws / "b.py").write_text("keep me\n")
    editor = GitAwareEditor(ws, mode="immediate")
    result = await editor.update_file(op("update_file", "src/a.py", THREE_CHANGES, "b.py"))
    assert result.status == "failed" and "already exists" in (result.output or "")
    assert (ws / "b.py").read_text() == "keep me\n"
    assert (ws / "src" / "a.py").read_text() == ORIGINAL


async def test_immediate_mode_checkpoints_before_writing(tmp_path: Path, ws: Path) -> None:
    store = CheckpointStore(ws, data_dir=tmp_path / "data")
    editor = GitAwareEditor(ws, mode="immediate", checkpoints=store)
    assert (await editor.update_file(op("update_file", "src/a.py", THREE_CHANGES))).status == (
        "completed"
    )
    checkpoints = await store.list()
    assert len(checkpoints) == 1
    assert (ws / "src" / "a.py").read_text() != ORIGINAL
    await store.restore(checkpoints[0].id)
    assert (ws / "src" / "a.py").read_text() == ORIGINAL


# -- review mode ---------------------------------------------------------------------------


async def test_review_accept_two_of_three_hunks(ws: Path) -> None:
    queue = ReviewQueue()
    editor = GitAwareEditor(ws, mode="review", queue=queue)
    task, proposal = await _start_review(editor, op("update_file", "src/a.py", THREE_CHANGES))
    assert [p.id for p in queue.pending()] == [proposal.id]
    assert proposal.path == "src/a.py" and proposal.old_text == ORIGINAL
    assert [h.id for h in proposal.hunks] == [1, 2, 3]
    assert [(h.old_start, h.old_lines) for h in proposal.hunks] == [(1, 5), (12, 7), (25, 6)]
    assert "-line 15" in proposal.hunks[1].lines and "+LINE FIFTEEN" in proposal.hunks[1].lines
    assert (ws / "src" / "a.py").read_text() == ORIGINAL  # nothing lands before the decision

    queue.resolve(
        proposal.id, ReviewOutcome.per_hunk({1: True, 2: False, 3: True}, comment="keep line 15")
    )
    result = await task
    assert result.status == "completed"
    assert result.output == (
        "Applied 2 of 3 hunks to src/a.py (hunks 1, 3 applied; hunk 2 rejected). "
        "User comment: keep line 15"
    )
    assert (ws / "src" / "a.py").read_text() == _replace(
        ORIGINAL, {2: "LINE TWO\n", 28: "LINE TWENTY-EIGHT\n"}
    )
    assert queue.pending() == []


async def test_a_review_of_many_hunks_names_them_as_ranges(ws: Path) -> None:
    """*Accept all* over thousands of hunks: the result names runs of hunks as ranges
    (``hunks 1-3, 5-60 applied``), not every number (~30 KB for 5,000 hunks)."""
    old = "".join(f"line {n}\n" for n in range(1, 601))
    new = old
    for n in range(1, 601, 10):  # 60 hunks, 10 lines apart
        new = new.replace(f"line {n}\n", f"LINE {n}\n", 1)
    (ws / "many.txt").write_text(old)
    editor = GitAwareEditor(ws, mode="review")
    diff = "".join(
        f"@@\n line {n - 1}\n-line {n}\n+LINE {n}\n" if n > 1 else "@@\n-line 1\n+LINE 1\n"
        for n in range(1, 601, 10)
    )
    task, proposal = await _start_review(editor, op("update_file", "many.txt", diff))
    assert len(proposal.hunks) == 60
    verdicts = {h.id: h.id != 4 for h in proposal.hunks}
    editor.queue.resolve(proposal.id, ReviewOutcome.per_hunk(verdicts))
    result = await task
    assert result.output == (
        "Applied 59 of 60 hunks to many.txt (hunks 1-3, 5-60 applied; hunk 4 rejected)."
    )
    assert (ws / "many.txt").read_text() == new.replace("LINE 31\n", "line 31\n")


async def test_review_edited_hunk_lands(ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="review")
    task, proposal = await _start_review(editor, op("update_file", "src/a.py", THREE_CHANGES))
    hunk2 = proposal.hunks[1]
    edited = hunk2.new_text.replace("LINE FIFTEEN", "line fifteen, as the user wrote it")
    editor.queue.resolve(proposal.id, ReviewOutcome.per_hunk({1: True, 2: edited}))
    result = await task
    assert result.status == "completed"
    assert "Applied 2 of 3 hunks to src/a.py" in (result.output or "")
    assert "hunk 1 applied; hunk 2 applied with user edits; hunk 3 rejected" in (
        result.output or ""
    )
    assert "+line fifteen, as the user wrote it" in (result.output or "")
    assert (ws / "src" / "a.py").read_text() == _replace(
        ORIGINAL, {2: "LINE TWO\n", 15: "line fifteen, as the user wrote it\n"}
    )


async def test_review_whole_file_edit_lands(ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="review")
    task, proposal = await _start_review(editor, op("update_file", "src/a.py", THREE_CHANGES))
    final = (proposal.new_text or "") + "extra line by the user\n"
    editor.queue.resolve(proposal.id, ReviewOutcome.edited(final, comment="added a line"))
    result = await task
    assert result.status == "completed"
    assert "with the user's edits" in (result.output or "")
    assert "User comment: added a line" in (result.output or "")
    assert "+extra line by the user" in (result.output or "")
    assert (ws / "src" / "a.py").read_text() == final


async def test_review_reject_all_with_message(ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="review")
    task, proposal = await _start_review(editor, op("update_file", "src/a.py", THREE_CHANGES))
    editor.queue.resolve(proposal.id, ReviewOutcome.reject_all("use snake_case instead"))
    result = await task
    assert result.status == "failed"
    assert result.output == (
        "The user rejected the change to src/a.py; nothing was written. "
        "Reason: use snake_case instead"
    )
    assert (ws / "src" / "a.py").read_text() == ORIGINAL


async def test_review_every_hunk_rejected_is_a_failure(ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="review")
    task, proposal = await _start_review(editor, op("update_file", "src/a.py", THREE_CHANGES))
    editor.queue.resolve(proposal.id, ReviewOutcome.per_hunk({1: False}, comment="not now"))
    result = await task
    assert result.status == "failed"
    assert "rejected all 3 hunks" in (result.output or "")
    assert "User comment: not now" in (result.output or "")
    assert (ws / "src" / "a.py").read_text() == ORIGINAL


async def test_review_accept_all_create_and_delete(ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="review")
    task, proposal = await _start_review(editor, op("create_file", "new.txt", "+hello\n+"))
    assert proposal.old_text is None and proposal.base_fingerprint is None
    editor.queue.resolve(proposal.id, ReviewOutcome.accept_all(proposal))
    assert (await task).output == "Created new.txt."
    assert (ws / "new.txt").read_text() == "hello\n"

    task, proposal = await _start_review(editor, op("delete_file", "new.txt"))
    assert proposal.new_text is None
    editor.queue.resolve(proposal.id, ReviewOutcome.accept_all(proposal))
    assert (await task).output == "Deleted new.txt."
    assert not (ws / "new.txt").exists()


async def test_review_cancellation_withdraws_the_proposal(ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="review")
    events: list[str] = []
    editor.queue.add_listener(lambda e: events.append(e.type))
    task, proposal = await _start_review(editor, op("update_file", "src/a.py", THREE_CHANGES))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert editor.queue.pending() == []
    assert events == ["submitted", "withdrawn"]
    with pytest.raises(KeyError):
        editor.queue.resolve(proposal.id, ReviewOutcome.accept_all(proposal))
    assert (ws / "src" / "a.py").read_text() == ORIGINAL


# -- stale-write guard ---------------------------------------------------------------------


async def test_stale_target_is_reapplied_against_new_content(ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="review")
    task, proposal = await _start_review(editor, op("update_file", "src/a.py", THREE_CHANGES))
    # the user edits an unrelated line (and inserts one) while the proposal waits
    user_version = _replace(ORIGINAL, {8: "line 8 edited by the user\nline 8b\n"})
    (ws / "src" / "a.py").write_text(user_version)
    editor.queue.resolve(proposal.id, ReviewOutcome.per_hunk({1: True, 2: True, 3: False}))
    result = await task
    assert result.status == "completed"
    assert "file changed on disk since the proposal; re-applied against the new content" in (
        result.output or ""
    )
    assert (ws / "src" / "a.py").read_text() == _replace(
        user_version, {2: "LINE TWO\n", 16: "LINE FIFTEEN\n"}
    )


async def test_stale_target_that_conflicts_is_refused(ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="review")
    task, proposal = await _start_review(editor, op("update_file", "src/a.py", THREE_CHANGES))
    user_version = _replace(ORIGINAL, {15: "line 15 rewritten by the user\n"})
    (ws / "src" / "a.py").write_text(user_version)
    editor.queue.resolve(proposal.id, ReviewOutcome.accept_all(proposal))
    result = await task
    assert result.status == "failed"
    assert "changed on disk since the proposal" in (result.output or "")
    assert "Nothing was written" in (result.output or "")
    assert (ws / "src" / "a.py").read_text() == user_version


async def test_stale_create_and_delete_are_refused(ws: Path) -> None:
    editor = GitAwareEditor(ws, mode="review")
    task, proposal = await _start_review(editor, op("create_file", "fresh.txt", "+agent\n+"))
    (ws / "fresh.txt").write_text("user\n")
    editor.queue.resolve(proposal.id, ReviewOutcome.accept_all(proposal))
    result = await task
    assert result.status == "failed" and "created on disk since the proposal" in (
        result.output or ""
    )
    assert (ws / "fresh.txt").read_text() == "user\n"

    task, proposal = await _start_review(editor, op("delete_file", "src/a.py"))
    (ws / "src" / "a.py").write_text(ORIGINAL + "one more\n")
    editor.queue.resolve(proposal.id, ReviewOutcome.accept_all(proposal))
    result = await task
    assert result.status == "failed" and "was not deleted" in (result.output or "")
    assert (ws / "src" / "a.py").read_text() == ORIGINAL + "one more\n"
