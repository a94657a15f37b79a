"""The composition root: builds the Qt application, the qasync loop, settings, harnesses, the
controller and the main window, and runs them until the window closes."""

from __future__ import annotations

import asyncio
import logging
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import harnesses.codex
from core import (
    Agent,
    OpenAIProvider,
    RunConfig,
    UserError,
)
from core.context_window import ContextPolicy
from core.policy import RuleStore
from core.redaction import install_log_redaction
from core.settings import Settings, load_settings
from harnesses.browser import BrowserNotFoundError, PlaywrightComputer, find_chromium
from harnesses.browser.gated import ActionGate, GatedComputer
from harnesses.instructions import load_instructions
from harnesses.sessions import SessionJournal
from harnesses.sessions.journal import default_journal_path
from harnesses.sessions.resume import journaled_mode
from harnesses.workspace import Workspace

from .agent_builder import build_agent
from .mcp_session import WindowMcp
from .review_journal import pending_reviews
from .run_cli.setup import project_root, workspace_for

# isort: split
# Qt from here on. PySide6 hooks every import made after it loads (its ``__feature__`` check
# reads each new module's source file): the non-Qt layers above load before it (issue 15).
import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from .browser_session import BrowserSession
from .controller import Controller
from .first_paint import after_first_paint
from .gc_policy import install_gui_thread_gc
from .interrupt import SigintCloser
from .main_window import MainWindow
from .views.sessions_list import SessionSummary

__all__ = ["AppOptions", "run_app"]

logger = logging.getLogger("desktop")


class AppOptions:
    """How to start the window.

    Attributes:
        folder: the repository to open (default: the last one, else the current folder).
        demo: open a copy of the bundled sample repository with the scripted demo model.
        screenshot: save screenshots there (``-review`` suffix for the review moment) and quit;
            the demo then answers its own approvals and reviews, like a user would.
        journal_path: the session journal (default: the platform data dir).
        scenario: the demo scenario (``fix`` or ``research``, see ``desktop.demo``).
    """

    def __init__(
        self,
        folder: Path | None = None,
        *,
        demo: bool = False,
        screenshot: Path | None = None,
        journal_path: Path | None = None,
        settings_path: Path | None = None,
        scenario: str = "fix",
    ) -> None:
        self.folder = folder
        self.demo = demo
        self.screenshot = screenshot
        self.journal_path = journal_path
        self.settings_path = settings_path
        self.scenario = scenario


def _branch(folder: Path) -> str | None:
    """The badge's branch name, read through the git door (no repository code runs)."""
    from harnesses.vcs import current_branch

    return current_branch(folder)


class _CodexRelay:
    """Forwards Codex events to the controller, which exists only after the agent is built."""

    def __init__(self) -> None:
        self.target: Any = None
        self.stall_target: Any = None

    def __call__(self, event: Any) -> None:
        if self.target is not None:
            self.target(event)

    def stall(self, stalled: bool, idle_seconds: float, stop: Any) -> None:
        """A Codex turn stalled (or resumed): forwarded to ``Controller.on_codex_stall``."""
        if self.stall_target is not None:
            self.stall_target(stalled, idle_seconds, stop)


def _agent_factory(
    settings: Settings,
    relay: _CodexRelay,
    computer: GatedComputer | None = None,
    mcp: WindowMcp | None = None,
    on_instructions: Any = None,
) -> Any:
    """The controller's agent factory: :func:`desktop.agent_builder.build_agent` with the
    window's parts (the browser, Codex events to the controller, the AGENTS.md list)."""

    def build(workspace: Workspace) -> Agent[Any]:
        return build_agent(
            workspace,
            settings,
            computer=computer,
            on_codex_stream=relay,
            on_codex_stall=relay.stall,
            on_instructions=on_instructions,
            mcp_servers=mcp.agent_servers() if mcp is not None else (),  # issue 18
        )

    return build


