"""Per-request model settings (names follow ``agents.ModelSettings``; spec §0)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

__all__ = ["ModelSettings", "ToolChoice", "get_default_model_settings"]

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
        context_management: Responses API server-side compaction entries, e.g.
            ``[{"type": "compaction", "compact_threshold": 200000}]`` (agents 0.24).
        extra_body / extra_headers / extra_args: merged into the request as given.

    An agent that leaves ``model_settings`` unset gets :meth:`implicit` settings: empty, and
    marked so that a model resolved by name fills in :func:`get_default_model_settings` for it
    (openai-agents 0.24 does the same). Settings the user passes, even empty ones, are sent as
    they are.
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
    context_management: list[dict[str, Any]] | None = None
    extra_body: dict[str, Any] | None = None
    extra_headers: dict[str, str] | None = None
    extra_args: dict[str, Any] | None = field(default=None)
    _implicit: bool = field(default=False, init=False, repr=False, compare=False)

    @classmethod
    def implicit(cls) -> ModelSettings:
        """Empty settings marked "left unset by the user" (``Agent.model_settings``'s default)."""
        settings = cls()
        settings._implicit = True
        return settings

    @property
    def is_implicit(self) -> bool:
        """Whether these are (derived from) the settings of an agent that left them unset."""
        return self._implicit

    def resolve(self, override: ModelSettings | None) -> ModelSettings:
        """A copy with every non-``None`` field of ``override`` taking precedence.

        The copy stays :attr:`is_implicit` when ``self`` is: run-config overrides apply on top
        of the default settings of the resolved model, as in openai-agents 0.24.
        """
        changes = {
            f.name: getattr(override, f.name)
            for f in fields(override or self)
            if override is not None and f.init and getattr(override, f.name) is not None
        }
        resolved = replace(self, **changes)
        resolved._implicit = self._implicit
        return resolved

    def to_json(self) -> dict[str, Any]:
        """Only the fields that are set."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.init and getattr(self, f.name) is not None
        }


# Default reasoning effort per GPT-5 model name (an optional ``-YYYY-MM-DD`` snapshot suffix
# allowed where the reference allows it): openai-agents 0.24 ``models/default_models.py``.
_DATED = r"(?:-\d{4}-\d{2}-\d{2})?"
_EFFORT_BY_MODEL: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), effort)
    for pattern, effort in (
        (rf"gpt-5{_DATED}", "low"),
        (rf"gpt-5\.[12]{_DATED}", "none"),
        (rf"gpt-5\.[24]-pro{_DATED}", "medium"),
        ("gpt-5\\.2-codex", "low"),
        ("gpt-5\\.3-codex", "none"),
        (rf"gpt-5\.4(?:-mini|-nano)?{_DATED}", "none"),
        (rf"gpt-5\.5{_DATED}", "none"),
        (rf"gpt-5\.6(?:-sol|-terra|-luna)?{_DATED}", "none"),
    )
)
# Chat aliases take no reasoning settings at all.
_CHAT_ALIAS = re.compile(r"gpt-5(?:\.[123])?-chat-latest")


def get_default_model_settings(model: str | None) -> ModelSettings:
    """The settings sent for ``model`` when the agent leaves its settings unset.

    GPT-5 family models get ``verbosity="low"`` and, where the reference confirms one, a
    default reasoning effort (``gpt-5``: ``low``; ``gpt-5.1``/``5.2``/``5.4``/``5.5``/``5.6``
    and their mini/nano/luna... variants: ``none``; ``-pro``: ``medium``). The
    ``gpt-5*-chat-latest`` aliases and every other model (local servers included) get nothing.
    Source: openai-agents 0.24 ``get_default_model_settings``.

    Args:
        model: the model name sent in the request (matched as written), or ``None``.

    Returns:
        A new :class:`ModelSettings` (not implicit).
    """
    name = model or ""
    if not name.startswith("gpt-5") or _CHAT_ALIAS.fullmatch(name):
        return ModelSettings()
    effort = next((e for pattern, e in _EFFORT_BY_MODEL if pattern.fullmatch(name)), None)
    reasoning = {"effort": effort} if effort is not None else None
    return ModelSettings(reasoning=reasoning, verbosity="low")
