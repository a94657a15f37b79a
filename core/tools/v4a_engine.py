"""The V4A hunk loop: parse a hunk body and locate its chunks in a file (spec §5.4).

:func:`locate` is shared by the reference-identical :func:`core.tools.v4a.apply_diff` and by
Tandem's editor-level :func:`core.tools.v4a_apply.apply_v4a`; options select the extra
matching levels and the Codex CLI envelope semantics (see ``docs/patch-semantics.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from .v4a_match import (
    EXACT,
    INNER_WHITESPACE,
    REFERENCE_LEVELS,
    STRIP,
    UNICODE,
    LineViews,
    level_key,
    normalised_kinds,
)

__all__ = ["END_PATCH", "Chunk", "Match", "Semantics", "locate", "parse_create", "split_diff"]

Semantics = Literal["v4a", "codex"]
"""``v4a``: a Responses API ``apply_patch_call`` diff (reference SDK rules); ``codex``: a hunk
body from a ``*** Begin Patch`` envelope (Codex CLI rules)."""

END_PATCH = "*** End Patch"
_END_OF_FILE = "*** End of File"
_FILE_PREFIXES = (END_PATCH, "*** Update File:", "*** Delete File:", "*** Add File:")
_DONE_PREFIXES = (*_FILE_PREFIXES, _END_OF_FILE)
_SECTION_STOP_PREFIXES = ("@@", *_DONE_PREFIXES)
_LINE_SPLIT = re.compile(r"\r?\n")
_LENIENT_LEVELS = (INNER_WHITESPACE, UNICODE)
_ANCHOR_LEVELS = (EXACT, STRIP)  # the reference's anchor passes (spec §5.4 step 3)


@dataclass(slots=True)
class Chunk:
    """One replacement: at ``orig_index`` drop ``len(deleted)`` lines and insert ``inserted``."""

    orig_index: int
    deleted: list[str]
    inserted: list[str]


@dataclass(frozen=True, slots=True)
class Match:
    """A window or ``@@`` anchor that matched only after a fallback.

    Attributes:
        level: a :mod:`core.tools.v4a_match` level (1..4).
        target: ``"context"`` (a hunk's context and deleted lines) or ``"anchor"``.
        start: 0-based index of the first file line of the match.
        lines: how many lines of the match needed this level (differ at the level below).
        kinds: for :data:`~core.tools.v4a_match.UNICODE`, the look-alike kinds involved.
    """

    level: int
    target: Literal["context", "anchor"]
    start: int
    lines: int
    kinds: tuple[str, ...] = ()


@dataclass(slots=True)
class _Section:
    context: list[str]
    chunks: list[Chunk]
    eof: bool
    next_index: int
    consumed: bool


@dataclass(slots=True)
class _Options:
    lenient: bool
    codex: bool
    matches: list[Match] = field(default_factory=list)


def split_diff(diff: str) -> list[str]:
    """The diff's lines as the reference reads them (spec §5.4 preprocessing 2 and 4).

    Splits on ``\\r?\\n``, removes every trailing ``\\r`` of each line (``str.rstrip("\\r")``,
    as ``openai-agents`` 0.24 does), drops one final empty line and appends the
    ``*** End Patch`` sentinel.
    """
    lines = [line.rstrip("\r") for line in _LINE_SPLIT.split(diff)]
    if lines and lines[-1] == "":
        lines.pop()
    lines.append(END_PATCH)
    return lines


def parse_create(diff_lines: list[str]) -> list[str]:
    """The ``+`` lines of a create-mode diff, without their ``+`` (spec §5.4 "Create mode").

    Raises:
        ValueError: ``Invalid Add File Line: <line>``.
    """
    out: list[str] = []
    for line in diff_lines:
        if line.startswith(_FILE_PREFIXES):
            break
        if not line.startswith("+"):
            raise ValueError(f"Invalid Add File Line: {line}")
        out.append(line[1:])
    return out


def locate(
    diff_lines: list[str],
    input_lines: list[str],
    *,
    lenient: bool = False,
    semantics: Semantics = "v4a",
) -> tuple[list[Chunk], list[Match]]:
    """Run the hunk loop and return the chunks (absolute, in apply order) and the fallbacks.

    With ``lenient=False`` and ``semantics="v4a"`` this is exactly the reference's
    ``_parse_update_diff`` (openai-agents 0.24), error texts included. ``lenient`` adds the
    whitespace and Unicode passes, tried only where every reference pass failed, so a diff the
    reference applies is placed identically. ``semantics="codex"`` follows the Codex CLI for
    envelope hunks: every ``@@`` anchor must be found, a pure-addition hunk goes to the end of
    the file without moving the cursor, and a hunk with only ``*** End of File`` is an error.

    Args:
        diff_lines: from :func:`split_diff`.
        input_lines: the file split on ``\\n`` (CRLF already normalised).
        lenient: try :data:`~core.tools.v4a_match.INNER_WHITESPACE` and
            :data:`~core.tools.v4a_match.UNICODE` after the reference passes.
        semantics: ``"v4a"`` or ``"codex"``.

    Raises:
        ValueError: the reference's messages (``Invalid Context 3:\\na``, ``Invalid Anchor``,
            ``Invalid Line``, ``Nothing in this section``, ``applyDiff: overlapping chunk``...).
    """
    options = _Options(lenient=lenient or semantics == "codex", codex=semantics == "codex")
    view = LineViews(input_lines)
    chunks: list[Chunk] = []
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

        require_match = headers > 1 or options.codex
        for position, anchor in enumerate(anchors):
            cursor = _move_to_anchor(view, anchor, cursor, position > 0, require_match, options)

        section = _read_section(diff_lines, index)
        index = section.next_index
        if options.codex and section.eof and not section.consumed:
            raise ValueError(
                "Invalid hunk: it has '*** End of File' but no lines to match or change"
            )
        if options.codex and section.chunks and not section.context:
            # Codex CLI: a pure addition goes at the end of the file; the cursor stays.
            end = _eof_length(input_lines)
            for chunk in section.chunks:
                chunk.orig_index += end
                chunks.append(chunk)
            continue
        start = _find_context(view, section.context, cursor, section.eof, options)
        if start < 0:
            kind = "Invalid EOF Context" if section.eof else "Invalid Context"
            raise ValueError(f"{kind} {cursor}:\n" + "\n".join(section.context))
        for chunk in section.chunks:
            chunk.orig_index += start
            chunks.append(chunk)
        cursor = start + len(section.context)
    if options.codex:
        chunks.sort(key=lambda chunk: chunk.orig_index)
    return chunks, options.matches


def _move_to_anchor(
    view: LineViews,
    anchor: str,
    cursor: int,
    force_forward: bool,
    require_match: bool,
    options: _Options,
) -> int:
    """The cursor after locating one ``@@`` anchor (spec §5.4 step 3)."""
    for level in _ANCHOR_LEVELS:
        wanted = level_key(level)(anchor)
        if not force_forward and view.occurs_before(level, wanted, cursor):
            return cursor
        try:
            found = view.mapped(level).index(wanted, cursor)
        except ValueError:
            continue
        if level != EXACT:
            options.matches.append(Match(level, "anchor", found, 1))
        return found + 1
    if options.lenient and require_match:
        for level in _LENIENT_LEVELS:
            wanted = level_key(level)(anchor)
            try:
                found = view.mapped(level).index(wanted, cursor)
            except ValueError:
                continue
            kinds = normalised_kinds([(view.lines[found], anchor)]) if level == UNICODE else ()
            options.matches.append(Match(level, "anchor", found, 1, kinds))
            return found + 1
    if require_match:
        raise ValueError(f"Invalid Anchor {cursor}:\n{anchor}")
    return cursor


def _read_section(diff_lines: list[str], index: int) -> _Section:
    """Parse one hunk body starting at ``diff_lines[index]`` (spec §5.4 step 4)."""
    start = index
    context: list[str] = []
    chunks: list[Chunk] = []
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
                chunks.append(Chunk(len(context) - len(deleted), deleted, inserted))
                deleted, inserted = [], []
            context.append(content)
        elif kind == "-":
            deleted.append(content)
            context.append(content)
        else:
            inserted.append(content)
        last_kind = kind
    if deleted or inserted:
        chunks.append(Chunk(len(context) - len(deleted), deleted, inserted))

    consumed = index != start
    if index < total and diff_lines[index] == _END_OF_FILE:
        return _Section(context, chunks, True, index + 1, consumed)
    if not consumed:
        following = diff_lines[index] if index < total else ""
        raise ValueError(f"Nothing in this section - index={index} {following}")
    return _Section(context, chunks, False, index, consumed)


def _eof_length(lines: list[str]) -> int:
    """Lines an ``*** End of File`` search sees: a final ``""`` (trailing newline) is the file's
    terminator, not a line (openai-agents 0.24 ``_eof_search_lines``)."""
    return len(lines) - 1 if lines and lines[-1] == "" else len(lines)


def _find_context(
    view: LineViews, context: list[str], cursor: int, eof: bool, options: _Options
) -> int:
    """Start index of ``context`` in the file, or -1 (spec §5.4 step 5, 0.24 EOF rule)."""
    total = len(view.lines)
    if not eof:
        found = _search(view, context, cursor, total, REFERENCE_LEVELS, options)
        if found < 0 and options.lenient:
            found = _search(view, context, cursor, total, _LENIENT_LEVELS, options)
        return found
    length = _eof_length(view.lines)
    end_start = max(0, length - len(context))
    fallback_start = min(cursor, length)
    found = _search(view, context, end_start, length, REFERENCE_LEVELS, options)
    if found < 0:
        found = _search(view, context, fallback_start, length, REFERENCE_LEVELS, options)
    if found < 0 and options.lenient:
        found = _search(view, context, end_start, length, _LENIENT_LEVELS, options)
        if found < 0:
            found = _search(view, context, fallback_start, length, _LENIENT_LEVELS, options)
    return found


def _search(
    view: LineViews,
    context: list[str],
    start: int,
    length: int,
    levels: tuple[int, ...],
    options: _Options,
) -> int:
    """First window at or after ``start`` within ``lines[:length]``, trying ``levels`` in
    order (each over every start position), recording a non-exact match."""
    if not context:
        return start
    for level in levels:
        key = level_key(level)
        found = view.find_window(level, [key(line) for line in context], start, length)
        if found >= 0:
            if level != EXACT:
                options.matches.append(_describe(view, context, found, level))
            return found
    return -1


def _describe(view: LineViews, context: list[str], start: int, level: int) -> Match:
    below = level_key(level - 1)
    differing = [
        (view.lines[start + offset], line)
        for offset, line in enumerate(context)
        if below(view.lines[start + offset]) != below(line)
    ]
    kinds = normalised_kinds(differing) if level == UNICODE else ()
    return Match(level, "context", start, len(differing), kinds)
