"""What a reopened session restores before it goes on (issue 16, the safety model's "approval
modes per session"): the approval mode it ran in, and the policy's reason for each call that
waited for the user, so that asking again says why."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.policy import ApprovalMode
from core.tools.shell_patch import detect_shell_patches

from .journal import JournalError, SessionJournal

__all__ = [
    "MODE_EVENT",
    "UNUSED_KINDS",
    "discard_if_unused",
    "forget_approvals",
    "journaled_mode",
    "rejudge_waiting",
]

MODE_EVENT = "mode"
"""Journal kind of a session's approval mode: ``{"mode": "read-only" | "ask" | "auto" |
"full"}``, written when the session is created, when the user switches, and when a resume
gives ``--mode``."""

UNUSED_KINDS = frozenset({"user_message", "recording_base", MODE_EVENT, "owner", "run_failed"})
"""Event kinds of a session that never reached the model (a usage error): nothing worth
keeping."""


def journaled_mode(journal: SessionJournal, session_id: str) -> str | None:
    """The approval mode ``session_id`` last ran in: its latest ``mode`` event, else the mode
    its ``recording_base`` was captured in (sessions journaled before ``mode`` events).

    Returns:
        ``"read-only"``, ``"ask"``, ``"auto"`` or ``"full"``; ``None`` when the journal does
        not say, or says something that is not a mode (the caller keeps its own).

    Raises:
        JournalError: unknown session.
    """
    for kind in (MODE_EVENT, "recording_base"):
        events = journal.events(session_id, kinds=[kind], last=1)
        if not events:
            continue
        value = events[0].payload.get("mode")
        try:
            return str(ApprovalMode(str(value)))
        except ValueError:
            return None
    return None


def rejudge_waiting(workspace: Any, items: Iterable[Any]) -> None:
    """Judge again, under the workspace's current mode and rules, the shell calls of a saved
    run that waited for the user, so the prompt that asks them again gives the policy's
    reason and flags a destructive command (a new process has no verdict for them yet).

    This never answers a call: whatever the verdict says, the caller asks the user.

    Args:
        workspace: a :class:`harnesses.workspace.Workspace`; its ``decisions`` get an entry
            for each shell call without one.
        items: the saved run's interruptions (``ToolApprovalItem``).
    """
    from harnesses.workspace import PendingDecision

    for item in items:
        raw = item.raw_item if isinstance(item.raw_item, dict) else {}
        call_id = str(item.call_id)
        if raw.get("type") != "shell_call" or call_id in workspace.decisions:
            continue
        commands = [str(c) for c in raw.get("action", {}).get("commands", [])]
        if not commands or detect_shell_patches(commands) is not None:
            continue
        decision = workspace.decide_commands(commands)
        workspace.decisions[call_id] = PendingDecision(call_id, "command", decision, commands)


def forget_approvals(state: Any) -> None:
    """Drop every approval a saved run state carries, so only the user's answers on this
    resume let a call run (red team: a sticky ``approved: true`` record in an edited journal
    made a waiting call run although the resume rejected it, since a sticky approval wins
    over a per-call rejection in ``RunContextWrapper.is_tool_approved``).

    Rejections are kept (they only stop calls). Approvals "for this run" of MCP tools are
    asked again after a reopen. The approvals of nested runs (agents as tools) are dropped
    too.

    Args:
        state: a :class:`core.run_state.RunState` rebuilt from the journal (changed in
            place).
    """
    for record in state.context._approvals.values():
        record.approved = []
    for nested in state.context._nested_runs.values():
        if isinstance(nested, dict):
            _forget_json_approvals(nested)
        elif hasattr(nested, "context"):
            forget_approvals(nested)


def _forget_json_approvals(state_json: dict[str, Any]) -> None:
    context = state_json.get("context")
    if not isinstance(context, dict):
        return
    approvals = context.get("approvals")
    if isinstance(approvals, dict):
        for record in approvals.values():
            if isinstance(record, dict):
                record["approved"] = []
    nested_runs = context.get("nested_runs")
    if isinstance(nested_runs, dict):
        for nested in nested_runs.values():
            if isinstance(nested, dict):
                _forget_json_approvals(nested)


def discard_if_unused(journal: SessionJournal, session_id: str) -> bool:
    """Delete ``session_id`` when it holds only :data:`UNUSED_KINDS` events (issue 16: a
    run stopped by a usage error before its first model call leaves no session behind).

    Returns:
        Whether the session was deleted.
    """
    journal.flush()
    try:
        events = journal.events(session_id)
    except JournalError:
        return False
    if any(event.kind not in UNUSED_KINDS for event in events):
        return False
    journal.delete_session(session_id)
    return True
