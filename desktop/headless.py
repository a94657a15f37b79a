"""``tandem run``: the same agent, tools and approval rules in a terminal (scripts and CI).

Approvals are asked on the terminal (``y`` allow once, ``a`` always allow for this run, ``n``
reject with an optional message); without a terminal every request is rejected with a message
the model sees, so a script never hangs. In *ask* mode each patch is shown as a unified diff
and applied or rejected as a whole.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from core import (
    Agent,
    ModelProvider,
    OpenAIProvider,
    RunConfig,
    RunItemStreamEvent,
    Runner,
    ScriptedModel,
    UserError,
)
from core.policy import suggest_rule
from core.redaction import redact_text, redacting
from core.secret_handoff import handed_over
from core.settings import Settings, load_settings
from harnesses.checkpoints import retention_from_settings
from harnesses.editor import ReviewOutcome
from harnesses.mcp import MCP_CONFIG, LocalMcpServers
from harnesses.workspace import Workspace
from resources import read_text

from .agent_tools import hosted_tools
from .delegates import codex_delegate
from .mcp_lines import McpPrinter, trusted_project_servers
from .subagents import explorer_tool
from .transcript_text import nested_printer, print_item
from .views.ansi import strip_ansi

__all__ = ["HeadlessOptions", "run_headless"]

Ask = Callable[[str], str]


class HeadlessOptions:
    """Options of ``tandem run`` (see ``tandem run --help``)."""

    def __init__(
        self,
        repo: Path,
        task: str,
        *,
        mode: str = "ask",
        model: str | None = None,
        base_url: str | None = None,
        max_turns: int = 50,
        sandbox: bool = True,
        interactive: bool | None = None,
    ) -> None:
        self.repo = repo
        self.task = task
        self.mode = mode
        self.model = model
        self.base_url = base_url
        self.max_turns = max_turns
        self.sandbox = sandbox
        self.interactive = sys.stdin.isatty() if interactive is None else interactive


def _settings(out: TextIO) -> Settings:
    """The user's settings (hosted tools, MCP servers, Explorer); defaults when unreadable."""
    try:
        return load_settings()
    except UserError as exc:
        print(f"tandem run: settings not loaded ({exc}); using the defaults", file=out)
        return Settings()


def _model(options: HeadlessOptions) -> tuple[Any, ModelProvider | None]:
    if options.model and options.model.startswith("scripted:"):
        return ScriptedModel(options.model.removeprefix("scripted:")), None
    provider = OpenAIProvider(
        api_key=handed_over("OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY"),
        base_url=options.base_url or os.environ.get("OPENAI_BASE_URL"),
    )
    return options.model, provider


