"""Approvals in ``tandem run`` (issue 16, Build item 2): asked on the terminal, ``--yes``
(not destructive commands), ``--yes-destructive``, rejected without a terminal; each
journaled as the window's ``approval`` event and sent as ``approval.requested``."""

from __future__ import annotations

from typing import Any

from harnesses.mcp import LocalMcpServers
from harnesses.workspace import Workspace

from ..views.ansi import strip_ansi
from .setup import always_allow_rules, describe_rules
from .terminal import CliRun, in_thread

__all__ = ["decide"]


async def decide(
    item: Any,
    state: Any,
    workspace: Workspace,
    run: CliRun,
    mcp: LocalMcpServers | None = None,
) -> None:
    """Ask about one pending approval of a ``tandem run`` and record the answer in ``state``.

    Prints what asks (the command with the guard's reason, or an MCP server's tool with its
    arguments), says first which checkpoint a destructive command gets, emits
    ``approval.requested`` and ``item.updated`` on the ``--json`` stream
    (``docs/tandem-run.md``) and journals an ``approval`` event like the window's. The answer
    comes from the recording (``tandem replay``), ``--yes`` / ``--yes-destructive``, the
    terminal (``y``/``a``/``n``; *always* adds the narrow rules of
    :func:`.setup.always_allow_rules` for this run), or is a rejection without a terminal.

    Args:
        item: a ``ToolApprovalItem`` of ``state.get_interruptions()``.
        state: the paused ``RunState``; ``approve``/``reject`` is called on it.
        workspace: the run's workspace (the guard's reasons and decisions, its rules).
        run: the CLI run (options, output stream, prompt, journal, events, counters).
        mcp: the local MCP servers, to name a local server's tool; ``None`` when none run.

    Raises:
        asyncio.CancelledError: the run was interrupted (Ctrl+C) while asking.
    """
    out = run.out
    raw = item.raw_item if isinstance(item.raw_item, dict) else {}
    local = mcp.describe_call(str(item.tool_name), str(item.arguments or "")) if mcp else None
    if local is not None:  # issue 18: server, tool and the arguments pretty-printed
        server, tool, pretty = local
        print(f"\n[approval] MCP {server} > {tool}", file=out)
        for line in pretty.splitlines():
            print(f"  {strip_ansi(line)}", file=out)
        print(f"  the MCP server {server!r} asks before this tool runs", file=out)
        reason = f"the MCP server {server!r} asks before this tool runs"
    elif raw.get("type") == "mcp_approval_request":
        reason = f"the MCP server {raw.get('server_label')!r} asks before each tool call"
    else:
        reason = workspace.reason_for(item.call_id) or "the tool asks for approval"
    if local is None:
        print(
            f"\n[approval] {item.tool_name}: {strip_ansi(str(item.arguments))}\n  {reason}",
            file=out,
        )
    pending = workspace.decisions.get(item.call_id)
    destructive = bool(pending is not None and pending.decision.checkpoint_required) or (
        "destructive" in reason
    )
    if pending is not None and pending.decision.checkpoint_required:
        found = await workspace.recoverability(pending.decision)
        print(f"  checkpoint first: {found.summary()}", file=out)
    run.events.emit(
        "approval.requested",
        call_id=str(item.call_id),
        tool=str(item.tool_name),
        arguments=str(item.arguments or ""),
        reason=reason,
        destructive=destructive,
    )
    decision, message, by = await _answer(item, workspace, run, destructive)
    run.journal.append(
        "approval", {"call_id": item.call_id, "decision": decision, "message": message}
    )
    run.events.emit(
        "item.updated",
        item={"id": str(item.call_id), "approval": decision, "decided_by": by, "message": message},
    )
    if decision == "reject":
        run.rejected += 1
        run.rejected_calls.add(str(item.call_id))  # its output reads "rejected", not "(exit 1)"
        state.reject(item, rejection_message=message or None)
    else:
        state.approve(item)


async def _answer(
    item: Any, workspace: Workspace, run: CliRun, destructive: bool
) -> tuple[str, str, str]:
    """``(decision, message, decided_by)``: ``approve``/``always_allow``/``reject``, the
    message for the model, and ``user``/``--yes``/``--yes-destructive``/``no-tty``."""
    options, out, prompt = run.options, run.out, run.prompt
    if options.answers is not None:  # tandem replay: the recorded decision (docs/record-replay.md)
        decision, message, by = options.answers.approval(item)
        return str(decision), str(message), str(by)
    if destructive and options.yes_destructive:
        print("  approved (--yes-destructive)", file=out)
        return "approve", "", "--yes-destructive"
    if not destructive and (options.yes or options.yes_destructive):
        print("  approved (--yes)", file=out)
        return "approve", "", "--yes"
    if not options.interactive:
        message = "Not approved: tandem run is non-interactive; ask the user."
        if destructive and options.yes:
            message = (
                "Not approved: destructive commands need --yes-destructive without a terminal."
            )
        print("  rejected (no terminal)", file=out)
        return "reject", message, "no-tty"
    try:
        answer = (
            (await in_thread(prompt, "  allow once [y], always [a], reject [n]: ")).strip().lower()
        )
    except EOFError:
        print("  rejected (end of input)", file=out)
        return "reject", "Not approved: the user's input ended.", "no-tty"
    if answer in ("y", "yes"):
        return "approve", "", "user"
    if answer in ("a", "always"):
        commands = [str(c) for c in item.raw_item.get("action", {}).get("commands", [])]
        # narrow rules for this line's commands, never the whole tool (guards stay on)
        added = always_allow_rules(commands[0], workspace) if len(commands) == 1 else []
        workspace.rules.extend(added)
        if added:
            print(f"  always allowing {describe_rules(added)} for this run", file=out)
        else:
            print("  allowed once (no rule can match this command)", file=out)
        return "always_allow", "", "user"
    try:
        message = (await in_thread(prompt, "  message to the model (optional): ")).strip()
    except EOFError:
        message = ""
    return "reject", message, "user"
