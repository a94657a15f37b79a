"""What a live run journals so that its session can be exported and replayed.

Two journal events, besides the run items the window already journals:

- ``model_response`` (:data:`MODEL_RESPONSE`): one per model response (a turn), from the
  ``response.completed`` stream event (tools-wire-spec §11): ``{"items": [<output items>],
  "usage": {...}, "response_id": str}``. The items sit under ``items`` so the journal stores
  each once (``harnesses.sessions.journal.EVENT_REF_PATHS``), shared with the run items.
- ``recording_base`` (:data:`RECORDING_BASE`): once per session, before its first run: the
  manifest fields known at that moment (Tandem version, model, mode, repository HEAD and the
  dirty files as a patch; :func:`harnesses.recording.manifest.capture_base`).
"""

from __future__ import annotations

import os
from typing import Any

from core.models.wire import item_to_dict

from .manifest import capture_base, tandem_version

__all__ = [
    "MODEL_RESPONSE",
    "RECORDING_BASE",
    "model_response_payload",
    "recording_base_payload",
]

MODEL_RESPONSE = "model_response"
"""Journal kind of one model response (one turn)."""

RECORDING_BASE = "recording_base"
"""Journal kind of the session's recorded starting state (the manifest)."""


def model_response_payload(data: Any) -> dict[str, Any] | None:
    """The ``model_response`` journal payload of a raw stream event, or ``None``.

    Args:
        data: ``RawResponsesStreamEvent.data``: an ``openai`` ``ResponseStreamEvent`` (or a
            dict of the same shape). Only ``response.completed`` gives a payload.

    Returns:
        ``{"items": [...], "usage": {...} | None, "response_id": str | None}``, the output
        items in the order the server sent them (reasoning, messages, tool calls, hosted
        calls), JSON-ready.
    """
    kind = data.get("type") if isinstance(data, dict) else getattr(data, "type", "")
    if kind != "response.completed":
        return None
    response = data.get("response") if isinstance(data, dict) else getattr(data, "response", None)
    if response is None:
        return None
    if isinstance(response, dict):
        output, usage, rid = response.get("output"), response.get("usage"), response.get("id")
    else:
        output = getattr(response, "output", None)
        usage = getattr(response, "usage", None)
        rid = getattr(response, "id", None)
    if usage is not None and not isinstance(usage, dict):
        usage = item_to_dict(usage)
    return {
        "items": [item_to_dict(item) for item in output or []],
        "usage": usage,
        "response_id": rid,
    }


def recording_base_payload(
    repo: str | os.PathLike[str], *, model: Any = None, mode: str | None = None
) -> dict[str, Any]:
    """The ``recording_base`` journal payload: the manifest as the session starts.

    Blocking (runs ``git``): call it from a worker thread (``asyncio.to_thread``).

    Args:
        repo: the repository folder.
        model: the agent's model: a name, or a model object (its ``model`` attribute or its
            class name is kept).
        mode: the approval mode (``read-only``, ``ask``, ``auto``, ``full``).
    """
    return {
        "tandem_version": tandem_version(),
        "model": _model_name(model),
        "mode": mode,
        **capture_base(repo),
    }


def _model_name(model: Any) -> str | None:
    if model is None or isinstance(model, str):
        return model
    name = getattr(model, "model", None)
    if isinstance(name, str) and name:
        return name
    return type(model).__name__
