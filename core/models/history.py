"""Request input whose JSON is built once per item, ever (runner overhead stays flat).

The reference SDK re-transforms and re-serialises the whole typed ``input`` list on every
request, so its per-turn cost grows with the history (issue 2, item 8; issue 15, item 4). Here
each item is serialised to compact JSON exactly once, when it joins the history, and the bytes
are kept beside it. A request body is then one ``bytes`` join of the request head and the cached
item bytes (:func:`join_body`): the history's bytes are copied once per request, and no item is
serialised again, not even for a server-managed tail (:meth:`InputHistory.view`).

Compaction (issue 14) may drop or replace items: :meth:`InputHistory.replace` swaps a range
for new items (only those are serialised) and keeps every other item's cached bytes.

Even the join copies the whole history once per request, into fresh memory (at 20 MB of history,
~19 ms a turn, mostly page faults). So the history also keeps its older items sealed in blocks
of about :data:`BLOCK_BYTES` (each item's bytes are copied into a block once, when it is
sealed), and :meth:`InputHistory.body_chunks` gives the body as the request head, those blocks
and the newest items: written one after the other they are the body, and only the newest
items (under one block's worth) are copied for a request.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["BLOCK_BYTES", "InputHistory", "dumps_item", "join_body"]

#: Loose (unsealed) item bytes at which :meth:`InputHistory.body_chunks` seals them into a block.
BLOCK_BYTES = 1 << 20


def dumps_item(item: Any) -> bytes:
    """One wire item as compact UTF-8 JSON (``ensure_ascii=False``, no spaces).

    The same form ``json.dumps(..., separators=(",", ":"))`` gives, so a body assembled from
    cached items parses to exactly the dicts it was built from.

    Raises:
        TypeError: the item holds a value JSON cannot encode.
        ValueError: the item refers to itself.
    """
    return json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode()


def _opening(head: bytes, key: bytes) -> bytes:
    return head[:-1] + (b',"' if len(head) > 2 else b'"') + key + b'":['


def join_body(head: bytes, key: bytes, encoded: Sequence[bytes]) -> bytes:
    """``head`` (a JSON object's bytes) with ``key`` set to the array of ``encoded`` items.

    One ``bytes.join``: the items' bytes are copied once, straight into the body (the head and
    the array brackets ride on the first and last item, so nothing else is copied twice).

    Args:
        head: a serialised JSON object, e.g. ``b'{"model":"m"}'`` (``b"{}"`` allowed).
        key: the member name, without quotes (``b"input"``).
        encoded: each array element's JSON bytes.
    """
    opening = _opening(head, key)
    count = len(encoded)
    if count == 0:
        return opening + b"]}"
    if count == 1:
        return b"".join((opening, encoded[0], b"]}"))
    parts = [opening + encoded[0]]
    parts.extend(encoded[1:-1])
    parts.append(encoded[-1] + b"]}")
    return b",".join(parts)


class InputHistory:
    """The ``input`` array of a Responses request: wire dicts with their cached JSON bytes.

    ``items`` holds the wire dicts (read-only by convention: a change to a dict after it was
    added is not seen in the bytes); :attr:`encoded` the matching compact JSON of each. Items
    ``[0:sealed)`` are also kept joined in blocks (see :meth:`body_chunks`); a change through
    :meth:`replace` drops the blocks it touches.
    """

    __slots__ = ("_blocks", "_encoded", "_ends", "_loose", "items")

    def __init__(self, items: Iterable[dict[str, Any]] | None = None) -> None:
        self.items: list[dict[str, Any]] = []
        self._encoded: list[bytes] = []
        self._blocks: list[bytes] = []  # each: b",".join(encoded[a:b]) + b"," (a trailing comma)
        self._ends: list[int] = []  # b of each block
        self._loose = 0  # bytes of the items after the last block
        for item in items or ():
            self.append(item)

    @classmethod
    def _from_parts(cls, items: list[dict[str, Any]], encoded: list[bytes]) -> InputHistory:
        made = cls.__new__(cls)
        made.items, made._encoded = items, encoded
        made._blocks, made._ends = [], []
        made._loose = sum(map(len, encoded))
        return made

    def append(self, item: dict[str, Any]) -> None:
        """Add one wire item, serialised now (and never again).

        Raises:
            TypeError: the item holds a value JSON cannot encode (the history is unchanged).
        """
        data = dumps_item(item)
        self.items.append(item)
        self._encoded.append(data)
        self._loose += len(data)

    def extend(self, items: Iterable[dict[str, Any]]) -> None:
        """:meth:`append` each item in order."""
        for item in items:
            self.append(item)

    def adopt(self, source: InputHistory, start: int = 0, stop: int | None = None) -> None:
        """Append ``source``'s items ``[start:stop]`` with their cached bytes (no serialisation:
        e.g. a compacted request history taking the unchanged items of the full one)."""
        taken = source._encoded[start:stop]
        self.items.extend(source.items[start:stop])
        self._encoded.extend(taken)
        self._loose += sum(map(len, taken))

    def replace(self, start: int, stop: int, items: Iterable[dict[str, Any]] = ()) -> None:
        """Swap ``items[start:stop]`` for ``items`` (compaction: drop or summarise a range).

        Only the new items are serialised; every other item keeps its cached bytes (blocks
        holding an item from ``start`` on are dropped, to be sealed again when a body is made).

        Raises:
            TypeError: a new item holds a value JSON cannot encode (the history is unchanged).
        """
        new = list(items)
        data = [dumps_item(item) for item in new]
        start = range(len(self._encoded))[start:stop].start  # negative/out-of-range as list does
        self.items[start:stop] = new
        self._encoded[start:stop] = data
        while self._ends and self._ends[-1] > start:
            self._ends.pop()
            self._blocks.pop()
        self._loose = sum(map(len, self._encoded[self.sealed :]))

    def view(self, start: int = 0) -> InputHistory:
        """The items from ``start`` on, sharing their cached bytes (for a server-managed tail:
        ``previous_response_id`` or a conversation holds the rest). O(items in the view)."""
        return InputHistory._from_parts(self.items[start:], self._encoded[start:])

    @property
    def encoded(self) -> list[bytes]:
        """Each item's compact JSON, in order (read-only by convention)."""
        return self._encoded

    @property
    def sealed(self) -> int:
        """How many items (from the first) are held in blocks."""
        return self._ends[-1] if self._ends else 0

    def body_chunks(self, head: bytes, key: bytes) -> list[bytes]:
        """The body :func:`join_body` would make (``head`` with ``key`` set to this history's
        array), as chunks whose concatenation is that body, byte for byte.

        The chunks are the opening (``head`` up to the array), the sealed blocks as they are
        (no copy) and one join of the newest items with the closing. When the newest items
        reach :data:`BLOCK_BYTES`, all but the last are sealed first into a new block: each
        item is copied into a block once, ever, so a request copies under one block's worth of
        history (plus the head), however long the run.

        Args:
            head: a serialised JSON object (``b"{}"`` allowed).
            key: the member name, without quotes (``b"input"``).

        Returns:
            ``[opening, *blocks, tail]``; a single chunk for an empty history.
        """
        opening = _opening(head, key)
        encoded = self._encoded
        if not encoded:
            return [opening + b"]}"]
        if self._loose >= BLOCK_BYTES and len(encoded) - self.sealed >= 2:
            begin, end = self.sealed, len(encoded) - 1  # the newest item stays loose
            self._blocks.append(b",".join([*encoded[begin:end], b""]))
            self._ends.append(end)
            self._loose = len(encoded[-1])
        loose = encoded[self.sealed :]
        tail = loose[0] + b"]}" if len(loose) == 1 else b",".join([*loose[:-1], loose[-1] + b"]}"])
        return [opening, *self._blocks, tail]

    def byte_size(self) -> int:
        """The size of the serialised array in bytes (items, commas and brackets)."""
        return sum(map(len, self._encoded)) + max(len(self._encoded) - 1, 0) + 2

    def __len__(self) -> int:
        return len(self.items)

    def to_json_bytes(self) -> bytes:
        """The JSON array of every item, as UTF-8 bytes (one join of the cached bytes)."""
        return b"[" + b",".join(self._encoded) + b"]"

    def tail(self, start: int) -> list[dict[str, Any]]:
        """Items from index ``start`` on (the wire dicts; see :meth:`view` for the bytes too)."""
        return self.items[start:]
