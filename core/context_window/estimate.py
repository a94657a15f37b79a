"""Token estimates for a request before it is sent, calibrated by the ``usage`` the server reports.

Order of precision (issue 14): the server's ``responses.input_tokens`` count where it has one
(see :mod:`core.context_window.remote`), else tiktoken's ``o200k_base`` when installed, else
UTF-8 bytes / 4. Either local figure is multiplied by the ratio between the last reported
``usage.input_tokens`` and the local figure for that same request.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["TokenEstimator", "raw_of", "raw_size"]

try:  # optional: a better local figure when the user has it
    import tiktoken as _tiktoken  # type: ignore[import-not-found,unused-ignore]

    _ENCODING: Any = _tiktoken.get_encoding("o200k_base")
except Exception:  # not installed, or its data cannot be loaded offline
    _ENCODING = None


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def raw_size(value: Any) -> int:
    """The uncalibrated token figure of one JSON value (an item, the tools, the instructions).

    Returns:
        tiktoken tokens of its compact JSON when tiktoken is installed, else UTF-8 bytes / 4
        rounded up.
    """
    text = value if isinstance(value, str) else _dumps(value)
    if _ENCODING is not None:
        return len(_ENCODING.encode(text, disallowed_special=()))
    return (len(text.encode()) + 3) // 4


def raw_of(encoded: bytes, value: Any) -> int:
    """:func:`raw_size` of ``value`` whose compact JSON is ``encoded`` (no second
    serialisation with the bytes/4 method)."""
    if _ENCODING is None:
        return (len(encoded) + 3) // 4
    return raw_size(value)


class TokenEstimator:
    """Raw figures times a calibration ratio learnt from reported usage.

    Attributes:
        ratio: reported tokens per raw unit (1.0 until a response reported ``usage``),
            clamped to [0.25, 4] so that one odd report cannot blind the accounting.
        method: ``"tiktoken"`` or ``"bytes/4"``: what the raw figure is.
    """

    __slots__ = ("method", "ratio")

    def __init__(self) -> None:
        self.ratio = 1.0
        self.method = "tiktoken" if _ENCODING is not None else "bytes/4"

    def tokens(self, raw: int) -> int:
        """``raw`` in calibrated tokens."""
        return int(raw * self.ratio + 0.5)

    def calibrate(self, raw: int, reported_input_tokens: int) -> None:
        """Learn from one request whose raw figure was ``raw`` and whose usage said
        ``reported_input_tokens`` (ignored when either is not positive)."""
        if raw > 0 and reported_input_tokens > 0:
            self.ratio = min(4.0, max(0.25, reported_input_tokens / raw))
