"""Context windows of known models, and the lookup that honours the user's overrides."""

from __future__ import annotations

import re

__all__ = ["CONTEXT_WINDOWS", "DEFAULT_CONTEXT_WINDOW", "context_window_for"]

#: Tokens a request (input plus output) may hold, by model-name pattern, first match wins.
#: Source: the OpenAI model pages (GPT-5 family 400k, GPT-4.1 about 1M, o-series and
#: GPT-4o 200k/128k); local servers are unknown and take :data:`DEFAULT_CONTEXT_WINDOW`.
CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    (r"gpt-6.*", 1_000_000),
    (r"gpt-5(\.\d)?-chat-latest", 128_000),
    (r"gpt-5.*codex.*", 400_000),
    (r"gpt-5.*", 400_000),
    (r"gpt-4\.1.*", 1_047_576),
    (r"o[134](-mini|-pro)?(-\d{4}-\d{2}-\d{2})?", 200_000),
    (r"gpt-4o.*", 128_000),
    (r"codex-mini.*", 200_000),
)

#: The window assumed for a model the table does not know (tokens).
DEFAULT_CONTEXT_WINDOW = 128_000

_COMPILED = tuple((re.compile(p), n) for p, n in CONTEXT_WINDOWS)


def context_window_for(
    model: str | None,
    base_url: str | None = None,
    overrides: dict[str, int] | None = None,
) -> int:
    """The context window of ``model`` in tokens.

    Args:
        model: the model name as sent in requests (``None``: unknown).
        base_url: the Responses API base URL; an override keyed by it wins over the model.
        overrides: the ``context_windows`` setting: keys are a base URL or a model name
            (exact), values tokens. Lookup order: base URL, model name, the table, default.

    Returns:
        A positive token count.
    """
    found = overrides or {}
    for key in (base_url, (base_url or "").rstrip("/"), model):
        if key and int(found.get(key, 0)) > 0:
            return int(found[key])
    name = model or ""
    for pattern, tokens in _COMPILED:
        if pattern.fullmatch(name):
            return tokens
    return DEFAULT_CONTEXT_WINDOW
