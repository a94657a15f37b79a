"""``tandem run``: the window without the window (issue 16, Build item 2; docs/tandem-run.md).

It reads the window's settings (model, base URL, key, mode, rules, tools, MCP servers,
AGENTS.md); flags override them. Approvals are asked on the terminal (``y`` allow once, ``a``
always allow for this run, ``n`` reject with an optional message); ``--yes`` approves what
would ask except destructive commands, which still ask on a terminal and are rejected without
one unless ``--yes-destructive``. Without a terminal a request is rejected with a message the
model sees, so a script never hangs. In *ask* mode each patch is reviewed hunk by hunk
(:mod:`desktop.run_cli.review_tty`). Command output streams live. ``--json`` writes the JSONL
events of :mod:`desktop.run_cli.events`. Runs are journaled like the window's
(:mod:`desktop.run_cli.journaling`). Exit codes: :data:`EXIT_CODES`.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from core import (
    ModelProvider,
    ModelProviderError,
    OpenAIProvider,
    RunConfig,
    RunItemStreamEvent,
    Runner,
    RunState,
    ScriptedModel,
    UserError,
)
from core.context_window import ContextPolicy
from core.redaction import redact_text, redacting
from core.secret_handoff import handed_over
from core.settings import Settings, load_settings, settings_path
from core.settings_check import check_base_url, key_required, missing_key_message_cli
from harnesses.mcp import LocalMcpServers
from harnesses.recording.record import (
    MODEL_RESPONSE,
    RECORDING_BASE,
    model_response_payload,
    recording_base_payload,
)
from harnesses.sessions import JournalError
from harnesses.sessions.resume import (
    MODE_EVENT,
    discard_if_unused,
    forget_approvals,
    journaled_mode,
    rejudge_waiting,
)
from harnesses.workspace import Workspace

from .agent_builder import build_agent
from .context_lines import ContextPrinter
from .mcp_lines import McpPrinter, trusted_project_servers
from .run_cli.approvals import decide
from .run_cli.events import EventWriter
from .run_cli.header import header_lines, model_error_text, summary_line
from .run_cli.journaling import RunJournal
from .run_cli.reviews import on_review_event
from .run_cli.setup import project_root, saved_rules, workspace_for
from .run_cli.terminal import CliRun, prompt_tty
from .transcript_text import nested_printer
from .views.ansi import strip_ansi

__all__ = ["EXIT_CODES", "HeadlessOptions", "run_headless"]

Ask = Callable[[str], str]

#: ``tandem run``'s exit codes (docs/tandem-run.md).
EXIT_CODES = {
    0: "done: the agent gave its final answer",
    1: "failed: the model or a tool failed, or the run ended without an answer",
    2: "usage: a bad flag, folder, setting or session id",
    3: "stopped: an approval or a review was rejected (by you, or for lack of a terminal)",
    130: "interrupted (Ctrl+C)",
}


class HeadlessOptions:
    """Options of ``tandem run`` (see ``tandem run --help``)."""

    def __init__(
        self,
        repo: Path,
        task: str,
        *,
        mode: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        max_turns: int = 50,
        sandbox: bool | None = None,
        interactive: bool | None = None,
        verbose: bool = False,
        yes: bool = False,
        yes_destructive: bool = False,
        json: bool = False,
        output_last_message: Path | None = None,
        resume: str | None = None,
        journal_path: Path | None = None,
        answers: Any = None,
        full_output: bool = False,
    ) -> None:
        self.repo = repo
        self.task = task
        self.mode = mode  # None: the settings' approval mode
        self.model = model  # None: the settings' model
        self.base_url = base_url  # None: the settings' base URL, else OPENAI_BASE_URL
        self.max_turns = max_turns
        self.sandbox = sandbox  # None: the settings' "sandbox enabled"
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        self.verbose = verbose  # print "context: N% left" after every turn (issue 14)
        self.yes = yes  # approve what would ask (not destructive commands)
        self.yes_destructive = yes_destructive  # approve destructive commands too
        self.json = json  # JSONL events on stdout, the human lines on stderr
        self.output_last_message = output_last_message
        self.resume = resume  # a journaled session to continue
        self.journal_path = journal_path  # None: the platform data dir (as the window)
        self.answers = answers  # tandem replay: the recorded decisions (desktop/replay.py)
        self.full_output = full_output  # every line of command output (else long ones fold)


def _settings(out: TextIO) -> Settings:
    """The user's settings (hosted tools, MCP servers, Explorer); defaults when unreadable."""
    try:
        return load_settings()
    except UserError as exc:
        print(f"tandem run: settings not loaded ({exc}); using the defaults", file=out)
        return Settings()


