"""``OpenAIResponsesModel``: the Responses API through the official ``openai.AsyncOpenAI`` client.

The request body is built as plain JSON (the input history is serialised once per item, see
:mod:`core.models.history`) and posted with the client's own ``post``, so the client still
provides HTTP, authentication, retries with backoff, SSE parsing and typed events. A
non-streamed answer is taken as the parsed JSON (``cast_to=object``): its items are the wire
dicts the runner keeps, so no typed ``Response`` is built and dumped back (issue 15).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai
from openai import AsyncOpenAI, AsyncStream
from openai._base_client import make_request_options
from openai.types.responses import Response, ResponseStreamEvent

from ..errors import ModelBehaviorError, ModelProviderError, UserError
from ..items import ModelResponse
from ..model_settings import get_default_model_settings
from ..redaction import redact_text
from ..secret_handoff import env_value
from .errors import RetryListener, RetryNotice, describe_model_error, provider_error
from .history import dumps_item
from .interface import Model, ModelRequest
from .provider import DEFAULT_MODEL, OpenAIProvider
from .wire import item_to_dict

__all__ = ["DEFAULT_MODEL", "OpenAIProvider", "OpenAIResponsesModel", "item_to_dict"]

logger = logging.getLogger("core")

#: Model used when neither the agent nor the run config names one.

_TERMINAL_FAILURES = {"response.failed", "response.incomplete", "error"}
_SETTINGS_PASSTHROUGH = (
    "temperature",
    "top_p",
    "truncation",
    "store",
    "metadata",
    "reasoning",
    "prompt_cache_key",
    "parallel_tool_calls",
    "context_management",
)


def build_request_head(request: ModelRequest, *, stream: bool) -> dict[str, Any]:
    """Every body field except ``input``, as a JSON-ready dict (spec §0)."""
    settings = request.model_settings
    head: dict[str, Any] = {}
    if request.model is not None:
        head["model"] = request.model
    head["include"] = list(settings.include or [])
    if request.instructions is not None:
        head["instructions"] = request.instructions
    head["tools"] = request.tools
    if settings.tool_choice is not None:
        head["tool_choice"] = settings.tool_choice
    for name in _SETTINGS_PASSTHROUGH:
        value = getattr(settings, name)
        if value is None or (name == "parallel_tool_calls" and not request.tools):
            continue
        head[name] = value
    if settings.max_tokens is not None:
        head["max_output_tokens"] = settings.max_tokens
    text: dict[str, Any] = {}
    if request.output_schema is not None:
        text["format"] = {
            "type": "json_schema",
            "name": "final_output",
            "schema": request.output_schema,
            "strict": True,
        }
    if settings.verbosity is not None:
        text["verbosity"] = settings.verbosity
    if text:
        head["text"] = text
    if request.previous_response_id is not None:
        head["previous_response_id"] = request.previous_response_id
    if request.conversation_id is not None:
        head["conversation"] = request.conversation_id
    if stream:
        head["stream"] = True
    head.update(settings.extra_args or {})
    head.update(settings.extra_body or {})
    return head


def build_request_chunks(request: ModelRequest, *, stream: bool) -> list[bytes]:
    """The whole JSON body (UTF-8) as chunks whose concatenation is the body: the head
    serialised now, then ``input`` as the history's sealed blocks and newest items
    (:meth:`~core.models.history.InputHistory.body_chunks`; issue 15, item 4). No item is
    serialised again, and only the newest items are copied.

    Raises:
        TypeError: a head field (e.g. ``extra_body``) holds a value JSON cannot encode.
    """
    head = build_request_head(request, stream=stream)
    head.pop("input", None)  # the history is the input (an ``extra_body`` key must not repeat it)
    return request.input.body_chunks(dumps_item(head), b"input")


def build_request_body(request: ModelRequest, *, stream: bool) -> bytes:
    """The whole JSON body as one ``bytes`` (the join of :func:`build_request_chunks`, e.g.
    for a test or a log; the model itself posts the chunks).

    Raises:
        TypeError: a head field (e.g. ``extra_body``) holds a value JSON cannot encode.
    """
    return b"".join(build_request_chunks(request, stream=stream))


class _ChunkedBody:
    """A request body posted as its chunks, so no request joins the whole history.

    For the ``openai`` client it is an ``AsyncIterable[bytes]`` (a documented ``content``
    type; ``httpx2`` writes each chunk as it is, under the ``Content-Length`` that
    :meth:`OpenAIResponsesModel._options` sets) that is also a seekable file: the client only
    retries (429/5xx, connection errors) a body it can rewind, and every iteration starts from
    the first chunk, so rewinding is a no-op.
    """

    __slots__ = ("_pos", "chunks", "length")

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.length = sum(map(len, chunks))
        self._pos = 0  # of the file view only: iteration always yields the whole body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk

    def read(self, size: int | None = -1) -> bytes:
        """The next ``size`` bytes of the file view (all that is left when ``size`` is
        negative or ``None``); a join, so only for a caller that reads instead of iterating."""
        data = b"".join(self.chunks)
        end = len(data) if size is None or size < 0 else min(len(data), self._pos + size)
        out, self._pos = data[self._pos : end], max(end, self._pos)
        return out

    def seekable(self) -> bool:
        """Always: the chunks are kept, so the body can be sent again from any offset."""
        return True

    def tell(self) -> int:
        """The file view's offset in bytes."""
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        """Move the file view (``whence`` 0, 1 or 2 as for a file); returns the new offset."""
        base = {0: 0, 1: self._pos, 2: self.length}[whence]
        self._pos = max(0, base + offset)
        return self._pos