class _Session:
    """Everything one window owns, so it can be closed in one place."""

    def __init__(self, options: AppOptions) -> None:
        self.options = options
        self.errors: list[str] = []
        self._refreshes: set[asyncio.Future[None]] = set()
        self._closing = False
        self.workdir: Path | None = None
        self.codex_relay = _CodexRelay()
        self.browser: PlaywrightComputer | None = None
        self.browser_session: BrowserSession | None = None
        self.browser_error: str | None = None
        gated: GatedComputer | None = None
        try:
            self.settings = load_settings(options.settings_path)
        except UserError as exc:
            self.errors.append(f"Settings not loaded: {exc}")
            self.settings = Settings()
        if options.demo:
            from .demo import build_demo_agent, copy_sample_repo, demo_session

            self.workdir = Path(tempfile.mkdtemp(prefix="tandem-demo-"))
            folder = copy_sample_repo(self.workdir / "inventory")
            started = folder
            self.task: str | None = demo_session(options.scenario)["task"]
            mode = "ask"
            if options.scenario == "browser":  # real Chromium, a throw-away profile (issue 17)
                self.browser = PlaywrightComputer(throwaway=True)
                gate = ActionGate()
                gated = GatedComputer(self.browser, gate)
                self.browser_session = BrowserSession(self.browser, gate)

            def factory(workspace: Workspace) -> Agent[Any]:
                return build_demo_agent(
                    workspace, delay_s=0.4, scenario=options.scenario, computer=gated
                )[0]

            self.factory: Any = factory
        else:
            # issue 16: a subfolder of a repository opens the repository's top level
            started = options.folder or self.settings.last_folder or Path.cwd()
            folder = project_root(started)
            self.task = None
            mode = str(self.settings.approval_mode)
            chromium = str(self.settings.chromium_path) if self.settings.chromium_path else None
            try:
                find_chromium(chromium)
            except BrowserNotFoundError as exc:
                self.browser_error = str(exc)
            else:  # a persistent profile per project, launched on the agent's first action
                self.browser = PlaywrightComputer(project_dir=folder, executable=chromium)
                gate = ActionGate()
                gated = GatedComputer(self.browser, gate)
                self.browser_session = BrowserSession(self.browser, gate)
            self.mcp = WindowMcp(self.settings, folder, lambda: self.workspace.mode)
            self.factory = _agent_factory(
                self.settings, self.codex_relay, gated, self.mcp, self._instructions_loaded
            )
        self.rules_store = RuleStore(self.settings.rules_path)
        try:
            rules = list(self.rules_store.list())
        except UserError as exc:
            self.errors.append(str(exc))
            rules = []
        data = self.workdir / "data" if self.workdir else None
        # issue 16: built as `tandem run` builds it, from the same settings
        self.workspace = workspace_for(
            self.settings,
            folder,
            mode=mode,
            rules=rules,
            data_dir=data,
            started_in=started,
        )
        journal_path = options.journal_path or (
            self.workdir / "journal.sqlite3" if self.workdir else default_journal_path()
        )
        self.journal = SessionJournal(journal_path)
        #: The session is reopened (it was interrupted or waits for the user), not new.
        self.resumed = None if options.demo else _session_to_resume(self.journal, folder)
        #: issue 16: no session at launch; the first task creates it, named from the task
        self.session_id = self.resumed
        if self.resumed:  # issue 16: in the mode it ran in, from the first frame on
            self.workspace.set_mode(journaled_mode(self.journal, self.resumed) or mode)
        self.controller = Controller(
            self.workspace,
            self.factory,
            run_config=_run_config(self.settings, self._model_retry),
            rules_store=self.rules_store,
            journal=self.journal,
            session_id=self.session_id,
        )
        self.codex_relay.target = self.controller.on_codex_event
        self.codex_relay.stall_target = self.controller.on_codex_stall
        self.window = MainWindow(
            self.controller,
            self.settings,
            branch=_branch(folder),
            browser_session=self.browser_session,
        )
        if not options.demo:
            self.window.settingsChanged.connect(lambda s: self._settings_changed(s, gated))
            self.mcp.attach(self.window)  # issue 18: states in the top bar and Settings
            # the servers start after the window's first paint (run_app, issue 15)
        if options.demo:  # issue 16: the demo's model is the scripted one, not gpt-5.5
            self.window.top_bar.set_model("scripted")
            self.window.top_bar.model.setToolTip("Model: scripted (the offline demo's replay)")
        self.window.instructions.set_instructions(  # before the first run too (issue 16)
            load_instructions(
                self.workspace.started_in, cap_bytes=self.settings.agents_md_cap_bytes
            )
        )
        if self.browser_error:  # shown by the Browser tab when it is built (issue 15)
            self.window.set_browser_message(f"The browser tool is off: {self.browser_error}")

    def _settings_changed(self, settings: Settings, computer: GatedComputer | None) -> None:
        """New model, key, server or tools apply from the next run on."""
        self.settings = settings
        self.workspace.set_sandbox_paths(
            settings.sandbox_hidden_paths, settings.sandbox_shown_paths
        )
        self.workspace.executor.input_wait_s = settings.shell_input_wait_seconds or None
        if self.workspace.sandbox_available:  # the indicator lists what is hidden now
            summary = self.workspace.sandbox_summary()
            self.window.top_bar.set_sandbox_protection(
                list(summary.hidden), list(summary.protected)
            )
        if not self.options.demo:
            self.mcp.replace(settings)
        self.factory = _agent_factory(
            settings,
            self.codex_relay,
            computer,
            getattr(self, "mcp", None),
            self._instructions_loaded,
        )
        self.controller.set_agent_factory(self.factory, _run_config(settings, self._model_retry))

    def _instructions_loaded(self, loaded: Any) -> None:
        """A run read the AGENTS.md files: the top bar lists them (issue 16)."""
        if hasattr(self, "window"):
            self.window.instructions.set_instructions(loaded)

    def _model_retry(self, notice: Any) -> None:
        """A model request waits to be retried: the retry banner counts down (issue 16)."""
        if hasattr(self, "controller"):
            self.controller.on_model_retry(notice)

    def sessions(self) -> list[SessionSummary]:
        """The repository's sessions with true states (issue 16); empty ones are left out."""
        records = self.journal.sessions(self.workspace.root)
        controller = getattr(self, "controller", None)
        current = controller.session_id if controller is not None else None
        running = bool(controller is not None and controller.is_running)
        return [
            SessionSummary(r.id, r.title, r.updated_at, self._state(r, current, running))
            for r in records
            if r.event_count
        ]

    def _state(self, record: Any, current: str | None, running: bool) -> str:
        return session_state(self.journal, record, current=current, running=running)

    def refresh_sessions(self) -> None:
        """Re-read the list after the journal's queued writes (its writer thread keeps the
        order), then show it with the current session selected."""

        if self._closing:  # the run's last signals, while the window closes
            return

        async def refresh() -> None:
            try:
                await self.journal.asessions(self.workspace.root)  # waits for queued writes
            except Exception:
                return
            if self._closing:
                return
            self.window.sessions.set_sessions(self.sessions())
            if self.controller.session_id:
                self.window.sessions.select(self.controller.session_id)

        task = asyncio.ensure_future(refresh())
        self._refreshes.add(task)
        task.add_done_callback(self._refreshes.discard)

    def rename_session(self, session_id: str, title: str) -> None:
        """The sessions list renamed a session: stored in the journal."""
        try:
            self.journal.rename_session(session_id, title)
        except Exception as exc:
            self.window.conversation.add_notice(f"Session not renamed: {exc}", "error")
        self.refresh_sessions()

    def new_session(self) -> None:
        """*New*: an empty conversation and terminal; the next task creates the session."""
        if self.controller.is_running:
            self.window.conversation.add_notice("A run is in progress; stop it first.", "warning")
            return
        self.window.conversation.clear()
        self.window.terminal.clear_blocks()
        self.controller.new_session()
        self.window.sessions.select("")

    async def close(self) -> None:
        self._closing = True  # no list refresh starts now (the journal closes below)
        await self.controller.shutdown()
        for refresh in list(self._refreshes):
            refresh.cancel()
        await asyncio.gather(*self._refreshes, return_exceptions=True)
        if hasattr(self, "mcp"):
            await self.mcp.aclose()
        if self.browser_session is not None:
            await self.browser_session.close()
        if self.browser is not None:
            await self.browser.close()
        self.journal.close()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)