def _model(
    options: HeadlessOptions, settings: Settings | None = None
) -> tuple[Any, ModelProvider | None]:
    """The model and provider: flags first, then the saved settings, then the environment."""
    settings = settings or Settings()
    if options.model and options.model.startswith("scripted:"):
        return ScriptedModel(options.model.removeprefix("scripted:")), None
    saved_key = settings.api_key.get_secret_value() if settings.api_key else None
    key = saved_key or handed_over("OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY")
    # issue 16: the Settings dialog's validator (``localhost:1234`` is refused with the fix)
    base_url = check_base_url(_base_url(options, settings))
    if not key and key_required(base_url, no_key_needed=settings.no_key_needed):
        raise UserError(missing_key_message_cli(base_url, str(settings_path())))
    provider = OpenAIProvider(api_key=key, base_url=base_url, no_key_needed=settings.no_key_needed)
    return options.model or settings.model, provider


def _base_url(options: HeadlessOptions, settings: Settings) -> str | None:
    return options.base_url or settings.base_url or os.environ.get("OPENAI_BASE_URL") or None


async def run_headless(
    options: HeadlessOptions,
    out: TextIO = sys.stdout,
    ask: Ask | None = None,
    events_out: TextIO | None = None,
) -> int:
    """Run the task; returns an exit code of :data:`EXIT_CODES`.

    Args:
        out: the human lines (with ``--json`` and no ``events_out``: the events go to ``out``
            and the lines to stderr).
        ask: reads one answer (default: stdin, the prompt on stderr).
        events_out: where ``--json`` events go (tests).

    Raises:
        asyncio.CancelledError: Ctrl+C (``tandem`` then exits 130); the journal and the
            ``session.ended`` event say ``interrupted`` first.
    """
    if options.json and events_out is None:
        events_out, out = out, sys.stderr
    out = redacting(out)  # issue 11: nothing printed holds a known secret or a secret shape
    events = EventWriter(events_out if options.json else None)
    if not options.repo.is_dir():
        print(f"tandem run: {options.repo} is not a folder", file=sys.stderr)
        events.emit("error", message=f"{options.repo} is not a folder")
        events.emit("session.ended", status="usage", exit_code=2)
        return 2
    prompt = ask or prompt_tty
    settings = _settings(out)
    try:
        journal = RunJournal(options.journal_path)
    except JournalError as exc:
        print(f"tandem run: {exc}", file=sys.stderr)
        return 2
    run = CliRun(options, out, events, journal, prompt)
    rules, rules_error = saved_rules(settings)
    if rules_error:
        print(f"tandem run: rules not loaded ({rules_error})", file=out)
    workspace = workspace_for(  # the window's settings (desktop/app.py builds it the same way)
        settings,
        project_root(options.repo),  # issue 16: a subfolder runs on the repository's top level
        started_in=options.repo,  # ... and reads the AGENTS.md files down to the subfolder
        mode=options.mode,
        rules=rules,
        sandbox_enabled=options.sandbox,
    )
    if options.resume and not options.mode:  # issue 16: the session's mode, before the
        _restore_mode(journal, options.resume, workspace)  # agent (Codex's sandbox) reads it
    workspace.executor.listener = run.on_shell_event  # issue 16: output streams live
    unsubscribe = workspace.review_queue.add_listener(
        lambda event: on_review_event(event, workspace, run)
    )
    stop_services = workspace.services.add_listener(lambda service: _print_service(service, out))
    mcp = LocalMcpServers({}, workspace=workspace.root, mode=lambda: workspace.mode)
    mcp_printer = McpPrinter(mcp, out)
    code, status = 1, "failed"
    final_text: str | None = None
    started_at = time.time()  # checkpoints taken from here on are this run's (the summary)
    try:
        project = await trusted_project_servers(
            workspace.root, interactive=options.interactive, prompt=prompt, out=out
        )
        mcp = mcp_printer.servers = LocalMcpServers(  # issue 18: [mcp_servers.NAME] + project
            {**project, **settings.local_mcp_servers},  # the user's own win on a name
            workspace=workspace.root,
            mode=lambda: workspace.mode,
            hidden_paths=list(settings.sandbox_hidden_paths),
            shown_paths=list(settings.sandbox_shown_paths),
        )
        model, provider = _model(options, settings)
        workspace.set_sandbox_paths(settings.sandbox_hidden_paths, settings.sandbox_shown_paths)
        if mcp.configs:
            await mcp.start()
            mcp_printer.print_states()
        shown: set[str] = set()
        scripted = isinstance(model, ScriptedModel)
        agent = build_agent(  # the window's agent (desktop/agent_builder.py), CLI parts
            workspace,
            settings,
            model=model,
            delegates=not scripted,  # a replay has no second model for Codex or the Explorer
            codex_settings=_codex_settings(settings, options),
            on_codex_stream=lambda event: _print_codex(event, out),
            on_codex_stall=lambda stalled, idle, _stop: _print_stall(stalled, idle, out),
            on_explorer_stream=nested_printer(out, shown),
            on_instructions=lambda loaded: [  # issue 16: AGENTS.md, printed when read
                print(f"instructions: {line}", file=out) for line in loaded.summary_lines()
            ],
            mcp_servers=mcp.ready(),
        )
        config = RunConfig(
            model_provider=provider,
            tool_not_found_behavior="return_error_to_model",
            malformed_tool_call_behavior="return_error_to_model",
            auto_previous_response_id=settings.use_previous_response_id,
        )
        context = ContextPrinter(out, verbose=options.verbose)  # issue 14
        config.context_policy = ContextPolicy.from_settings(
            settings, base_url=_base_url(options, settings), listener=context
        )
        state, base = await _first_input(options, run, agent, workspace.root)
        _session_mode(options, run, workspace)  # issue 16: the mode is the session's
        model_name = "scripted" if isinstance(model, ScriptedModel) else str(model)
        if not options.resume:  # issue 16 (record/replay): the state the session starts from
            await _record_base(run, workspace, model_name)
        print(
            f"tandem run in {workspace.root} (mode {workspace.mode}, {_sandbox_label(workspace)})",
            file=out,
        )
        print(workspace.sandbox_summary().headline(), file=out)
        for line in header_lines(
            options.repo, workspace.root, model_name, options.base_url, settings.base_url
        ):
            print(line, file=out)
        print(
            f"session {journal.session_id} (`tandem sessions show {journal.session_id}`)", file=out
        )
        events.emit(
            "session.started",
            session_id=journal.session_id,
            repo=str(workspace.root),
            model=model_name,
            mode=str(workspace.mode),
            sandbox=workspace.sandbox_summary().mode,
            resumed=bool(options.resume),
        )
        if isinstance(state, RunState) and state.get_interruptions():
            await _ask_again(state, workspace, run, mcp)  # issue 16: before anything runs
        while True:
            result = Runner.run_streamed(
                agent,
                state,
                hooks=workspace.hooks(),
                run_config=config,
                max_turns=options.max_turns,
            )
            async for event in result.stream_events():
                if isinstance(event, RunItemStreamEvent):
                    run.on_item(event, mcp, mcp_printer, shown)
                elif (response := model_response_payload(getattr(event, "data", None))) is not None:
                    run.journal.append(MODEL_RESPONSE, response)  # issue 16: a turn to export
            usage = run.usage = result.context_wrapper.usage
            events.emit(
                "turn.completed",
                usage={
                    "input_tokens": usage.input_tokens,
                    "output_tokens": usage.output_tokens,
                    "total_tokens": usage.total_tokens,
                    "requests": usage.requests,
                },
            )
            if not result.interruptions:
                context.print_final()
                break
            state = result.to_state()
            journal.state(state, "awaiting_approval")
            run.paused = state
            for item in result.interruptions:
                await decide(item, state, workspace, run, mcp)
            run.paused = None
            journal.state(None, "active")
        if result.final_output is not None:
            final_text = str(result.final_output)
            code, status = (3, "stopped") if run.rejected else (0, "done")
            journal.append(
                "run_finished",
                {"final_output": final_text, "items": result.to_input_list()[base:]},
            )
            journal.state(None, "stopped" if run.rejected else "completed")  # issue 16
        else:
            journal.append("run_failed", {"error": "the run ended without a final answer"})
            journal.state(None, "failed")
        return code
    except asyncio.CancelledError:  # Ctrl+C: journaled as the window's Stop, then 130
        code, status = 130, "interrupted"
        if run.paused is not None:  # stopped at an approval: it still waits (resume asks it)
            journal.state(run.paused, "awaiting_approval")
        else:
            journal.append("run_cancelled", {})
            journal.state(None, "cancelled")
        raise
    except UserError as exc:
        code, status = 2, "usage"
        _failed(run, f"tandem run: {exc}", f"UserError: {exc}")
        if not options.resume and journal.session_id:  # issue 16: never reached the model
            _discard_unused(journal)
        return 2
    except BrokenPipeError:  # `tandem run ... | head`: the reader left; stopped as on Ctrl+C
        from .cli import EXIT_BROKEN_PIPE

        code, status = EXIT_BROKEN_PIPE, "interrupted"
        _discard_closed(out, events_out)  # the summary and session.ended below go nowhere
        if run.paused is not None:  # stopped at an approval: it still waits (resume asks it)
            journal.state(run.paused, "awaiting_approval")
        else:
            journal.append("run_cancelled", {"reason": "output closed"})
            journal.state(None, "cancelled")
        return code
    except ModelProviderError as exc:  # issue 16: what to do (core/models/errors.py)
        text = model_error_text(exc, options.base_url, settings.base_url)
        _failed(run, f"tandem run failed: {text}", f"{type(exc).__name__}: {exc}")
        return 1
    except Exception as exc:  # reported, not a traceback, for scripts
        text = f"{type(exc).__name__}: {exc}"
        _failed(run, f"tandem run failed: {text}", text)
        return 1
    finally:
        unsubscribe()
        workspace.executor.listener = None
        await mcp.aclose()
        await _stop_services(workspace, out)
        stop_services()
        if final_text is not None and options.output_last_message is not None:
            _write_last_message(options.output_last_message, final_text, out)
        await _print_summary(run, workspace, code, status, started_at)
        events.emit(
            "session.ended",
            session_id=journal.session_id,
            status=status,
            exit_code=code,
            rejected=run.rejected,
            final_message=final_text,
        )
        journal.close()