def response_to_model_response(response: Any) -> ModelResponse:
    """A :class:`ModelResponse` whose output items are plain wire dicts.

    Args:
        response: the response as the server sent it (the parsed JSON object, what
            :meth:`OpenAIResponsesModel.get_response` passes: no typed model is built, issue 15,
            item 4), or an ``openai`` ``Response`` (e.g. a stream's ``response.completed``).

    Returns:
        The output items as sent, ``usage`` as sent (a dict for JSON, the typed object for a
        ``Response``) and the response id.

    Raises:
        ModelBehaviorError: the response status is ``failed`` or ``incomplete`` (spec §10.1), or
            the answer is not a Responses object (not a JSON object, ``output`` not a list of
            objects): what cannot be read is refused, not guessed at.
    """
    if isinstance(response, dict):
        return _from_json(response)
    status = getattr(response, "status", None)
    if status in ("failed", "incomplete"):
        detail = getattr(response, "error", None) or getattr(response, "incomplete_details", None)
        raise ModelBehaviorError(f"Responses request ended with status {status}: {detail}")
    output = [item_to_dict(item) for item in response.output or []]
    return ModelResponse(output=output, usage=response.usage, response_id=response.id)


def _from_json(data: dict[str, Any]) -> ModelResponse:
    status = data.get("status")
    if status in ("failed", "incomplete"):
        detail = data.get("error") or data.get("incomplete_details")
        raise ModelBehaviorError(f"Responses request ended with status {status}: {detail}")
    output = data.get("output")
    if output is None:
        output = []
    if not isinstance(output, list) or not all(isinstance(item, dict) for item in output):
        raise ModelBehaviorError(
            f"Responses answer has an unreadable output ({type(output).__name__}); "
            "expected a list of item objects"
        )
    usage = data.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise ModelBehaviorError(f"Responses answer has an unreadable usage: {usage!r:.80}")
    response_id = data.get("id")
    return ModelResponse(
        output=output,
        usage=usage,
        response_id=response_id if isinstance(response_id, str) else None,
    )