def _run_config(settings: Settings, on_retry: Any = None) -> RunConfig:
    key = settings.api_key.get_secret_value() if settings.api_key else None
    return RunConfig(
        model_provider=OpenAIProvider(
            api_key=key,
            base_url=settings.base_url,
            no_key_needed=settings.no_key_needed,  # issue 16: localhost needs none either
            on_retry=on_retry,
        ),
        tool_not_found_behavior="return_error_to_model",
        malformed_tool_call_behavior="return_error_to_model",
        auto_previous_response_id=settings.use_previous_response_id,
        context_policy=ContextPolicy.from_settings(settings),  # issue 14
    )


def session_state(
    journal: SessionJournal, record: Any, *, current: str | None = None, running: bool = False
) -> str:
    """A session's true state for the sessions list (issue 16): ``running`` (this window's
    run, or a live process drives it), ``waiting-approval``, ``done``, ``failed``,
    ``stopped``, or ``interrupted``: journaled as active while no live process drives it
    (a crash, a kill; see ``SessionJournal.owner_alive``).

    Args:
        journal: the journal holding ``record``.
        record: a ``SessionRecord``.
        current: the session this window shows; running: whether its run goes on.
    """
    if record.id == current and running and record.status != "awaiting_approval":
        return "running"
    if record.status == "active":
        if record.id != current and journal.owner_alive(record.id):
            return "running"  # another Tandem window drives it
        return "interrupted"
    return _status(record.status)