async def _record_base(run: CliRun, workspace: Workspace, model_name: str) -> None:
    """Journal ``recording_base`` (HEAD, dirty patch, model, mode) so the session can be
    exported and replayed (issue 16; :mod:`harnesses.recording.record`); a failure is
    printed, never fatal."""
    try:
        payload = await asyncio.to_thread(
            recording_base_payload, workspace.root, model=model_name, mode=str(workspace.mode)
        )
    except Exception as exc:
        print(f"tandem run: the repository state was not recorded ({exc})", file=run.out)
        return
    run.journal.append(RECORDING_BASE, payload)


async def _print_summary(
    run: CliRun, workspace: Workspace, code: int, status: str, started_at: float
) -> None:
    """The closing line (:func:`desktop.run_cli.header.summary_line`); never fatal."""
    try:
        taken = [c for c in await workspace.checkpoints.list() if c.created_at >= started_at]
    except Exception:  # a broken store must not hide how the run ended
        taken = []
    usage = run.usage
    print(
        summary_line(
            code,
            status,
            tokens=(usage.input_tokens, usage.output_tokens) if usage else None,
            requests=usage.requests if usage else 0,
            checkpoints=len(taken),
            rejected=run.rejected,
        ),
        file=run.out,
    )


def _discard_closed(*streams: Any) -> None:
    """Point each of ``streams`` whose reader has gone (its flush raises ``BrokenPipeError``)
    at ``/dev/null``, so later writes and the interpreter's last flush do not fail again
    (the recipe of Python's ``signal`` docs, "Note on SIGPIPE"). A stream without a file
    descriptor is left as it is."""
    for stream in streams:
        if stream is None:
            continue
        try:
            stream.flush()
            continue
        except BrokenPipeError:
            pass
        except (OSError, ValueError):
            continue
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass


