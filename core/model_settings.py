"""Per-request model settings (names follow ``agents.ModelSettings``; spec §0)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

__all__ = ["ModelSettings", "ToolChoice"]

ToolChoice = Literal["auto", "required", "none"] | str | dict[str, Any] | None


@dataclass(slots=True)
class ModelSettings:
    """Optional settings sent with each Responses request; ``None`` means "not sent".

    Attributes:
        temperature, top_p: sampling settings.
        tool_choice: ``"auto"|"required"|"none"``, a hosted tool selector (``"web_search"``...)
            or a function tool name (spec §0 conversion).
        parallel_tool_calls: sent only when set and the agent has tools.
        truncation: ``"auto"|"disabled"``.
        max_tokens: sent as ``max_output_tokens`` (tokens).
        reasoning: e.g. ``{"effort": "low"}``; ``verbosity``: ``"low"|"medium"|"high"``.
        metadata, store, prompt_cache_key, include: passed through.
        extra_body / extra_headers / extra_args: merged into the request as given.
    """

    temperature: float | None = None
    top_p: float | None = None
    tool_choice: ToolChoice = None
    parallel_tool_calls: bool | None = None
    truncation: Literal["auto", "disabled"] | None = None
    max_tokens: int | None = None
    reasoning: dict[str, Any] | None = None
    verbosity: Literal["low", "medium", "high"] | None = None
    metadata: dict[str, str] | None = None
    store: bool | None = None
    prompt_cache_key: str | None = None
    include: list[str] | None = None
    extra_body: dict[str, Any] | None = None
    extra_headers: dict[str, str] | None = None
    extra_args: dict[str, Any] | None = field(default=None)

    def resolve(self, override: ModelSettings | None) -> ModelSettings:
        """A copy with every non-``None`` field of ``override`` taking precedence."""
        if override is None:
            return replace(self)
        changes = {
            f.name: getattr(override, f.name)
            for f in fields(override)
            if getattr(override, f.name) is not None
        }
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """Only the fields that are set."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }
