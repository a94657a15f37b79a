"""The offline demo: a scripted session replayed through the real runner and the real tools.

The sample repository is copied to a temporary folder and made a Git repository. In the
``fix`` scenario the scripted model calls a function tool, proposes a patch (applied by the
Git-aware editor, after a checkpoint), runs a check in the shell (sandboxed when bubblewrap is
available) and answers. In the ``research`` scenario it uses hosted tools (web search, code
interpreter, an MCP server whose call asks for approval, tool search, image generation; their
output items are scripted, as nothing leaves the machine) and asks the Explorer sub-agent, whose
own scripted model reads the repository through the real shell, then answers with citations.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
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
SCENARIOS = {"fix": "session.json", "research": "research_session.json"}


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


def build_demo_agent(
    workspace: Workspace, *, delay_s: float = 0.05, scenario: str = "fix"
) -> tuple[Agent[Any], str]:
    """The demo agent of ``scenario`` (a scripted model and its tools) and its task.

    Raises:
        KeyError: an unknown scenario.
    """
    session = demo_session(scenario)
    if scenario == "research":
        return _research_agent(workspace, session, delay_s), session["task"]
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
            *tool_namespace("pricing", "Price helpers.", [round_money]),
            explorer,
        ],
    )


async def run_headless_demo(out: TextIO = sys.stdout, *, scenario: str = "fix") -> int:
    """Replay demo ``scenario`` in the terminal; returns a process exit code.

    The approvals a run stops for (the research scenario's MCP call) are printed and granted,
    as a user of the demo would.
    """
    workdir = Path(tempfile.mkdtemp(prefix="tandem-demo-"))
    try:
        repo = copy_sample_repo(workdir / "inventory")
        workspace = Workspace(repo, mode="auto", data_dir=workdir / "data")
        agent, task = build_demo_agent(workspace, scenario=scenario)
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
        if scenario != "fix":  # only the fix scenario changes the sample repository
            return 0 if result.final_output else 1
        green = await asyncio.to_thread(sample_tests_pass, repo)
        print(f"sample repository tests: {'green' if green else 'RED'}", file=out)
        return 0 if result.final_output and green else 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