def _failed(run: CliRun, line: str, journaled: str) -> None:
    print(redact_text(line), file=sys.stderr)
    run.events.emit("error", message=line)
    run.journal.append("run_failed", {"error": journaled})
    run.journal.state(None, "failed")


def _restore_mode(journal: RunJournal, session_id: str, workspace: Workspace) -> None:
    """A resumed session runs in the mode it last ran in (issue 16), not the saved default;
    an unknown id changes nothing (``_first_input`` reports it)."""
    try:
        mode = journaled_mode(journal.journal, session_id)
    except JournalError:
        return
    if mode is not None:
        workspace.set_mode(mode)


def _session_mode(options: HeadlessOptions, run: CliRun, workspace: Workspace) -> None:
    """Journal the session's approval mode (a ``mode`` event,
    :mod:`harnesses.sessions.resume`) for a new session and for an explicit ``--mode`` on a
    resume (which overrides the session's own, see :func:`_restore_mode`)."""
    if not options.resume or options.mode:
        run.journal.append(MODE_EVENT, {"mode": str(workspace.mode)})


async def _ask_again(state: RunState, workspace: Workspace, run: CliRun, mcp: Any) -> None:
    """Ask the saved run's waiting calls again, whatever the mode (issue 16: a call that
    waited for the user is never approved by a resume; resumed unanswered, the runner would
    judge it again under the mode). Ctrl+C here leaves the session waiting, as before."""
    rejudge_waiting(workspace, state.get_interruptions())  # the prompt says why it asks
    run.paused = state
    for item in state.get_interruptions():
        await decide(item, state, workspace, run, mcp)
    run.paused = None
    run.journal.state(None, "active")