def _status(status: str) -> str:
    return {
        "awaiting_approval": "waiting-approval",
        "completed": "done",
        "active": "interrupted",
        "cancelled": "stopped",
    }.get(status, status)


def run_app(options: AppOptions) -> int:
    """Open the window and run until it closes; returns the exit code."""
    install_log_redaction()  # issue 11: logs and crash tracebacks are redacted
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Tandem")
    app.setOrganizationName("Tandem")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    gc_timers: list[Any] = []  # kept alive for the app's lifetime

    def collect_on_gui_thread() -> None:
        """issue 15: from the first paint on (or the welcome window's), not before: start-up
        ran with the collector off (``desktop.cli``), and a first young collection before
        the paint scanned the whole start-up heap (tens of ms of the window's launch)."""
        if not gc_timers:
            gc_timers.extend(install_gui_thread_gc(app))

    main_window: list[Any] = []  # Ctrl+C in the terminal: the welcome or the main window closes
    closer = SigintCloser(lambda count: _interrupted(app, main_window, count), app)
    if not options.demo:  # issue 16: no folder yet, or a risky one: the welcome window
        chosen = _welcome(options, loop, on_welcome=collect_on_gui_thread)
        if chosen is None:
            closer.uninstall()
            asyncio.set_event_loop(None)
            return 0
        options = chosen
    closed = loop.create_future()
    session = _Session(options)
    window = session.window
    main_window.append(window)
    window.closed.connect(lambda: closed.done() or closed.set_result(None))
    for error in session.errors:
        window.conversation.add_notice(error, "error")
    window.sessions.sessionSelected.connect(lambda sid: _open_session(session, sid))
    session.controller.runningChanged.connect(lambda _running: session.refresh_sessions())
    session.controller.sessionCreated.connect(lambda _sid: session.refresh_sessions())
    session.controller.approvalRequested.connect(lambda _r: session.refresh_sessions())
    window.sessions.sessionRenamed.connect(session.rename_session)
    window.sessions.newSessionRequested.connect(session.new_session)
    window.show()
    warming: list[asyncio.Future[None]] = []  # the imports warmed after the first paint
    # issue 15: the window is up first; what its first frame does not show comes right after

    def painted() -> None:
        collect_on_gui_thread()
        if not closed.done():
            _after_first_paint(session, loop, warming)

    after_first_paint(window, painted)
    if session.task:
        QTimer.singleShot(600, lambda: session.controller.submit(session.task or ""))
    if options.screenshot is not None:
        _drive_screenshots(session, options.screenshot, closed)
    code = 0
    try:
        with loop:
            loop.run_until_complete(closed)
            for warm in warming:
                loop.run_until_complete(warm)
            if options.demo and options.scenario == "fix":  # the one that changes the repo
                from .demo import sample_tests_pass

                green = sample_tests_pass(session.workspace.root)
                print(f"tandem demo: sample repository tests {'green' if green else 'RED'}")
                code = 0 if green else 1
            loop.run_until_complete(session.close())
    finally:
        closer.uninstall()
        asyncio.set_event_loop(None)
    return code


