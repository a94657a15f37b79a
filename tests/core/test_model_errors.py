"""Errors that say what to do (issue 16, item 4): each failure of a model request, caused for
real (a closed port, an unresolvable name, TLS to a plain server, a server that never
answers, HTTP statuses from the local Responses server), through the real ``openai`` client."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator

import pytest

from core import Agent, ModelProviderError, OpenAIProvider, RunConfig, Runner, UserError
from core.models.errors import RetryNotice, describe_model_error
from core.models.provider import NO_KEY
from core.settings_check import (
    base_url_hint,
    check_base_url,
    is_local_url,
    key_required,
    missing_key_message,
)
from tests.support import items


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A 127.0.0.1 port that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            accepted.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        thread.join(5)
        for conn in accepted:
            conn.close()
        listener.close()


async def _fail(base_url: str, *, key: str = "test-key", stream: bool = True, **client) -> str:
    provider = OpenAIProvider(api_key=key, base_url=base_url, max_retries=0)
    if client:
        provider._get_client()
        provider._client = provider._client.with_options(**client)  # type: ignore[union-attr]
    agent = Agent(name="a", instructions="x", model="test-model")
    config = RunConfig(model_provider=provider)
    with pytest.raises(ModelProviderError) as caught:
        if stream:
            result = Runner.run_streamed(agent, "hi", run_config=config)
            async for _ in result.stream_events():
                pass
        else:
            await Runner.run(agent, "hi", run_config=config)
    return str(caught.value)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
async def test_connection_refused_names_url_and_cause_not_a_cut_stream(stream, caplog):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with caplog.at_level(logging.WARNING, logger="core"):
        message = await _fail(url, stream=stream)
    assert f"{url}/responses" in message
    assert "connection refused" in message
    assert "Start the server" in message and "Settings" in message
    assert "stream" not in message and "cut" not in caplog.text


async def test_dns_failure_names_the_host():
    message = await _fail("http://no-such-host.invalid/v1")
    assert "http://no-such-host.invalid/v1/responses" in message
    assert "does not resolve" in message and "host name" in message


async def test_tls_to_a_plain_http_server(responses_server):
    url = responses_server.base_url.replace("http://", "https://")
    message = await _fail(url)
    assert f"{url}/responses" in message
    assert "TLS handshake failed" in message and "http://" in message


async def test_timeout_names_url(silent_server):
    url = f"http://127.0.0.1:{silent_server}/v1"
    message = await _fail(url, timeout=0.5)
    assert f"No answer from {url}/responses" in message and "time-out" in message


async def test_404_without_v1_suggests_v1(responses_server):
    base = responses_server.base_url.removesuffix("/v1")
    message = await _fail(base)
    assert "404" in message and f"try {base}/v1" in message


async def test_404_with_v1_does_not_suggest_it_again(responses_server):
    url = responses_server.base_url + "/v1"  # .../v1/v1: wrong, but it already ends in /v1
    message = await _fail(url)
    assert "404" in message and "try" not in message and "Responses API" in message


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors_point_at_settings_and_the_variable(responses_server, status):
    responses_server.enqueue_error(status=status, message="Incorrect API key provided: sk-zzz")
    message = await _fail(responses_server.base_url)
    assert f"HTTP {status}" in message
    assert "Settings > Model" in message and "OPENAI_API_KEY" in message


async def test_auth_error_info_offers_settings(responses_server):
    responses_server.enqueue_error(status=401)
    provider = OpenAIProvider(api_key="k", base_url=responses_server.base_url, max_retries=0)
    agent = Agent(name="a", model="test-model")
    with pytest.raises(ModelProviderError) as caught:
        await Runner.run(agent, "hi", run_config=RunConfig(model_provider=provider))
    info = describe_model_error(caught.value)
    assert info.kind == "auth" and info.open_settings and not info.retryable
    assert info.status_code == 401 and caught.value.status_code == 401


async def test_client_retries_are_announced_and_retry_now_ends_the_pause():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    notices: list[RetryNotice] = []

    def on_retry(notice: RetryNotice) -> None:
        notices.append(notice)
        notice.retry_now()  # the banner's Retry: no waiting out the backoff

    provider = OpenAIProvider(api_key="k", base_url=url, max_retries=2, on_retry=on_retry)
    agent = Agent(name="a", model="test-model")
    with pytest.raises(ModelProviderError, match="connection refused"):
        await Runner.run(agent, "hi", run_config=RunConfig(model_provider=provider))
    assert [(n.attempt, n.max_retries) for n in notices] == [(1, 2), (2, 2)]
    assert all(n.info.kind == "refused" and url in n.info.message for n in notices)
    assert all(n.delay_s > 0 for n in notices)


async def test_retried_status_is_announced_with_its_status(responses_server):
    responses_server.enqueue_error(status=503, headers={"retry-after": "0"})
    responses_server.enqueue([items.message("ok")])
    notices: list[RetryNotice] = []
    provider = OpenAIProvider(
        api_key="k", base_url=responses_server.base_url, max_retries=1, on_retry=notices.append
    )
    result = await Runner.run(
        Agent(name="a", model="test-model"), "hi", run_config=RunConfig(model_provider=provider)
    )
    assert result.final_output == "ok"
    assert [n.info.kind for n in notices] == ["server"]
    assert "HTTP 503" in notices[0].info.message


async def test_cut_stream_retry_is_announced(responses_server):
    responses_server.enqueue([items.message("partial answer")], cut_after_events=2)
    responses_server.enqueue([items.message("whole answer")])
    notices: list[RetryNotice] = []
    provider = OpenAIProvider(
        api_key="k", base_url=responses_server.base_url, max_retries=0, on_retry=notices.append
    )
    result = Runner.run_streamed(
        Agent(name="a", model="test-model"), "hi", run_config=RunConfig(model_provider=provider)
    )
    async for _ in result.stream_events():
        pass
    assert result.final_output == "whole answer"
    assert [n.attempt for n in notices] == [1]


# -- a keyless local server -------------------------------------------------------------------


async def test_keyless_localhost_server_needs_no_key(responses_server):
    responses_server.enqueue([items.message("hi from a local model")])
    provider = OpenAIProvider(base_url=responses_server.base_url)  # no key anywhere
    result = await Runner.run(
        Agent(name="a", model="test-model"), "hi", run_config=RunConfig(model_provider=provider)
    )
    assert result.final_output == "hi from a local model"
    headers = {k.lower(): v for k, v in responses_server.requests[0].headers.items()}
    assert headers["authorization"] == f"Bearer {NO_KEY}"


async def test_localhost_name_also_needs_no_key(responses_server):
    responses_server.enqueue([items.message("ok")])
    url = responses_server.base_url.replace("127.0.0.1", "localhost")
    provider = OpenAIProvider(base_url=url)
    result = await Runner.run(
        Agent(name="a", model="test-model"), "hi", run_config=RunConfig(model_provider=provider)
    )
    assert result.final_output == "ok"


def test_remote_server_without_key_says_what_to_do():
    provider = OpenAIProvider(base_url="https://gateway.example.com/v1")
    with pytest.raises(UserError) as caught:
        provider.get_model("m")
    assert "https://gateway.example.com/v1" in str(caught.value)
    assert "OPENAI_API_KEY" in str(caught.value) and "No key needed" in str(caught.value)


def test_no_key_needed_setting_allows_a_remote_server():
    provider = OpenAIProvider(base_url="https://gateway.example.com/v1", no_key_needed=True)
    model = provider.get_model("m")
    assert model._client.api_key == NO_KEY  # type: ignore[attr-defined]


# -- the one validator -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "suggestion"),
    [
        ("localhost:1234", "http://localhost:1234/v1"),
        ("127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("api.example.com", "https://api.example.com/v1"),
    ],
)
def test_base_url_without_scheme_is_rejected_with_the_fix(typed, suggestion):
    with pytest.raises(UserError, match="has no scheme") as caught:
        check_base_url(typed)
    assert f"did you mean {suggestion}?" in str(caught.value)


@pytest.mark.parametrize(
    ("typed", "problem"),
    [("ftp://x/v1", "scheme 'ftp'"), ("https://", "no host"), ("http://x:99999", "valid URL")],
)
def test_bad_base_urls(typed, problem):
    with pytest.raises(UserError, match=problem):
        check_base_url(typed)


def test_good_base_urls_are_kept():
    assert check_base_url(" http://localhost:11434/v1/ ") == "http://localhost:11434/v1"
    assert check_base_url("") is None and check_base_url(None) is None


def test_local_hosts_and_key_rule():
    for url in ("http://localhost:1/v1", "http://127.0.0.1:2/v1", "http://[::1]:3/v1"):
        assert is_local_url(url) and not key_required(url)
    assert key_required("https://api.openai.com/v1") and key_required(None)
    assert not key_required("https://gw.example.com/v1", no_key_needed=True)
    assert base_url_hint("http://localhost:1234") is not None
    assert base_url_hint("http://localhost:1234/v1") is None
    assert "Settings" in missing_key_message(None)