def _discard_unused(journal: RunJournal) -> None:
    """Remove the session of a run a usage error stopped before the model (nothing in it
    but the task); a journal failure is ignored (the session then stays, ``failed``)."""
    try:
        removed = discard_if_unused(journal.journal, journal.session_id)
    except JournalError:
        return
    if removed:
        print(f"tandem run: nothing ran; session {journal.session_id} not kept", file=sys.stderr)


async def _first_input(
    options: HeadlessOptions, run: CliRun, agent: Any, root: Path
) -> tuple[Any, int]:
    """The run's input and where its new items start: the task (a new session), the saved
    run state (a resumed session that waited for approvals), or the history and the task.

    Raises:
        UserError: an unknown session id, or nothing to resume without a task.
    """
    if not options.resume:
        run.journal.start(root, options.task)
        run.journal.append("user_message", {"text": options.task})
        return options.task, 0
    try:
        history, saved = run.journal.reopen(options.resume)
    except JournalError as exc:
        raise UserError(f"no session {options.resume!r} ({exc})") from exc
    if saved and not options.task:
        print("resuming: the session waited for approvals; asking again", file=run.out)
        state = await RunState.from_string(agent, saved)
        forget_approvals(state)  # only this resume's answers let a waiting call run
        return state, len(history)
    if not options.task:
        raise UserError("nothing to resume: the session does not wait; give a message")
    run.journal.append("user_message", {"text": options.task})
    return [*history, {"role": "user", "content": options.task}], len(history)


def _write_last_message(path: Path, text: str, out: TextIO) -> None:
    try:
        path.write_text(redact_text(text) + "\n", encoding="utf-8")
    except OSError as exc:
        print(f"tandem run: cannot write {path}: {exc}", file=out)


def _codex_settings(settings: Settings, options: HeadlessOptions) -> Settings:
    """The settings the Codex delegate runs on: this run's model and server (issue 17)."""
    update: dict[str, Any] = {}
    if options.model and not options.model.startswith("scripted:"):
        update["model"] = options.model
    base_url = options.base_url or os.environ.get("OPENAI_BASE_URL")
    if base_url:
        update["base_url"] = base_url.rstrip("/")
    return settings.model_copy(update=update) if update else settings


def _print_stall(stalled: bool, idle_seconds: float, out: TextIO) -> None:
    if stalled:
        print(f"codex: stalled (no event for {idle_seconds:g} s)", file=out)


def _print_codex(stream_event: Any, out: TextIO) -> None:
    event = stream_event.event
    item = getattr(event, "item", None)
    if getattr(event, "type", "") != "item.completed" or item is None:
        return
    if getattr(item, "type", "") == "command_execution":
        print(f"codex $ {item.command}", file=out)
        out.write(_line(item.aggregated_output))
    elif getattr(item, "type", "") == "file_change":
        print("codex changed " + ", ".join(c.path for c in item.changes), file=out)
    elif getattr(item, "type", "") == "agent_message":
        print(f"codex: {item.text}", file=out)


def _sandbox_label(workspace: Workspace) -> str:
    if str(workspace.mode) == "full":
        return "sandbox off: full access, commands run without sandbox or approval"
    if not workspace.sandbox_enabled:
        return "sandbox off"
    return "sandbox on" if workspace.sandbox_available else "sandbox unavailable (bwrap missing)"


def _line(text: str) -> str:
    """Command output made safe for a terminal: escape sequences removed, ends with a newline."""
    clean = strip_ansi(text)
    return clean if not clean or clean.endswith("\n") else clean + "\n"


def _print_service(service: Any, out: TextIO) -> None:
    """A background service started or ended (``harnesses.spawn.ServiceRegistry`` listener)."""
    if service.running:
        print(
            f"[service] started background service #{service.number} (pid {service.pid}): {service.command}",
            file=out,
        )
    elif service.killed:
        print(f"[service] killed #{service.number}: {service.command}", file=out)
    else:
        print(
            f"[service] #{service.number} exited ({service.exit_code}): {service.command}", file=out
        )


async def _stop_services(workspace: Workspace, out: TextIO) -> None:
    """At exit: list the services still running, kill them and wait (bounded) for them."""
    running = workspace.services.running()
    if running:
        print(f"[service] {len(running)} background service(s) running at exit:", file=out)
        for service in running:
            print(f"  #{service.number} pid {service.pid}: {service.command}", file=out)
    workspace.services.kill_all()
    await workspace.services.wait_all()
