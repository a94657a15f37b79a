"""Tandem's editor-level V4A application: the reference result where the reference succeeds,
reported fallbacks where it refuses, a kept UTF-8 BOM and per-line line endings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .v4a import check_chunk
from .v4a_engine import Chunk, Match, Semantics, locate, parse_create, split_diff
from .v4a_match import INNER_WHITESPACE, LEVEL_NAMES, STRIP, TRAILING_WHITESPACE, UNICODE

__all__ = ["Fallback", "PatchResult", "apply_v4a"]

_BOM = "\ufeff"
_LINE_ENDS = re.compile(r"(\r\n|\n)")
_PHRASES = {
    TRAILING_WHITESPACE: "ignoring trailing whitespace",
    STRIP: "ignoring leading and trailing whitespace",
    INNER_WHITESPACE: "ignoring whitespace differences",
}


@dataclass(frozen=True, slots=True)
class Fallback:
    """One place where matching needed more than exact equality.

    Attributes:
        level: ``"trailing_whitespace"`` / ``"whitespace"`` (the reference SDK's own ``rstrip``
            / ``strip`` passes), ``"inner_whitespace"`` or ``"unicode"`` (Tandem only, tried
            where the reference refuses).
        target: ``"context"`` or ``"anchor"`` (an ``@@`` line).
        line: 1-based line of the file where the match starts.
        lines: how many lines needed this level.
        normalised: for ``unicode``, the look-alike kinds: ``"dashes"``, ``"quotes"``,
            ``"spaces"`` (no-break and other Unicode spaces).
        reference: whether ``agents.apply_diff`` 0.24 would have matched here too.
    """

    level: str
    target: Literal["context", "anchor"]
    line: int
    lines: int
    normalised: tuple[str, ...] = ()
    reference: bool = True

    def describe(self) -> str:
        """A short note, e.g. ``"matched after normalising quotes on 2 lines (line 14)"``."""
        if self.level == LEVEL_NAMES[UNICODE]:
            phrase = "normalising " + _join(self.normalised or ("punctuation",))
        else:
            code = next(k for k, v in LEVEL_NAMES.items() if v == self.level)
            phrase = _PHRASES[code]
        if self.target == "anchor":
            return f"@@ line matched after {phrase} (line {self.line})"
        plural = "" if self.lines == 1 else "s"
        return f"matched after {phrase} on {self.lines} line{plural} (line {self.line})"


@dataclass(frozen=True, slots=True)
class PatchResult:
    """What :func:`apply_v4a` produced.

    Attributes:
        text: the new file text.
        fallbacks: every non-exact match, in diff order.
        bom: whether a UTF-8 BOM was set aside while matching and kept on the result.
    """

    text: str
    fallbacks: tuple[Fallback, ...] = ()
    bom: bool = False

    def notes(self) -> list[str]:
        """Human-readable lines for the tool output and the card (empty when all was exact)."""
        return [fallback.describe() for fallback in self.fallbacks]


def apply_v4a(
    text: str,
    diff: str,
    mode: Literal["default", "create"] = "default",
    *,
    semantics: Semantics = "v4a",
) -> PatchResult:
    """Apply a V4A hunk body the way Tandem's editor does (``docs/patch-semantics.md``).

    Where ``agents.apply_diff`` (openai-agents 0.24) succeeds on a file with one line-ending
    style and no BOM, the text is the reference's. Beyond it:

    - matching falls back, only where the reference passes (exact, ``rstrip``, ``strip``) all
      fail, to whitespace-run and then Unicode look-alike normalisation (dashes, quotes,
      no-break and other spaces); every non-exact match is reported in ``fallbacks``;
    - a leading UTF-8 BOM is set aside for matching and kept;
    - line endings are kept per line: untouched lines keep theirs byte for byte; inserted lines
      take the ending of the line they replace or follow (the file's style otherwise);
    - ``semantics="codex"`` applies an envelope hunk with the Codex CLI's rules
      (:func:`core.tools.v4a_engine.locate`).

    Args:
        text: current file text (ignored in ``create`` mode).
        diff: the V4A hunk body (create mode: ``+`` lines).
        mode: ``"default"`` or ``"create"``.
        semantics: ``"v4a"`` (``apply_patch_call``) or ``"codex"`` (``*** Begin Patch``).

    Returns:
        A :class:`PatchResult`.

    Raises:
        ValueError: the diff does not parse or apply even with the fallbacks; the message is
            the reference's text for that failure (e.g. ``"Invalid Context 0:\\nfoo"``).
    """
    diff_newline = "\r\n" if "\r\n" in diff else "\n"
    diff_lines = split_diff(diff)
    if mode == "create":
        return PatchResult(diff_newline.join(parse_create(diff_lines)))
    bom = text.startswith(_BOM)
    if bom:
        text = text[1:]
    parts = _LINE_ENDS.split(text)
    contents = parts[0::2]
    endings = [*parts[1::2], ""]
    if "\n" in text:
        style = "\r\n" if "\r\n" in text else "\n"
    else:
        style = diff_newline
    chunks, matches = locate(diff_lines, contents, lenient=True, semantics=semantics)
    out = _splice(contents, endings, chunks, style)
    if bom and out:
        out = _BOM + out
    return PatchResult(out, tuple(_fallback(match) for match in matches), bom)


def _splice(contents: list[str], endings: list[str], chunks: list[Chunk], style: str) -> str:
    """Join the spliced lines; each separator is the ending of the line it follows."""
    lines: list[str] = []
    seps: list[str] = []
    total = len(contents)
    position = 0
    for chunk in chunks:
        check_chunk(chunk, position, total)
        at = chunk.orig_index
        lines.extend(contents[position:at])
        seps.extend(endings[position:at])
        if chunk.inserted:
            local = _local_ending(endings, at, bool(chunk.deleted)) or style
            lines.extend(chunk.inserted)
            seps.extend([local] * len(chunk.inserted))
        position = at + len(chunk.deleted)
    lines.extend(contents[position:])
    seps.extend(endings[position:])
    if not lines:
        return ""
    pieces = [line + (sep or style) for line, sep in zip(lines[:-1], seps[:-1], strict=True)]
    pieces.append(lines[-1])
    return "".join(pieces)


def _local_ending(endings: list[str], at: int, replaces: bool) -> str:
    """The ending new lines at ``at`` take: the replaced line's, else the previous line's,
    else the next line's ("" when none has one)."""
    order = (at, at - 1, at + 1) if replaces else (at - 1, at)
    for index in order:
        if 0 <= index < len(endings) and endings[index]:
            return endings[index]
    return ""


def _fallback(match: Match) -> Fallback:
    return Fallback(
        level=LEVEL_NAMES[match.level],
        target=match.target,
        line=match.start + 1,
        lines=match.lines,
        normalised=match.kinds,
        reference=match.level <= STRIP,
    )


def _join(words: tuple[str, ...]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]
