"""GitAwareEditor applies diffs as real models write them and says how it matched (issue 13)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.tools.editor import ApplyPatchOperation
from core.tools.patch_envelope import parse_patch
from harnesses.editor import GitAwareEditor, Proposal, ReviewEvent, ReviewQueue

FILE = b"\xef\xbb\xbftitle = \xe2\x80\x9cHello\xe2\x80\x9d\r\nbody = 1\nend = 2\r\n"


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_bytes(FILE)
    return root


def _update(diff: str) -> ApplyPatchOperation:
    return ApplyPatchOperation(type="update_file", path="a.py", diff=diff)


async def test_immediate_mode_reports_the_fallback_and_keeps_bytes(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    editor = GitAwareEditor(root, mode="immediate")
    result = await editor.update_file(_update('@@\n-title = "Hello"\n+title = "Hi"\n body = 1\n'))
    assert result.status == "completed"
    assert result.output == (
        "Updated a.py\nNote: matched after normalising quotes on 1 line (line 1)."
    )
    # BOM kept, the replaced line keeps its CRLF, untouched lines keep their own endings
    assert (root / "a.py").read_bytes() == b'\xef\xbb\xbftitle = "Hi"\r\nbody = 1\nend = 2\r\n'


async def test_review_proposal_carries_the_notes(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    queue = ReviewQueue()
    editor = GitAwareEditor(root, mode="review", queue=queue)
    submitted: asyncio.Queue[Proposal] = asyncio.Queue()

    def listener(event: ReviewEvent) -> None:
        if event.type == "submitted":
            submitted.put_nowait(event.proposal)

    queue.add_listener(listener)
    task = asyncio.create_task(editor.update_file(_update("@@\n-end  =  2\n+end = 3\n")))
    proposal = await asyncio.wait_for(submitted.get(), 30)
    assert proposal.notes == ("matched after ignoring whitespace differences on 1 line (line 3)",)
    queue.withdraw(proposal.id)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert (root / "a.py").read_bytes() == FILE


async def test_envelope_operation_follows_the_codex_cli(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    editor = GitAwareEditor(root, mode="immediate")
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n@@ nowhere\n-body = 1\n+body = 5\n*** End Patch"
    )
    (action,) = parse_patch(patch)
    result = await editor.update_file(action.to_operation())
    assert result.status == "failed"
    assert "Invalid Anchor 0:\nnowhere" in (result.output or "")
    assert (root / "a.py").read_bytes() == FILE
    # the same hunk as an apply_patch_call (reference SDK): a single anchor is only a hint
    result = await editor.update_file(_update(action.diff or ""))
    assert result.status == "completed"
    assert b"body = 5\n" in (root / "a.py").read_bytes()
