"""A half-imported ``openai`` (the window's warm-up thread importing it right now) breaks no run.

``openai`` is imported lazily since issue 15; ``sys.modules`` holds the module from the
moment its import starts, before its names exist. The scripted demo's first run failed with
"partially initialized module 'openai' has no attribute 'AsyncOpenAI'" when the context
manager looked for the model's client at that moment.
"""

from __future__ import annotations

import types

import pytest

from core.context_window.manager import is_context_overflow
from core.context_window.remote import remote_client
from core.errors import ModelProviderError


@pytest.fixture
def half_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "openai", types.ModuleType("openai"))


def test_a_model_without_a_client_has_none(half_imported: None) -> None:
    assert remote_client(object()) is None


def test_a_client_of_a_half_imported_module_is_not_taken_for_openais(half_imported: None) -> None:
    model = types.SimpleNamespace(openai_client=object())
    assert remote_client(model) is None


def test_overflow_is_still_told_from_the_message(half_imported: None) -> None:
    error = ModelProviderError("context_length_exceeded: 130,000 tokens > 128,000", status_code=400)
    error.__cause__ = RuntimeError("the cause")
    assert is_context_overflow(error)
    assert not is_context_overflow(ModelProviderError("refused", status_code=None))
