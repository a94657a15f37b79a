"""The model seam: what the runner asks of a model provider."""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from ..items import ModelResponse
from ..model_settings import ModelSettings
from .history import InputHistory

__all__ = ["Model", "ModelProvider", "ModelRequest"]


@dataclass(slots=True)
class ModelRequest:
    """Everything one Responses request needs (spec §0).

    Attributes:
        model: the model name sent as ``model`` (``None`` lets the server choose).
        instructions: the system prompt, omitted when ``None``.
        input: the full history, or with server-managed state only the unsent items.
        tools: wire payloads for the ``tools`` array (sent as ``[]`` when empty).
        model_settings: resolved settings (``tool_choice`` already converted to wire form).
        output_schema: JSON schema for ``text.format`` when the agent has a structured output.
        previous_response_id / conversation_id: server-managed conversation state.
    """

    model: str | None
    instructions: str | None
    input: InputHistory
    tools: list[dict[str, Any]] = field(default_factory=list)
    model_settings: ModelSettings = field(default_factory=ModelSettings)
    output_schema: dict[str, Any] | None = None
    previous_response_id: str | None = None
    conversation_id: str | None = None


class Model(abc.ABC):
    """A model the runner can call, streamed or not."""

    @abc.abstractmethod
    async def get_response(self, request: ModelRequest) -> ModelResponse:
        """One non-streamed round trip.

        Raises:
            ModelBehaviorError: the response ended ``failed``/``incomplete``.
            ModelProviderError: the service failed after retries.
        """

    @abc.abstractmethod
    def stream_response(self, request: ModelRequest) -> AsyncIterator[Any]:
        """Yield ``openai`` Responses stream events; the last is ``response.completed``
        (or a terminal ``response.failed``/``response.incomplete``/``error``)."""


class ModelProvider(abc.ABC):
    """Turns a model name into a :class:`Model`."""

    @abc.abstractmethod
    def get_model(self, model_name: str | None) -> Model:
        """The model for ``model_name`` (``None``: the provider's default)."""
