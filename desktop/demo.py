"""The offline demo: a scripted session replayed through the real runner and the real tools.

The sample repository is copied to a temporary folder and made a Git repository; the scripted
model then calls a function tool, proposes a patch (applied by the Git-aware editor, after a
checkpoint), runs a check in the shell (sandboxed when bubblewrap is available) and answers.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any, TextIO

import git

from core import Agent, RunItemStreamEvent, Runner, ScriptedModel, function_tool
from core.items import ItemHelpers
from harnesses.workspace import Workspace
from resources import read_text, resource

__all__ = [
    "build_demo_agent",
    "copy_sample_repo",
    "demo_session",
    "run_headless_demo",
    "sample_tests_pass",
]

_DEMO_ACTOR = git.Actor("Tandem demo", "demo@tandem.invalid")


def demo_session() -> dict[str, Any]:
    """The bundled session file: ``{"task": str, "turns": [...]}``."""
    data: dict[str, Any] = json.loads(read_text("demo", "session.json"))
    return data


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
        repo = git.Repo.init(target, initial_branch="main")
        repo.index.add(
            [
                str(p.relative_to(target))
                for p in target.rglob("*")
                if p.is_file() and ".git" not in p.parts
            ]
        )
        repo.index.commit("Sample repository", author=_DEMO_ACTOR, committer=_DEMO_ACTOR)
        repo.close()
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


def build_demo_agent(workspace: Workspace, *, delay_s: float = 0.05) -> tuple[Agent[Any], str]:
    """The demo agent (scripted model, a function tool and the workspace tools) and its task."""
    session = demo_session()
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


async def run_headless_demo(out: TextIO = sys.stdout) -> int:
    """Replay the demo session in the terminal; returns a process exit code."""
    workdir = Path(tempfile.mkdtemp(prefix="tandem-demo-"))
    try:
        repo = copy_sample_repo(workdir / "inventory")
        workspace = Workspace(repo, mode="auto", data_dir=workdir / "data")
        agent, task = build_demo_agent(workspace)
        sandbox = (
            "bubblewrap sandbox"
            if workspace.sandbox_available
            else "no sandbox (bwrap unavailable)"
        )
        print(f"Tandem demo: offline scripted model, approval mode auto, {sandbox}", file=out)
        print(f"repository: {repo}", file=out)
        print(f"\n> {task}\n", file=out)
        result = Runner.run_streamed(agent, task, hooks=workspace.hooks())
        async for event in result.stream_events():
            if isinstance(event, RunItemStreamEvent):
                _print_item(event, out)
        checkpoints = await workspace.checkpoints.list()
        print("\ncheckpoints:", file=out)
        for cp in checkpoints:
            print(f"  {cp.id}  turn {cp.turn}  {cp.label}", file=out)
        usage = result.context_wrapper.usage
        print(
            f"\n[{usage.requests} model requests, {usage.input_tokens} input + "
            f"{usage.output_tokens} output tokens]",
            file=out,
        )
        green = await asyncio.to_thread(sample_tests_pass, repo)
        print(f"sample repository tests: {'green' if green else 'RED'}", file=out)
        return 0 if result.final_output and green else 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _print_item(event: RunItemStreamEvent, out: TextIO) -> None:
    raw = event.item.raw_item
    if event.name == "reasoning_item_created":
        summary = " ".join(s.get("text", "") for s in raw.get("summary", []))
        print(f"  (thinking) {summary}", file=out)
    elif event.name == "tool_called":
        kind = raw.get("type")
        if kind == "shell_call":
            for command in raw.get("action", {}).get("commands", []):
                print(f"  $ {command}", file=out)
        elif kind == "apply_patch_call":
            op = raw.get("operation", {})
            print(f"  apply_patch {op.get('type')} {op.get('path')}", file=out)
            for line in str(op.get("diff", "")).splitlines():
                print(f"     {line}", file=out)
        else:
            print(f"  -> {raw.get('name')}({raw.get('arguments')})", file=out)
    elif event.name == "tool_output":
        if raw.get("type") == "shell_call_output":
            for entry in raw.get("output", []):
                text = entry.get("stdout", "") + entry.get("stderr", "")
                for line in text.splitlines():
                    print(f"     | {line}", file=out)
                outcome = entry.get("outcome", {})
                if outcome.get("type") == "timeout" or outcome.get("exit_code"):
                    print(
                        f"     | ({outcome.get('type')} {outcome.get('exit_code', '')})".rstrip(),
                        file=out,
                    )
            return
        for line in str(getattr(event.item, "output", "")).splitlines():
            print(f"     | {line}", file=out)
    elif event.name == "message_output_created":
        print("\n" + (ItemHelpers.extract_last_text(raw) or ""), file=out)
