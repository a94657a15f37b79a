"""Wire-form helpers shared by model providers (no ``openai`` import, so they load fast)."""

from __future__ import annotations

from typing import Any

__all__ = ["item_to_dict"]


def item_to_dict(item: Any) -> dict[str, Any]:
    """An ``openai`` output item as the JSON the server sent (unset fields left out)."""
    if isinstance(item, dict):
        return item
    data: dict[str, Any] = item.model_dump(mode="json", exclude_unset=True, by_alias=True)
    return data
