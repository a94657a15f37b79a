"""Compaction on demand, between runs ("Compact now", ``/compact``; issue 14, item 3)."""

from __future__ import annotations

from typing import Any

from ..run_config import RunConfig
from .state import CompactionRecord, ContextState

__all__ = ["compact_history"]


async def compact_history(
    agent: Any,
    history: list[dict[str, Any]],
    run_config: RunConfig,
    state: ContextState,
) -> CompactionRecord | None:
    """Compact ``history`` (a session's full input list) now, as the next request would.

    The request is built exactly as the run loop builds it (agent instructions, tools,
    model), and the strategy is the policy's (``responses.compact`` where the server has it,
    else the local hand-off summary). ``state`` gets the new record; ``history`` is unchanged.

    Args:
        agent: the session's agent.
        history: the full history (``RunResult.to_input_list()`` of the last run).
        run_config: must carry a ``context_policy``.
        state: the session's compaction state (mutated in place).

    Returns:
        The new record, or ``None`` when there was nothing to compact.

    Raises:
        ValueError: ``run_config`` has no context policy.
    """
    from .._loop import RunLoop  # the loop imports this package: resolve at call time

    policy = run_config.context_policy
    if policy is None:
        raise ValueError("compact_history needs RunConfig.context_policy")
    loop = RunLoop(
        agent,
        history,
        context=None,
        max_turns=None,
        run_config=run_config,
        previous_response_id=None,
        auto_previous_response_id=False,
        conversation_id=None,
        emit=None,
    )
    manager = loop.context_manager
    assert manager is not None
    manager.state = state
    before = len(state.compactions)
    request = await loop._build_request()
    request.input = manager.request_input(loop.history)
    await manager.make_room(request, loop._model(), loop.history, "manual")
    return state.current if len(state.compactions) > before else None
