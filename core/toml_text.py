"""TOML literals written by Tandem: the settings file, ``[mcp_servers.*]`` tables and the
Codex CLI's ``--config key=<literal>`` overrides (toml.io v1.0.0)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["toml_key", "toml_literal", "toml_string"]

#: What a TOML basic string must escape (toml.io v1.0.0, "String"): the quotation mark, the
#: backslash and the control characters; surrogates are no Unicode scalar values at all.
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\\x7f\ud800-\udfff]')
_SHORT = {
    '"': r"\"",
    "\\": r"\\",
    "\b": r"\b",
    "\t": r"\t",
    "\n": r"\n",
    "\f": r"\f",
    "\r": r"\r",
}
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    if "\ud800" <= char <= "\udfff":
        return "\ufffd"  # a lone surrogate cannot be written in TOML (nor in UTF-8)
    return f"\\u{ord(char):04x}"


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string; other characters stay as they are (written as UTF-8).

    Not ``json.dumps``: its ``\\ud83d\\ude00`` surrogate pairs are invalid TOML. A lone
    surrogate becomes U+FFFD.
    """
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def toml_key(name: str) -> str:
    """``name`` as a TOML key: bare when it may be (``A-Za-z0-9_-``), else quoted."""
    return name if _BARE_KEY.fullmatch(name) else toml_string(name)


def toml_literal(value: Any) -> str:
    """``value`` as a TOML literal: booleans, integers, finite floats, strings, arrays (lists,
    tuples) and inline tables (mappings, their keys as :func:`toml_key`).

    Raises:
        TypeError: a value TOML cannot hold (``None``, a non-finite float, other objects).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError("TOML values must be finite numbers.")
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, Mapping):
        pairs = ", ".join(f"{toml_key(str(k))} = {toml_literal(v)}" for k, v in value.items())
        return "{ " + pairs + " }" if pairs else "{}"
    raise TypeError(f"cannot write {type(value).__name__} as a TOML value")
