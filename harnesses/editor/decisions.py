"""Turning a review outcome into what to write and what to tell the model."""

from __future__ import annotations

from dataclasses import dataclass

from core.tools.editor import ApplyPatchResult

from .hunks import rebuild, unified_diff
from .review import Proposal, ReviewOutcome

__all__ = ["Plan", "decide", "describe"]


@dataclass(slots=True)
class Plan:
    """What to write once the decision is known.

    ``desired`` is the target content (``None`` = delete the file); ``may_rediff`` allows
    the stale guard to fall back to re-running the original V4A diff (only when the whole
    proposal landed unedited).
    """

    desired: str | None
    may_rediff: bool


def describe(proposal: Proposal, plan: Plan) -> str:
    """The one-line result of landing ``plan``: ``"Updated src/a.py"``, ``"Created ..."``,
    ``"Deleted ..."`` or ``"Updated a → b"`` (spec §5.3 output)."""
    if plan.desired is None:
        return f"Deleted {proposal.path}"
    if proposal.kind == "create_file":
        if proposal.old_text is not None:
            return f"Created {proposal.path} (replacing the existing file)"
        return f"Created {proposal.path}"
    if proposal.move_to:
        return f"Updated {proposal.path} → {proposal.move_to}"
    return f"Updated {proposal.path}"


def _ids(label: str, ids: list[int], suffix: str) -> str:
    """``"hunks 1, 3, 5-4999 applied"``: a run of three or more ids in a row as a range
    (an *Accept all* over thousands of hunks listed every number, ~30 KB of tool output)."""
    noun = label if len(ids) == 1 else f"{label}s"
    parts: list[str] = []
    start = prev = None
    for i in [*sorted(ids), None]:
        if i is not None and prev is not None and i == prev + 1:
            prev = i
            continue
        if start is not None and prev is not None:
            if prev - start >= 2:
                parts.append(f"{start}-{prev}")
            else:
                parts.extend(str(n) for n in range(start, prev + 1))
        start = prev = i
    return f"{noun} {', '.join(parts)} {suffix}"


def _with_comment(text: str, comment: str | None) -> str:
    return f"{text} User comment: {comment}" if comment else text


def _with_edits(text: str, edits: str) -> str:
    return f"{text}\nUser edits to your proposal:\n{edits.rstrip()}" if edits else text


def decide(proposal: Proposal, outcome: ReviewOutcome) -> ApplyPatchResult | tuple[Plan, str]:
    """Turn the user's outcome into a write plan and the model-visible summary."""
    path = proposal.path
    if outcome.rejected:
        text = f"The user rejected the change to {path}; nothing was written."
        if outcome.message:
            text += f" Reason: {outcome.message}"
        return ApplyPatchResult(status="failed", output=_with_comment(text, outcome.comment))
    proposed = proposal.new_text
    if outcome.edited_text is not None:
        desired: str | None = outcome.edited_text
        base = describe(proposal, Plan(desired, False))
        text = f"{base} with the user's edits (the user edited the proposed file)."
        edits = unified_diff(proposed or "", outcome.edited_text, path)
        return Plan(desired, False), _with_edits(_with_comment(text, outcome.comment), edits)
    hunks = proposal.hunks
    total = len(hunks)
    if total == 0:
        plan = Plan(proposed, True)
        return plan, _with_comment(f"{describe(proposal, plan)}.", outcome.comment)
    replacements: dict[int, str] = {}
    applied: list[int] = []
    edited: list[int] = []
    rejected: list[int] = []
    for hunk in hunks:
        decision = outcome.decisions.get(hunk.id)
        if decision is None or not decision.accepted:
            rejected.append(hunk.id)
        elif decision.edited_text is not None and decision.edited_text != hunk.new_text:
            replacements[hunk.id] = decision.edited_text
            edited.append(hunk.id)
        else:
            replacements[hunk.id] = hunk.new_text
            applied.append(hunk.id)
    landed = len(applied) + len(edited)
    if landed == 0:
        noun = "hunk" if total == 1 else f"all {total} hunks"
        text = f"The user rejected {noun} of the change to {path}; nothing was written."
        return ApplyPatchResult(status="failed", output=_with_comment(text, outcome.comment))
    whole = not rejected and not edited
    if whole:
        desired = proposed
    else:
        # a partially accepted new file is created with the accepted hunks only
        desired = rebuild(proposal.old_text or "", hunks, replacements)
    plan = Plan(desired, whole)
    verb = describe(proposal, plan)
    if whole:
        text = f"{verb} (all {total} hunks accepted)." if total > 1 else f"{verb}."
        return plan, _with_comment(text, outcome.comment)
    parts: list[str] = []
    if applied:
        parts.append(_ids("hunk", applied, "applied"))
    if edited:
        parts.append(_ids("hunk", edited, "applied with user edits"))
    if rejected:
        parts.append(_ids("hunk", rejected, "rejected"))
    target = f"{path} → {proposal.move_to}" if proposal.move_to else path
    text = _with_comment(
        f"Applied {landed} of {total} hunks to {target} ({'; '.join(parts)}).", outcome.comment
    )
    if edited and desired is not None:
        intended = rebuild(
            proposal.old_text or "",
            hunks,
            {h.id: h.new_text for h in hunks if h.id in replacements},
        )
        text = _with_edits(text, unified_diff(intended, desired, path))
    return plan, text
