"""One place that turns ``openai``/``httpx2`` exceptions into messages that say what to do.

Connection failures name the URL and the cause (refused, DNS, TLS, timeout) and are never
reported as a cut stream; a 404 on ``/responses`` suggests ``/v1``; 401/403 point at
Settings and ``OPENAI_API_KEY`` (issue 16, item 4). The causes are read from the exception
chain the ``openai`` client raises (``APIConnectionError`` / ``APITimeoutError`` caused by
``httpx2.ConnectError`` / ``ReadTimeout``, caused by ``ConnectionRefusedError``,
``socket.gaierror``, ``ssl.SSLError``...).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from ..errors import ModelProviderError
from ..redaction import redact_text

__all__ = [
    "ModelErrorInfo",
    "RetryListener",
    "RetryNotice",
    "describe_model_error",
    "provider_error",
    "watch_client_retries",
]

Kind = Literal[
    "refused",
    "dns",
    "tls",
    "timeout",
    "connection",
    "not_found",
    "auth",
    "forbidden",
    "rate_limit",
    "server",
    "status",
    "other",
]


@dataclass(frozen=True, slots=True)
class ModelErrorInfo:
    """What went wrong with a model request, for the user.

    Attributes:
        kind: ``refused``, ``dns``, ``tls``, ``timeout``, ``connection`` (another network
            failure), ``not_found`` (HTTP 404), ``auth`` (401), ``forbidden`` (403),
            ``rate_limit`` (429), ``server`` (5xx), ``status`` (another HTTP status) or
            ``other``.
        message: one or two sentences: what happened, where, and what to do.
        url: the request URL when known (no query string).
        status_code: the HTTP status, or ``None``.
        open_settings: whether the fix is in Settings (offer *Open Settings*).
        retryable: whether trying again later can help (offer *Retry*).
    """

    kind: Kind
    message: str
    url: str | None = None
    status_code: int | None = None
    open_settings: bool = False
    retryable: bool = False


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _url(exc: BaseException) -> str | None:
    for link in _chain(exc):
        request = getattr(link, "request", None)
        if request is None:
            continue
        try:
            url = str(request.url)
        except Exception:  # httpx raises RuntimeError when no request is set
            continue
        parts = urlsplit(url)
        return parts._replace(query="", fragment="").geturl()
    return None


def _network_kind(chain: list[BaseException]) -> tuple[Kind, str]:
    names = {type(link).__name__ for link in chain}
    for link in chain:
        if isinstance(link, ConnectionRefusedError):
            return "refused", "connection refused: no server listens there"
        if isinstance(link, socket.gaierror):
            return "dns", f"the host name does not resolve ({link.strerror or link})"
        if isinstance(link, ssl.SSLError):
            detail = getattr(link, "reason", None) or str(link)
            hint = " (is it a plain http:// server?)" if "WRONG_VERSION" in str(link) else ""
            return "tls", f"the TLS handshake failed: {detail}{hint}"
    if names & {
        "APITimeoutError",
        "ReadTimeout",
        "ConnectTimeout",
        "TimeoutException",
        "WriteTimeout",
        "PoolTimeout",
        "TimeoutError",
    }:
        return "timeout", "the time-out passed"
    for link in chain:
        if isinstance(link, ConnectionResetError):
            return "connection", "the server closed the connection"
    last = chain[-1]
    return "connection", f"{type(last).__name__}: {last}" if str(last) else type(last).__name__


_FIX_IN = {
    "Settings": "in Settings",
    "--base-url": "with --base-url",
    "OPENAI_BASE_URL": "in OPENAI_BASE_URL",
    "default": "with --base-url, OPENAI_BASE_URL or Settings",
}
"""Where the user sets the base URL, by where it came from (``fix_in``)."""


def _place(fix_in: str) -> str:
    return _FIX_IN.get(fix_in, _FIX_IN["Settings"])


def _status_info(
    exc: Any, url: str | None, base_url: str | None, fix_in: str = "Settings"
) -> ModelErrorInfo:
    status = int(getattr(exc, "status_code", 0) or 0)
    detail = redact_text(str(getattr(exc, "message", "") or exc))  # a gateway may echo a key
    where = url or base_url or "the model service"
    if status == 404:
        message = f"{where} answered 404 Not Found."
        base = base_url or (url.rsplit("/responses", 1)[0] if url else None)
        if base and not urlsplit(base).path.rstrip("/").endswith("/v1"):
            message += (
                f" The base URL probably lacks /v1: try {base.rstrip('/')}/v1 {_place(fix_in)}."
            )
        else:
            message += (
                f" Check the base URL ({_place(fix_in)}) and that the server speaks the "
                "Responses API."
            )
        return ModelErrorInfo("not_found", message, url, status, open_settings=True)
    if status in (401, 403):
        kind: Kind = "auth" if status == 401 else "forbidden"
        what = "rejected the API key" if status == 401 else "refused access with this key"
        return ModelErrorInfo(
            kind,
            f"{where} {what} (HTTP {status}: {detail}). Set a valid key in Settings > Model, "
            "or in OPENAI_API_KEY (which wins over the stored key).",
            url,
            status,
            open_settings=True,
        )
    if status == 429:
        return ModelErrorInfo(
            "rate_limit",
            f"{where} is rate limiting or out of quota (HTTP 429: {detail}). Wait and retry, "
            "or check the account's plan.",
            url,
            status,
            retryable=True,
        )
    if status >= 500:
        return ModelErrorInfo(
            "server",
            f"{where} failed (HTTP {status}: {detail}). Retry later.",
            url,
            status,
            retryable=True,
        )
    return ModelErrorInfo("status", f"{where} answered HTTP {status}: {detail}", url, status)


def describe_model_error(
    exc: BaseException, *, base_url: str | None = None, fix_in: str = "Settings"
) -> ModelErrorInfo:
    """What ``exc`` (raised by the ``openai`` client, ``httpx2`` or our model) means for the
    user.

    Args:
        exc: the exception; its ``__cause__``/``__context__`` chain is read, so a
            :class:`~core.errors.ModelProviderError` raised ``from`` the client's error is
            described by that error.
        base_url: the configured base URL (used when the exception carries no request).
        fix_in: where the base URL came from, so the hint says where to change it:
            ``"Settings"`` (the window's wording, the default), ``"--base-url"``,
            ``"OPENAI_BASE_URL"`` or ``"default"`` (none set); ``tandem run`` passes it
            (:func:`desktop.run_cli.header.base_url_source`).

    Returns:
        A :class:`ModelErrorInfo`; ``kind="other"`` with ``str(exc)`` for anything else.
    """
    import openai

    chain = _chain(exc)
    url = _url(exc)
    for link in chain:
        if isinstance(link, (openai.APIStatusError, _StatusFailure)):
            return _status_info(link, url, base_url, fix_in)
    network = [
        link
        for link in chain
        if isinstance(
            link,
            (
                openai.APIConnectionError,
                ConnectionError,
                socket.gaierror,
                ssl.SSLError,
                TimeoutError,
            ),
        )
        or type(link).__module__.startswith(("httpx", "httpcore"))
    ]
    if network:
        kind, cause = _network_kind(chain)
        where = url or base_url or "the model service"
        place = _place(fix_in)
        action = {
            "refused": f"Start the server, or fix the base URL {place}.",
            "dns": (
                "Check the host name in the base URL (Settings > Model) and the network."
                if fix_in == "Settings"
                else f"Check the host name in the base URL ({place}) and the network."
            ),
            "tls": "Use http:// for a server without TLS, or fix its certificate.",
            "timeout": "The server may be overloaded or stuck; Retry, or check the base URL.",
            "connection": f"Check the server and the base URL {place}.",
        }[kind]
        said = f"No answer from {where}" if kind == "timeout" else f"Cannot reach {where}"
        return ModelErrorInfo(
            kind,
            f"{said}: {cause}. {action}",
            url,
            None,
            open_settings=kind != "timeout",
            retryable=True,
        )
    if isinstance(exc, ModelProviderError) and exc.status_code is not None:
        return ModelErrorInfo("status", str(exc), url, exc.status_code)
    return ModelErrorInfo("other", redact_text(str(exc) or type(exc).__name__), url)


def provider_error(exc: BaseException, *, base_url: str | None = None) -> ModelProviderError:
    """A :class:`~core.errors.ModelProviderError` carrying :func:`describe_model_error`'s
    message (and the HTTP status); raise it ``from exc``."""
    info = describe_model_error(exc, base_url=base_url)
    error = ModelProviderError(info.message, info.status_code)
    error.info = info  # type: ignore[attr-defined]
    return error


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """A model request failed and is tried again after a pause.

    Attributes:
        delay_s: the pause before the next attempt (seconds).
        attempt: the number of the next attempt's retry (1 for the first retry).
        max_retries: how many retries are allowed in all.
        info: why the last attempt failed.
        retry_now: ends the pause at once (the banner's *Retry*); harmless after it ended.
    """

    delay_s: float
    attempt: int
    max_retries: int
    info: ModelErrorInfo
    retry_now: Callable[[], None] = field(default=lambda: None, compare=False)


RetryListener = Callable[[RetryNotice], object]
"""Called (on the event loop) before each pause of a retried model request."""


def watch_client_retries(
    client: object, on_retry: RetryListener, *, base_url: str | None = None
) -> None:
    """Tell ``on_retry`` about each retry the ``openai`` client makes, and let *Retry* end
    its pause early.

    The ``openai`` client retries connection errors, time-outs, 408/409/429 and 5xx itself
    (``max_retries``, exponential backoff); it pauses in ``AsyncOpenAI._sleep_for_retry``
    (openai 2.x/3.x), called while the failure is being handled, so the failure is
    ``sys.exc_info()``. That one method is wrapped on this client instance; a client without
    it is left as it is (no notices).

    Args:
        client: an ``openai.AsyncOpenAI``.
        on_retry: the listener.
        base_url: the configured base URL, for the messages.
    """
    original = getattr(client, "_sleep_for_retry", None)
    calculate = getattr(client, "_calculate_retry_timeout", None)
    if original is None or calculate is None:
        return

    async def sleep_for_retry(
        *, retries_taken: int, max_retries: int, options: object, response: object
    ) -> None:
        failure = sys.exc_info()[1]
        headers = getattr(response, "headers", None)
        delay = float(calculate(max_retries - retries_taken, options, headers))
        if response is not None:  # a retried HTTP status (the failure is httpx2's, not openai's)
            failure = _StatusFailure(response)
        info = (
            describe_model_error(failure, base_url=base_url)
            if failure is not None
            else ModelErrorInfo("other", "the request failed", base_url)
        )
        wake = asyncio.Event()
        try:
            on_retry(RetryNotice(delay, retries_taken + 1, max_retries, info, wake.set))
        except Exception:  # a broken listener must not break the request
            pass
        try:
            await asyncio.wait_for(wake.wait(), timeout=delay)
        except TimeoutError:
            pass

    client._sleep_for_retry = sleep_for_retry  # type: ignore[attr-defined]


class _StatusFailure(Exception):
    """A retried HTTP status as an exception :func:`describe_model_error` reads."""

    def __init__(self, response: object) -> None:
        self.status_code = getattr(response, "status_code", 0)
        self.request = getattr(response, "request", None)
        self.message = f"HTTP {self.status_code}"
        super().__init__(self.message)
