"""Tandem's bundled resources (prompts, demo session, sample repository), loaded by one loader."""

from __future__ import annotations

from importlib import resources as _resources
from importlib.abc import Traversable

__all__ = ["read_text", "resource"]


def resource(*parts: str) -> Traversable:
    """The bundled file or folder at ``parts`` (works from a source tree and from a wheel)."""
    node = _resources.files(__name__)
    for part in parts:
        node = node.joinpath(part)
    return node


def read_text(*parts: str) -> str:
    """The UTF-8 text of a bundled file.

    Raises:
        FileNotFoundError: no such resource.
    """
    return resource(*parts).read_text(encoding="utf-8")
