"""The offline demo: a scripted session replayed through the real runner and real tools."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any, TextIO

from core import Agent, RunItemStreamEvent, Runner, ScriptedModel, function_tool
from core.items import ItemHelpers
from resources import read_text, resource

__all__ = ["build_demo_agent", "copy_sample_repo", "run_headless_demo"]


def copy_sample_repo(target: Path) -> Path:
    """Copy the bundled sample repository into ``target`` (created) and return it."""
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
    return target


def build_demo_agent(repo: Path) -> tuple[Agent[Any], str]:
    """The demo agent (scripted model, one function tool over ``repo``) and its task."""
    session = json.loads(read_text("demo", "session.json"))

    @function_tool
    def find_todos(
        path: Annotated[str, "Folder to search, relative to the repository root."],
    ) -> str:
        """List the TODO comments under a folder of the repository, as `file:line: text` lines."""
        root = (repo / path).resolve()
        if not root.is_relative_to(repo.resolve()):
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
        model=ScriptedModel(session["turns"], delay_s=0.05),
        tools=[find_todos],
    )
    return agent, session["task"]


async def run_headless_demo(out: TextIO = sys.stdout) -> int:
    """Replay the demo session in the terminal; returns a process exit code."""
    workdir = Path(tempfile.mkdtemp(prefix="tandem-demo-"))
    try:
        repo = copy_sample_repo(workdir / "inventory")
        agent, task = build_demo_agent(repo)
        print(f"Tandem demo (offline, scripted model) in {repo}", file=out)
        print(f"\n> {task}\n", file=out)
        result = Runner.run_streamed(agent, task)
        async for event in result.stream_events():
            if isinstance(event, RunItemStreamEvent):
                _print_item(event, out)
        usage = result.context_wrapper.usage
        print(
            f"\n[{usage.requests} model requests, {usage.input_tokens} input + "
            f"{usage.output_tokens} output tokens]",
            file=out,
        )
        return 0 if result.final_output else 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _print_item(event: RunItemStreamEvent, out: TextIO) -> None:
    raw = event.item.raw_item
    if event.name == "reasoning_item_created":
        summary = " ".join(s.get("text", "") for s in raw.get("summary", []))
        print(f"  (thinking) {summary}", file=out)
    elif event.name == "tool_called":
        print(f"  -> {raw.get('name')}({raw.get('arguments')})", file=out)
    elif event.name == "tool_output":
        for line in str(getattr(event.item, "output", "")).splitlines():
            print(f"     | {line}", file=out)
    elif event.name == "message_output_created":
        print("\n" + (ItemHelpers.extract_last_text(raw) or ""), file=out)
