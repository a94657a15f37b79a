"""The offline demo: a scripted session replayed through the real runner and the real tools.

The sample repository is copied to a temporary folder and made a Git repository. In the
``fix`` scenario the scripted model calls a function tool, proposes a patch (applied by the
Git-aware editor, after a checkpoint), runs a check in the shell (sandboxed when bubblewrap is
available) and answers. In the ``research`` scenario it uses hosted tools (web search, code
interpreter, an MCP server whose call asks for approval, tool search, image generation; their
output items are scripted, as nothing leaves the machine) and asks the Explorer sub-agent, whose
own scripted model reads the repository through the real shell, then answers with citations.
In the ``browser`` scenario (issue 17) it starts the sample's dev server in the shell (a tracked
background service), opens the signup page in real Chromium with ``goto``, fills the form with
a bad email, reads the error and stops the server.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any, TextIO

from core import (
    Agent,
    CodeInterpreterTool,
    HostedMCPTool,
    ImageGenerationTool,
    RunItemStreamEvent,
    Runner,
    ScriptedModel,
    ToolSearchTool,
    WebSearchTool,
    function_tool,
    tool_namespace,
)
from core.tools.agent_tool import AgentTool
from harnesses.vcs import init_with_commit
from harnesses.workspace import Workspace
from resources import read_text, resource

from .transcript_text import nested_printer, print_item

__all__ = [
    "SCENARIOS",
    "build_demo_agent",
    "copy_sample_repo",
    "demo_session",
    "run_headless_demo",
    "sample_tests_pass",
]

_DEMO_ACTOR = ("Tandem demo", "demo@tandem.invalid")

#: Demo scenarios and their session files under ``resources/demo``.
SCENARIOS = {
    "fix": "session.json",
    "research": "research_session.json",
    "browser": "browser_session.json",
}


def demo_session(scenario: str = "fix") -> dict[str, Any]:
    """A bundled session file: ``{"task": str, "turns": [...]}`` (``research`` adds
    ``explorer_turns``); ``"@resource:NAME"`` strings become base64 of ``resources/demo/NAME``.

    Raises:
        KeyError: an unknown scenario.
    """
    data: dict[str, Any] = json.loads(read_text("demo", SCENARIOS[scenario]))
    return _inline_resources(data)


def _inline_resources(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("@resource:"):
        return base64.b64encode(
            resource("demo", value.removeprefix("@resource:")).read_bytes()
        ).decode()
    if isinstance(value, dict):
        return {k: _inline_resources(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_inline_resources(v) for v in value]
    return value


def copy_sample_repo(target: Path, *, init_git: bool = True) -> Path:
    """Copy the bundled sample repository into ``target`` (created), optionally as a Git repo."""
    source = resource("demo", "sample_repo")
    target.mkdir(parents=True, exist_ok=True)

    def copy(node: Any, dest: Path) -> None:
        for child in node.iterdir():
            if child.is_dir():
                (dest / child.name).mkdir(exist_ok=True)
                copy(child, dest / child.name)
            else:
                (dest / child.name).write_bytes(child.read_bytes())

    copy(source, target)
    if init_git:
        init_with_commit(target, "Sample repository", identity=_DEMO_ACTOR, branch="main")
    return target


def sample_tests_pass(repo: Path) -> bool:
    """Run the sample repository's tests (``python3 -m unittest``); ``True`` when green."""
    result = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result.returncode == 0


