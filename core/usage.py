"""Token usage accounting for a run (Responses API ``usage`` object, summed per request)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Usage"]


@dataclass(slots=True)
class Usage:
    """Tokens used by a run, summed over every model request.

    Attributes:
        requests: number of model requests made.
        input_tokens / output_tokens / total_tokens: token counts (tokens, not characters).
        cached_input_tokens: ``usage.input_tokens_details.cached_tokens``.
        reasoning_tokens: ``usage.output_tokens_details.reasoning_tokens``.
    """

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0

    def add(self, other: Usage) -> None:
        """Add ``other`` into this object in place."""
        self.requests += other.requests
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.total_tokens += other.total_tokens
        self.cached_input_tokens += other.cached_input_tokens
        self.reasoning_tokens += other.reasoning_tokens

    @classmethod
    def from_response_usage(cls, usage: Any) -> Usage:
        """Build from a Responses API ``usage`` object or dict (``None`` gives one request, 0 tokens)."""
        if usage is None:
            return cls(requests=1)
        data = usage if isinstance(usage, dict) else usage.model_dump()
        in_details = data.get("input_tokens_details") or {}
        out_details = data.get("output_tokens_details") or {}
        return cls(
            requests=1,
            input_tokens=int(data.get("input_tokens") or 0),
            output_tokens=int(data.get("output_tokens") or 0),
            total_tokens=int(data.get("total_tokens") or 0),
            cached_input_tokens=int(in_details.get("cached_tokens") or 0),
            reasoning_tokens=int(out_details.get("reasoning_tokens") or 0),
        )

    def to_json(self) -> dict[str, int]:
        """A JSON-ready dict of the counters."""
        return {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Usage:
        """Inverse of :meth:`to_json`."""
        return cls(**{k: int(v) for k, v in data.items() if k in cls.__dataclass_fields__})