def _interrupted(app: QApplication, main_window: list[Any], count: int) -> None:
    """Ctrl+C number ``count`` (1 or 2) in the terminal: the main window closes as its close
    button does, the second time without asking; before it exists, the welcome window closes."""
    if main_window:
        main_window[0].request_quit(force=count > 1)
    else:
        app.closeAllWindows()


def _after_first_paint(session: _Session, loop: Any, warming: list[asyncio.Future[None]]) -> None:
    """Start-up work that waits for the window's first paint (issue 15): the tabs the first
    frame did not show and the tray icon, the Codex look-up, the local MCP servers, the
    sessions list, the reopened session, the checkpoints, and the imports the first run and
    the first diff need (warmed on a worker thread, whose future joins ``warming``)."""
    session.window.finish_start_up()
    if not session.options.demo and (
        harnesses.codex.find_codex_binary(
            str(session.settings.codex_path) if session.settings.codex_path else None
        )
        is None
    ):
        session.window.conversation.add_notice(
            f"Codex CLI not found, so the agent cannot delegate to it. {harnesses.codex.codex_install_hint()}",
            "warning",
        )
    if not session.options.demo:
        session.mcp.start()  # issue 18: in the background; states show as they come
    session.window.sessions.set_sessions(session.sessions())
    session.window.sessions.select(session.session_id)
    if session.resumed:  # interrupted, or a review or an approval waits: back where it was
        session.controller.load_session(session.resumed)
    session.controller.refresh_checkpoints()
    warming.append(loop.run_in_executor(None, _prewarm_lexers))  # first diffs open at once


def _prewarm_lexers() -> None:
    """Off the GUI thread, right after the window shows: load what the first run and the
    first diff need (importing ``openai`` takes 1 to 2 s here; done lazily on the GUI thread
    it froze the window at the first Send), and the command parser's ``bashlex`` (its tables
    take 0.1 to 0.4 s; the first command's approval would wait for them)."""
    import bashlex  # noqa: F401

    import core.models.openai_responses  # noqa: F401
    from core.models.warmup import warm_up_types

    warm_up_types()  # else ~0.5 s of schema building at the first response, on this thread

    from .views.diff_highlight import lexer_for_path

    for name in (
        "a.py",
        "a.js",
        "a.ts",
        "a.md",
        "a.json",
        "a.toml",
        "a.yaml",
        "a.sh",
        "a.rs",
        "a.go",
    ):
        lexer_for_path(name)


def _welcome(options: AppOptions, loop: Any, on_welcome: Any = None) -> AppOptions | None:
    """Issue 16: the folder to open when it is known and safe; else the welcome window's
    choice (a folder, after a question for ``$HOME`` or ``/``; or the demo); ``None`` when
    the welcome window was closed. The folder opened becomes the last and a recent one.
    ``on_welcome()`` is called before the welcome window shows."""
    from core.settings import save_settings

    from .welcome import choose_start, needs_welcome, risky_folder

    try:
        settings: Settings | None = load_settings(options.settings_path)
    except UserError:
        settings = None  # _Session says why; nothing is saved over the file
    last = settings.last_folder if settings is not None else None
    folder = options.folder
    if needs_welcome(folder, last):
        target = folder or last
        ask = target if target is not None and target.is_dir() and risky_folder(target) else None
        recent = list(settings.recent_folders) if settings is not None else []
        if on_welcome is not None:
            on_welcome()
        choice = loop.run_until_complete(choose_start(recent, ask_first=ask))
        if choice is None:
            return None
        if choice.demo:
            return AppOptions(
                demo=True, journal_path=options.journal_path, settings_path=options.settings_path
            )
        folder = choice.folder
    elif folder is None:
        folder = last
    assert folder is not None
    if settings is not None and settings.last_folder != folder:
        try:
            save_settings(settings.with_recent_folder(folder), options.settings_path)
        except Exception:
            logger.exception("the opened folder was not remembered")
    return AppOptions(
        folder, journal_path=options.journal_path, settings_path=options.settings_path
    )


