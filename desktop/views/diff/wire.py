"""The frames between the GUI process and its diff build process (no Qt, no processes).

A frame is a 17-byte header (payload length, kind code, build token: ``<QBQ``) and a pickled
payload. The header lets the GUI's reader thread see which build a frame belongs to and
whether it ends it without unpickling anything; the GUI thread unpickles one frame at a time
within its slice (issue 15: results come back as compact bytes, decoded in bounded slices).
"""

from __future__ import annotations

import os
import pickle
import struct
from collections.abc import Sequence
from typing import Any, NamedTuple

from .build import HunkLayout
from .lines import HunkLines
from .model import DiffHunk

__all__ = [
    "CODES",
    "ENDS",
    "HEADER",
    "KINDS",
    "Frame",
    "WireHunk",
    "decode_hunks",
    "decode_sides",
    "encode_hunks",
    "encode_sides",
    "frame",
    "read_frame",
    "write_all",
]

HEADER = struct.Struct("<QBQ")
"""Payload length (bytes), kind code, build token."""

KINDS = ("build", "lines", "hunks", "done", "error")
"""Frame kinds: ``build`` goes to the build process, the others come back."""
CODES = {kind: code for code, kind in enumerate(KINDS)}
ENDS = frozenset({CODES["done"], CODES["error"]})
"""Kind codes that end a build."""

_MAX_FRAME = 1 << 34  # 16 GiB: a length past it is a corrupt stream, not a diff


class Frame(NamedTuple):
    """One frame as read: ``kind`` (one of :data:`KINDS`), ``token``, ``payload`` (pickle)."""

    kind: str
    token: int
    payload: bytes


class WireHunk(NamedTuple):
    """A review proposal's hunk as sent to the build process (the shape of
    :class:`~desktop.views.diff.build.EditorHunk`, as a tuple: cheap to pickle)."""

    id: int
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: tuple[str, ...]
    old_text: str
    new_text: str


def frame(kind: str, token: int, payload: Any) -> bytes:
    """The bytes of one frame: header and ``payload`` pickled (highest protocol).

    Raises:
        KeyError: ``kind`` is not one of :data:`KINDS`.
    """
    body = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body), CODES[kind], token) + body


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> Frame | None:
    """Read one frame from ``fd`` (blocking; the GIL is released while it waits).

    Returns:
        The frame, or ``None`` at the end of the stream (the other side closed or died).

    Raises:
        ValueError: a corrupt header (unknown kind or absurd length).
    """
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    size, code, token = HEADER.unpack(header)
    if code >= len(KINDS) or size > _MAX_FRAME:
        raise ValueError(f"corrupt diff build frame (kind {code}, {size} bytes)")
    payload = _read_exactly(fd, size) if size else b""
    if payload is None:
        return None
    return Frame(KINDS[code], token, payload)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (blocking).

    Raises:
        OSError: the other side is gone (``BrokenPipeError``) or another write error.
    """
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def encode_sides(old: list[str], new: list[str]) -> tuple[tuple[int, str | list[str]], ...]:
    """The sides' lines (no terminators) as ``(count, "\\n"-joined text)`` pairs: two strings
    to pickle and split again, not 100,000 objects; a side whose lines hold a ``"\\n"``
    travels as its list."""
    out = []
    for lines in (old, new):
        joined = "\n".join(lines)
        ok = joined.count("\n") == max(0, len(lines) - 1)
        out.append((len(lines), joined if ok else list(lines)))
    return tuple(out)


def decode_sides(sides: tuple[tuple[int, str | list[str]], ...]) -> tuple[list[str], list[str]]:
    """The inverse of :func:`encode_sides`: ``(old lines, new lines)``."""
    out = []
    for count, text in sides:
        out.append(list(text) if isinstance(text, list) else (text.split("\n") if count else []))
    return out[0], out[1]


_Flat = tuple[Any, ...]


def encode_hunks(hunks: Sequence[DiffHunk], layouts: Sequence[HunkLayout]) -> tuple[_Flat, ...]:
    """A chunk of built hunks and their layouts as plain tuples of ints and strings.

    Pickling the dataclasses themselves runs a Python ``__getstate__``/``__setstate__`` per
    object on both sides (85 ms to send and 57 ms to read 4,167 hunks); plain tuples pickle in
    C. Hunks whose lines are not :class:`~desktop.views.diff.lines.HunkLines` travel whole.
    """
    out: list[_Flat] = []
    for hunk, layout in zip(hunks, layouts, strict=True):
        lines = hunk.lines
        head = (hunk.id, hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines)
        tail = (hunk.old_text, hunk.new_text, hunk.section)
        shape = (
            layout.split_rows,
            layout.unified_rows,
            layout.longest,
            layout.added,
            layout.removed,
        )
        if isinstance(lines, HunkLines):
            out.append((*head, *lines.parts(), *tail, *shape))
        else:
            out.append((hunk, shape))
    return tuple(out)


def decode_hunks(flat: Sequence[_Flat]) -> tuple[list[DiffHunk], list[HunkLayout]]:
    """The inverse of :func:`encode_hunks`: ``(hunks, layouts)``.

    Raises:
        ValueError: a malformed tuple (wrong length or line kinds).
    """
    hunks: list[DiffHunk] = []
    layouts: list[HunkLayout] = []
    for item in flat:
        if len(item) == 2:
            hunk, shape = item
            if not isinstance(hunk, DiffHunk):
                raise ValueError("a hunk of an unknown type")
        elif len(item) == 17:
            lines = HunkLines.packed(item[5], item[6], item[7], item[8])
            hunk = DiffHunk(*item[:5], lines, item[9], item[10], item[11])  # type: ignore[misc]
            shape = item[12:]
        else:
            raise ValueError(f"a hunk of {len(item)} fields")
        hunks.append(hunk)
        layouts.append(HunkLayout(*shape))
    return hunks, layouts
