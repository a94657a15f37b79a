"""The V4A diff engine: apply an ``apply_patch`` hunk body to a text (spec §5.4, openai-agents 0.24)."""

from __future__ import annotations

from typing import Literal

from .v4a_engine import Chunk, locate, parse_create, split_diff

__all__ = ["apply_diff"]


def apply_diff(input: str, diff: str, mode: Literal["default", "create"] = "default") -> str:
    """Apply a V4A hunk body to ``input`` (or build a new file from it in ``create`` mode).

    Identical to the reference SDK's ``agents.apply_diff.apply_diff`` of ``openai-agents``
    0.24 on every input, results and error texts alike (spec §5.4, with 0.24's changes: every
    trailing ``\\r`` of a diff line is removed, and an ``*** End of File`` hunk treats a final
    newline as the file's terminator rather than as a line, so ``apply_diff("a\\n",
    "@@\\n+x\\n*** End of File\\n")`` is ``"a\\nx\\n"``). This function never goes further
    than the reference: Tandem's editor uses :func:`core.tools.v4a_apply.apply_v4a` for the
    whitespace / look-alike fallbacks, BOM and per-line endings (``docs/patch-semantics.md``).

    Searches move forward from a cursor and use C-level list scans, so a diff with *h* hunks on
    an *n*-line file costs about O(n + diff size) in the common case.

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
    if mode != "create" and "\n" in input:
        newline = "\r\n" if input_has_crlf else "\n"
    else:
        newline = "\r\n" if "\r" in diff and "\r\n" in diff else "\n"
    diff_lines = split_diff(diff)
    if mode == "create":
        return newline.join(parse_create(diff_lines))
    input_lines = (input.replace("\r\n", "\n") if input_has_crlf else input).split("\n")
    chunks, _ = locate(diff_lines, input_lines)
    return newline.join(splice(input_lines, chunks))


def splice(input_lines: list[str], chunks: list[Chunk]) -> list[str]:
    """Splice located chunks into the input lines (spec §5.4 "Applying chunks").

    Raises:
        ValueError: ``applyDiff: chunk.origIndex <i> > input length <n>`` or
            ``applyDiff: overlapping chunk at <i> (cursor <c>)`` (reference texts).
    """
    out: list[str] = []
    total = len(input_lines)
    position = 0
    for chunk in chunks:
        check_chunk(chunk, position, total)
        out.extend(input_lines[position : chunk.orig_index])
        out.extend(chunk.inserted)
        position = chunk.orig_index + len(chunk.deleted)
    out.extend(input_lines[position:])
    return out


def check_chunk(chunk: Chunk, position: int, total: int) -> None:
    """Raise the reference's error when ``chunk`` cannot be applied at ``position``."""
    if chunk.orig_index > total:
        raise ValueError(f"applyDiff: chunk.origIndex {chunk.orig_index} > input length {total}")
    if position > chunk.orig_index:
        raise ValueError(f"applyDiff: overlapping chunk at {chunk.orig_index} (cursor {position})")
