"""``ScriptedModel``: replays a recorded session (the demo's default model and a test double).

A session file is JSON: ``{"turns": [{"output": [<output items>], "usage": {...}}, ...]}``
(a bare list of turns is accepted too). Each model request takes the next turn. Streaming
yields the same event sequence a Responses server sends (spec §11), built as ``openai`` types.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ..errors import ModelBehaviorError, UserError
from ..items import ModelResponse
from .interface import Model, ModelRequest

__all__ = ["ScriptedModel", "load_session_file"]

_DEFAULT_USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 15,
}


def load_session_file(path: str | Path) -> list[dict[str, Any]]:
    """The turns of a session file.

    Raises:
        UserError: the file is missing, is not JSON, or has no ``turns`` list.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"Cannot read session file {path}: {exc}") from exc
    turns = data.get("turns") if isinstance(data, dict) else data
    if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
        raise UserError(f"Session file {path} must hold a list of turns (objects with 'output')")
    return turns


class ScriptedModel(Model):
    """Replays scripted turns in order.

    Args:
        turns: a list of ``{"output": [...], "usage": {...}}`` dicts, or a session file path.
        delay_s: optional pause before each answer (seconds), to make a demo watchable.

    Attributes:
        requests: every :class:`ModelRequest` received, with ``input`` copied as wire dicts.
    """

    def __init__(self, turns: list[dict[str, Any]] | str | Path, *, delay_s: float = 0.0) -> None:
        self._turns = load_session_file(turns) if isinstance(turns, (str, Path)) else list(turns)
        self._next = 0
        self._ids = itertools.count(1)
        self.delay_s = delay_s
        self.requests: list[dict[str, Any]] = []

    @property
    def remaining(self) -> int:
        """Turns not yet replayed."""
        return len(self._turns) - self._next

    def _take(self, request: ModelRequest) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
        self.requests.append(
            {
                "model": request.model,
                "instructions": request.instructions,
                "input": copy.deepcopy(request.input.items),
                "tools": copy.deepcopy(request.tools),
                "tool_choice": request.model_settings.tool_choice,
                "previous_response_id": request.previous_response_id,
            }
        )
        if self._next >= len(self._turns):
            raise ModelBehaviorError(
                f"Scripted session exhausted after {len(self._turns)} turns; the agent asked for more."
            )
        turn = self._turns[self._next]
        self._next += 1
        output = [self._with_ids(dict(item)) for item in copy.deepcopy(turn.get("output", []))]
        usage = turn.get("usage") or _DEFAULT_USAGE
        return f"resp_scripted_{self._next}", output, usage

    def _with_ids(self, item: dict[str, Any]) -> dict[str, Any]:
        n = next(self._ids)
        item.setdefault("id", f"{item.get('type', 'item')[:4]}_{n}")
        if item.get("type") == "message":
            item.setdefault("role", "assistant")
            item.setdefault("status", "completed")
            for part in item.get("content", []):
                part.setdefault("annotations", [])
        if item.get("type") in ("function_call", "shell_call", "apply_patch_call", "computer_call"):
            item.setdefault("call_id", f"call_{n}")
            item.setdefault("status", "completed")
        return item

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        response_id, output, usage = self._take(request)
        return ModelResponse(output=output, usage=usage, response_id=response_id)

    async def stream_response(self, request: ModelRequest) -> AsyncIterator[Any]:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        response_id, output, usage = self._take(request)
        seq = itertools.count()
        base = {
            "id": response_id,
            "object": "response",
            "created_at": 0,
            "model": request.model or "scripted",
            "output": [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "status": "in_progress",
        }
        yield _event({"type": "response.created", "response": base, "sequence_number": next(seq)})
        for index, item in enumerate(output):
            yield _event(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress"},
                    "sequence_number": next(seq),
                }
            )
            if item.get("type") == "message":
                for content_index, part in enumerate(item.get("content", [])):
                    for chunk in _chunks(part.get("text", "")):
                        yield _event(
                            {
                                "type": "response.output_text.delta",
                                "item_id": item["id"],
                                "output_index": index,
                                "content_index": content_index,
                                "delta": chunk,
                                "logprobs": [],
                                "sequence_number": next(seq),
                            }
                        )
            yield _event(
                {
                    "type": "response.output_item.done",
                    "output_index": index,
                    "item": item,
                    "sequence_number": next(seq),
                }
            )
        done = {**base, "status": "completed", "output": output, "usage": usage}
        yield _event({"type": "response.completed", "response": done, "sequence_number": next(seq)})


def _chunks(text: str, size: int = 24) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _event(data: dict[str, Any]) -> Any:
    # imported here: loading ``openai`` takes ~0.7 s, and only streaming needs its types
    from openai._models import construct_type
    from openai.types.responses import ResponseStreamEvent

    return construct_type(type_=ResponseStreamEvent, value=data)
