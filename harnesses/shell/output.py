"""Bounded capture of command output (head + tail bytes) and head/tail character budgets."""

from __future__ import annotations

import codecs
import re

__all__ = ["DEFAULT_HEAD_BYTES", "DEFAULT_TAIL_BYTES", "BoundedCapture", "fit_texts", "omit_marker"]

#: Default bytes kept from the start and from the end of each stream of each command.
DEFAULT_HEAD_BYTES = 1024 * 1024
DEFAULT_TAIL_BYTES = 1024 * 1024
_BYTE_MARKER = re.compile(r"\n\[\.\.\. (\d+) bytes omitted \.\.\.\]\n")


def omit_marker(count: int, unit: str, dropped_bytes: int = 0) -> str:
    """The line put where output was dropped: ``"\\n[... 123 bytes omitted ...]\\n"``.

    With ``dropped_bytes`` (bytes dropped earlier, before decoding) the line reads
    ``[... 12 characters and 3456 bytes omitted ...]``.
    """
    if dropped_bytes:
        return f"\n[... {count} {unit} and {dropped_bytes} bytes omitted ...]\n"
    return f"\n[... {count} {unit} omitted ...]\n"


class BoundedCapture:
    """Keeps the first ``head_bytes`` and the last ``tail_bytes`` of a byte stream.

    Memory stays bounded by ``head_bytes + 2 * tail_bytes`` whatever the stream's size; bytes in
    between are counted in :attr:`dropped_bytes`.
    """

    __slots__ = ("_head", "_tail", "dropped_bytes", "head_bytes", "tail_bytes", "total_bytes")

    def __init__(
        self, head_bytes: int = DEFAULT_HEAD_BYTES, tail_bytes: int = DEFAULT_TAIL_BYTES
    ) -> None:
        self.head_bytes = max(0, head_bytes)
        self.tail_bytes = max(0, tail_bytes)
        self._head = bytearray()
        self._tail = bytearray()
        self.dropped_bytes = 0
        self.total_bytes = 0

    def feed(self, chunk: bytes) -> None:
        """Append ``chunk`` (bytes)."""
        self.total_bytes += len(chunk)
        room = self.head_bytes - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail += chunk
        excess = len(self._tail) - self.tail_bytes
        # Trim lazily (at twice the cap) so a stream of small chunks is not quadratic.
        if excess > 0 and (len(self._tail) >= 2 * self.tail_bytes or self.tail_bytes == 0):
            del self._tail[:excess]
            self.dropped_bytes += excess

    def kept_bytes(self) -> int:
        """Bytes currently held (head plus tail, before the final trim)."""
        return len(self._head) + len(self._tail)

    def text(self) -> str:
        """The kept output decoded as UTF-8 (invalid bytes replaced by U+FFFD).

        When bytes were dropped, a marker saying how many separates head and tail; a multibyte
        character cut by the gap is dropped rather than shown as a replacement character.
        """
        excess = len(self._tail) - self.tail_bytes
        if excess > 0:
            del self._tail[:excess]
            self.dropped_bytes += excess
        if self.dropped_bytes == 0:
            return bytes(self._head + self._tail).decode("utf-8", "replace")
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        head = decoder.decode(bytes(self._head), final=False)
        pending = len(decoder.getstate()[0])
        tail = bytes(self._tail)
        skip = 0
        while skip < min(3, len(tail)) and 0x80 <= tail[skip] < 0xC0:
            skip += 1
        dropped = self.dropped_bytes + pending + skip
        return head + omit_marker(dropped, "bytes") + tail[skip:].decode("utf-8", "replace")


def _byte_marker_count(text: str) -> tuple[int, int, int] | None:
    """``(start, end, count)`` of the byte-omission marker :meth:`BoundedCapture.text` put in."""
    match = _BYTE_MARKER.search(text)
    return (match.start(), match.end(), int(match.group(1))) if match else None


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, keeping head and tail around a marker.

    A byte-omission marker already in ``text`` is merged into the new marker so the count of
    bytes dropped earlier is not lost.
    """
    if len(text) <= limit:
        return text
    dropped = 0
    found = _byte_marker_count(text)
    if found is not None:
        start, end, dropped = found
        text = text[:start] + text[end:]
    omitted = len(text) - limit
    # The marker's own length counts against the limit; grow ``omitted`` until it fits.
    for _ in range(3):
        marker = omit_marker(omitted, "characters", dropped)
        keep = limit - len(marker)
        if keep <= 0:
            return text[:limit]
        omitted = len(text) - keep
    marker = omit_marker(omitted, "characters", dropped)
    keep = limit - len(marker)
    if keep <= 0:
        return text[:limit]
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head] + marker + (text[len(text) - tail :] if tail else "")


def fit_texts(texts: list[str], budget: int) -> list[str]:
    """Fit several texts into one shared character ``budget``, keeping head and tail of each.

    The budget is shared fairly (water-filling: short texts keep everything, long ones split the
    rest); each text over its share keeps its start and end around an
    ``[... N characters omitted ...]`` marker. The result's total length never exceeds
    ``budget`` (negative budgets count as 0).
    """
    budget = max(0, budget)
    if sum(len(t) for t in texts) <= budget:
        return list(texts)
    shares = [0] * len(texts)
    pending = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    remaining = budget
    while pending:
        fair = remaining // len(pending)
        index = pending[0]
        if len(texts[index]) <= fair:
            shares[index] = len(texts[index])
            remaining -= shares[index]
            pending.pop(0)
            continue
        for rank, index in enumerate(pending):
            shares[index] = fair + (1 if rank < remaining - fair * len(pending) else 0)
        break
    return [_cut(text, share) for text, share in zip(texts, shares, strict=True)]
