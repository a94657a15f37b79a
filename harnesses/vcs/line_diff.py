"""Git's line diff for Python line lists: ``git diff --no-index`` on two token files.

Each line becomes a short ASCII token (equal tokens iff equal lines, terminators included),
so git compares lines exactly and never takes a text for binary. The token files live in a
private temporary folder outside any workspace; git runs through the one door
(:func:`harnesses.vcs.runner.run_git`). Without git, difflib gives the same grouping.
"""

from __future__ import annotations

import difflib
import logging
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .runner import GitError, run_git

__all__ = ["DEFAULT_CONTEXT", "Opcode", "grouped_opcodes", "line_opcodes"]

DEFAULT_CONTEXT = 3
"""Unchanged lines kept around each change (lines), as in ``diff -u``."""

Opcode = tuple[str, int, int, int, int]
"""``(tag, i1, i2, j1, j2)``: ``a[i1:i2]`` becomes ``b[j1:j2]``; tags as difflib's opcodes
(``"equal"``, ``"replace"``, ``"delete"``, ``"insert"``)."""


_log = logging.getLogger(__name__)
_GIT_DIFF = (
    "diff",
    "--no-index",
    "--diff-algorithm=myers",  # git's default; histogram is far slower on dense changes
    "--indent-heuristic",
    "--unified=0",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-renames",
)
_GIT_TIMEOUT_S = 120.0


def _tokens(lines: Sequence[str], ids: dict[str, int], blank: list[str]) -> bytes:
    """One ASCII token per line: equal tokens iff equal lines (terminators included).

    A token keeps the line's indentation (spaces and tabs) so git's indent heuristic still
    places ambiguous hunks as it would on the real text; the first whitespace-only line
    variant is written blank for the same reason. Tokens never contain NUL or a newline, so
    git never takes the file for binary whatever the text holds.
    """
    out: list[str] = []
    for line in lines:
        found = ids.get(line)
        if found is None:
            found = ids[line] = len(ids)
        body = line.rstrip("\r\n")
        if not body.strip(" \t"):
            if not blank:
                blank.append(line)
            if blank[0] == line:
                out.append("")
                continue
        indent = body[: len(body) - len(body.lstrip(" \t"))]
        out.append(f"{indent}#{found:x}")
    out.append("")
    return "\n".join(out).encode("ascii")


def _git_blocks(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, int, int]]:
    """The changed blocks ``(i1, i2, j1, j2)`` between two line lists, by ``git diff
    --no-index -U0`` (Myers with the indent heuristic, git's defaults) on their token files,
    through the hardened git door (``harnesses/vcs/runner.py``).

    Raises:
        GitError: git could not run or failed.
    """
    ids: dict[str, int] = {}
    blank: list[str] = []
    with tempfile.TemporaryDirectory(prefix="tandem-diff-") as folder:
        root = Path(folder)
        (root / "a").write_bytes(_tokens(a, ids, blank))
        (root / "b").write_bytes(_tokens(b, ids, blank))
        result = run_git(
            [*_GIT_DIFF, "--", "a", "b"],
            cwd=root,
            extra_env={"GIT_CEILING_DIRECTORIES": str(root.parent)},
            check=False,
            timeout_s=_GIT_TIMEOUT_S,
        )
    if result.returncode not in (0, 1):
        raise GitError(_GIT_DIFF, result.returncode, result.stderr.decode("utf-8", "replace"))
    blocks: list[tuple[int, int, int, int]] = []
    for raw in result.stdout.split(b"\n"):
        if not raw.startswith(b"@@ -"):
            continue
        old_range, new_range = raw.split(b" ")[1:3]
        i1, i2 = _block_range(old_range[1:])
        j1, j2 = _block_range(new_range[1:])
        blocks.append((i1, i2, j1, j2))
    return blocks


def _block_range(field: bytes) -> tuple[int, int]:
    """``b"12,3"`` (a ``-U0`` hunk header side) as a 0-based ``(start, end)`` line range."""
    start_text, _, count_text = field.partition(b",")
    start, count = int(start_text), int(count_text or b"1")
    first = start - 1 if count else start
    return first, first + count


def _blocks(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int, int, int]]:
    """Changed blocks between ``a`` and ``b``, common prefix and suffix trimmed first."""
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
    if not a_mid and not b_mid:
        return []
    if not a_mid or not b_mid:
        return [(head, head + len(a_mid), head, head + len(b_mid))]
    try:
        found = _git_blocks(a_mid, b_mid)
    except GitError as exc:  # git missing or broken: difflib is slower but gives a diff
        _log.warning("git diff unavailable (%s); falling back to difflib", exc)
        matcher = difflib.SequenceMatcher(a=a_mid, b=b_mid, autojunk=False)
        found = [
            (i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
        ]
    return [(i1 + head, i2 + head, j1 + head, j2 + head) for i1, i2, j1, j2 in found]


def _tag(i1: int, i2: int, j1: int, j2: int) -> str:
    if i1 == i2:
        return "insert"
    return "delete" if j1 == j2 else "replace"


def line_opcodes(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """Every opcode turning the lines ``a`` into ``b``, in order, equal runs included.

    Lines are compared exactly (terminators included). The changed blocks come from git's
    diff (``git diff --no-index``: Myers with git's cost heuristic and indent heuristic,
    near-linear on real edits: ~0.03 s for 50k lines with 4k changes) run on a token file
    per side; difflib's ``SequenceMatcher`` (quadratic) is used only when git cannot run.

    Args:
        a: the old lines.
        b: the new lines.

    Returns:
        ``(tag, i1, i2, j1, j2)`` opcodes covering both sequences, as difflib's
        ``get_opcodes`` would shape them (empty when both are empty).
    """
    codes: list[Opcode] = []
    i = j = 0
    for i1, i2, j1, j2 in _blocks(a, b):
        if i1 > i:
            codes.append(("equal", i, i1, j, j1))
        codes.append((_tag(i1, i2, j1, j2), i1, i2, j1, j2))
        i, j = i2, j2
    if i < len(a) or j < len(b):
        codes.append(("equal", i, len(a), j, len(b)))
    return codes


def grouped_opcodes(
    a: Sequence[str], b: Sequence[str], context: int = DEFAULT_CONTEXT
) -> list[list[Opcode]]:
    """The opcodes of :func:`line_opcodes` grouped into hunks with ``context`` lines around.

    Grouping follows ``diff -u`` (and difflib's ``get_grouped_opcodes``): two changes stay
    in one hunk while at most ``2 * context`` unchanged lines separate them; each group
    starts and ends with at most ``context`` unchanged lines.

    Args:
        a: the old lines.
        b: the new lines.
        context: unchanged lines kept around each change (>= 0).

    Returns:
        One opcode list per hunk, in order; empty when ``a == b``.

    Raises:
        ValueError: ``context`` is negative.
    """
    if context < 0:
        raise ValueError(f"context must be >= 0, got {context}")
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in line_opcodes(a, b):
        if tag != "equal":
            group.append((tag, i1, i2, j1, j2))
            continue
        if group and i2 - i1 <= 2 * context:
            group.append((tag, i1, i2, j1, j2))
            continue
        if group:
            group.append((tag, i1, i1 + context, j1, j1 + context))
            groups.append(group)
        lead = min(context, i2 - i1)
        group = [(tag, i2 - lead, i2, j2 - lead, j2)] if lead else []
    if any(code[0] != "equal" for code in group):
        tag, i1, i2, j1, j2 = group[-1]
        if tag == "equal":
            group[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
        groups.append(group)
    return groups