def free_port() -> int:
    """A TCP port on 127.0.0.1 free right now (for the browser scenario's dev server)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _with_port(value: Any, port: int) -> Any:
    if isinstance(value, str):
        return value.replace("{port}", str(port))
    if isinstance(value, dict):
        return {k: _with_port(v, port) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_port(v, port) for v in value]
    return value


def build_demo_agent(
    workspace: Workspace,
    *,
    delay_s: float = 0.05,
    scenario: str = "fix",
    computer: Any = None,
    port: int | None = None,
) -> tuple[Agent[Any], str]:
    """The demo agent of ``scenario`` (a scripted model and its tools) and its task.

    Args:
        workspace: the sample repository's workspace.
        delay_s: pause before each scripted answer (seconds).
        scenario: ``fix``, ``research`` or ``browser``.
        computer: the browser scenario's computer (a ``PlaywrightComputer`` or a
            ``GatedComputer``); required for ``browser``.
        port: the browser scenario's dev-server port (default: a free one).

    Raises:
        KeyError: an unknown scenario.
        ValueError: the browser scenario without a computer.
    """
    session = demo_session(scenario)
    if scenario == "research":
        return _research_agent(workspace, session, delay_s), session["task"]
    if scenario == "browser":
        if computer is None:
            raise ValueError("the browser demo needs a computer (PlaywrightComputer)")
        return _browser_agent(workspace, session, delay_s, computer, port), session["task"]
    repo = workspace.root

    @function_tool
    def find_todos(
        path: Annotated[str, "Folder to search, relative to the repository root."],
    ) -> str:
        """List the TODO comments under a folder of the repository, as `file:line: text` lines."""
        root = (repo / path).resolve()
        if not root.is_relative_to(repo):
            return f"refused: {path} is outside the repository"
        hits = []
        for file in sorted(p for p in root.rglob("*") if p.is_file()):
            for number, line in enumerate(file.read_text(errors="replace").splitlines(), start=1):
                if "TODO" in line:
                    hits.append(f"{file.relative_to(repo)}:{number}: {line.strip()}")
        return "\n".join(hits) or "no TODO found"

    agent = Agent(
        name="Tandem",
        instructions=read_text("prompts", "default_instructions.md"),
        model=ScriptedModel(session["turns"], delay_s=delay_s),
        tools=[find_todos, *workspace.tools()],
    )
    return agent, session["task"]


@function_tool(defer_loading=True)
def round_money(amount: Annotated[str, "An amount of money, e.g. '2.675'."]) -> str:
    """Round an amount half-even to cents."""
    from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

    try:
        return str(Decimal(amount).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))
    except InvalidOperation:
        return f"not an amount: {amount!r}"


def _browser_agent(
    workspace: Workspace, session: dict[str, Any], delay_s: float, computer: Any, port: int | None
) -> Agent[Any]:
    from core.tools.computer import ComputerTool
    from harnesses.browser import AllowedDomainsPolicy
    from harnesses.browser.navigation import navigation_tools

    # The dev server and Chromium meet on 127.0.0.1: commands share the host's network here
    # (a sandboxed command otherwise gets its own, empty network namespace).
    workspace.executor.network = True
    turns = _with_port(session["turns"], port or free_port())
    policy = AllowedDomainsPolicy()
    return Agent(
        name="Tandem",
        instructions=read_text("prompts", "default_instructions.md"),
        model=ScriptedModel(turns, delay_s=delay_s),
        tools=[
            *workspace.tools(),
            ComputerTool(computer, needs_approval=policy),
            *navigation_tools(computer, policy),
        ],
    )


def _research_agent(workspace: Workspace, session: dict[str, Any], delay_s: float) -> Agent[Any]:
    from .subagents import explorer_tool

    explorer = explorer_tool(
        workspace, model=ScriptedModel(session["explorer_turns"], delay_s=delay_s)
    )
    handbook = {
        "type": "mcp",
        "server_label": "handbook",
        "server_url": "https://handbook.example.invalid/mcp",
        "require_approval": "always",
    }
    return Agent(
        name="Tandem",
        instructions=read_text("prompts", "default_instructions.md"),
        model=ScriptedModel(session["turns"], delay_s=delay_s),
        tools=[
            *workspace.tools(),
            WebSearchTool(),
            CodeInterpreterTool(
                tool_config={"type": "code_interpreter", "container": {"type": "auto"}}
            ),
            ImageGenerationTool(tool_config={"type": "image_generation"}),
            HostedMCPTool(tool_config=handbook),
            ToolSearchTool(),
            *tool_namespace(name="pricing", description="Price helpers.", tools=[round_money]),
            explorer,
        ],
    )


async def run_headless_demo(out: TextIO = sys.stdout, *, scenario: str = "fix") -> int:
    """Replay demo ``scenario`` in the terminal; returns a process exit code.

    The approvals a run stops for (the research scenario's MCP call) are printed and granted,
    as a user of the demo would.
    """
    workdir = Path(tempfile.mkdtemp(prefix="tandem-demo-"))
    computer = None
    try:
        repo = copy_sample_repo(workdir / "inventory")
        workspace = Workspace(repo, mode="auto", data_dir=workdir / "data")
        if scenario == "browser":
            from harnesses.browser import PlaywrightComputer

            computer = PlaywrightComputer(throwaway=True)
        agent, task = build_demo_agent(workspace, scenario=scenario, computer=computer)
        sandbox = (
            "bubblewrap sandbox"
            if workspace.sandbox_available
            else "no sandbox (bwrap unavailable)"
        )
        print(
            f"Tandem demo ({scenario}): offline scripted model, approval mode auto, {sandbox}",
            file=out,
        )
        print(f"repository: {repo}", file=out)
        print(f"\n> {task}\n", file=out)
        shown: set[str] = set()
        for tool in agent.tools:  # show the sub-agents' work, indented under their call
            if isinstance(tool, AgentTool):
                tool.add_stream_listener(nested_printer(out, shown))
        run_input: Any = task
        while True:
            result = Runner.run_streamed(agent, run_input, hooks=workspace.hooks())
            async for event in result.stream_events():
                if isinstance(event, RunItemStreamEvent):
                    print_item(event, out, indent="  ", patches=True, shown_nested=shown)
            if not result.interruptions:
                break
            run_input = result.to_state()
            for item in result.interruptions:
                print(f"  ? {item.tool_name} asks for approval: approved (demo)", file=out)
                run_input.approve(item)
        checkpoints = await workspace.checkpoints.list()
        print(
            "\ncheckpoints:" if checkpoints else "\ncheckpoints: none (nothing was written)",
            file=out,
        )
        for cp in checkpoints:
            print(f"  {cp.id}  turn {cp.turn}  {cp.label}", file=out)
        usage = result.context_wrapper.usage
        print(
            f"\n[{usage.requests} model requests, {usage.input_tokens} input + "
            f"{usage.output_tokens} output tokens]",
            file=out,
        )
        if scenario == "browser":
            shown_error = await computer.page.text_content("#error") if computer else None
            print(f"browser page error text: {shown_error!r}", file=out)
            services = await _services_ended(workspace)
            print(f"dev servers still running: {len(services)}", file=out)
            return 0 if result.final_output and shown_error and not services else 1
        if scenario != "fix":  # only the fix scenario changes the sample repository
            return 0 if result.final_output else 1
        green = await asyncio.to_thread(sample_tests_pass, repo)
        print(f"sample repository tests: {'green' if green else 'RED'}", file=out)
        return 0 if result.final_output and green else 1
    finally:
        if computer is not None:
            await computer.close()
        await workspace_services_stop(locals().get("workspace"))
        shutil.rmtree(workdir, ignore_errors=True)


async def _services_ended(workspace: Workspace, timeout_s: float = 10.0) -> list[Any]:
    """The services still running once those that are ending have ended (bounded wait)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while workspace.services.running() and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return workspace.services.running()


async def workspace_services_stop(workspace: Workspace | None) -> None:
    """Kill what the demo left running in the background (nothing, when it ran to the end)."""
    if workspace is not None:
        await asyncio.to_thread(workspace.services.kill_all)