class OpenAIResponsesModel(Model):
    """A model on the OpenAI Responses API (or any server speaking it).

    Args:
        model: the model name sent in each request.
        openai_client: an ``AsyncOpenAI``; by default one is built from ``OPENAI_API_KEY`` and
            ``OPENAI_BASE_URL`` with ``max_retries`` retries.
        max_retries: client retries of 408/409/429/5xx and connection errors, with exponential
            backoff (the ``openai`` client's policy).
        stream_retries: how often a stream cut before ``response.completed`` is retried.
        apply_default_settings: when the agent left its model settings unset
            (:attr:`ModelSettings.is_implicit`), fill in
            :func:`~core.model_settings.get_default_model_settings` for the model name, under
            any run-config overrides. :class:`OpenAIProvider` sets it for the models it
            resolves by name; a model object passed directly sends the settings as they are
            (both as in openai-agents 0.24).
        on_retry: told before each pause of a cut stream's retry
            (:class:`core.models.errors.RetryNotice`).

    Raises:
        UserError: no client was given and no API key is configured.
    """

    def __init__(
        self,
        model: str | None,
        openai_client: AsyncOpenAI | None = None,
        *,
        max_retries: int = 3,
        stream_retries: int = 2,
        retry_backoff_s: float = 0.5,
        apply_default_settings: bool = False,
        on_retry: RetryListener | None = None,
    ) -> None:
        self.model = model
        self.on_retry = on_retry  # issue 16: the window's "retrying in N s" banner
        self._apply_default_settings = apply_default_settings
        if openai_client is None:
            api_key = env_value("OPENAI_API_KEY")
            if not api_key:
                raise UserError(
                    "No OpenAI API key: set OPENAI_API_KEY (and optionally OPENAI_BASE_URL) "
                    "or pass openai_client=AsyncOpenAI(...)."
                )
            openai_client = AsyncOpenAI(api_key=api_key, max_retries=max_retries)
        self._client = openai_client
        self._stream_retries = stream_retries
        self._retry_backoff_s = retry_backoff_s

    @property
    def openai_client(self) -> AsyncOpenAI:
        """The ``AsyncOpenAI`` client (for ``responses.compact`` / ``responses.input_tokens``)."""
        return self._client

    def _options(self, request: ModelRequest, body: _ChunkedBody) -> Any:
        headers = {"Content-Type": "application/json", "Content-Length": str(body.length)}
        headers.update(request.model_settings.extra_headers or {})
        return make_request_options(extra_headers=headers, security={"bearer_auth": True})

    def _with_model(self, request: ModelRequest) -> ModelRequest:
        if request.model is None and self.model is not None:
            request.model = self.model
        settings = request.model_settings
        if self._apply_default_settings and settings.is_implicit:
            request.model_settings = get_default_model_settings(request.model).resolve(settings)
        return request

    async def get_response(self, request: ModelRequest) -> ModelResponse:
        request = self._with_model(request)
        body = _ChunkedBody(build_request_chunks(request, stream=False))
        try:
            # ``cast_to=object``: the client hands back the parsed JSON, with no typed
            # ``Response`` built only to be dumped to dicts again (1+ ms a turn; issue 15)
            response = await self._client.post(
                "/responses", content=body, options=self._options(request, body), cast_to=object
            )
        except (openai.APIStatusError, openai.APIConnectionError) as exc:
            raise provider_error(exc, base_url=str(self._client.base_url)) from exc
        if not isinstance(response, dict):
            raise ModelBehaviorError(
                f"Responses answer is not a JSON object ({type(response).__name__})"
            )
        return response_to_model_response(response)

    async def stream_response(self, request: ModelRequest) -> AsyncIterator[Any]:
        request = self._with_model(request)
        body = _ChunkedBody(build_request_chunks(request, stream=True))
        attempt = 0
        while True:
            completed = opened = False
            try:
                stream = await self._client.post(
                    "/responses",
                    content=body,
                    options=self._options(request, body),
                    cast_to=Response,
                    stream=True,
                    stream_cls=AsyncStream[ResponseStreamEvent],
                )
                opened = True
                async with stream:
                    async for event in stream:
                        yield event
                        if getattr(event, "type", "") == "response.completed":
                            completed = True
                        elif getattr(event, "type", "") in _TERMINAL_FAILURES:
                            return
                if completed:
                    return
                failure: Exception = ModelBehaviorError("Model did not produce a final response!")
            except openai.APIStatusError as exc:
                raise provider_error(exc, base_url=str(self._client.base_url)) from exc
            except (
                openai.APIConnectionError,
                openai.APIError,
                httpx2.TransportError,
                OSError,
            ) as exc:
                if isinstance(exc, openai.APIError) and not _is_transport_error(exc):
                    raise ModelProviderError(f"Model stream failed: {exc}") from exc
                if not opened:  # never connected (the client retried already): not a cut stream
                    raise provider_error(exc, base_url=str(self._client.base_url)) from exc
                failure = exc
            attempt += 1
            if attempt > self._stream_retries:
                if isinstance(failure, ModelBehaviorError):
                    raise failure
                raise ModelProviderError(f"Model stream failed: {failure}") from failure
            logger.warning("response stream cut before completion; retrying (%d)", attempt)
            delay = self._retry_backoff_s * (2 ** (attempt - 1))
            if self.on_retry is not None:
                info = describe_model_error(failure, base_url=str(self._client.base_url))
                self.on_retry(RetryNotice(delay, attempt, self._stream_retries, info))
            await asyncio.sleep(delay)


def _is_transport_error(exc: Exception) -> bool:
    return isinstance(exc, openai.APIConnectionError)


def _status_message(exc: openai.APIStatusError) -> str:
    # a gateway may echo the key it rejected (issue 11): the message is shown and journaled
    return redact_text(f"Model service returned HTTP {exc.status_code}: {exc.message}")
