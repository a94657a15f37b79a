"""One agent builder (issue 16): the window and ``tandem run`` send the same agent.

Both runs go to the local Responses server; their first requests are compared field by field
(tools, instructions with the AGENTS.md files), and the Codex delegate each carries reads the
same AGENTS.md files again at every call.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from core import OpenAIProvider, RunConfig, Runner, ScriptedModel
from core.settings import Settings, save_settings, settings_dir
from desktop.agent_builder import AGENT_NAME, build_agent
from desktop.app import _agent_factory, _CodexRelay
from desktop.headless import HeadlessOptions, run_headless
from harnesses.workspace import Workspace
from tests.support import items

SAVED = Settings(web_search=True, explorer=True, agents_md_cap_bytes=4096)


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").mkdir()  # the repository root for the AGENTS.md chain
    (repo / "AGENTS.md").write_text("Run the tests first. Marker: builder-1164.\n")
    global_file = settings_dir() / "AGENTS.md"
    global_file.parent.mkdir(parents=True, exist_ok=True)
    global_file.write_text("Be brief. Marker: builder-global-2275.\n")
    return repo


def _tools(body: dict[str, Any]) -> list[str]:
    return [tool.get("name", tool["type"]) for tool in body.get("tools", [])]


def _codex(agent: Any) -> Any:
    (tool,) = [tool for tool in agent.tools if tool.name == "codex"]
    return tool.on_invoke_tool.codex.inner  # CodexTurnWatch -> SubprocessCodexExec


async def test_window_and_tandem_run_send_the_same_agent(tmp_path, responses_server):
    repo = _repo(tmp_path)
    save_settings(SAVED.model_copy(update={"base_url": responses_server.base_url}))
    settings = SAVED.model_copy(update={"base_url": responses_server.base_url, "model": "m"})

    responses_server.enqueue([items.message("window done")])
    window = _agent_factory(settings, _CodexRelay())(Workspace(repo, mode="auto"))
    config = RunConfig(model_provider=OpenAIProvider(base_url=responses_server.base_url))
    assert (await Runner.run(window, "look", run_config=config)).final_output == "window done"

    responses_server.enqueue([items.message("cli done")])
    out = io.StringIO()
    options = HeadlessOptions(
        repo, "look", mode="auto", model="m", base_url=responses_server.base_url, interactive=False
    )
    assert await run_headless(options, out, ask=lambda _p: "n") == 0

    first, second = (r.body for r in responses_server.responses_requests)
    assert _tools(first) == _tools(second)
    assert {"shell", "apply_patch", "codex", "web_search", "explore_repository"} <= set(
        _tools(first)
    )
    assert first["instructions"] == second["instructions"]
    for marker in ("builder-1164", "builder-global-2275"):
        assert first["instructions"].count(marker) == 1
    assert "instructions: AGENTS.md (project" in out.getvalue()  # tandem run prints the files


def test_the_delegates_codex_reads_the_agents_md_files_at_each_call(tmp_path):
    repo = _repo(tmp_path)
    agent = build_agent(Workspace(repo, mode="auto"), SAVED)
    assert agent.name == AGENT_NAME
    source = _codex(agent).instructions
    assert source is not None
    first = source()
    assert "builder-1164" in first and "builder-global-2275" in first
    (repo / "AGENTS.md").write_text("Marker: builder-edited-3386.\n")
    second = source()
    assert "builder-edited-3386" in second and "builder-1164" not in second


def test_a_scripted_model_gets_no_delegates_and_no_computer_tools(tmp_path):
    repo = _repo(tmp_path)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": []}))
    agent = build_agent(
        Workspace(repo, mode="auto"), SAVED, model=ScriptedModel(str(script)), delegates=False
    )
    names = [tool.name for tool in agent.tools]
    assert names[:2] == ["shell", "apply_patch"] and "web_search" in names
    assert "codex" not in names and "explore_repository" not in names
    assert not any(name in names for name in ("computer_use_preview", "computer", "goto"))
