"""Build the ``openai`` stream types' validators ahead of the first response."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel

__all__ = ["warm_up_types"]


def warm_up_types() -> int:
    """Complete the pydantic models of every Responses stream event and of ``Response``.

    The ``openai`` models defer building their schemas (``defer_build``) until first used, so
    the first streamed response of a process spends 0.3 to 0.8 s there (measured on this
    machine), which a GUI would feel as a freeze. Calling this first, e.g. from a worker thread
    while the window opens, moves that work out of the way; models already complete are left
    as they are, so calling it again or concurrently with a run is harmless.

    Returns:
        How many model classes were looked at.
    """
    from openai.types.responses import Response, ResponseStreamEvent

    classes: list[type[BaseModel]] = [*_members(ResponseStreamEvent), Response]
    for model in classes:
        model.model_rebuild(force=False)
    return len(classes)


def _members(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models of a (possibly ``Annotated``) union, depth first, no repeats."""
    seen: dict[type[BaseModel], None] = {}
    stack = [annotation]
    while stack:
        node = stack.pop()
        if isinstance(node, type) and issubclass(node, BaseModel):
            seen.setdefault(node, None)
        else:
            stack.extend(reversed(typing.get_args(node)))
    return list(seen)
