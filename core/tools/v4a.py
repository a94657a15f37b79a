"""The V4A diff engine: apply an ``apply_patch`` hunk body to a text (spec §5.4)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["apply_diff"]

_END_PATCH = "*** End Patch"
_END_OF_FILE = "*** End of File"
#: Lines that end a file section (and create-mode reading).
_FILE_PREFIXES = (_END_PATCH, "*** Update File:", "*** Delete File:", "*** Add File:")
#: Lines that end the hunk loop of an update.
_DONE_PREFIXES = (*_FILE_PREFIXES, _END_OF_FILE)
#: Lines that end one section's body (a line that is exactly ``***`` also does).
_SECTION_STOP_PREFIXES = ("@@", *_DONE_PREFIXES)
_LINE_SPLIT = re.compile(r"\r?\n")


@dataclass(slots=True)
class _Chunk:
    """One replacement: at ``orig_index`` drop ``len(deleted)`` lines and insert ``inserted``."""

    orig_index: int
    deleted: list[str]
    inserted: list[str]


@dataclass(slots=True)
class _Section:
    """The parsed body of one hunk."""

    context: list[str]
    chunks: list[_Chunk]
    eof: bool
    next_index: int


@dataclass(slots=True)
class _Lines:
    """``input_lines`` plus lazily built views used by the searches (all O(n) once, at most)."""

    lines: list[str]
    _rstripped: list[str] | None = None
    _stripped: list[str] | None = None
    # Lines before ``_seen_upto`` as sets, for "does the anchor occur before the cursor".
    _seen: set[str] = field(default_factory=set)
    _seen_stripped: set[str] | None = None
    _seen_upto: int = 0
    _seen_stripped_upto: int = 0

    def rstripped(self) -> list[str]:
        if self._rstripped is None:
            self._rstripped = [line.rstrip() for line in self.lines]
        return self._rstripped

    def stripped(self) -> list[str]:
        if self._stripped is None:
            self._stripped = [line.strip() for line in self.lines]
        return self._stripped

    def occurs_before(self, text: str, cursor: int) -> bool:
        """Whether ``lines[:cursor]`` contains ``text`` (cursor never decreases across calls)."""
        if cursor > self._seen_upto:
            self._seen.update(self.lines[self._seen_upto : cursor])
            self._seen_upto = cursor
        return text in self._seen

    def occurs_before_stripped(self, text: str, cursor: int) -> bool:
        """Whether some ``line.strip()`` of ``lines[:cursor]`` equals ``text``."""
        if self._seen_stripped is None:
            self._seen_stripped = set()
        if cursor > self._seen_stripped_upto:
            self._seen_stripped.update(self.stripped()[self._seen_stripped_upto : cursor])
            self._seen_stripped_upto = cursor
        return text in self._seen_stripped


def apply_diff(input: str, diff: str, mode: Literal["default", "create"] = "default") -> str:
    """Apply a V4A hunk body to ``input`` (or build a new file from it in ``create`` mode).

    Reproduces the reference SDK's ``agents.apply_diff.apply_diff`` (spec §5.4): newline style
    detection, ``@@`` anchors (exact, then ``strip()`` fuzz), context search (exact, ``rstrip()``,
    ``strip()``), ``*** End of File`` sections, and the same error texts. Searches move forward
    from a cursor and use C-level list scans, so a diff with *h* hunks on an *n*-line file costs
    about O(n + diff size) in the common case.

    Args:
        input: the current file text (ignored in ``create`` mode).
        diff: the hunk body only (no ``*** Begin Patch`` / ``*** Update File:`` envelope); in
            ``create`` mode every line starts with ``+``.
        mode: ``"default"`` to update ``input``, ``"create"`` to build a new file.

    Returns:
        The new text, joined with ``\\r\\n`` or ``\\n`` as detected (spec §5.4 preprocessing 1).

    Raises:
        ValueError: the diff does not parse or does not apply; the message is the reference
            text, e.g. ``"Invalid Context 3:\\na"`` or ``"Invalid Add File Line: x"``.
    """
    # Looking for "\r" first is a fast single-character scan; most inputs have none.
    input_has_crlf = "\r" in input and "\r\n" in input
    if mode == "default" and "\n" in input:
        newline = "\r\n" if input_has_crlf else "\n"
    else:
        newline = "\r\n" if "\r" in diff and "\r\n" in diff else "\n"

    diff_lines = [line[:-1] if line.endswith("\r") else line for line in _LINE_SPLIT.split(diff)]
    if diff_lines and diff_lines[-1] == "":
        diff_lines.pop()
    diff_lines.append(_END_PATCH)

    if mode == "create":
        return newline.join(_parse_create(diff_lines))

    input_lines = (input.replace("\r\n", "\n") if input_has_crlf else input).split("\n")
    chunks = _parse_update(diff_lines, _Lines(input_lines))
    return newline.join(_apply_chunks(input_lines, chunks))


def _parse_create(diff_lines: list[str]) -> list[str]:
    """The ``+`` lines of a create-mode diff, without their ``+``."""
    out: list[str] = []
    for line in diff_lines:
        if line.startswith(_FILE_PREFIXES):
            break
        if not line.startswith("+"):
            raise ValueError(f"Invalid Add File Line: {line}")
        out.append(line[1:])
    return out


def _parse_update(diff_lines: list[str], view: _Lines) -> list[_Chunk]:
    """Run the hunk loop (spec §5.4 steps 1-6) and return chunks with absolute indexes."""
    chunks: list[_Chunk] = []
    cursor = 0
    index = 0
    total = len(diff_lines)
    while index < total and not diff_lines[index].startswith(_DONE_PREFIXES):
        anchors: list[str] = []
        headers = 0
        while index < total:
            line = diff_lines[index]
            if line == "@@":
                headers += 1
            elif line.startswith("@@ "):
                headers += 1
                if line[3:].strip():
                    anchors.append(line[3:])
            else:
                break
            index += 1
        if headers == 0 and cursor != 0:
            raise ValueError(f"Invalid Line:\n{diff_lines[index]}")

        require_match = headers > 1
        for position, anchor in enumerate(anchors):
            cursor = _move_to_anchor(view, anchor, cursor, position > 0, require_match)

        section = _read_section(diff_lines, index)
        index = section.next_index
        start = _find_context(view, section.context, cursor, section.eof)
        if start < 0:
            kind = "Invalid EOF Context" if section.eof else "Invalid Context"
            raise ValueError(f"{kind} {cursor}:\n" + "\n".join(section.context))
        for chunk in section.chunks:
            chunk.orig_index += start
            chunks.append(chunk)
        cursor = start + len(section.context)
    return chunks


def _move_to_anchor(
    view: _Lines, anchor: str, cursor: int, force_forward: bool, require_match: bool
) -> int:
    """Return the cursor after locating one ``@@`` anchor (spec §5.4 step 3)."""
    lines = view.lines
    if not force_forward and view.occurs_before(anchor, cursor):
        return cursor
    try:
        return lines.index(anchor, cursor) + 1
    except ValueError:
        pass
    wanted = anchor.strip()
    if not force_forward and view.occurs_before_stripped(wanted, cursor):
        return cursor
    try:
        return view.stripped().index(wanted, cursor) + 1
    except ValueError:
        pass
    if require_match:
        raise ValueError(f"Invalid Anchor {cursor}:\n{anchor}")
    return cursor


def _read_section(diff_lines: list[str], index: int) -> _Section:
    """Parse one hunk body starting at ``diff_lines[index]`` (spec §5.4 step 4)."""
    start = index
    context: list[str] = []
    chunks: list[_Chunk] = []
    deleted: list[str] = []
    inserted: list[str] = []
    last_kind = " "
    total = len(diff_lines)
    while index < total:
        raw = diff_lines[index]
        if raw.startswith(_SECTION_STOP_PREFIXES) or raw == "***":
            break
        if raw.startswith("***"):
            raise ValueError(f"Invalid Line: {raw}")
        kind = raw[0] if raw else " "
        if kind not in "+- ":
            raise ValueError(f"Invalid Line: {raw}")
        index += 1
        content = raw[1:]
        if kind == " ":
            if last_kind != " " and (deleted or inserted):
                chunks.append(_Chunk(len(context) - len(deleted), deleted, inserted))
                deleted, inserted = [], []
            context.append(content)
        elif kind == "-":
            deleted.append(content)
            context.append(content)
        else:
            inserted.append(content)
        last_kind = kind
    if deleted or inserted:
        chunks.append(_Chunk(len(context) - len(deleted), deleted, inserted))

    eof = False
    if index < total and diff_lines[index] == _END_OF_FILE:
        index += 1
        eof = True
    elif index == start:
        following = diff_lines[index] if index < total else ""
        raise ValueError(f"Nothing in this section - index={index} {following}")
    return _Section(context, chunks, eof, index)


def _find_context(view: _Lines, context: list[str], cursor: int, eof: bool) -> int:
    """Start index of ``context`` in the input, or -1 (spec §5.4 step 5)."""
    if eof:
        found = _find_context_from(view, context, max(0, len(view.lines) - len(context)))
        if found >= 0:
            return found
    return _find_context_from(view, context, cursor)


def _find_context_from(view: _Lines, context: list[str], start: int) -> int:
    """First window at or after ``start``: exact, then ``rstrip()``, then ``strip()`` equality."""
    if not context:
        return start
    found = _find_window(view.lines, context, start)
    if found >= 0:
        return found
    found = _find_window(view.rstripped(), [line.rstrip() for line in context], start)
    if found >= 0:
        return found
    return _find_window(view.stripped(), [line.strip() for line in context], start)


def _find_window(lines: list[str], window: list[str], start: int) -> int:
    """First ``i >= start`` with ``lines[i:i+len(window)] == window`` (fitting entirely), or -1."""
    size = len(window)
    stop = len(lines) - size + 1  # exclusive bound on start positions
    first, last = window[0], window[-1]
    position = start
    while position < stop:
        try:
            position = lines.index(first, position, stop)
        except ValueError:
            return -1
        if lines[position + size - 1] == last and lines[position : position + size] == window:
            return position
        position += 1
    return -1


def _apply_chunks(input_lines: list[str], chunks: list[_Chunk]) -> list[str]:
    """Splice the chunks into the input lines (spec §5.4 "Applying chunks")."""
    out: list[str] = []
    total = len(input_lines)
    position = 0
    for chunk in chunks:
        if chunk.orig_index > total:
            raise ValueError(
                f"applyDiff: chunk.origIndex {chunk.orig_index} > input length {total}"
            )
        if position > chunk.orig_index:
            raise ValueError(
                f"applyDiff: overlapping chunk at {chunk.orig_index} (cursor {position})"
            )
        out.extend(input_lines[position : chunk.orig_index])
        out.extend(chunk.inserted)
        position = chunk.orig_index + len(chunk.deleted)
    out.extend(input_lines[position:])
    return out
