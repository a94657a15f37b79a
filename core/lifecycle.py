"""Lifecycle hooks of a run (names follow ``agents.RunHooks`` / ``agents.AgentHooks``).

Every method may be sync or async; the defaults do nothing. Hosts use them to act at
well-defined points, e.g. the workspace harness checkpoints the working tree in
``on_llm_end`` before a response's shell or apply_patch calls run.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Generic

from .context import RunContextWrapper, TContext

if TYPE_CHECKING:
    from .agent import Agent
    from .items import ModelResponse

__all__ = ["AgentHooks", "RunHooks", "call_hook"]


class RunHooks(Generic[TContext]):
    """Run-wide callbacks; subclass and override what you need."""

    async def on_agent_start(
        self, context: RunContextWrapper[TContext], agent: Agent[TContext]
    ) -> None:
        """The agent starts its first turn of this run."""

    async def on_agent_end(
        self, context: RunContextWrapper[TContext], agent: Agent[TContext], output: Any
    ) -> None:
        """The agent produced the final output."""

    async def on_llm_start(
        self,
        context: RunContextWrapper[TContext],
        agent: Agent[TContext],
        system_prompt: str | None,
        input_items: list[dict[str, Any]],
    ) -> None:
        """A model request is about to be sent (``input_items`` must not be mutated)."""

    async def on_llm_end(
        self, context: RunContextWrapper[TContext], agent: Agent[TContext], response: ModelResponse
    ) -> None:
        """A model response arrived; its tool calls have not run yet."""

    async def on_tool_start(
        self, context: RunContextWrapper[TContext], agent: Agent[TContext], tool: Any
    ) -> None:
        """A tool call is about to run (after approval)."""

    async def on_tool_end(
        self, context: RunContextWrapper[TContext], agent: Agent[TContext], tool: Any, result: Any
    ) -> None:
        """A tool call finished with ``result`` (the Python value)."""


class AgentHooks(Generic[TContext]):
    """Callbacks for one agent (``Agent.hooks``); same signatures as :class:`RunHooks`."""

    async def on_start(self, context: RunContextWrapper[TContext], agent: Agent[TContext]) -> None:
        """The agent starts."""

    async def on_end(
        self, context: RunContextWrapper[TContext], agent: Agent[TContext], output: Any
    ) -> None:
        """The agent produced the final output."""

    async def on_llm_start(
        self,
        context: RunContextWrapper[TContext],
        agent: Agent[TContext],
        system_prompt: str | None,
        input_items: list[dict[str, Any]],
    ) -> None:
        """A model request is about to be sent."""

    async def on_llm_end(
        self, context: RunContextWrapper[TContext], agent: Agent[TContext], response: ModelResponse
    ) -> None:
        """A model response arrived."""

    async def on_tool_start(
        self, context: RunContextWrapper[TContext], agent: Agent[TContext], tool: Any
    ) -> None:
        """A tool call is about to run."""

    async def on_tool_end(
        self, context: RunContextWrapper[TContext], agent: Agent[TContext], tool: Any, result: Any
    ) -> None:
        """A tool call finished."""


_AGENT_NAMES = {"on_agent_start": "on_start", "on_agent_end": "on_end"}


async def call_hook(run_hooks: Any, agent: Any, name: str, *args: Any) -> None:
    """Call ``name`` on the run hooks and the agent's hooks (sync or async), if present."""
    for hooks, method in (
        (run_hooks, name),
        (getattr(agent, "hooks", None), _AGENT_NAMES.get(name, name)),
    ):
        fn = getattr(hooks, method, None) if hooks is not None else None
        if fn is None:
            continue
        value = fn(*args)
        if inspect.isawaitable(value):
            await value
