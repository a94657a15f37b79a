"""The main window: layout, menus and the single place where signals are wired."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QProcess, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.settings import Settings
from resources import read_text

from .browser_session import BrowserSession
from .controller import Controller
from .export_folder import remember_export_folder, suggested_export_path
from .main_window_tabs import BROWSER_VIEW_SLOTS, LazyTabs
from .notify import Notifier
from .unified_diff import parse_unified_diff
from .views.approval_panel import ApprovalPanel
from .views.compaction_card import CompactionCard
from .views.composer import Composer
from .views.conversation_view import ConversationView
from .views.diff_view import DiffView
from .views.instructions_view import InstructionsButton
from .views.retry_banner import RetryBanner
from .views.sessions_list import SessionsList
from .views.top_bar import TopBar

__all__ = ["MainWindow"]

_TABS = ("Diff", "Terminal", "Browser", "Checkpoints")


class MainWindow(QMainWindow, LazyTabs):
    """Sessions on the left, the conversation in the centre, diff/terminal/browser/checkpoints
    on the right, the top bar above. Views only talk to the controller through signals."""

    closed = Signal()
    #: The user applied new settings (a ``core.settings.Settings``), already saved.
    settingsChanged = Signal(object)

    def __init__(
        self,
        controller: Controller,
        settings: Settings,
        *,
        branch: str | None = None,
        browser_session: BrowserSession | None = None,
    ) -> None:
        super().__init__()
        self.controller = controller
        self.settings = settings
        self.setWindowTitle(f"Tandem — {controller.workspace.root.name}")
        self.resize(1440, 900)

        self.top_bar = TopBar()
        self.sessions = SessionsList()
        self.conversation = ConversationView()
        self.approvals = ApprovalPanel()
        self.composer = Composer()
        self.retry_banner = RetryBanner()  # issue 16: retrying in N s, Retry, Open Settings
        self.instructions = InstructionsButton()  # issue 16: the AGENTS.md files loaded
        self.instructions.setFixedHeight(self.top_bar.mode_badge.minimumHeight())
        self.top_bar.layout().insertWidget(3, self.instructions)
        self.diff_view = DiffView()
        self.diff_view.set_split_min_columns(getattr(settings, "diff_split_min_columns", 60))
        # issue 15: the Diff tab is the one the first frame shows; the others are built when
        # first shown or used, or right after the first paint (desktop.main_window_tabs)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.diff_view, _TABS[0])
        self._init_lazy_tabs(browser_session, _TABS[1:])

        centre = QWidget()
        column = QVBoxLayout(centre)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(6)
        column.addWidget(self.conversation, 1)
        column.addWidget(self.approvals)
        column.addWidget(self.retry_banner)
        column.addWidget(self.composer)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.sessions)
        split.addWidget(centre)
        split.addWidget(self.tabs)
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 4)
        split.setSizes([190, 470, 780])

        root = QWidget()
        layout = QVBoxLayout(root)
        layout.setContentsMargins(8, 6, 8, 8)
        layout.addWidget(self.top_bar)
        layout.addWidget(split, 1)
        self.setCentralWidget(root)
        # issue 15: styled once the tree is built (one polish pass, not one per insertion)
        self.setStyleSheet(read_text("styles", "window.qss"))

        workspace = controller.workspace
        self.top_bar.set_repository(str(workspace.root), branch)
        self.top_bar.set_model(settings.model)
        self.top_bar.set_mode(str(workspace.mode))
        if not workspace.sandbox_enabled:
            self.top_bar.set_sandbox("off", "Sandbox turned off in Settings")
        elif workspace.sandbox_available:
            self.top_bar.set_sandbox("on", "Commands run under bubblewrap")
            summary = workspace.sandbox_summary()
            self.top_bar.set_sandbox_protection(list(summary.hidden), list(summary.protected))
        else:
            self.top_bar.set_sandbox(
                "unavailable", "bubblewrap (bwrap) is not installed or does not work here"
            )
        self._settings_dialog: Any = None
        self._proposals: dict[str, Any] = {}
        self._restored_decisions: dict[str, Any] = {}
        self._close_confirmed = False
        #: The "quit during a run?" question while it is shown (window-modal, never blocking).
        self.close_question: QMessageBox | None = None
        #: The tray icon (a few D-Bus round trips on a desktop with a tray): made after the
        #: first paint (:meth:`finish_start_up`) or at the first notification (issue 15).
        self._notifier: Notifier | None = None
        self._compaction_cards: dict[float, CompactionCard] = {}  # by record.created_at
        self._build_menus()
        self._connect_signals()

    def finish_start_up(self) -> None:
        """What the first frame does not show, built right after it (issue 15, "window up
        under 1.5 s"): the hidden tabs and the tray icon."""
        self.build_lazy_tabs()
        if self._notifier is None:
            self._notifier = Notifier(self)

    # -- the lazy tabs' slots (desktop.main_window_tabs builds them) ---------------------------
    def _tab_shown(self, index: int) -> None:
        if index == 1:
            if self._terminal is None:
                self._build_terminal()
        elif index == 2 and self._browser is None:
            self._build_browser()
        elif index == 3 and self._checkpoints is None:
            self._build_checkpoints()

    # the terminal's slots, through the property (bound methods: Qt disconnects them with us)
    def _command_started(self, *args: Any) -> None:
        self.terminal.on_command_started(*args)

    def _command_output(self, *args: Any) -> None:
        self.terminal.on_output(*args)

    def _command_finished(self, *args: Any) -> None:
        self.terminal.on_command_finished(*args)

    def _command_restored(self, *args: Any) -> None:
        self.terminal.restore_block(*args)

    def _set_undo_restore(self, available: bool) -> None:
        self._undo_restore_available = available
        if self._checkpoints is not None:
            self._checkpoints.set_undo_available(available)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Close, but first ask when a run is going on or a change waits for review (the
        window-close convention: the event is ignored and the window closes again once the
        user confirms)."""
        if not self._close_confirmed and self.controller.has_pending_work:
            event.ignore()
            self._ask_before_closing()
            return
        self.closed.emit()
        super().closeEvent(event)

    def request_quit(self, *, force: bool = False) -> None:
        """Close as the close button does (asking first when a run is going on or a change
        waits for review), or with ``force`` without asking: the run is stopped and
        journaled as on *Stop*, waiting reviews are kept. Ctrl+C in the terminal that
        started the window calls it (:class:`desktop.interrupt.SigintCloser`)."""
        if force:
            self._close_confirmed = True
            if self.close_question is not None:
                self.close_question.reject()
        self.close()

    def _ask_before_closing(self) -> None:
        if self.close_question is not None:
            self.close_question.raise_()
            return
        running = self.controller.is_running
        reviews = len(self.controller.workspace.review_queue.pending())
        what = "The agent is working" if running else "A change is waiting for your review"
        if running and reviews:
            what = "The agent is working and a change is waiting for your review"
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Quit Tandem?",
            f"{what}. Quit anyway?",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("confirmClose")
        box.setInformativeText(
            "Quitting stops the run. Changes waiting for review are kept: they are shown again "
            "in the Diff tab the next time you open this folder."
        )
        quit_button = box.addButton("Stop and quit", QMessageBox.ButtonRole.AcceptRole)
        quit_button.setObjectName("confirmQuit")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)

        def answered(_result: int) -> None:
            self.close_question = None
            if box.clickedButton() is quit_button:
                self._close_confirmed = True
                self.close()

        box.finished.connect(answered)
        self.close_question = box
        box.open()

    # -- menus ---------------------------------------------------------------------------------
    def _action(
        self, menu: Any, text: str, shortcut: str | QKeySequence.StandardKey | None, slot: Any
    ) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file = bar.addMenu("&File")
        self._action(file, "&Open folder…", "Ctrl+O", self._open_folder)
        recent = file.addMenu("Recent folders")
        for folder in self.settings.recent_folders:
            self._action(
                recent, str(folder), None, lambda _=False, f=folder: self._open_path(Path(f))
            )
        self._action(file, "&Export session…", None, self._export_session)  # issue 16
        file.addSeparator()
        self._action(file, "&Settings…", "Ctrl+,", self.show_settings)
        self._action(file, "&Quit", "Ctrl+Q", self.close)
        session = bar.addMenu("&Session")
        self._action(session, "&Send task", "Ctrl+Return", self.composer.submit)
        self._action(session, "&Stop run", "Ctrl+.", self.controller.stop)
        self._action(session, "&Refresh checkpoints", "Ctrl+R", self.controller.refresh_checkpoints)
        session.addSeparator()  # issue 14: the context window
        self.compact_action = self._action(
            session, "&Compact now", "Ctrl+Shift+K", self.controller.compact_now
        )
        self.undo_compaction_action = self._action(
            session, "&Undo compaction", None, self.controller.undo_compaction
        )
        self.undo_compaction_action.setEnabled(False)
        view = bar.addMenu("&View")
        for index, name in enumerate(_TABS):
            self._action(
                view,
                name,
                f"Ctrl+{index + 1}",
                lambda _=False, i=index: self.tabs.setCurrentIndex(i),
            )
        self._action(view, "Focus composer", "Ctrl+L", lambda: self.composer.setFocus())

    # -- compactions (issue 14) -----------------------------------------------------------------
    def _add_compaction_card(self, record: Any) -> None:
        for card in self._compaction_cards.values():
            card.set_undoable(False)
        card = CompactionCard(record)
        card.set_undoable(self.controller.context.undoable)
        card.undoRequested.connect(self.controller.undo_compaction)
        self._compaction_cards[record.created_at] = card
        self.conversation.add_entry(card)

    def _compaction_undone(self, record: Any) -> None:
        card = self._compaction_cards.get(record.created_at)
        if card is not None:
            card.set_undone()

    def _set_undo_compaction(self, available: bool) -> None:
        self.undo_compaction_action.setEnabled(available)
        latest = list(self._compaction_cards.values())[-1:]
        for card in latest:
            card.set_undoable(available)

    # -- wiring --------------------------------------------------------------------------------
    def _connect_signals(self) -> None:
        c = self.controller
        self.composer.submitted.connect(c.submit)
        self.composer.patchSubmitted.connect(c.apply_patch_text)  # a pasted patch: reviewed
        self.composer.stopRequested.connect(c.stop)
        c.runningChanged.connect(self.composer.set_running)
        c.userMessage.connect(self.conversation.add_user_message)
        c.assistantDelta.connect(self.conversation.append_assistant_delta)
        c.assistantDone.connect(self.conversation.finish_assistant_message)
        c.reasoning.connect(self.conversation.add_reasoning)
        c.toolStarted.connect(self.conversation.add_tool_card)
        c.toolUpdated.connect(self.conversation.update_tool_card)
        c.toolBody.connect(self.conversation.set_tool_body)
        c.citations.connect(self.conversation.set_citations)
        c.nestedEntry.connect(self.conversation.adopt)
        c.notice.connect(self.conversation.add_notice)
        c.toolStarted.connect(self._follow_tool)
        c.modelRetrying.connect(self.retry_banner.show_retry)  # issue 16
        c.modelFailed.connect(self.retry_banner.show_failure)
        c.runningChanged.connect(self.retry_banner.running_changed)
        c.assistantDelta.connect(self.retry_banner.progress)
        c.toolStarted.connect(self.retry_banner.progress)
        self.retry_banner.retryRequested.connect(c.retry)
        self.retry_banner.settingsRequested.connect(self.show_settings)
        if self._browser_session is not None:
            browser = self._browser_session
            for name, slot in BROWSER_VIEW_SLOTS:  # the view is built at the first of them
                getattr(browser, name).connect(lambda *a, s=slot: self._browser_first(s, *a))
            c.toolStarted.connect(browser.on_tool_started)
            c.toolUpdated.connect(browser.on_tool_updated)
            c.runningChanged.connect(browser.set_agent_running)
            browser.notice.connect(self.conversation.add_notice)
        c.usageChanged.connect(  # issue 16: the session's earlier runs (journal) plus this one
            lambda i, o, t: self._show_usage(getattr(c, "usage_base", (0, 0, 0)), (i, o, t))
        )
        self.composer.compactRequested.connect(c.compact_now)  # issue 14
        c.context.reportChanged.connect(self.top_bar.set_context)
        c.context.compacted.connect(self._add_compaction_card)
        c.context.compactionUndone.connect(self._compaction_undone)
        c.context.undoAvailable.connect(self._set_undo_compaction)
        c.modeChanged.connect(self.top_bar.set_mode)
        self.top_bar.modeChangeRequested.connect(c.set_mode)
        self.top_bar.settingsRequested.connect(self.show_settings_safety)
        self.conversation.toolCardActivated.connect(self._show_tool)

        c.approvalRequested.connect(self.approvals.enqueue)
        c.approvalRequested.connect(self._notify_approval)
        c.approvalWithdrawn.connect(self.approvals.withdraw)
        self.approvals.decided.connect(c.decide)

        c.proposalSubmitted.connect(self._show_proposal)
        c.proposalClosed.connect(self._close_proposal)
        c.runningChanged.connect(self._forget_applied)  # issue 16: applied files until then
        c.proposalWithdrawn.connect(self._withdraw_proposal)
        c.reviewDecisionsRestored.connect(self._restore_decisions)
        self.diff_view.applyRequested.connect(c.apply_review)
        self.diff_view.decisionChanged.connect(self._note_decision)
        self.diff_view.decisionsChanged.connect(self._note_decisions)
        c.undoRestoreAvailable.connect(self._set_undo_restore)
        self.tabs.currentChanged.connect(self._tab_shown)

        # the terminal is built at its first command (or first shown, or after the first paint)
        c.commandStarted.connect(self._command_started)
        c.commandOutput.connect(self._command_output)
        c.commandFinished.connect(self._command_finished)
        if hasattr(c, "commandRestored"):  # issue 16: a reopened session's terminal blocks
            c.commandRestored.connect(self._command_restored)

        c.checkpointsChanged.connect(self._show_checkpoints)
        c.checkpointDiffReady.connect(self._show_checkpoint_diff)

    # -- slots -----------------------------------------------------------------------------------
    def _show_usage(self, base: Any, run: tuple[int, int, int]) -> None:
        """The session's tokens: earlier runs (``base``, from the journal) plus this run's."""
        self.top_bar.set_usage(*(int(a) + b for a, b in zip(base, run, strict=True)))

    def _follow_tool(self, call_id: str, kind: str, title: str, detail: str) -> None:
        """Bring the browser forward when the agent starts using it (the user watches live)."""
        if kind == "computer" and self._browser_session is not None:
            self.tabs.setCurrentIndex(2)

    def _show_tool(self, call_id: str, kind: str) -> None:
        if kind == "stop":  # a stalled card's Stop button
            self.controller.stop_tool(call_id)
            return
        if kind == "computer" and self._browser_session is not None:
            self.browser.show_call(call_id)  # type: ignore[union-attr]
        tab = {"shell": 1, "apply_patch": 0, "computer": 2, "codex": 1}.get(kind)
        if tab is not None:
            self.tabs.setCurrentIndex(tab)

    def _show_proposal(self, proposal: Any) -> None:
        old = proposal.old_text
        new = None if proposal.kind == "delete" else proposal.new_text
        self.diff_view.set_read_only(False)
        self.diff_view.set_files(list(self._proposals.values()))
        # shown at once; the hunks (the proposal's own) stream in from a worker thread
        diff = self.diff_view.stream_file(
            proposal.move_to or proposal.path,
            old,
            new,
            proposal_id=proposal.id,
            hunks=proposal.hunks or None,
        )
        self._proposals[proposal.id] = diff
        restored = self._restored_decisions.pop(proposal.id, None)
        if restored:
            self.diff_view.restore_decisions(diff.path, restored)
        self.tabs.setCurrentIndex(0)

    def _close_proposal(self, proposal_id: str) -> None:
        """A review was answered: an applied file stays listed, read-only and marked
        applied, until the next proposal or run (issue 16); a fully rejected one goes."""
        diff = self._proposals.pop(proposal_id, None)
        if diff is not None:
            self.diff_view.mark_applied(diff.path)
            kept = self.diff_view.applied_files()
            self.diff_view.set_files([*self._proposals.values(), *kept])

    def _forget_applied(self, running: bool) -> None:
        """A new run starts: the files applied in the last one leave the Diff tab."""
        if running and self.diff_view.applied_files():
            self.diff_view.set_files(list(self._proposals.values()))

    def _withdraw_proposal(self, proposal_id: str) -> None:
        """A stopped run withdrew the review: nothing can be applied; the last proposals stay
        on screen, read-only, so the user still sees what was proposed."""
        diff = self._proposals.pop(proposal_id, None)
        if diff is None:
            return
        if self._proposals:
            self.diff_view.set_files(list(self._proposals.values()))
        else:
            self.diff_view.set_read_only(True)
        self.conversation.add_notice(
            f"The review of {diff.path} was withdrawn (the run stopped); nothing was written.",
            "info",
        )

    def _restore_decisions(self, proposal_id: str, decisions: Any) -> None:
        diff = self._proposals.get(proposal_id)
        if diff is None:  # shown a moment later (proposalSubmitted): applied then
            self._restored_decisions[proposal_id] = decisions
        else:
            self.diff_view.restore_decisions(diff.path, decisions)

    def _note_decision(self, path: str, hunk_id: int, decision: Any) -> None:
        for proposal_id, diff in self._proposals.items():
            if diff.path == path:
                self.controller.note_review_decision(proposal_id, hunk_id, decision)
                return

    def _note_decisions(self, path: str, decisions: Any) -> None:
        for proposal_id, diff in self._proposals.items():
            if diff.path == path:
                self.controller.note_review_decisions(proposal_id, decisions)
                return

    def _show_checkpoints(self, checkpoints: list[Any]) -> None:
        from .views.checkpoints_view import CheckpointInfo

        infos = [
            CheckpointInfo(
                cp.id,
                cp.created_at,
                cp.turn,
                cp.label,
                getattr(cp, "files_touched_count", 0) or len(cp.files_touched or ()),
            )
            for cp in checkpoints
        ]
        self.checkpoints.set_checkpoints(infos)

    def _show_checkpoint_diff(self, a: str, b: str, text: str) -> None:
        """A checkpoint's ``git diff`` text: parsed on the diff view's worker thread, its files
        listed at once and their hunks streaming in (issue 15); a blank text says so."""
        self._proposals.clear()
        self.diff_view.set_read_only(True)
        self.diff_view.stream_unified(text, parse_unified_diff)
        self.tabs.setCurrentIndex(0)
        if not text.strip():
            self.conversation.add_notice(
                f"No difference between {a} and {b or 'the working tree'}.", "info"
            )

    def _open_folder(self) -> None:
        dialog = QFileDialog(self, "Open a repository folder", str(self.controller.workspace.root))
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.fileSelected.connect(lambda path: self._open_path(Path(path)))
        dialog.open()

    def _export_session(self) -> None:
        """File > Export session… (issue 16, record and replay): a non-modal save dialog;
        the controller writes the file off the GUI thread (docs/record-replay.md)."""
        sid = self.controller.session_id or "session"
        repo = self.controller.workspace.root
        start = suggested_export_path(sid, repo)  # issue 16: outside the work tree, remembered
        dialog = QFileDialog(self, "Export session", str(start), "Session files (*.json)")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix("json")
        dialog.fileSelected.connect(lambda chosen: remember_export_folder(chosen, repo))
        dialog.fileSelected.connect(self.controller.export_session)
        self.export_dialog = dialog  # tests answer it
        dialog.open()

    def _open_path(self, path: Path) -> None:
        """Open ``path`` in a new Tandem window (its own process) and remember it."""
        if not path.is_dir():
            self.conversation.add_notice(f"{path} is not a folder.", "error")
            return
        if not QProcess.startDetached(sys.executable, ["-m", "desktop.cli", str(path)]):
            self.conversation.add_notice(f"Could not start Tandem on {path}.", "error")
            return
        self._apply_settings(self.settings.with_recent_folder(path))
        self.conversation.add_notice(f"Opened {path} in a new window.", "info")

    def _notify_approval(self, request: Any) -> None:
        if self._notifier is None:
            self._notifier = Notifier(self)
        self._notifier.notify(
            "Tandem needs your approval", f"{request.title}: {request.body[:120]}"
        )

    def show_settings(self) -> None:
        from .dialogs.settings_dialog import SettingsDialog

        if self._settings_dialog is None:
            self._settings_dialog = SettingsDialog(
                self.settings, self.controller._rules_store, self
            )
            self._settings_dialog.settingsApplied.connect(self._apply_settings)
        self._settings_dialog.show()
        self._settings_dialog.raise_()

    def show_settings_safety(self) -> None:
        """Open Settings on its Safety tab (what the sandbox hides; the sandbox menu asks)."""
        self.show_settings()
        tabs = self._settings_dialog.tabs
        for index in range(tabs.count()):
            if tabs.tabText(index) == "Safety":
                tabs.setCurrentIndex(index)

    def _apply_settings(self, settings: Settings) -> None:
        from core.settings import save_settings

        previous, self.settings = self.settings, settings
        try:
            save_settings(settings)
        except Exception as exc:
            self.conversation.add_notice(f"Settings not saved: {exc}", "error")
        # issue 16: the session keeps its mode unless the approval-mode setting itself changed
        if str(settings.approval_mode) != str(previous.approval_mode):
            self.controller.set_mode(str(settings.approval_mode))
        self.top_bar.set_model(settings.model)
        self.diff_view.set_split_min_columns(getattr(settings, "diff_split_min_columns", 60))
        self.settingsChanged.emit(settings)
