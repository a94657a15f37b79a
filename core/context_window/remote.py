"""The server's own context tools, where it has them: ``responses.input_tokens`` and
``responses.compact`` (``openai`` 3.57: ``POST /responses/input_tokens``, ``/responses/compact``).

A model exposes its ``AsyncOpenAI`` client as ``openai_client``
(:class:`~core.models.openai_responses.OpenAIResponsesModel` does); other models, and servers
that answer 404/405/501, are reported as "not supported" so that the caller falls back.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from ..models.interface import ModelRequest
from ..models.wire import item_to_dict

if TYPE_CHECKING:
    import openai

__all__ = ["NOT_SUPPORTED", "compact", "count_input_tokens", "remote_client"]

logger = logging.getLogger("core")

#: HTTP statuses that mean "this server has no such endpoint".
NOT_SUPPORTED = frozenset({400, 404, 405, 501})


def remote_client(model: Any) -> openai.AsyncOpenAI | None:
    """The model's ``AsyncOpenAI`` client, or ``None`` for a model without one."""
    client = getattr(model, "openai_client", None)
    if client is None:
        return None
    # ``openai`` is imported lazily (issue 15: the window's start-up) and may be half-imported
    # by the start-up warm-up thread right now: no class yet means no client made from it.
    async_openai = getattr(sys.modules.get("openai"), "AsyncOpenAI", None)
    return client if async_openai is not None and isinstance(client, async_openai) else None


def _body(request: ModelRequest, *, with_tools: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": request.model, "input": request.input.items}
    if request.instructions is not None:
        body["instructions"] = request.instructions
    if with_tools and request.tools:
        body["tools"] = request.tools
    return body


async def count_input_tokens(model: Any, request: ModelRequest) -> int | None:
    """The server's count of the request's input tokens, or ``None`` when it has no
    ``/responses/input_tokens`` endpoint or the call failed (never raises)."""
    client = remote_client(model)
    if client is None or request.model is None:
        return None
    import openai
    from openai.types.responses import InputTokenCountResponse

    try:
        answer = await client.post(
            "/responses/input_tokens",
            body=_body(request, with_tools=True),
            cast_to=InputTokenCountResponse,
        )
    except openai.APIStatusError as exc:
        if exc.status_code not in NOT_SUPPORTED:
            logger.warning("responses.input_tokens failed: HTTP %s", exc.status_code)
        return None
    except openai.APIError:
        return None
    return int(answer.input_tokens)


async def compact(model: Any, request: ModelRequest) -> list[dict[str, Any]] | None:
    """The compacted history from ``responses.compact``: the user messages followed by one
    ``compaction`` item (Responses API ``CompactedResponse.output``), as wire dicts.

    Returns:
        ``None`` when the server has no compact endpoint (404/405/501/400) or no client.

    Raises:
        openai.APIError: any other failure (the caller falls back to a local compaction).
    """
    client = remote_client(model)
    if client is None or request.model is None:
        return None
    import openai
    from openai.types.responses import CompactedResponse

    try:
        answer = await client.post(
            "/responses/compact", body=_body(request, with_tools=False), cast_to=CompactedResponse
        )
    except openai.APIStatusError as exc:
        if exc.status_code in NOT_SUPPORTED:
            return None
        raise
    return [item_to_dict(item) for item in answer.output]
