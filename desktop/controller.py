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
from pathlib import Path
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
from core.policy import RuleStore
from core.redaction import StreamRedactor, redact_text
from core.run_state_snapshot import SnapshotMemo
from core.tools.codex.events import (
    AgentMessageItem,
    CommandExecutionItem,
    FileChangeItem,
    TodoListItem,
)
from harnesses.editor import HunkDecision as EditorHunkDecision
from harnesses.editor import Proposal, ReviewEvent, ReviewOutcome
from harnesses.recording import export as recording_export
from harnesses.recording import record as recording
from harnesses.sessions.history import rebuild_history
from harnesses.sessions.resume import (
    MODE_EVENT,
    forget_approvals,
    journaled_mode,
    rejudge_waiting,
)
from harnesses.shell import ShellCommandFinished, ShellCommandStarted, ShellEvent, ShellOutputChunk
from harnesses.workspace import Workspace

from .context_session import ContextSession
from .event_relay import EventRelay
from .mcp_cards import mcp_call
from .review_journal import (
    PendingReview,
    decision_record,
    decisions_record,
    landed_counts,
    pending_reviews,
    proposal_record,
    review_problem,
)
from .run_cli.setup import always_allow_rules, describe_rules
from .views.approval_panel import ApprovalRequest
from .views.diff_highlight import lexer_for_path
from .views.diff_model import HunkDecision as DiffHunkDecision
from .views.diff_model import Verdict
from .views.terminal_model import BlockRecorder

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
    #: A proposal's review was withdrawn (the run stopped): no longer appliable.
    proposalWithdrawn = Signal(str)
    #: Decisions restored for a proposal reopened from the journal: ``(id, {hunk: decision})``.
    reviewDecisionsRestored = Signal(str, object)
    #: Whether *Undo restore* can be used now (right after a restore, until the next run).
    undoRestoreAvailable = Signal(bool)
    commandStarted = Signal(str, str, str, object, str, object)
    commandOutput = Signal(str, str, str)
    commandFinished = Signal(str, object, str, int)
    checkpointsChanged = Signal(object)
    checkpointDiffReady = Signal(str, str, str)
    modeChanged = Signal(str)
    #: issue 16: the session was created in the journal at the first task (its id).
    sessionCreated = Signal(str)
    #: issue 16: a journaled terminal block to show again (a ``shell_block`` payload).
    commandRestored = Signal(object)
    #: issue 16: a model request is retried (``core.models.errors.RetryNotice``) / failed for
    #: good (``core.models.errors.ModelErrorInfo``: the banner's Retry and Open Settings).
    modelRetrying = Signal(object)
    #: issue 16: a session was exported (the file's path)
    sessionExported = Signal(str)
    modelFailed = Signal(object)

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
        self._snapshots = SnapshotMemo()  # the approval pauses' run-state items, frozen once
        self._task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._approvals: dict[str, asyncio.Future[tuple[str, str]]] = {}
        self._pids: dict[str, int] = {}
        self._redactors: dict[tuple[str, str], StreamRedactor] = {}
        self._codex_blocks: dict[str, float] = {}
        self._codex_call: str | None = None  # the card of the Codex turn streaming now
        self._codex_stops: dict[str, Callable[[], None]] = {}
        self._relay = EventRelay(self, self._journal, str(workspace.root))
        self._relay.watch_agent_tools(self._agent)
        self._relay.on_patch_call = self._on_patch_call
        self._relay.refusal_of = self._refusal_of
        self._review_calls: dict[str, str] = {}  # proposal id -> apply_patch call id
        self._unmatched: dict[str, str] = {}  # operation path -> proposal id (card not yet seen)
        self._closing = False
        self._reopened: set[str] = set()  # proposals put back from the journal
        self._base_recorded: str | None = None  # the session whose recording_base is journaled
        self.workspace.executor.listener = self._on_shell_event
        self._unsubscribe_review = self.workspace.review_queue.add_listener(self._on_review_event)
        #: Issue 14: the context meter, compactions, *Compact now* and *Undo compaction*.
        self.context = ContextSession(self._journal, self.notice.emit)
        #: issue 16: tokens of the session's earlier runs (input, output, total), from the
        #: journal's ``usage`` events; the top bar adds the current run's.
        self.usage_base = (0, 0, 0)
        self._run_usage = (0, 0, 0)
        self._blocks = BlockRecorder()  # issue 16: terminal blocks into the journal

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

    def _journal_state(self, state_json: str | dict[str, Any] | None, status: str) -> None:
        if self.journal is None or self.session_id is None:
            return
        try:
            # scrub + write on the journal's writer thread, in order with the events
            self.journal.save_state_nowait(self.session_id, state_json, status)
        except Exception:
            logger.exception("journal run-state save failed")

    def _journal_claim(self) -> None:
        """This process drives the session now (issue 16: a session whose process is gone
        is "interrupted", see ``SessionJournal.owner_alive``)."""
        if self.journal is None or self.session_id is None:
            return
        claim = getattr(self.journal, "claim_session", None)
        if claim is None:
            return
        try:
            claim(self.session_id)
        except Exception:
            logger.exception("journal: the session could not be claimed")

    def new_session(self) -> None:
        """Start afresh (the sessions list's *New*): the next task creates a session; the
        conversation history is emptied. Ignored while a run goes on."""
        if self.is_running:
            self.notice.emit("A run is in progress; stop it first.", "warning")
            return
        self.session_id = None
        self._history = []
        self.usage_base = (0, 0, 0)
        self.usageChanged.emit(0, 0, 0)

    def load_session(self, session_id: str) -> None:
        """Show a journaled session's transcript and continue it: its conversation history is
        restored, so is the approval mode it ran in (its last journaled ``mode``, not the
        saved default; the top bar shows it), and pending approvals (from the saved
        ``RunState``) are asked again, whatever the mode (issue 16)."""
        self.session_id = session_id
        if self.journal is None:
            return
        self._restore_mode(session_id)
        self.usage_base = (0, 0, 0)
        self._relay.replaying = True
        try:
            self._replay(session_id)
            reviews = pending_reviews(
                (event.kind, event.payload) for event in self.journal.events(session_id)
            )
            waiting = {review.call_id for review in reviews if review.call_id}
            for call_id in waiting:
                self._relay.verdicts.pop(call_id, None)
            for call_id in self._relay.open_calls():
                if call_id in waiting:
                    continue
                self._relay.close_open_calls_of(
                    [call_id], "interrupted", "interrupted: Tandem closed before it finished"
                )
        finally:
            self._relay.replaying = False
        for review in reviews:
            self._reopen_review(review)
        self.usageChanged.emit(0, 0, 0)  # the top bar shows usage_base, the session's total
        self._journal_claim()
        saved = self.journal.load_run_state(session_id)
        if saved:
            self._spawn(self._resume_saved(saved))

    def _restore_mode(self, session_id: str) -> None:
        """Switch to the approval mode ``session_id`` last ran in (unchanged when the journal
        does not say); not journaled again: it is the session's already."""
        assert self.journal is not None
        try:
            mode = journaled_mode(self.journal, session_id)
        except Exception:
            logger.exception("journal: the session's mode could not be read")
            mode = None
        if mode is not None:
            self._switch_mode(mode)
        self.modeChanged.emit(str(self.workspace.mode))

    def _switch_mode(self, mode: str) -> None:
        """Set the workspace's mode; when it changed between runs, the agent is built again,
        so what reads the mode when the agent is built (the Codex delegate's sandbox,
        ``desktop/delegates.py``) follows it (a run going on keeps its agent)."""
        before = str(self.workspace.mode)
        self.workspace.set_mode(mode)
        if str(self.workspace.mode) != before and not self.is_running:
            self._agent = self._agent_factory(self.workspace)
            self._relay.watch_agent_tools(self._agent)

    def _replay(self, session_id: str) -> None:
        assert self.journal is not None
        started: dict[str, float] = {}  # call id -> the journal time of its tool_called
        deltas: list[tuple[str, dict[str, Any]]] = []  # the history, rebuilt once at the end
        for event in self.journal.events(session_id):
            payload = event.payload
            _replay_timing(event, started, self._relay.replay_durations)
            if event.kind == "shell_block":  # issue 16: the Terminal tab comes back
                self.commandRestored.emit(payload)
            elif event.kind == "usage":
                self.usage_base = _add_usage(self.usage_base, payload)
            elif event.kind == "user_message":
                self.userMessage.emit(str(payload.get("text", "")))
            elif event.kind in ("history", "history_append"):
                deltas.append((event.kind, payload))
            elif self.context.replay(event.kind, payload):
                pass
            elif event.kind in ("run_failed", "run_cancelled"):
                self.notice.emit(f"(earlier) run {event.kind.removeprefix('run_')}", "info")
            elif event.kind == "run_finished":  # the run's end: its items, never the whole
                deltas.append((event.kind, payload))
            elif event.kind == "approval" and payload.get("decision") == "reject":
                message = str(payload.get("message") or "")
                summary = f"rejected by you: {message}" if message else "rejected by you"
                self._relay.verdicts[str(payload.get("call_id"))] = ("rejected", summary)
            elif event.kind == "card_status":
                self._relay.close_open_calls_of(
                    [str(c) for c in payload.get("calls", [])],
                    str(payload.get("status", "cancelled")),
                    str(payload.get("summary", "")),
                )
            elif event.kind == "review_landed":
                call_id = str(payload.get("call_id") or "")
                if call_id:
                    self._relay.close_open_calls_of(
                        [call_id], str(payload.get("status")), str(payload.get("summary"))
                    )
            elif isinstance(payload.get("item"), dict):
                parent = str(payload.get("parent", ""))
                self._relay.show_item(event.kind, payload["item"], None, parent)
        self._history = rebuild_history(deltas, self._history)

    async def _resume_saved(self, saved: str) -> None:
        try:
            state = await RunState.from_string(self._agent, saved)
        except Exception as exc:
            self.notice.emit(f"Cannot resume the saved run: {exc}", "error")
            return
        forget_approvals(state)  # only this resume's answers let a waiting call run
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
        if self.session_id is None and self.journal is not None:  # issue 16: made at the
            try:  # first task and named from it, not at launch
                self.session_id = self.journal.create_session(
                    self.workspace.root, session_title(text)
                )
            except Exception:
                logger.exception("journal: the session could not be created")
            else:
                self._journal_claim()
                self._journal(MODE_EVENT, {"mode": str(self.workspace.mode)})  # issue 16
                self.sessionCreated.emit(self.session_id)
        self.userMessage.emit(text)
        self._journal("user_message", {"text": text})
        run_input = [*self._history, {"content": text, "role": "user"}]
        self._last_input = run_input  # issue 16: the retry banner's Retry sends it again
        self._task = self._spawn(self._run(run_input))

    @Slot()
    def retry(self) -> None:
        """Run the last message again after a failed run (ignored while a run goes on)."""
        run_input = getattr(self, "_last_input", None)
        if run_input is not None and not self.is_running:
            self._task = self._spawn(self._run(run_input))

    def on_model_retry(self, notice: Any) -> None:
        """A model request is retried after a pause: re-emitted as :attr:`modelRetrying`."""
        self.modelRetrying.emit(notice)

    def resume(self, state: RunState) -> None:
        """Continue a saved run: its pending approvals are asked again first, whatever the
        mode (a call that waited for the user is never approved by a reopen, issue 16)."""
        if not self.is_running:
            self._task = self._spawn(self._run(state))

    @Slot()
    def compact_now(self) -> None:
        """*Compact now* (Session menu, ``/compact``): compact the history before the next turn."""
        if self.is_running or self.context.busy:
            self.notice.emit("Compact now works between turns; wait for the run to end.", "info")
            return
        self._spawn(self.context.compact_now(self._agent, list(self._history), self._run_config))

    @Slot()
    def undo_compaction(self) -> None:
        """Take back the latest compaction (before the next turn)."""
        if self.is_running:
            self.notice.emit("Undo compaction works between turns.", "info")
            return
        self.context.undo()

    @Slot()
    def stop(self) -> None:
        """Cancel the run cleanly: running tools are cancelled, pending questions and
        reviews withdrawn (their cards say "cancelled")."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    @Slot(str, int, object)
    def note_review_decision(self, proposal_id: str, hunk_id: int, decision: Any) -> None:
        """Journal one hunk decision as the user makes it, so a crash keeps it."""
        if self.workspace.review_queue.get(proposal_id) is not None:
            self._journal("review_decision", decision_record(proposal_id, hunk_id, decision))

    def note_review_decisions(self, proposal_id: str, decisions: Any) -> None:
        """Journal a file's *Accept all* / *Reject all* as one event (``decisions``: hunk id
        -> decision), however many hunks it decided."""
        if self.workspace.review_queue.get(proposal_id) is not None:
            self._journal("review_decisions", decisions_record(proposal_id, decisions))

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
        proposal = self.workspace.review_queue.get(proposal_id)
        call_id = self._review_calls.get(proposal_id)
        if proposal is not None and call_id:
            self._relay.patch_counts[call_id] = landed_counts(proposal.hunks, chosen)
        if not chosen:
            outcome = ReviewOutcome.reject_all(text or "The user rejected every hunk.")
        try:
            self.workspace.review_queue.resolve(proposal_id, outcome)
        except KeyError:
            self.notice.emit("That proposal is no longer pending.", "warning")

    @Slot(str)
    def apply_patch_text(self, text: str) -> None:
        """A ``*** Begin Patch`` envelope the user pasted into the composer: applied through
        the workspace's editor (policy, checkpoint, review in *ask* mode: the Diff tab),
        never sent as a prompt; the result is shown as a notice."""
        self._spawn(self._apply_patch_text(text))

    async def _apply_patch_text(self, text: str) -> None:
        result = await self.workspace.apply_pasted_patch(text)
        if result.exit_code == 0:
            self.notice.emit(result.stdout.strip(), "info")
        else:
            landed = result.stdout.strip()
            self.notice.emit("\n".join(p for p in (landed, result.stderr.strip()) if p), "warning")
        await self._refresh_checkpoints()

    @Slot(str)
    def set_mode(self, mode: str) -> None:
        """Switch the approval mode for the next decisions (journaled: it is the session's)."""
        self._switch_mode(mode)
        self.modeChanged.emit(str(self.workspace.mode))
        self._journal(MODE_EVENT, {"mode": str(self.workspace.mode)})

    @Slot(str)
    def kill_command(self, block_id: str) -> None:
        """Kill a running command's process group (the terminal view's kill button); its
        card then says "killed by you"."""
        pid = self._pids.get(block_id)
        if pid is not None:
            self._relay.killed_by[block_id.split(":", 1)[0]] = "you"
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

    @property
    def has_pending_work(self) -> bool:
        """Whether closing now would stop something: a run, or a review waiting."""
        return self.is_running or bool(self.workspace.review_queue.pending())

    async def shutdown(self) -> None:
        """Cancel every task and wait for them (window close). Reviews still waiting stay
        in the journal: the next launch shows them again."""
        self._closing = True
        self._unsubscribe_review()
        current = self._relay.current
        if current is not None and hasattr(current, "cancel"):
            current.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- the run -------------------------------------------------------------------------------
    async def _run(self, run_input: Any) -> None:
        self.runningChanged.emit(True)
        # issue 16: a saved run's calls that waited for the user are asked again before
        # anything runs; resuming them unanswered would judge them again under the mode
        waiting = list(run_input.get_interruptions()) if isinstance(run_input, RunState) else []
        if self.journal is not None and self.session_id is not None:  # issue 16: true state
            try:
                status = "awaiting_approval" if waiting else "active"
                self.journal.set_status_nowait(self.session_id, status)
            except Exception:
                logger.exception("journal: the session's state was not written")
        self.undoRestoreAvailable.emit(False)
        base = len(self._history)  # the run's input starts with the history so far
        context_snapshot = self.context.begin_run()
        await self._record_base()  # issue 16 (record/replay): the state the session starts from
        try:
            state: Any = run_input
            if waiting:
                rejudge_waiting(self.workspace, waiting)  # the prompt says why it asks
                await self._ask(waiting, state)
                self._journal_state(None, "active")
            while True:
                result = Runner.run_streamed(
                    self._agent,
                    state,
                    hooks=self.workspace.hooks(),
                    run_config=self.context.run_config(self._run_config),
                    max_turns=self._max_turns,
                )
                self._relay.current = result
                async for event in result.stream_events():
                    self._relay.on_event(event, result)
                    self._record_response(event)
                usage = result.context_wrapper.usage
                self.usageChanged.emit(usage.input_tokens, usage.output_tokens, usage.total_tokens)
                self._run_usage = (usage.input_tokens, usage.output_tokens, usage.total_tokens)
                await self._refresh_checkpoints()
                if not result.interruptions:
                    # the run's end is a marker with what this run added (user message and
                    # generated items), never the whole history (issue 15, Build item 3)
                    added = result.to_input_list()[base:]
                    self._history = [*self._history, *added]
                    self.context.end_run(result)
                    self._journal(
                        "run_finished",
                        {"final_output": str(result.final_output), "items": added},
                    )
                    self._journal_state(None, "completed")
                    break
                state = result.to_state()
                # snapshot off the GUI thread (the run is paused: nothing changes it now):
                # fresh containers and frozen items, so later changes to the state cannot
                # reach the queued write; items frozen by earlier pauses are reused, so the
                # cost is what is new (issue 15, Build item 3)
                snapshot = await asyncio.to_thread(_state_snapshot, state, self._snapshots)
                self._journal_state(snapshot, "awaiting_approval")
                await self._ask(result.interruptions, state)
                self._journal_state(None, "active")
        except asyncio.CancelledError:
            self.context.abort_run(context_snapshot)
            current = self._relay.current
            if current is not None and hasattr(current, "cancel"):
                current.cancel()  # the run's own task too: its tools and reviews end now
            self._withdraw_all()
            if not self._closing:
                self.notice.emit("Run stopped.", "info")
                self._close_cards(
                    "cancelled", "stopped by you (Tandem ended what was still running)"
                )
                self._journal("run_cancelled", {})
                self._journal_state(None, "cancelled")
        except Exception as exc:
            self.context.abort_run(context_snapshot)
            info = _failure_info(exc)  # issue 16: what to do, through core/models/errors.py
            if info is not None:  # issue 16: shown in the window; no traceback on stderr
                logger.debug("run failed: %s", info.message, exc_info=True)
            else:  # not a failure Tandem knows: a bug report needs the traceback
                logger.exception("run failed")
            self.notice.emit(info.message if info else f"{type(exc).__name__}: {exc}", "error")
            if info is not None:
                self.modelFailed.emit(info)
            self._withdraw_all()
            self._journal("run_failed", {"error": f"{type(exc).__name__}: {exc}"})
            self._journal_state(None, "failed")
        finally:
            if any(self._run_usage):  # issue 16: the session's tokens survive a reopen
                names = ("input_tokens", "output_tokens", "total_tokens")
                run_usage = dict(zip(names, self._run_usage, strict=True))
                self._journal("usage", run_usage)
                self.usage_base = _add_usage(self.usage_base, run_usage)
                self._run_usage = (0, 0, 0)
            self.runningChanged.emit(False)

    @Slot(str)
    def export_session(self, path: str) -> None:
        """Export the current session to ``path`` (File > Export session…, issue 16): written
        off the GUI thread; the outcome is a notice (``docs/record-replay.md``)."""
        self._spawn(self._export(Path(path)))

    async def _export(self, path: Path) -> None:
        journal, session_id = self.journal, self.session_id
        if journal is None or session_id is None:
            self.notice.emit("Nothing to export yet: send a task first.", "warning")
            return

        def write() -> Path:
            journal.flush()
            return recording_export.write_export(journal, session_id, path)

        try:
            written = await asyncio.to_thread(write)
        except Exception as exc:  # RecordingError, a journal or disk failure
            self.notice.emit(redact_text(f"Export failed: {exc}"), "error")
            return
        self.notice.emit(
            f"Session exported to {written}. Replay it with `tandem replay {written}`.", "info"
        )
        self.sessionExported.emit(str(written))

    async def _record_base(self) -> None:
        """Journal ``recording_base`` (HEAD, dirty files as a patch, model, mode) once per
        session, before its first run, so the session can be exported and replayed (issue 16,
        record and replay; :mod:`harnesses.recording.record`). A failure is logged only."""
        session_id = self.session_id
        if self.journal is None or session_id is None or self._base_recorded == session_id:
            return
        self._base_recorded = session_id
        journal = self.journal

        def capture() -> dict[str, Any] | None:
            if journal.events(session_id, kinds=[recording.RECORDING_BASE], last=1):
                return None  # a reopened session keeps the state it started from
            return recording.recording_base_payload(
                self.workspace.root, model=self._agent.model, mode=str(self.workspace.mode)
            )

        try:
            payload = await asyncio.to_thread(capture)
        except Exception:
            logger.exception("record/replay: the repository state could not be captured")
            return
        if payload is not None:
            self._journal(recording.RECORDING_BASE, payload)

    def _record_response(self, event: Any) -> None:
        """Journal each model response (``model_response``: its output items and usage), the
        turns an export replays (issue 16, record and replay)."""
        data = getattr(event, "data", None)
        if getattr(event, "type", "") != "raw_response_event" or data is None:
            return
        payload = recording.model_response_payload(data)
        if payload is not None:
            self._journal(recording.MODEL_RESPONSE, payload)

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
            self.approvalRequested.emit(await self._approval_request(item))
        for item, future in waiting:
            decision, message = await future
            self._journal(
                "approval", {"call_id": item.call_id, "decision": decision, "message": message}
            )
            if decision == "reject":
                state.reject(item, rejection_message=message or None)
                summary = f"rejected by you: {message}" if message else "rejected by you"
                self._relay.verdicts[item.call_id] = ("rejected", summary)
                self.toolUpdated.emit(item.call_id, "rejected", None, summary)
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

    async def _approval_request(self, item: ToolApprovalItem) -> ApprovalRequest:
        raw = item.raw_item
        reason = (
            self.workspace.reason_for(item.call_id)
            or f"the tool `{item.tool_name}` asks for approval"
        )
        if raw.get("type") == "shell_call":
            commands = [str(c) for c in raw.get("action", {}).get("commands", [])]
            body = "\n".join(commands)
            # a rule is for one command: a call of several is answered once, never as a rule
            preview = _rule_preview(commands[0], self.workspace) if len(commands) == 1 else None
            destructive = "destructive" in reason
            return ApprovalRequest(
                item.call_id,
                "command",
                "Run a shell command",
                body,
                reason,
                preview,
                destructive,
                await self._recoverability(item.call_id),
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
        local = mcp_call(item.tool_name)  # issue 18: a local MCP tool (desktop/mcp_cards.py)
        if local is not None:
            return ApprovalRequest(
                item.call_id,
                "mcp",
                f"Use the MCP tool {local.tool}",
                f"server: {local.server}\ntool: {local.tool}\narguments: "
                + _pretty_json(item.arguments),
                f"the local MCP server {local.server!r} asks before this tool runs",
                None,
                False,
            )
        body = f"{item.tool_name}({item.arguments or ''})"
        return ApprovalRequest(
            item.call_id, "command", f"Call the tool {item.tool_name}", body, reason, None, False
        )

    async def _recoverability(self, call_id: str) -> str | None:
        """The approval prompt's recoverability line for a command the guard checkpoints
        first (issue 12), or ``None`` (not destructive, or it cannot be told)."""
        pending = self.workspace.decisions.get(call_id)
        if pending is None or not pending.decision.checkpoint_required:
            return None
        try:
            found = await self.workspace.recoverability(pending.decision)
        except Exception:
            logger.exception("recoverability check failed")
            return "what the checkpoint will hold could not be checked"
        return found.summary()

    def _always_allow(self, item: ToolApprovalItem) -> None:
        commands = item.raw_item.get("action", {}).get("commands", [])
        if len(commands) != 1:  # the button is off for these; answered once, no rule
            return
        added = []
        # every command of the line that asked, so the same line runs unasked next time
        for rule in always_allow_rules(str(commands[0]), self.workspace):
            if self._rules_store is not None:
                try:
                    rule = self._rules_store.add(rule)
                except Exception as exc:
                    self.notice.emit(f"Could not save the rule: {exc}", "warning")
            self.workspace.rules.append(rule)
            added.append(rule)
        if added:
            self.notice.emit(
                f"Always allowing {describe_rules(added)} (revocable in Settings).", "info"
            )

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
            self._blocks.start(
                block_id,
                event.command,
                event.working_directory,
                event.sandboxed,
                "agent",
                event.sandbox_unavailable,
            )
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
            redactor = self._redactors.get(key) or self._redactors.setdefault(key, StreamRedactor())
            text = redactor.feed(event.text)
            if text:
                self._blocks.feed(block_id, event.stream, text)
                self.commandOutput.emit(block_id, event.stream, text)
        elif isinstance(event, ShellCommandFinished):
            self._pids.pop(block_id, None)
            for stream in ("stdout", "stderr"):
                redactor = self._redactors.pop((block_id, stream), None)
                rest = redactor.flush() if redactor is not None else ""
                if rest:
                    self._blocks.feed(block_id, stream, rest)
                    self.commandOutput.emit(block_id, stream, rest)
            outcome = "timeout" if event.timed_out else "exit"
            self.commandFinished.emit(block_id, event.exit_code, outcome, event.duration_ms)
            record = self._blocks.finish(block_id, event.exit_code, outcome, event.duration_ms)
            if record is not None:
                self._journal("shell_block", record)

    def _on_review_event(self, event: ReviewEvent) -> None:
        proposal: Proposal = event.proposal
        if event.type == "submitted" and proposal.id in self._reopened:
            call_id = self._review_calls.get(proposal.id, "")
            if call_id:
                self._mark_waiting(call_id)
            self._spawn(self._show_proposal(proposal))
            return
        if event.type == "submitted":
            call_id = self._call_for(proposal)
            self._journal("proposal", proposal_record(proposal, call_id))
            if call_id:
                self._review_calls[proposal.id] = call_id
                self._mark_waiting(call_id)
            else:  # the card arrives after the proposal: tied in _on_patch_call
                self._unmatched[proposal.operation.path] = proposal.id
            self._spawn(self._show_proposal(proposal))
            return
        call_id = self._review_calls.pop(proposal.id, "")
        self._journal("proposal_closed", {"id": proposal.id, "how": event.type})
        if event.type == "withdrawn":
            if call_id:
                self._relay.verdicts[call_id] = ("cancelled", "review withdrawn: the run stopped")
            self.proposalWithdrawn.emit(proposal.id)
            return
        if call_id:
            self._relay.restart_clock(call_id)
            self.toolUpdated.emit(call_id, "running", None, "applying your review")
        self.proposalClosed.emit(proposal.id)

    def _call_for(self, proposal: Proposal) -> str:
        """The open ``apply_patch`` card a new proposal belongs to ("" if not shown yet):
        the oldest one for the proposal's path not tied to a review yet (one turn's calls
        run in order; the last card shown is another file's when a turn patches several)."""
        taken = set(self._review_calls.values())
        path = proposal.operation.path
        for call_id in self._relay.open_calls():
            if call_id not in taken and self._relay.patch_paths.get(call_id) == path:
                return call_id
        return ""

    def _on_patch_call(self, call_id: str, path: str) -> None:
        proposal_id = self._unmatched.pop(path, None)
        if proposal_id is None or self.workspace.review_queue.get(proposal_id) is None:
            return
        self._review_calls[proposal_id] = call_id
        self._journal("proposal_call", {"id": proposal_id, "call_id": call_id})
        self._mark_waiting(call_id)

    def _mark_waiting(self, call_id: str) -> None:
        self.toolUpdated.emit(call_id, "waiting-review", None, "waiting for your review (Diff tab)")

    def _refusal_of(self, call_id: str) -> str | None:
        pending = self.workspace.decisions.get(call_id)
        if pending is not None and pending.decision.action == "deny":
            return str(pending.decision.reason)
        return None

    def _close_cards(self, status: str, summary: str) -> None:
        closed = self._relay.close_open_calls(status, summary)
        if closed:
            self._journal("card_status", {"calls": closed, "status": status, "summary": summary})

    def _reopen_review(self, review: PendingReview) -> None:
        """Put a proposal from the journal back in the review queue and the Diff tab; when
        the user answers it, it lands through the editor (no tool call waits for it any
        more) and the model hears of it with the next message."""
        proposal = review.proposal
        if self.workspace.review_queue.get(proposal.id) is not None:
            return  # already pending
        problem = review_problem(proposal)
        if problem is not None:  # what would land is not what it shows: dropped (finding 10)
            summary = f"not reopened: the journaled change {problem}"
            self._journal("proposal_closed", {"id": proposal.id, "how": "dropped"})
            if review.call_id:
                self.toolUpdated.emit(review.call_id, "failed", None, summary[:160])
                self._journal(
                    "review_landed",
                    {"call_id": review.call_id, "status": "failed", "summary": summary},
                )
            self.notice.emit(
                f"A change to {proposal.path} from the session journal was dropped: {problem}.",
                "warning",
            )
            return
        self._reopened.add(proposal.id)
        if review.call_id:
            self._review_calls[proposal.id] = review.call_id
        future = self.workspace.review_queue.submit(proposal)
        decisions = {
            hunk: DiffHunkDecision(
                Verdict.ACCEPTED
                if d.get("accepted")
                else Verdict.REJECTED
                if d.get("rejected")
                else Verdict.PENDING,
                d.get("edited_text"),
                d.get("comment"),
            )
            for hunk, d in review.decisions.items()
        }
        if decisions:
            self.reviewDecisionsRestored.emit(proposal.id, decisions)
        self._spawn(self._land_reopened(review, future))

    async def _land_reopened(self, review: PendingReview, future: Any) -> None:
        try:
            outcome = await future
        except asyncio.CancelledError:
            return
        result = await self.workspace.editor.land_reviewed(review.proposal, outcome)
        text = str(result.output or "")
        status = "completed" if result.status != "failed" else "failed"
        if status == "failed" and text.startswith("The user rejected"):
            status = "rejected"
        if review.call_id:
            self.toolUpdated.emit(review.call_id, status, None, text[:160])
            self._journal(
                "review_landed", {"call_id": review.call_id, "status": status, "summary": text}
            )
        note = (
            "Note from Tandem: the run was interrupted (Tandem closed) while your change to "
            f"{review.proposal.path} waited for review. The user has now reviewed it: {text}"
        )
        item = {"role": "user", "content": note}
        self._history.append(item)
        self._journal("history_append", {"items": [item]})
        self.notice.emit(f"{text} The agent hears of it with your next message.", "info")
        await self._refresh_checkpoints()

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
        call = getattr(stream_event, "tool_call", None)
        call_id = call.get("call_id") if isinstance(call, dict) else getattr(call, "call_id", None)
        if call_id:
            self._codex_call = str(call_id)
        item = getattr(event, "item", None)
        kind = getattr(event, "type", "")
        progress = _codex_progress(kind, item)
        if call_id and progress and str(call_id) not in self._codex_stops:
            self.toolUpdated.emit(str(call_id), "running", None, progress)  # from the 1st event
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

    def on_codex_stall(self, stalled: bool, idle_seconds: float, stop: Callable[[], None]) -> None:
        """A Codex turn produced no event for ``idle_seconds`` (``stalled``) or did again:
        its card shows *stalled* with a Stop button (:meth:`stop_tool` calls ``stop``)."""
        call_id = self._codex_call
        if not stalled:
            if call_id is not None and self._codex_stops.pop(call_id, None) is not None:
                self.toolUpdated.emit(call_id, "running", None, "")
            return
        text = f"no event from Codex for {idle_seconds:g} s; Stop ends it"
        if call_id is None:
            self.notice.emit(f"Codex is stalled: {text}.", "warning")
            return
        self._codex_stops[call_id] = stop
        self.toolUpdated.emit(call_id, "stalled", None, text)

    @Slot(str)
    def stop_tool(self, call_id: str) -> None:
        """The card's Stop: kill the stalled Codex turn of card ``call_id`` (the model gets
        "Codex was stopped by the user." as the tool's output; the run goes on)."""
        stop = self._codex_stops.pop(call_id, None)
        if stop is not None:
            stop()
            self.toolUpdated.emit(call_id, "running", None, "stopping Codex…")

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
        self.undoRestoreAvailable.emit(True)
        await self._refresh_checkpoints()

    async def _undo_restore(self) -> None:
        try:
            await self.workspace.checkpoints.undo_restore()
        except Exception as exc:
            self.notice.emit(f"Undo restore failed: {exc}", "error")
            return
        self._journal("undo_restore", {})
        self.undoRestoreAvailable.emit(False)
        self.notice.emit("Restore undone.", "info")
        await self._refresh_checkpoints()


def _codex_progress(kind: str, item: Any) -> str:
    """The Codex card's running summary for one event (``""``: leave it as it is)."""
    if kind == "thread.started":
        return "Codex started"
    if kind == "turn.started":
        return "Codex is working…"
    if isinstance(item, CommandExecutionItem):
        verb = "ran" if kind == "item.completed" else "runs"
        return redact_text(f"Codex {verb} {item.command}")[:200]
    if isinstance(item, FileChangeItem) and kind == "item.completed":
        return "Codex changed " + ", ".join(c.path.rsplit("/", 1)[-1] for c in item.changes)
    return ""


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


def session_title(task: str, limit: int = 60) -> str:
    """A session's name from its first task (issue 16): the first non-empty line, spaces
    collapsed, cut at a word to ``limit`` characters with an ellipsis."""
    line = next((ln for ln in task.splitlines() if ln.strip()), "")
    words = " ".join(line.split()) or "Untitled session"
    if len(words) <= limit:
        return words
    cut = words[: limit - 1].rsplit(" ", 1)[0] if " " in words[: limit - 1] else words[: limit - 1]
    return cut.rstrip(" ,.;:") + "…"


def _add_usage(base: tuple[int, int, int], payload: Any) -> tuple[int, int, int]:
    """``base`` plus a journaled ``usage`` payload (bad values count as 0)."""
    names = ("input_tokens", "output_tokens", "total_tokens")
    values = [payload.get(n) if isinstance(payload, dict) else 0 for n in names]
    add = [v if isinstance(v, int) and v >= 0 else 0 for v in values]
    return (base[0] + add[0], base[1] + add[1], base[2] + add[2])


def _replay_timing(event: Any, started: dict[str, float], durations: dict[str, int]) -> None:
    """Durations of replayed cards from the journal's timestamps: ``tool_called`` to its
    ``tool_output`` (issue 16)."""
    item = event.payload.get("item") if isinstance(event.payload, dict) else None
    if not isinstance(item, dict):
        return
    call_id = str(item.get("call_id") or "")
    if not call_id:
        return
    if event.kind == "tool_called":
        started[call_id] = event.ts
    elif event.kind == "tool_output" and call_id in started:
        durations[call_id] = max(0, int((event.ts - started.pop(call_id)) * 1000))


def _state_snapshot(state: RunState, memo: SnapshotMemo) -> dict[str, Any]:
    """``state.to_json()`` with its items frozen once per session (run in a worker thread:
    a new item's JSON is built here, never on the GUI thread)."""
    return memo.snapshot(state)


def _rule_preview(command: str, workspace: Workspace) -> str | None:
    """What *Always allow* would add for ``command`` (every rule of
    :func:`.run_cli.setup.always_allow_rules`), or ``None`` (the button is then off) when
    no rule can match it (a here-document, a comment, an unparsable line). A destructive
    command only ever gets its exact text (judged in the workspace)."""
    rules = always_allow_rules(command, workspace)
    return describe_rules(rules) if rules else None


def _pretty_json(arguments: Any) -> str:
    """MCP arguments (a JSON string or a value) indented for reading; text that is not JSON
    is shown as it is."""
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return str(arguments)
    return json.dumps(value, indent=2, ensure_ascii=False)


def _failure_info(exc: BaseException) -> Any:
    """A failed model request or a missing key as a ``ModelErrorInfo``; else ``None``."""
    from core.errors import ModelProviderError
    from core.models.errors import ModelErrorInfo, describe_model_error

    if isinstance(exc, ModelProviderError):
        return describe_model_error(exc)
    if isinstance(exc, UserError) and "API key" in str(exc):
        return ModelErrorInfo("auth", str(exc), open_settings=True)
    return None
