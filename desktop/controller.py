"""The one bridge between core and Qt: runs the agent and re-emits what happens as signals.

Only this object awaits core. Views get plain values through signals and answer through the
controller's slots; approvals and patch reviews never block (the run waits on futures the
slots resolve).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from core import (
    Agent,
    RunConfig,
    Runner,
    RunState,
    UserError,
)
from core.items import ToolApprovalItem
from core.policy import RuleStore, suggest_rule
from core.redaction import StreamRedactor, redact_text
from core.tools.codex.events import (
    AgentMessageItem,
    CommandExecutionItem,
    FileChangeItem,
    TodoListItem,
)
from harnesses.editor import HunkDecision as EditorHunkDecision
from harnesses.editor import Proposal, ReviewEvent, ReviewOutcome
from harnesses.shell import ShellCommandFinished, ShellCommandStarted, ShellEvent, ShellOutputChunk
from harnesses.workspace import Workspace

from .event_relay import EventRelay
from .views.approval_panel import ApprovalRequest
from .views.diff_highlight import lexer_for_path

__all__ = ["Controller"]

logger = logging.getLogger("desktop")

AgentFactory = Callable[[Workspace], Agent[Any]]


class Controller(QObject):
    """Owns the run task of the current session.

    Args:
        workspace: the repository's tools, review queue, checkpoints and policy.
        agent_factory: builds the agent for the workspace (model, instructions, tools).
        run_config: passed to every run.
        rules_store: where *Always allow* rules are persisted (``None``: this session only).
        journal: optional session journal; every event is appended as it happens.
    """

    userMessage = Signal(str)
    assistantDelta = Signal(str, str)
    assistantDone = Signal(str, str)
    reasoning = Signal(str, str)
    toolStarted = Signal(str, str, str, str)
    toolUpdated = Signal(str, str, object, str)
    #: A card's rich content: (call id, ``desktop.activity.CardBody``); sent again as it grows.
    toolBody = Signal(str, object)
    #: The sources an assistant message cites: (item id, list of ``desktop.activity.Link``).
    citations = Signal(str, object)
    #: The entry created next with this id (message, reasoning or card) belongs to the nested
    #: run of the agent-tool card ``parent call id``: (entry id, parent call id).
    nestedEntry = Signal(str, str)
    notice = Signal(str, str)
    runningChanged = Signal(bool)
    usageChanged = Signal(int, int, int)
    approvalRequested = Signal(object)
    approvalWithdrawn = Signal(str)
    proposalSubmitted = Signal(object)
    proposalClosed = Signal(str)
    commandStarted = Signal(str, str, str, object, str, object)
    commandOutput = Signal(str, str, str)
    commandFinished = Signal(str, object, str, int)
    checkpointsChanged = Signal(object)
    checkpointDiffReady = Signal(str, str, str)
    modeChanged = Signal(str)

    def __init__(
        self,
        workspace: Workspace,
        agent_factory: AgentFactory,
        *,
        run_config: RunConfig | None = None,
        rules_store: RuleStore | None = None,
        journal: Any = None,
        session_id: str | None = None,
        max_turns: int = 100,
    ) -> None:
        super().__init__()
        self.workspace = workspace
        self._agent_factory = agent_factory
        self._agent = agent_factory(workspace)
        self._run_config = run_config or RunConfig()
        self._rules_store = rules_store
        self.journal = journal
        self.session_id = session_id
        self._max_turns = max_turns
        self._history: list[dict[str, Any]] = []
        self._task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._approvals: dict[str, asyncio.Future[tuple[str, str]]] = {}
        self._pids: dict[str, int] = {}
        self._redactors: dict[tuple[str, str], StreamRedactor] = {}
        self._codex_blocks: dict[str, float] = {}
        self._relay = EventRelay(self, self._journal, str(workspace.root))
        self._relay.watch_agent_tools(self._agent)
        self.workspace.executor.listener = self._on_shell_event
        self._unsubscribe_review = self.workspace.review_queue.add_listener(self._on_review_event)

    # -- state -------------------------------------------------------------------------------
    @property
    def is_running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def agent(self) -> Agent[Any]:
        return self._agent

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _journal(self, kind: str, payload: dict[str, Any]) -> None:
        if self.journal is None or self.session_id is None:
            return
        try:
            self.journal.append_nowait(self.session_id, kind, payload)
        except Exception:
            logger.exception("journal append failed")

    def _journal_state(self, state_json: str | None, status: str) -> None:
        if self.journal is None or self.session_id is None:
            return
        try:
            # scrub + write on the journal's writer thread, in order with the events
            self.journal.save_state_nowait(self.session_id, state_json, status)
        except Exception:
            logger.exception("journal run-state save failed")

    def load_session(self, session_id: str) -> None:
        """Show a journaled session's transcript and continue it: its conversation history is
        restored and pending approvals (from the saved ``RunState``) are asked again."""
        self.session_id = session_id
        if self.journal is None:
            return
        self._relay.replaying = True
        try:
            self._replay(session_id)
        finally:
            self._relay.replaying = False
        saved = self.journal.load_run_state(session_id)
        if saved:
            self._spawn(self._resume_saved(saved))

    def _replay(self, session_id: str) -> None:
        assert self.journal is not None
        for event in self.journal.events(session_id):
            payload = event.payload
            if event.kind == "user_message":
                self.userMessage.emit(str(payload.get("text", "")))
            elif event.kind == "history":
                self._history = list(payload.get("items", []))
            elif event.kind in ("run_failed", "run_cancelled"):
                self.notice.emit(f"(earlier) run {event.kind.removeprefix('run_')}", "info")
            elif isinstance(payload.get("item"), dict):
                parent = str(payload.get("parent", ""))
                self._relay.show_item(event.kind, payload["item"], None, parent)

    async def _resume_saved(self, saved: str) -> None:
        try:
            state = await RunState.from_string(self._agent, saved)
        except Exception as exc:
            self.notice.emit(f"Cannot resume the saved run: {exc}", "error")
            return
        if state.get_interruptions():
            self.notice.emit("This session was waiting for your approval; asking again.", "info")
            self.resume(state)

    def set_agent_factory(
        self, agent_factory: AgentFactory, run_config: RunConfig | None = None
    ) -> None:
        """Use a new agent (and run config) from the next run on, e.g. after the settings
        changed the model or the tools; a run going on keeps the agent it started with."""
        self._agent_factory = agent_factory
        if run_config is not None:
            self._run_config = run_config
        self._agent = agent_factory(self.workspace)
        self._relay.watch_agent_tools(self._agent)

    # -- slots from the window -----------------------------------------------------------------
    @Slot(str)
    def submit(self, text: str) -> None:
        """Start a run with the user's message (ignored while a run is going on)."""
        text = text.strip()
        if not text:
            return
        if self.is_running:
            self.notice.emit(
                "A run is in progress; stop it first or wait for it to finish.", "warning"
            )
            return
        self.userMessage.emit(text)
        self._journal("user_message", {"text": text})
        run_input = [*self._history, {"content": text, "role": "user"}]
        self._task = self._spawn(self._run(run_input))

    def resume(self, state: RunState) -> None:
        """Continue a saved run (pending approvals are asked again)."""
        if not self.is_running:
            self._task = self._spawn(self._run(state))

    @Slot()
    def stop(self) -> None:
        """Cancel the run cleanly: running tools are cancelled, pending questions withdrawn."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    @Slot(str, str, str)
    def decide(self, request_id: str, decision: str, message: str) -> None:
        """An answer from the approval panel: ``allow_once`` | ``always_allow`` | ``reject``."""
        future = self._approvals.pop(request_id, None)
        if future is not None and not future.done():
            future.set_result((decision, message))

    @Slot(str, object, str)
    def apply_review(self, proposal_id: str, decisions: Any, comment: str) -> None:
        """The diff view's *Apply reviewed*: per-hunk verdicts, edits and a comment."""
        chosen: dict[int, EditorHunkDecision] = {}
        notes: list[str] = []
        for hunk_id, decision in dict(decisions).items():
            if decision.accepted:
                chosen[int(hunk_id)] = EditorHunkDecision(True, decision.edited_text)
            if decision.comment:
                notes.append(f"hunk {hunk_id}: {decision.comment}")
        text = "; ".join([*([comment] if comment else []), *notes]) or None
        outcome = ReviewOutcome(decisions=chosen, comment=text)
        if not chosen:
            outcome = ReviewOutcome.reject_all(text or "The user rejected every hunk.")
        try:
            self.workspace.review_queue.resolve(proposal_id, outcome)
        except KeyError:
            self.notice.emit("That proposal is no longer pending.", "warning")

    @Slot(str)
    def set_mode(self, mode: str) -> None:
        """Switch the approval mode for the next decisions."""
        self.workspace.set_mode(mode)
        self.modeChanged.emit(str(self.workspace.mode))
        self._journal("mode", {"mode": str(self.workspace.mode)})

    @Slot(str)
    def kill_command(self, block_id: str) -> None:
        """Kill a running command's process group (the terminal view's kill button)."""
        pid = self._pids.get(block_id)
        if pid is not None:
            self.workspace.kill_process_group(pid)

    @Slot()
    def refresh_checkpoints(self) -> None:
        self._spawn(self._refresh_checkpoints())

    @Slot(str, str)
    def diff_checkpoints(self, a: str, b: str) -> None:
        self._spawn(self._diff(a, b or None))

    @Slot(str)
    def restore_checkpoint(self, checkpoint_id: str) -> None:
        self._spawn(self._restore(checkpoint_id))

    @Slot()
    def undo_restore(self) -> None:
        self._spawn(self._undo_restore())

    async def shutdown(self) -> None:
        """Cancel every task and wait for them (window close)."""
        self._unsubscribe_review()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- the run -------------------------------------------------------------------------------
    async def _run(self, run_input: Any) -> None:
        self.runningChanged.emit(True)
        try:
            state: Any = run_input
            while True:
                result = Runner.run_streamed(
                    self._agent,
                    state,
                    hooks=self.workspace.hooks(),
                    run_config=self._run_config,
                    max_turns=self._max_turns,
                )
                self._relay.current = result
                async for event in result.stream_events():
                    self._relay.on_event(event, result)
                usage = result.context_wrapper.usage
                self.usageChanged.emit(usage.input_tokens, usage.output_tokens, usage.total_tokens)
                await self._refresh_checkpoints()
                if not result.interruptions:
                    self._history = result.to_input_list()
                    self._journal("history", {"items": self._history})
                    self._journal("run_finished", {"final_output": str(result.final_output)})
                    self._journal_state(None, "completed")
                    break
                state = result.to_state()
                self._journal_state(state.to_string(), "awaiting_approval")
                await self._ask(result.interruptions, state)
                self._journal_state(None, "active")
        except asyncio.CancelledError:
            self.notice.emit("Run stopped.", "info")
            self._withdraw_all()
            self._journal("run_cancelled", {})
            self._journal_state(None, "cancelled")
        except Exception as exc:
            logger.exception("run failed")
            self.notice.emit(f"{type(exc).__name__}: {exc}", "error")
            self._withdraw_all()
            self._journal("run_failed", {"error": f"{type(exc).__name__}: {exc}"})
            self._journal_state(None, "failed")
        finally:
            self.runningChanged.emit(False)

    async def _ask(self, items: list[ToolApprovalItem], state: RunState) -> None:
        loop = asyncio.get_running_loop()
        waiting: list[tuple[ToolApprovalItem, asyncio.Future[tuple[str, str]]]] = []
        for item in items:
            future: asyncio.Future[tuple[str, str]] = loop.create_future()
            self._approvals[item.call_id] = future
            waiting.append((item, future))
            self.toolUpdated.emit(
                item.call_id, "waiting-approval", None, "waiting for your approval"
            )
            self.approvalRequested.emit(self._approval_request(item))
        for item, future in waiting:
            decision, message = await future
            self._journal("approval", {"call_id": item.call_id, "decision": decision})
            if decision == "reject":
                state.reject(item, rejection_message=message or None)
                self.toolUpdated.emit(item.call_id, "rejected", None, message or "rejected by you")
                continue
            if decision == "always_allow" and item.raw_item.get("type") == "mcp_approval_request":
                state.approve(item, always_approve=True)  # this tool of this server, this run
                self._relay.restart_clock(item.call_id)
                self.toolUpdated.emit(item.call_id, "running", None, "approved for this run")
                continue
            if decision == "always_allow":
                self._always_allow(item)
            state.approve(item)
            self._relay.restart_clock(item.call_id)
            self.toolUpdated.emit(item.call_id, "running", None, "approved")

    def _approval_request(self, item: ToolApprovalItem) -> ApprovalRequest:
        raw = item.raw_item
        reason = (
            self.workspace.reason_for(item.call_id)
            or f"the tool `{item.tool_name}` asks for approval"
        )
        if raw.get("type") == "shell_call":
            commands = [str(c) for c in raw.get("action", {}).get("commands", [])]
            body = "\n".join(commands)
            preview = _rule_preview(commands[0]) if commands else None
            destructive = "destructive" in reason
            return ApprovalRequest(
                item.call_id, "command", "Run a shell command", body, reason, preview, destructive
            )
        if raw.get("type") == "apply_patch_call":
            op = raw.get("operation", {})
            body = f"{op.get('type')} {op.get('path')}"
            return ApprovalRequest(
                item.call_id, "patch", "Change a file", body, reason, None, False
            )
        if raw.get("type") == "mcp_approval_request":
            label = str(raw.get("server_label", "?"))
            return ApprovalRequest(
                item.call_id,
                "mcp",
                f"Use the MCP tool {raw.get('name', '?')}",
                f"server: {label}\ntool: {raw.get('name', '?')}\narguments: "
                + _pretty_json(raw.get("arguments")),
                f"the MCP server {label!r} asks before each tool call (require_approval)",
                f"`{raw.get('name', '?')}` on {label}, for the rest of this run",
                False,
            )
        body = f"{item.tool_name}({item.arguments or ''})"
        return ApprovalRequest(
            item.call_id, "command", f"Call the tool {item.tool_name}", body, reason, None, False
        )

    def _always_allow(self, item: ToolApprovalItem) -> None:
        commands = item.raw_item.get("action", {}).get("commands", [])
        if not commands:
            return
        try:
            rule = suggest_rule(str(commands[0]))
        except UserError:  # a here-document or a comment: nothing a rule could match
            return
        if self._rules_store is not None:
            try:
                rule = self._rules_store.add(rule)
            except Exception as exc:
                self.notice.emit(f"Could not save the rule: {exc}", "warning")
        self.workspace.rules.append(rule)
        self.notice.emit(f"Always allowing {rule.description} (revocable in Settings).", "info")

    def _withdraw_all(self) -> None:
        for request_id, future in list(self._approvals.items()):
            if not future.done():
                future.cancel()
            self.approvalWithdrawn.emit(request_id)
        self._approvals.clear()

    # -- harness events -> signals ---------------------------------------------------------
    def _on_shell_event(self, event: ShellEvent) -> None:
        block_id = f"{event.call_id}:{event.command_index}"
        if isinstance(event, ShellCommandStarted):
            self._pids[block_id] = event.pid
            self.commandStarted.emit(
                block_id,
                event.command,
                event.working_directory,
                event.sandboxed,
                "agent",
                event.sandbox_unavailable,
            )
        elif isinstance(event, ShellOutputChunk):
            # issue 11: redacted before the terminal model sees it, a carry-over per stream
            key = (block_id, event.stream)
            redactor = self._redactors.get(key) or self._redactors.setdefault(
                key, StreamRedactor()
            )
            text = redactor.feed(event.text)
            if text:
                self.commandOutput.emit(block_id, event.stream, text)
        elif isinstance(event, ShellCommandFinished):
            self._pids.pop(block_id, None)
            for stream in ("stdout", "stderr"):
                redactor = self._redactors.pop((block_id, stream), None)
                rest = redactor.flush() if redactor is not None else ""
                if rest:
                    self.commandOutput.emit(block_id, stream, rest)
            outcome = "timeout" if event.timed_out else "exit"
            self.commandFinished.emit(block_id, event.exit_code, outcome, event.duration_ms)

    def _on_review_event(self, event: ReviewEvent) -> None:
        proposal: Proposal = event.proposal
        if event.type == "submitted":
            self._journal("proposal", {"id": proposal.id, "path": proposal.path})
            if self._relay.patch_call_id:
                self.toolUpdated.emit(
                    self._relay.patch_call_id,
                    "waiting-approval",
                    None,
                    "waiting for your review (Diff tab)",
                )
            self._spawn(self._show_proposal(proposal))
        else:
            if self._relay.patch_call_id:
                self._relay.restart_clock(self._relay.patch_call_id)
            self.proposalClosed.emit(proposal.id)

    async def _show_proposal(self, proposal: Proposal) -> None:
        # compiling a pygments lexer the first time takes ~100 ms: do it off the GUI thread
        await asyncio.to_thread(lexer_for_path, proposal.move_to or proposal.path)
        self.proposalSubmitted.emit(proposal)

    # -- Codex (codex_tool on_stream) ---------------------------------------------------------
    def on_codex_event(self, stream_event: Any) -> None:
        """Show a Codex CLI event like the agent's own work (pass as ``codex_tool(on_stream=)``):
        commands become terminal blocks marked as Codex's, file changes open in the diff view
        (working tree against the turn's checkpoint), messages and plans go to the conversation."""
        event = stream_event.event
        item = getattr(event, "item", None)
        kind = getattr(event, "type", "")
        if isinstance(item, CommandExecutionItem):
            block_id = f"codex:{item.id}"
            if block_id not in self._codex_blocks:
                self._codex_blocks[block_id] = time.monotonic()
                self.commandStarted.emit(
                    block_id, item.command, str(self.workspace.root), None, "codex", None
                )
            if kind == "item.completed":
                if item.aggregated_output:
                    output = redact_text(item.aggregated_output)
                    self.commandOutput.emit(block_id, "stdout", output)
                started = self._codex_blocks.pop(block_id)
                self.commandFinished.emit(
                    block_id, item.exit_code, "exit", int((time.monotonic() - started) * 1000)
                )
        elif isinstance(item, FileChangeItem) and kind == "item.completed":
            paths = [change.path for change in item.changes]
            self.notice.emit("Codex changed " + ", ".join(paths), "info")
            self._spawn(self._show_codex_changes(paths))
        elif isinstance(item, AgentMessageItem) and kind == "item.completed":
            self.notice.emit(f"Codex: {item.text}", "info")
        elif isinstance(item, TodoListItem) and kind in (
            "item.started",
            "item.updated",
            "item.completed",
        ):
            plan = "; ".join(("[x] " if e.completed else "[ ] ") + e.text for e in item.items)
            self.notice.emit(f"Codex plan: {plan}", "info")

    async def _show_codex_changes(self, paths: list[str]) -> None:
        checkpoint = self.workspace.last_checkpoint
        if checkpoint is None:
            return
        try:
            text = await self.workspace.checkpoints.diff(checkpoint.id, None)
        except Exception as exc:
            self.notice.emit(f"Cannot show Codex's changes: {exc}", "warning")
            return
        text = _only_paths(text, paths)
        await asyncio.to_thread(_prewarm_lexers, text)
        self.checkpointDiffReady.emit(checkpoint.id, "", text)

    # -- checkpoints -----------------------------------------------------------------------------
    async def _refresh_checkpoints(self) -> None:
        try:
            checkpoints = await self.workspace.checkpoints.list()
        except Exception as exc:
            self.notice.emit(f"Cannot list checkpoints: {exc}", "warning")
            return
        self.checkpointsChanged.emit(list(checkpoints))

    async def _diff(self, a: str, b: str | None) -> None:
        try:
            text = await self.workspace.checkpoints.diff(a, b)
        except Exception as exc:
            self.notice.emit(f"Cannot diff checkpoints: {exc}", "error")
            return
        await asyncio.to_thread(_prewarm_lexers, text)
        self.checkpointDiffReady.emit(a, b or "", text)

    async def _restore(self, checkpoint_id: str) -> None:
        if self.is_running:
            self.notice.emit("Stop the run before restoring a checkpoint.", "warning")
            return
        try:
            await self.workspace.checkpoints.restore(checkpoint_id)
        except Exception as exc:
            self.notice.emit(f"Restore failed: {exc}", "error")
            return
        self._journal("restore", {"checkpoint": checkpoint_id})
        self.notice.emit(
            f"Restored checkpoint {checkpoint_id} (Undo restore brings the previous state back).",
            "info",
        )
        await self._refresh_checkpoints()

    async def _undo_restore(self) -> None:
        try:
            await self.workspace.checkpoints.undo_restore()
        except Exception as exc:
            self.notice.emit(f"Undo restore failed: {exc}", "error")
            return
        self._journal("undo_restore", {})
        self.notice.emit("Restore undone.", "info")
        await self._refresh_checkpoints()


def _prewarm_lexers(diff_text: str) -> None:
    """Build the lexers of every file in a ``git diff`` text (off the GUI thread)."""
    for line in diff_text.splitlines():
        if line.startswith("diff --git ") and " b/" in line:
            lexer_for_path(line.split(" b/", 1)[1])


def _only_paths(diff_text: str, paths: list[str]) -> str:
    """The sections of a ``git diff`` text that touch ``paths`` (all of it when none match)."""
    sections = diff_text.split("diff --git ")
    kept = [s for s in sections[1:] if any(f" b/{p}" in s.splitlines()[0] for p in paths if s)]
    return "".join("diff --git " + s for s in kept) if kept else diff_text


def _rule_preview(command: str) -> str | None:
    """What *Always allow* would add for ``command``, or ``None`` (the button is then off)
    when no rule can match it (a here-document, a comment, an unparsable line)."""
    try:
        return suggest_rule(command).description
    except UserError:
        return None


def _pretty_json(arguments: Any) -> str:
    """MCP arguments (a JSON string or a value) indented for reading; text that is not JSON
    is shown as it is."""
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return str(arguments)
    return json.dumps(value, indent=2, ensure_ascii=False)
