"""``OpenAIProvider``: model names to Responses API models (imports ``openai`` only when used,
so the window comes up before the ``openai`` package has loaded)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import UserError
from ..secret_handoff import env_value
from ..settings_check import key_required, missing_key_message
from .interface import Model, ModelProvider

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from .errors import RetryListener

__all__ = ["DEFAULT_MODEL", "OpenAIProvider"]

#: The key sent to a server that needs none (the ``openai`` client insists on one).
NO_KEY = "no-key-needed"

#: Model used when neither the agent nor the run config names one.
DEFAULT_MODEL = os.environ.get("OPENAI_DEFAULT_MODEL", "gpt-5.5")


class OpenAIProvider(ModelProvider):
    """Resolves model names to :class:`OpenAIResponsesModel` sharing one client.

    Args:
        openai_client: the client to use; otherwise built lazily from the environment
            (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``) or from ``api_key``/``base_url``.
        no_key_needed: the server needs no key (``Settings.no_key_needed``); a base URL on
            localhost/127.0.0.1/::1 needs none either (:func:`core.settings_check.key_required`):
            then, without a key, the placeholder :data:`NO_KEY` is sent.
        on_retry: told before each retry pause, the client's and the stream's
            (:class:`core.models.errors.RetryNotice`; issue 16).
    """

    def __init__(
        self,
        openai_client: AsyncOpenAI | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 3,
        no_key_needed: bool = False,
        on_retry: RetryListener | None = None,
    ) -> None:
        self._no_key_needed = no_key_needed
        self.on_retry = on_retry
        self._client = openai_client
        self._api_key = api_key
        self._base_url = base_url
        self._max_retries = max_retries

    def _get_client(self) -> AsyncOpenAI:
        if self._client is None:
            key = self._api_key or env_value("OPENAI_API_KEY")
            base_url = self._base_url or os.environ.get("OPENAI_BASE_URL") or None
            if not key and not key_required(base_url, no_key_needed=self._no_key_needed):
                key = NO_KEY  # a local server (Ollama, LM Studio, vLLM...): issue 16
            if not key and (self._base_url or self._no_key_needed):
                raise UserError(missing_key_message(base_url))
            if not key:
                raise UserError(
                    "No OpenAI API key: set OPENAI_API_KEY (and optionally OPENAI_BASE_URL), "
                    "or configure a model provider."
                )
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                api_key=key, base_url=self._base_url, max_retries=self._max_retries
            )
            if self.on_retry is not None:
                from .errors import watch_client_retries

                watch_client_retries(self._client, self.on_retry, base_url=base_url)
        return self._client

    def get_model(self, model_name: str | None) -> Model:
        from .openai_responses import OpenAIResponsesModel

        return OpenAIResponsesModel(
            model_name or DEFAULT_MODEL,
            self._get_client(),
            apply_default_settings=True,
            on_retry=self.on_retry,
        )
