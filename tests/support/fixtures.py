"""Pytest fixtures: a started ``ResponsesServer`` and an ``AsyncOpenAI`` client pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import openai
import pytest
import pytest_asyncio

from tests.support.responses_server import ResponsesServer

__all__ = ["openai_client", "responses_server"]


@pytest.fixture
def responses_server() -> Iterator[ResponsesServer]:
    """A started ``ResponsesServer``; stopped (threads joined) after the test."""
    server = ResponsesServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest_asyncio.fixture
async def openai_client(responses_server: ResponsesServer) -> AsyncIterator[openai.AsyncOpenAI]:
    """``openai.AsyncOpenAI`` on ``responses_server`` with ``max_retries=0``; closed after."""
    client = openai.AsyncOpenAI(
        base_url=responses_server.base_url, api_key="test-key", max_retries=0
    )
    try:
        yield client
    finally:
        await client.close()
