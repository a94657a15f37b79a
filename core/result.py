"""Run results (spec §10.2): ``RunResult`` and the streaming ``RunResultStreaming``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import RunCancelledError
from .events import StreamEvent
from .items import ModelResponse, RunItem, ToolApprovalItem

if TYPE_CHECKING:
    from .agent import Agent
    from .context import RunContextWrapper
    from .run_state import RunState

__all__ = ["RunResult", "RunResultStreaming"]


@dataclass(eq=False)
class RunResult:
    """What a run produced.

    Attributes:
        input: the original input (string or list of wire items).
        new_items: every run item generated, in order (approval items included).
        raw_responses: one :class:`ModelResponse` per model request.
        final_output: the last message's text (or the validated structured output);
            ``None`` while interrupted.
        last_agent: the agent that ran last.
        interruptions: pending :class:`ToolApprovalItem`s (spec §8).
        context_wrapper: the run context, with ``usage``.
        agent_tool_invocation: for the nested run of an ``Agent.as_tool`` call, the outer
            call's ``tool_name``, ``tool_call_id`` and ``tool_arguments``; else ``None``.
    """

    input: str | list[dict[str, Any]]
    new_items: list[RunItem]
    raw_responses: list[ModelResponse]
    final_output: Any
    last_agent: Agent[Any]
    context_wrapper: RunContextWrapper[Any]
    interruptions: list[ToolApprovalItem] = field(default_factory=list)
    _state: RunState | None = field(default=None, repr=False)
    agent_tool_invocation: Any = field(default=None, repr=False)

    @property
    def last_response_id(self) -> str | None:
        return self.raw_responses[-1].response_id if self.raw_responses else None

    def to_state(self) -> RunState:
        """A :class:`RunState` to approve/reject interruptions and resume (spec §8)."""
        if self._state is None:
            raise RunCancelledError("This result has no resumable state.")
        return self._state

    def to_input_list(self) -> list[dict[str, Any]]:
        """Original input plus every generated item in wire form (approval items skipped)."""
        from .items import ItemHelpers

        items = ItemHelpers.input_to_new_input_list(self.input)
        for item in self.new_items:
            wire = item.to_input_item()
            if wire is not None:
                items.append(wire)
        return items

    def final_output_as(self, cls: type[Any], raise_if_incorrect_type: bool = False) -> Any:
        """``final_output`` typed as ``cls`` (checked when ``raise_if_incorrect_type``)."""
        if raise_if_incorrect_type and not isinstance(self.final_output, cls):
            raise TypeError(f"Final output is not of type {cls.__name__}")
        return self.final_output


class RunResultStreaming(RunResult):
    """A run in progress: iterate :meth:`stream_events`; fields fill in as the run goes.

    ``is_complete`` turns true when the run ends; errors of the run are raised from
    :meth:`stream_events` after the events that preceded them.
    """

    def __init__(
        self,
        *,
        input: str | list[dict[str, Any]],
        agent: Agent[Any],
        context_wrapper: RunContextWrapper[Any],
    ) -> None:
        super().__init__(
            input=input,
            new_items=[],
            raw_responses=[],
            final_output=None,
            last_agent=agent,
            context_wrapper=context_wrapper,
        )
        self.current_agent = agent
        self.current_turn = 0
        self.is_complete = False
        self._queue: asyncio.Queue[StreamEvent | None] = asyncio.Queue()
        self._task: asyncio.Task[Any] | None = None
        self._error: BaseException | None = None

    def _emit(self, event: StreamEvent) -> None:
        self._queue.put_nowait(event)

    def _finish(self, result: RunResult | None, error: BaseException | None) -> None:
        if result is not None:
            self.new_items = result.new_items
            self.raw_responses = result.raw_responses
            self.final_output = result.final_output
            self.last_agent = result.last_agent
            self.interruptions = result.interruptions
            self._state = result._state
        self._error = error
        self.is_complete = True
        self._queue.put_nowait(None)

    async def stream_events(self) -> AsyncIterator[StreamEvent]:
        """Events as they happen (spec §10.3); ends when the run ends.

        Raises:
            AgentsException: whatever ended the run (after the events before it).
        """
        while True:
            event = await self._queue.get()
            if event is None:
                break
            yield event
        if self._task is not None:
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        if self._error is not None and not isinstance(self._error, RunCancelledError):
            raise self._error

    def cancel(self) -> None:
        """Stop the run now: the model call or running tools are cancelled; events end."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
