"""``OpenAIProvider``: model names to Responses API models (imports ``openai`` only when used,
so the window comes up before the ``openai`` package has loaded)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import UserError
from ..secret_handoff import env_value
from .interface import Model, ModelProvider

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["DEFAULT_MODEL", "OpenAIProvider"]

#: Model used when neither the agent nor the run config names one.
DEFAULT_MODEL = os.environ.get("OPENAI_DEFAULT_MODEL", "gpt-5.5")


class OpenAIProvider(ModelProvider):
    """Resolves model names to :class:`OpenAIResponsesModel` sharing one client.

    Args:
        openai_client: the client to use; otherwise built lazily from the environment
            (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``) or from ``api_key``/``base_url``.
    """

    def __init__(
        self,
        openai_client: AsyncOpenAI | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 3,
    ) -> None:
        self._client = openai_client
        self._api_key = api_key
        self._base_url = base_url
        self._max_retries = max_retries

    def _get_client(self) -> AsyncOpenAI:
        if self._client is None:
            key = self._api_key or env_value("OPENAI_API_KEY")
            if not key:
                raise UserError(
                    "No OpenAI API key: set OPENAI_API_KEY (and optionally OPENAI_BASE_URL), "
                    "or configure a model provider."
                )
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                api_key=key, base_url=self._base_url, max_retries=self._max_retries
            )
        return self._client

    def get_model(self, model_name: str | None) -> Model:
        from .openai_responses import OpenAIResponsesModel

        return OpenAIResponsesModel(
            model_name or DEFAULT_MODEL, self._get_client(), apply_default_settings=True
        )