async def run_headless(
    options: HeadlessOptions, out: TextIO = sys.stdout, ask: Ask | None = None
) -> int:
    """Run the task; returns 0 on a final answer, 1 on a failure, 2 on a usage error."""
    out = redacting(out)  # issue 11: nothing printed holds a known secret or a secret shape
    if not options.repo.is_dir():
        print(f"tandem run: {options.repo} is not a folder", file=sys.stderr)
        return 2
    prompt = ask or input
    settings = _settings(out)
    workspace = Workspace(
        options.repo,
        mode=options.mode,
        sandbox_enabled=options.sandbox,
        checkpoint_cap_bytes=settings.checkpoint_cap_bytes,
        checkpoint_retention=retention_from_settings(settings),
    )
    workspace.executor.input_wait_s = settings.shell_input_wait_seconds or None
    unsubscribe = workspace.review_queue.add_listener(
        lambda event: _review(event, workspace, options, out, prompt)
    )
    stop_services = workspace.services.add_listener(lambda service: _print_service(service, out))
    mcp = LocalMcpServers({}, workspace=workspace.root, mode=lambda: workspace.mode)
    mcp_printer = McpPrinter(mcp, out)
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
        model, provider = _model(options)
        workspace.set_sandbox_paths(settings.sandbox_hidden_paths, settings.sandbox_shown_paths)
        tools: list[Any] = workspace.tools()
        codex = codex_delegate(
            workspace,
            settings=_codex_settings(settings, options),
            on_stream=lambda event: _print_codex(event, out),
            on_stall=lambda stalled, idle, _stop: _print_stall(stalled, idle, out),
        )
        if codex is not None and not isinstance(model, ScriptedModel):
            tools.append(codex)
        tools += hosted_tools(settings)
        shown: set[str] = set()
        if settings.explorer and not isinstance(model, ScriptedModel):
            explorer = explorer_tool(workspace, model=model)
            explorer.add_stream_listener(nested_printer(out, shown))
            tools.append(explorer)
        if mcp.configs:
            await mcp.start()
            mcp_printer.print_states()
        agent = Agent(
            name="Tandem",
            instructions=read_text("prompts", "default_instructions.md"),
            model=model,
            tools=tools,
            mcp_servers=mcp.ready(),
            mcp_config=MCP_CONFIG,
        )
        config = RunConfig(
            model_provider=provider,
            tool_not_found_behavior="return_error_to_model",
            malformed_tool_call_behavior="return_error_to_model",
        )
        print(
            f"tandem run in {workspace.root} (mode {workspace.mode}, sandbox {'on' if workspace.sandbox_available else 'off'})",
            file=out,
        )
        print(workspace.sandbox_summary().headline(), file=out)
        state: Any = options.task
        while True:
            result = Runner.run_streamed(
                agent,
                state,
                hooks=workspace.hooks(),
                run_config=config,
                max_turns=options.max_turns,
            )
            async for event in result.stream_events():
                if isinstance(event, RunItemStreamEvent) and not mcp_printer.handle(event):
                    print_item(event, out, shown_nested=shown)
            if not result.interruptions:
                break
            state = result.to_state()
            for item in result.interruptions:
                await _decide(item, state, workspace, options, out, prompt, mcp)
        return 0 if result.final_output is not None else 1
    except UserError as exc:
        print(redact_text(f"tandem run: {exc}"), file=sys.stderr)
        return 2
    except Exception as exc:  # reported, not a traceback, for scripts
        print(redact_text(f"tandem run failed: {type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    finally:
        unsubscribe()
        await mcp.aclose()
        await _stop_services(workspace, out)
        stop_services()


async def _decide(
    item: Any,
    state: Any,
    workspace: Workspace,
    options: HeadlessOptions,
    out: TextIO,
    prompt: Ask,
    mcp: LocalMcpServers | None = None,
) -> None:
    raw = item.raw_item if isinstance(item.raw_item, dict) else {}
    local = mcp.describe_call(str(item.tool_name), str(item.arguments or "")) if mcp else None
    if local is not None:  # issue 18: server, tool and the arguments pretty-printed
        server, tool, pretty = local
        print(f"\n[approval] MCP {server} > {tool}", file=out)
        for line in pretty.splitlines():
            print(f"  {strip_ansi(line)}", file=out)
        print(f"  the MCP server {server!r} asks before this tool runs", file=out)
        reason = ""
    elif raw.get("type") == "mcp_approval_request":
        reason = f"the MCP server {raw.get('server_label')!r} asks before each tool call"
    else:
        reason = workspace.reason_for(item.call_id) or "the tool asks for approval"
    if local is None:
        print(f"\n[approval] {item.tool_name}: {strip_ansi(str(item.arguments))}\n  {reason}", file=out)
    pending = workspace.decisions.get(item.call_id)
    if pending is not None and pending.decision.checkpoint_required:
        found = await workspace.recoverability(pending.decision)
        print(f"  checkpoint first: {found.summary()}", file=out)
    if not options.interactive:
        state.reject(
            item, rejection_message="Not approved: tandem run is non-interactive; ask the user."
        )
        print("  rejected (no terminal)", file=out)
        return
    answer = (
        (await asyncio.to_thread(prompt, "  allow once [y], always [a], reject [n]: "))
        .strip()
        .lower()
    )
    if answer in ("y", "yes"):
        state.approve(item)
    elif answer in ("a", "always"):
        commands = [str(c) for c in item.raw_item.get("action", {}).get("commands", [])]
        if commands:  # a narrow rule for this command, never the whole tool (guards stay on)
            rule = suggest_rule(commands[0], workspace=workspace.root)
            workspace.rules.append(rule)
            print(f"  always allowing {rule.description} for this run", file=out)
        state.approve(item)
    else:
        message = (await asyncio.to_thread(prompt, "  message to the model (optional): ")).strip()
        state.reject(item, rejection_message=message or None)


def _review(
    event: Any, workspace: Workspace, options: HeadlessOptions, out: TextIO, prompt: Ask
) -> None:
    if event.type != "submitted":
        return
    proposal = event.proposal
    diff = difflib.unified_diff(
        (proposal.old_text or "").splitlines(keepends=True),
        (proposal.new_text or "").splitlines(keepends=True),
        f"a/{proposal.path}",
        f"b/{proposal.move_to or proposal.path}",
    )
    print(f"\n[review] {proposal.kind} {proposal.path}", file=out)
    out.write("".join(diff))

    async def answer() -> None:
        if not options.interactive:
            outcome = ReviewOutcome.reject_all(
                "Not applied: tandem run is non-interactive in ask mode."
            )
        else:
            reply = (await asyncio.to_thread(prompt, "  apply [y] / reject [n]: ")).strip().lower()
            outcome = (
                ReviewOutcome.accept_all(proposal)
                if reply in ("y", "yes")
                else ReviewOutcome.reject_all("Rejected by the user.")
            )
        workspace.review_queue.resolve(proposal.id, outcome)

    task = asyncio.get_running_loop().create_task(answer())
    _pending.add(task)
    task.add_done_callback(_pending.discard)


_pending: set[asyncio.Task[None]] = set()


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
        return "full access: commands run without sandbox or approval"
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
        print(f"[service] started background service #{service.number} (pid {service.pid}): {service.command}", file=out)
    elif service.killed:
        print(f"[service] killed #{service.number}: {service.command}", file=out)
    else:
        print(f"[service] #{service.number} exited ({service.exit_code}): {service.command}", file=out)


async def _stop_services(workspace: Workspace, out: TextIO) -> None:
    """At exit: list the services still running, kill them and wait (bounded) for them."""
    running = workspace.services.running()
    if running:
        print(f"[service] {len(running)} background service(s) running at exit:", file=out)
        for service in running:
            print(f"  #{service.number} pid {service.pid}: {service.command}", file=out)
    workspace.services.kill_all()
    await workspace.services.wait_all()
