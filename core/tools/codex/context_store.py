"""Reading and writing a Codex thread id in the user's run context object (spec §9.5)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, MutableMapping
from typing import Any

from pydantic import BaseModel

from ...errors import UserError

__all__ = ["check_writable", "default_thread_id_key", "read_thread_id", "write_thread_id"]

_PREFIX = "codex_"


def default_thread_id_key(tool_name: str) -> str:
    """``codex_thread_id`` for ``codex``; ``codex_thread_id_<suffix>`` for ``codex_<suffix>``."""
    suffix = tool_name[len(_PREFIX) :] if tool_name.startswith(_PREFIX) else ""
    return f"codex_thread_id_{suffix}" if suffix else "codex_thread_id"


def _slots(cls: type) -> set[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.update([slots] if isinstance(slots, str) else slots)
    return names


def check_writable(context: Any, key: str) -> None:
    """Make sure ``key`` can be stored on ``context``.

    Accepted: a mutable mapping; a non-frozen Pydantic model with the field (or
    ``extra="allow"``); a non-frozen dataclass or any object with a ``__dict__``; an object
    with a matching ``__slots__`` entry.

    Raises:
        UserError: ``context`` is ``None``, immutable, or has no place for ``key``.
    """
    where = f"use_run_context_thread_id=True stores the Codex thread id under {key!r}"
    if isinstance(context, MutableMapping):
        return
    if context is None or isinstance(context, (Mapping, str, bytes, int, float, tuple)):
        raise UserError(
            f"{where}, which needs a mutable run context; got {type(context).__name__}."
        )
    if isinstance(context, BaseModel):
        config = type(context).model_config
        if config.get("frozen"):
            raise UserError(f"{where}, but the Pydantic run context is frozen.")
        if key not in type(context).model_fields and config.get("extra") != "allow":
            raise UserError(f"{where}, but the Pydantic run context has no such field.")
        return
    if dataclasses.is_dataclass(context) and context.__dataclass_params__.frozen:  # type: ignore[union-attr]
        raise UserError(f"{where}, but the dataclass run context is frozen.")
    if hasattr(context, "__dict__") or key in _slots(type(context)):
        return
    raise UserError(f"{where}, but the run context has no attribute or slot for it.")


def read_thread_id(context: Any, key: str) -> str | None:
    """The stored thread id, or ``None`` when missing or blank.

    Raises:
        UserError: the stored value is not a string.
    """
    if isinstance(context, Mapping):
        value = context.get(key)
    else:
        value = getattr(context, key, None)
    if value is None:
        return None
    if not isinstance(value, str):
        raise UserError(f"Run context value {key!r} must be a Codex thread id string.")
    return value if value.strip() else None


def write_thread_id(context: Any, key: str, thread_id: str) -> None:
    """Store ``thread_id`` under ``key`` (call :func:`check_writable` first)."""
    if isinstance(context, MutableMapping):
        context[key] = thread_id
    else:
        setattr(context, key, thread_id)
