"""Wire-form helpers shared by model providers (no ``openai`` import, so they load fast)."""

from __future__ import annotations

from typing import Any

__all__ = ["item_to_dict"]


def item_to_dict(item: Any) -> dict[str, Any]:
    """An ``openai`` output item as the JSON the server sent (unset fields left out).

    Items are built without validation, so a field the server (or a model) filled with an
    unexpected shape is kept as sent; pydantic's serializer warnings about it are silenced,
    the value goes on to the runner, which reports what it cannot use.
    """
    if isinstance(item, dict):
        return item
    data: dict[str, Any] = item.model_dump(
        mode="json", exclude_unset=True, by_alias=True, warnings=False
    )
    return data
