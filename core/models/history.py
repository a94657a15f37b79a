"""Append-only request input whose JSON is built once per item (runner overhead stays flat).

The reference SDK re-transforms the whole typed ``input`` list on every request, so its
per-turn cost grows with the history (issue 2, item 8). Here each item is serialised to JSON
exactly once, when it joins the history; a request body is the cached bytes plus the new tail.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["InputHistory"]


def _dumps(item: Any) -> bytes:
    return json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode()


class InputHistory:
    """The ``input`` array of a Responses request, growing by appends.

    ``items`` holds the wire dicts (read-only by convention); ``to_json_bytes()`` returns the
    serialised array in O(total bytes) memcpy time, with no per-item Python work.
    """

    __slots__ = ("_buf", "_count", "items")

    def __init__(self, items: list[dict[str, Any]] | None = None) -> None:
        self.items: list[dict[str, Any]] = []
        self._buf = bytearray(b"[")
        self._count = 0
        for item in items or []:
            self.append(item)

    def append(self, item: dict[str, Any]) -> None:
        """Add one wire item (serialised now; later mutation of ``item`` is not seen)."""
        if self._count:
            self._buf += b","
        self._buf += _dumps(item)
        self._count += 1
        self.items.append(item)

    def extend(self, items: list[dict[str, Any]]) -> None:
        for item in items:
            self.append(item)

    def __len__(self) -> int:
        return self._count

    def to_json_bytes(self) -> bytes:
        """The JSON array of every item, as UTF-8 bytes."""
        return bytes(self._buf) + b"]"

    def tail(self, start: int) -> list[dict[str, Any]]:
        """Items from index ``start`` on (for server-managed conversation state)."""
        return self.items[start:]
