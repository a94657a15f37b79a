"""Shared test set-up: the local Responses server fixtures and a clean environment."""

from __future__ import annotations

from collections.abc import AsyncIterator

import openai
import pytest
import pytest_asyncio

from core import OpenAIResponsesModel
from tests.support.fixtures import openai_client, responses_server  # noqa: F401

__all__ = ["model"]


@pytest.fixture(autouse=True)
def _clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test may reach the real OpenAI service or write to the real config/data dirs."""
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "CODEX_API_KEY",
        "OPENAI_ORG_ID",
        "CODEX_PATH",
        "CODEX_HOME",
        "OPENAI_AGENTS_CODEX_SUBPROCESS_STREAM_LIMIT_BYTES",
        "TANDEM_CHROMIUM",
    ):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))


@pytest_asyncio.fixture
async def model(openai_client: openai.AsyncOpenAI) -> AsyncIterator[OpenAIResponsesModel]:  # noqa: F811
    """An :class:`OpenAIResponsesModel` on the local Responses server."""
    yield OpenAIResponsesModel("test-model", openai_client)
