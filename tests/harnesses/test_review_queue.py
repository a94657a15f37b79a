"""ReviewQueue semantics and the hunk arithmetic behind per-hunk review."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.tools.editor import ApplyPatchOperation
from harnesses.editor import (
    HunkDecision,
    Proposal,
    ReviewEvent,
    ReviewOutcome,
    ReviewQueue,
    compute_hunks,
    rebuild,
)
from harnesses.editor.hunks import HunkRelocationError, relocate


def _proposal(pid: str, old: str = "a\nb\n", new: str = "a\nB\n") -> Proposal:
    return Proposal(
        id=pid,
        operation=ApplyPatchOperation(type="update_file", path="f.txt", diff="@@\n-b\n+B\n"),
        path="f.txt",
        move_to=None,
        old_text=old,
        new_text=new,
        hunks=tuple(compute_hunks(old, new)),
        created_at=time.time(),
        base_fingerprint=None,
    )


async def test_submit_pending_resolve_and_listeners() -> None:
    queue = ReviewQueue()
    events: list[ReviewEvent] = []
    remove = queue.add_listener(events.append)
    first, second = _proposal("p1"), _proposal("p2")
    fut1, fut2 = queue.submit(first), queue.submit(second)
    assert [p.id for p in queue.pending()] == ["p1", "p2"]
    assert queue.get("p2") is second
    outcome = ReviewOutcome.accept_all(second, comment="ok")
    queue.resolve("p2", outcome)
    assert await fut2 is outcome
    assert [p.id for p in queue.pending()] == ["p1"]
    assert [(e.type, e.proposal.id) for e in events] == [
        ("submitted", "p1"),
        ("submitted", "p2"),
        ("resolved", "p2"),
    ]
    assert events[-1].outcome is outcome
    remove()
    queue.resolve("p1", ReviewOutcome.reject_all("no"))
    assert (await fut1).rejected
    assert len(events) == 3  # unsubscribed
    with pytest.raises(KeyError):
        queue.resolve("p1", ReviewOutcome.reject_all())


async def test_duplicate_submit_rejected_and_listener_errors_ignored() -> None:
    queue = ReviewQueue()

    def broken(event: ReviewEvent) -> None:
        raise RuntimeError("listener bug")

    queue.add_listener(broken)
    fut = queue.submit(_proposal("p"))
    with pytest.raises(ValueError):
        queue.submit(_proposal("p"))
    queue.resolve("p", ReviewOutcome.reject_all())
    assert (await fut).rejected


async def test_cancelling_the_waiter_withdraws() -> None:
    queue = ReviewQueue()
    submitted, withdrawn = asyncio.Event(), asyncio.Event()
    queue.add_listener(lambda e: submitted.set() if e.type == "submitted" else None)
    queue.add_listener(lambda e: withdrawn.set() if e.type == "withdrawn" else None)

    async def waiter() -> ReviewOutcome:
        return await queue.submit(_proposal("p"))

    task = asyncio.create_task(waiter())
    await submitted.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await withdrawn.wait()
    assert queue.pending() == []


async def test_explicit_withdraw() -> None:
    queue = ReviewQueue()
    fut = queue.submit(_proposal("p"))
    assert queue.withdraw("p") is True
    assert queue.withdraw("p") is False
    assert fut.cancelled() and queue.pending() == []


async def test_resolve_from_another_thread() -> None:
    queue = ReviewQueue()
    proposal = _proposal("p")
    fut = queue.submit(proposal)
    outcome = ReviewOutcome.accept_all(proposal)
    thread = threading.Thread(target=queue.resolve, args=("p", outcome))
    thread.start()
    assert await fut is outcome
    thread.join()
    assert queue.pending() == []


def test_outcome_builders() -> None:
    built = ReviewOutcome.per_hunk({1: True, 2: False, 3: "edited\n"}, comment="c")
    assert built.decisions == {
        1: HunkDecision(True),
        2: HunkDecision(False),
        3: HunkDecision(True, "edited\n"),
    }
    assert built.comment == "c" and not built.rejected
    assert ReviewOutcome.reject_all("why").message == "why"
    assert ReviewOutcome.edited("x").edited_text == "x"


# -- hunks -----------------------------------------------------------------------------------

_line = st.sampled_from(["a\n", "b\n", "c\n", "d\r\n", "e", "\n", "f\n"])
_text = st.lists(_line, max_size=25).map("".join)


@settings(max_examples=200, deadline=None)
@given(old=_text, new=_text, pick=st.lists(st.booleans(), max_size=30))
def test_rebuild_all_none_and_subsets(old: str, new: str, pick: list[bool]) -> None:
    hunks = compute_hunks(old, new, context=1)
    assert [h.id for h in hunks] == list(range(1, len(hunks) + 1))
    assert rebuild(old, hunks, {h.id: h.new_text for h in hunks}) == new
    assert rebuild(old, hunks, {}) == old
    chosen = {h.id: h.new_text for h, keep in zip(hunks, pick, strict=False) if keep}
    partial = rebuild(old, hunks, chosen)
    # accepting the remaining hunks on top of the partial result gives the full new text
    rest = [h for h in hunks if h.id not in chosen]
    assert rebuild(old, hunks, {**chosen, **{h.id: h.new_text for h in rest}}) == new
    if not rest:
        assert partial == new
    if not chosen:
        assert partial == old


def test_hunk_header_and_counts() -> None:
    old = "".join(f"{i}\n" for i in range(1, 11))
    new = old.replace("5\n", "five\n")
    (hunk,) = compute_hunks(old, new)
    assert hunk.header == "@@ -2,7 +2,7 @@"
    assert (hunk.added, hunk.removed) == (1, 1)
    assert hunk.lines[3:5] == ("-5", "+five")
    (created,) = compute_hunks("", "x\ny\n")
    assert created.header == "@@ -0,0 +1,2 @@"


def test_relocate_follows_shifted_context_and_refuses_conflicts() -> None:
    old = "".join(f"{i}\n" for i in range(1, 21))
    new = old.replace("10\n", "ten\n")
    hunks = compute_hunks(old, new)
    shifted = "0a\n0b\n" + old
    assert relocate(shifted, hunks) == "0a\n0b\n" + new
    with pytest.raises(HunkRelocationError):
        relocate(old.replace("9\n", "nine\n"), hunks)
