"""``Runner``: run an agent to completion, synchronously, or as a stream of events."""

from __future__ import annotations

import asyncio
from typing import Any

from ._loop import RunLoop
from .agent import Agent
from .errors import RunCancelledError
from .result import RunResult, RunResultStreaming
from .run_config import RunConfig
from .run_state import RunState

__all__ = ["DEFAULT_MAX_TURNS", "Runner"]

#: ``max_turns`` when none is given (spec §10.1).
DEFAULT_MAX_TURNS = 10


class Runner:
    """Entry points of a run (names and arguments follow ``agents.Runner``)."""

    @classmethod
    async def run(
        cls,
        starting_agent: Agent[Any],
        input: str | list[dict[str, Any]] | RunState,
        *,
        context: Any = None,
        max_turns: int | None = None,
        hooks: Any = None,
        run_config: RunConfig | None = None,
        previous_response_id: str | None = None,
        auto_previous_response_id: bool = False,
        conversation_id: str | None = None,
        session: Any = None,
    ) -> RunResult:
        """Run ``starting_agent`` on ``input`` until a final output or an interruption.

        ``input`` is a string, a list of Responses input items, or a :class:`RunState` to resume
        (approved calls run first; no model request is made before that, spec §8).

        Args:
            max_turns: model round trips allowed (default 10; ``None`` with a new run = 10).

        Raises:
            MaxTurnsExceeded: more than ``max_turns`` model round trips.
            ModelBehaviorError: unusable model output (unknown tool, failed response...).
            ModelProviderError: the model service failed after retries.
            UserError: misconfiguration, or a tool without failure handler raised.
            ToolTimeoutError: a tool with ``timeout_behavior="raise_exception"`` timed out.
        """
        loop = RunLoop(
            starting_agent,
            input,
            context=context,
            max_turns=max_turns
            if max_turns is not None or isinstance(input, RunState)
            else DEFAULT_MAX_TURNS,
            run_config=run_config,
            previous_response_id=previous_response_id,
            auto_previous_response_id=auto_previous_response_id,
            conversation_id=conversation_id,
            emit=None,
            hooks=hooks,
        )
        return await loop.run(streamed=False)

    @classmethod
    def run_sync(
        cls,
        starting_agent: Agent[Any],
        input: str | list[dict[str, Any]] | RunState,
        **kwargs: Any,
    ) -> RunResult:
        """:meth:`run` on a new event loop (not callable from inside a running loop).

        Raises:
            RuntimeError: called while an event loop is running in this thread.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(cls.run(starting_agent, input, **kwargs))
        raise RuntimeError(
            "Runner.run_sync() cannot be called from a running event loop; await Runner.run()"
        )

    @classmethod
    def run_streamed(
        cls,
        starting_agent: Agent[Any],
        input: str | list[dict[str, Any]] | RunState,
        *,
        context: Any = None,
        max_turns: int | None = None,
        hooks: Any = None,
        run_config: RunConfig | None = None,
        previous_response_id: str | None = None,
        auto_previous_response_id: bool = False,
        conversation_id: str | None = None,
        session: Any = None,
    ) -> RunResultStreaming:
        """Start the run in a task and return at once; iterate ``result.stream_events()``.

        Must be called with an event loop running. Errors of the run are raised from
        ``stream_events()``; ``result.cancel()`` stops it.
        """
        loop = RunLoop(
            starting_agent,
            input,
            context=context,
            max_turns=max_turns
            if max_turns is not None or isinstance(input, RunState)
            else DEFAULT_MAX_TURNS,
            run_config=run_config,
            previous_response_id=previous_response_id,
            auto_previous_response_id=auto_previous_response_id,
            conversation_id=conversation_id,
            emit=None,
            hooks=hooks,
        )
        result = RunResultStreaming(
            input=loop.original_input, agent=loop.agent, context_wrapper=loop.ctx
        )
        loop.emit = result._emit

        async def drive() -> None:
            try:
                final = await loop.run(streamed=True)
            except asyncio.CancelledError:
                result._finish(None, RunCancelledError("Run cancelled"))
                raise
            except BaseException as exc:  # handed to the consumer through stream_events()
                result._finish(None, exc)
                return
            result._finish(final, None)

        result._task = asyncio.get_running_loop().create_task(drive())
        return result
