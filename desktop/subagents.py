"""Sub-agents offered to the window's agent as tools (agents as tools, tools-wire-spec §7)."""

from __future__ import annotations

from typing import Any

from core import Agent, ShellTool
from core.tools.agent_tool import AgentTool
from harnesses.workspace import Workspace
from resources import read_text

__all__ = ["EXPLORER_MAX_TURNS", "EXPLORER_TOOL_NAME", "explorer_tool"]

EXPLORER_TOOL_NAME = "explore_repository"
"""The function name the outer agent calls the Explorer by."""

EXPLORER_MAX_TURNS = 20
"""The Explorer's turn limit per question (model responses of the nested run)."""

_EXPLORER_DESCRIPTION = (
    "Ask Explorer, a read-only sub-agent, one self-contained question about this repository "
    "(where something is defined or used, how a feature works, what changed in git history). "
    "It searches and reads files with read-only commands (rg, ls, cat, git log/show/diff), "
    "never modifies anything, and answers concisely with file paths and line numbers. Use it "
    "for questions that need many lookups, to keep your own context small."
)


def explorer_tool(workspace: Workspace, *, model: str | Any) -> AgentTool:
    """The ``explore_repository`` tool: a nested *Explorer* agent that reads ``workspace``.

    The nested agent has the workspace's ``ShellTool`` and nothing else (no ``apply_patch``),
    and instructions to use read-only commands only. Its commands still go through the
    workspace's approval policy: a command the policy does not allow becomes an approval of
    the outer run (core surfaces nested approvals there, spec §7.4), so the window's approval
    panel answers it like any other.

    Args:
        workspace: the repository the Explorer reads (its shell runs there).
        model: the model name (resolved by the run's model provider) or a ``Model`` object.

    Returns:
        An ``AgentTool`` named ``explore_repository`` taking ``{"input": str}`` (the
        question); its output is the Explorer's final answer. A nested run is limited to
        :data:`EXPLORER_MAX_TURNS` turns.

    Raises:
        FileNotFoundError: the bundled ``prompts/explorer_instructions.md`` is missing.
    """
    shell = [tool for tool in workspace.tools() if isinstance(tool, ShellTool)]
    agent: Agent[Any] = Agent(
        name="Explorer",
        instructions=read_text("prompts", "explorer_instructions.md"),
        model=model,
        tools=shell[:1],
    )
    tool: AgentTool = agent.as_tool(
        tool_name=EXPLORER_TOOL_NAME,
        tool_description=_EXPLORER_DESCRIPTION,
        max_turns=EXPLORER_MAX_TURNS,
    )
    return tool
