"""Patch reviews in ``tandem run`` (issue 16, Build item 2): the review queue's
``submitted`` proposals answered by ``--yes``, refused without a terminal, or reviewed hunk by
hunk (:mod:`.review_tty`); journaled as the window's ``proposal`` / ``proposal_closed``."""

from __future__ import annotations

import asyncio
import difflib
from typing import Any

from harnesses.editor import ReviewOutcome
from harnesses.workspace import Workspace

from ..review_journal import proposal_record
from .header import plural
from .review_tty import review_per_hunk
from .terminal import CliRun, in_thread

__all__ = ["on_review_event"]


def on_review_event(event: Any, workspace: Workspace, run: CliRun) -> None:
    """Handle one event of the workspace's review queue during a ``tandem run``.

    A ``submitted`` proposal is journaled (``proposal``), announced (``approval.requested``
    with ``kind: "review"`` on the ``--json`` stream, ``docs/tandem-run.md``) and answered
    by a task started on the running loop: the recorded review under ``tandem replay``,
    all hunks with ``--yes``, rejected without a terminal, else hunk by hunk on the
    terminal (:func:`.review_tty.review_per_hunk`). Any other event closes the proposal in
    the journal (``proposal_closed``). Returns at once; a failing answer rejects the
    proposal, so the run never waits forever.

    Args:
        event: a review queue event (``type`` and ``proposal``).
        workspace: the run's workspace; its review queue gets the outcome.
        run: the CLI run (options, output stream, prompt, journal, events, counters).

    Raises:
        RuntimeError: no event loop is running in this thread.
    """
    options, out = run.options, run.out
    proposal = event.proposal
    if event.type != "submitted":
        run.journal.append("proposal_closed", {"id": proposal.id, "how": event.type})
        return
    run.journal.append("proposal", proposal_record(proposal, run.patch_call))
    print(
        f"\n[review] {proposal.kind} {proposal.path} ({plural(len(proposal.hunks), 'hunk')})",
        file=out,
    )
    run.events.emit(
        "approval.requested",
        call_id=run.patch_call,
        tool="apply_patch",
        kind="review",
        path=proposal.path,
        hunks=len(proposal.hunks),
        destructive=False,
    )

    async def answer() -> None:
        by = "user"
        if options.answers is not None:  # tandem replay: the recorded review
            outcome, by = options.answers.review(proposal, run.patch_call), "replay"
        elif options.yes or options.yes_destructive:
            outcome, by = ReviewOutcome.accept_all(proposal), "--yes"
            out.write(_unified(proposal))
            print("  applied (--yes)", file=out)
        elif not options.interactive:
            out.write(_unified(proposal))
            outcome, by = (
                ReviewOutcome.reject_all("Not applied: tandem run is non-interactive in ask mode."),
                "no-tty",
            )
            print("  rejected (no terminal)", file=out)
        else:
            outcome = await in_thread(review_per_hunk, proposal, out, run.prompt)
        if outcome.rejected:
            run.rejected += 1
        accepted = sorted(h for h, d in outcome.decisions.items() if d.accepted)
        run.events.emit(
            "item.updated",
            item={
                "id": run.patch_call,
                "type": "file_change",
                "review": "rejected" if outcome.rejected else "applied",
                "accepted_hunks": accepted,
                "decided_by": by,
                "comment": outcome.comment or outcome.message,
            },
        )
        workspace.review_queue.resolve(proposal.id, outcome)

    task = asyncio.get_running_loop().create_task(_guarded(answer(), proposal, workspace, run))
    _pending.add(task)
    task.add_done_callback(_pending.discard)


async def _guarded(answer: Any, proposal: Any, workspace: Workspace, run: CliRun) -> None:
    """Run a review's answer; a failure rejects the proposal (the run never waits forever)."""
    try:
        await answer
    except Exception as exc:
        print(f"  review failed ({type(exc).__name__}: {exc}); rejected", file=run.out)
        run.rejected += 1
        if workspace.review_queue.get(proposal.id) is not None:
            workspace.review_queue.resolve(
                proposal.id, ReviewOutcome.reject_all("Not applied: the review failed.")
            )


def _unified(proposal: Any) -> str:
    return "".join(
        difflib.unified_diff(
            (proposal.old_text or "").splitlines(keepends=True),
            (proposal.new_text or "").splitlines(keepends=True),
            f"a/{proposal.path}",
            f"b/{proposal.move_to or proposal.path}",
        )
    )


_pending: set[asyncio.Task[None]] = set()