def _session_to_resume(journal: SessionJournal, folder: Path) -> str | None:
    """The folder's latest session when it did not end: a change waits for review, an
    approval waits, or Tandem stopped in the middle of a run (a crash, a kill); else
    ``None`` (a new session is started)."""
    records = journal.sessions(folder)
    if not records:
        return None
    records = [r for r in records if r.event_count]  # issue 16: never an empty one
    if not records:
        return None
    latest = records[0]
    if latest.status == "awaiting_approval" or (
        latest.status == "active" and not journal.owner_alive(latest.id)
    ):
        return latest.id
    events = ((e.kind, e.payload) for e in journal.events(latest.id))
    return latest.id if pending_reviews(events) else None


def _open_session(session: _Session, session_id: str) -> None:
    if session_id == session.controller.session_id or session.controller.is_running:
        return
    session.window.conversation.clear()
    session.window.terminal.clear_blocks()  # issue 16: the chosen session's blocks come back
    session.controller.load_session(session_id)


def _drive_screenshots(session: _Session, path: Path, closed: asyncio.Future[None]) -> None:
    """Answer the demo's review and approval like a user after a pause, save screenshots."""
    window, controller = session.window, session.controller
    path.parent.mkdir(parents=True, exist_ok=True)
    review_shot = path.with_name(path.stem + "-review" + path.suffix)
    shots: dict[str, bool] = {}

    def on_proposal(proposal: Any) -> None:
        shots["review"] = True

        def accept() -> None:
            window.grab().save(str(review_shot))
            for _ in proposal.hunks:
                window.diff_view.accept_current()
            window.diff_view.apply_reviewed()

        QTimer.singleShot(1500, accept)

    def on_approval(request: Any) -> None:
        def allow() -> None:
            if not shots.get("review"):  # no patch to review: the approval is the moment
                window.grab().save(str(review_shot))
            window.approvals.allow_once()

        QTimer.singleShot(1200, allow)

    def on_running(running: bool) -> None:
        if not running:

            def finish() -> None:
                window.tabs.setCurrentIndex(2 if session.browser is not None else 1)
                QTimer.singleShot(800, final)

            def final() -> None:
                window.grab().save(str(path))
                if agent_cards:  # and a sub-agent's run, opened where it sits
                    window.conversation.reveal(agent_cards[0])
                    if search_cards:  # with the web search (and its sources) just before it
                        card = window.conversation.tool_card(search_cards[0])
                        if not card.is_body_visible():
                            card.toggle_body()
                        window.conversation.reveal(search_cards[0])
                    QTimer.singleShot(400, nested)
                elif session.browser is not None:  # the browser demo: the form error is the shot
                    closed.done() or closed.set_result(None)
                else:
                    sandbox_menu()

            def nested() -> None:
                window.grab().save(str(path.with_name(path.stem + "-subagent" + path.suffix)))
                closed.done() or closed.set_result(None)

            def sandbox_menu() -> None:  # the fix demo: what commands cannot see (issue 11)
                window.top_bar.show_sandbox_menu()
                QTimer.singleShot(500, sandbox_shot)

            def sandbox_shot() -> None:
                screen = window.screen()
                shot = screen.grabWindow(0) if screen is not None else window.grab()
                shot.save(str(path.with_name(path.stem + "-sandbox" + path.suffix)))
                window.top_bar.sandbox_menu.hide()
                closed.done() or closed.set_result(None)

            QTimer.singleShot(800, finish)

    agent_cards: list[str] = []
    search_cards: list[str] = []

    def on_card(call_id: str, kind: str, *_: Any) -> None:
        {"agent": agent_cards, "web_search": search_cards}.get(kind, []).append(call_id)

    controller.toolStarted.connect(on_card)
    controller.proposalSubmitted.connect(on_proposal)
    controller.approvalRequested.connect(on_approval)
    controller.runningChanged.connect(on_running)
    QTimer.singleShot(60_000, lambda: closed.done() or closed.set_result(None))
