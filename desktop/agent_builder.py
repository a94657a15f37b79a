"""The one place Tandem's agent is assembled, for the window and for ``tandem run`` (issue 16).

Tools, the Codex delegate, hosted tools, the Explorer, the ``AGENTS.md`` instructions and the
MCP servers go together here; what differs between the two front ends is a parameter of
:func:`build_agent`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from core import Agent, ComputerTool
from core.settings import Settings
from harnesses.browser.domains import AllowedDomainsPolicy
from harnesses.browser.navigation import navigation_tools
from harnesses.codex import StallListener
from harnesses.instructions import ProjectInstructions, instructions_with_agents_md
from harnesses.mcp import MCP_CONFIG
from harnesses.workspace import Workspace
from resources import read_text

from .agent_tools import hosted_tools
from .delegates import codex_delegate
from .subagents import explorer_tool

__all__ = ["AGENT_NAME", "build_agent"]

#: The agent's name in runs, journals and recordings.
AGENT_NAME = "Tandem"


def build_agent(
    workspace: Workspace,
    settings: Settings,
    *,
    model: Any = None,
    delegates: bool = True,
    codex_settings: Settings | None = None,
    on_codex_stream: Callable[[Any], Any] | None = None,
    on_codex_stall: StallListener | None = None,
    on_explorer_stream: Callable[[Any], Any] | None = None,
    computer: Any = None,
    on_instructions: Callable[[ProjectInstructions], Any] | None = None,
    mcp_servers: Sequence[Any] = (),
) -> Agent[Any]:
    """Tandem's agent working in ``workspace``.

    The tools, in this order: the workspace's (``shell``, ``apply_patch``...), the computer
    and its navigation tools (``goto``/``back``/``forward``/``current_url``, approved like
    off-site actions: :class:`harnesses.browser.domains.AllowedDomainsPolicy`), ``codex``
    (when the CLI is installed), the hosted tools ``settings`` turn on, ``explore_repository``
    (``settings.explorer``). The instructions are the bundled default prompt plus the
    ``AGENTS.md`` files, read again at each run (:func:`harnesses.instructions.
    instructions_with_agents_md`, cap ``settings.agents_md_cap_bytes``); the Codex delegate
    gets the same files at each of its calls (:func:`desktop.delegates.codex_delegate`).

    Args:
        workspace: the repository, its approval mode and tools.
        settings: hosted tools, Explorer, AGENTS.md cap; the model when ``model`` is ``None``.
        model: the model name or a ``Model`` object (``tandem run --model scripted:FILE``
            passes a ``ScriptedModel``); ``None``: ``settings.model``. The Explorer runs on it.
        delegates: add the Codex delegate and the Explorer. ``tandem run`` turns them off for
            a scripted model: a replay has no second model to answer them.
        codex_settings: the settings the Codex delegate runs on (``tandem run``: this run's
            model and server flags); ``None``: ``settings``.
        on_codex_stream: every Codex event (the window's terminal and diff views, or
            ``tandem run``'s printer).
        on_codex_stall: a Codex turn stalled or resumed (:data:`harnesses.codex.StallListener`).
        on_explorer_stream: the Explorer's stream listener (``tandem run`` prints its items).
        computer: the browser (a ``Computer``/``AsyncComputer``); ``None`` (``tandem run``, a
            missing Chromium): no computer tools.
        on_instructions: each new load of the AGENTS.md files (the window's list, or
            ``tandem run``'s ``instructions:`` lines).
        mcp_servers: the local MCP servers (connected ones), see ``harnesses.mcp``.

    Returns:
        The ``Agent`` named :data:`AGENT_NAME`.

    Raises:
        FileNotFoundError: a bundled prompt is missing from ``resources/prompts``.
    """
    model = settings.model if model is None else model
    tools: list[Any] = workspace.tools()
    if computer is not None:
        policy = AllowedDomainsPolicy()  # goto and Ctrl+L ask as actions off-site do
        tools.append(ComputerTool(computer, needs_approval=policy))
        tools += navigation_tools(computer, policy)  # issue 17: goto/back/forward
    if delegates:
        codex = codex_delegate(
            workspace,
            settings=codex_settings or settings,
            on_stream=on_codex_stream,
            on_stall=on_codex_stall,
        )
        if codex is not None:
            tools.append(codex)
    tools += hosted_tools(settings)
    if delegates and settings.explorer:
        explorer = explorer_tool(workspace, model=model)
        if on_explorer_stream is not None:
            explorer.add_stream_listener(on_explorer_stream)
        tools.append(explorer)
    instructions = instructions_with_agents_md(  # issue 16: AGENTS.md, read at each run
        read_text("prompts", "default_instructions.md"),
        workspace.started_in,  # root ... the folder the user started in
        cap_bytes=settings.agents_md_cap_bytes,
        on_load=on_instructions,
    )
    return Agent(
        name=AGENT_NAME,
        instructions=instructions,
        model=model,
        tools=tools,
        mcp_servers=list(mcp_servers),  # issue 18
        mcp_config=MCP_CONFIG,
    )
