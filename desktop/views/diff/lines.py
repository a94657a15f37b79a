"""A hunk's displayed lines: the line value and the compact per-hunk store (no Qt).

A 50,000-line diff used to keep one :class:`DiffLine` object per line (33,000 for 4,000
hunks), and each of them was traversed by every garbage-collection pass that looked at the
build: the young pass after a build took 10-30 ms of the GUI thread (issue 15). A hunk now
keeps its lines as :class:`HunkLines`: one ``str`` of kind characters, one ``str`` of the
texts and two line numbers, none of which the collector tracks except the holder itself.
:class:`DiffLine` values are made when the lines are read (a painted hunk's rows), and freed
by reference counting with them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal, NamedTuple, overload

__all__ = ["DiffLine", "HunkLines", "LineKind"]

LineKind = Literal["context", "add", "delete"]

_CONTEXT, _DELETE, _ADD = " ", "-", "+"
_KIND_OF_CHAR: dict[str, LineKind] = {_CONTEXT: "context", _DELETE: "delete", _ADD: "add"}
_CHAR_OF_KIND: dict[str, str] = {kind: char for char, kind in _KIND_OF_CHAR.items()}


class DiffLine(NamedTuple):
    """One displayed line of a hunk (immutable).

    Attributes:
        kind: ``"context"`` (both sides), ``"add"`` (new side only), ``"delete"`` (old only).
        old_no: 1-based line number in the old text, ``None`` for added lines.
        new_no: 1-based line number in the new text, ``None`` for deleted lines.
        text: the line without its terminator.
    """

    kind: LineKind
    old_no: int | None
    new_no: int | None
    text: str


class HunkLines(Sequence[DiffLine]):
    """The lines of one hunk, stored as two strings and two numbers; reads give
    :class:`DiffLine` values (new ones on each read: compare them by value, not identity).

    Old-side numbers run on from ``old_first`` over context and deleted lines, new-side ones
    from ``new_first`` over context and added lines, as in a ``diff -u`` hunk. Equal to any
    list or tuple of the same :class:`DiffLine` values.

    Args:
        kinds: one character per line: ``" "`` context, ``"-"`` deleted, ``"+"`` added (the
            unified-diff prefixes).
        texts: the lines' texts, without terminators, one per kind character.
        old_first: the old-side number of the first context or deleted line (1-based).
        new_first: the new-side number of the first context or added line (1-based).

    Raises:
        ValueError: ``kinds`` holds another character, or its length differs from
            ``texts``'s.
    """

    __slots__ = ("_new", "_old", "_texts", "kinds")

    def __init__(self, kinds: str, texts: Sequence[str], old_first: int, new_first: int) -> None:
        if len(kinds) != len(texts):
            raise ValueError(f"{len(kinds)} kinds for {len(texts)} texts")
        if kinds.strip(" -+"):
            raise ValueError(f"line kinds are ' ', '-' or '+', got {kinds!r}")
        joined = "\n".join(texts)
        self.kinds = kinds
        """One character per line (``" "``, ``"-"``, ``"+"``)."""
        # one str, untracked by the collector; a tuple only if a text holds a "\n" itself
        self._texts: str | tuple[str, ...] = (
            joined if joined.count("\n") == max(0, len(texts) - 1) else tuple(texts)
        )
        self._old = old_first
        self._new = new_first

    @classmethod
    def of(cls, lines: Sequence[DiffLine]) -> HunkLines:
        """The compact form of ``lines`` (their numbers must run on as in a hunk).

        Raises:
            ValueError: a line's kind is unknown, or the numbers do not run on from the first
                line's.
        """
        old = next((ln.old_no for ln in lines if ln.old_no is not None), 1)
        new = next((ln.new_no for ln in lines if ln.new_no is not None), 1)
        kinds = "".join(_CHAR_OF_KIND.get(ln.kind, "?") for ln in lines)  # "?": refused
        compact = cls(kinds, [ln.text for ln in lines], old, new)
        if list(compact) != list(lines):
            raise ValueError("line numbers do not run on as in a hunk")
        return compact

    @classmethod
    def packed(
        cls, kinds: str, texts: str | tuple[str, ...], old_first: int, new_first: int
    ) -> HunkLines:
        """The lines from :meth:`parts` (as they travel from the build process): ``texts``
        is the ``"\\n"``-joined texts, or their tuple when a text holds a ``"\\n"``.

        Raises:
            ValueError: ``kinds`` holds another character, or the texts' count differs.
        """
        if kinds.strip(" -+"):
            raise ValueError(f"line kinds are ' ', '-' or '+', got {kinds!r}")
        count = len(texts) if isinstance(texts, tuple) else (texts.count("\n") + 1 if kinds else 0)
        if count != len(kinds) or (not kinds and texts):
            raise ValueError(f"{len(kinds)} kinds for {count} texts")
        lines = cls.__new__(cls)
        lines.kinds, lines._texts, lines._old, lines._new = kinds, texts, old_first, new_first
        return lines

    def parts(self) -> tuple[str, str | tuple[str, ...], int, int]:
        """``(kinds, texts, old_first, new_first)``: plain values for :meth:`packed`."""
        return self.kinds, self._texts, self._old, self._new

    def texts(self) -> list[str]:
        """The lines' texts in order (without terminators)."""
        if isinstance(self._texts, tuple):
            return list(self._texts)
        return self._texts.split("\n") if self.kinds else []

    @property
    def added(self) -> int:
        """Added lines."""
        return self.kinds.count(_ADD)

    @property
    def removed(self) -> int:
        """Deleted lines."""
        return self.kinds.count(_DELETE)

    def __len__(self) -> int:
        return len(self.kinds)

    def __iter__(self) -> Iterator[DiffLine]:
        old, new = self._old, self._new
        for char, text in zip(self.kinds, self.texts(), strict=True):
            if char == _CONTEXT:
                yield DiffLine("context", old, new, text)
                old += 1
                new += 1
            elif char == _DELETE:
                yield DiffLine("delete", old, None, text)
                old += 1
            else:
                yield DiffLine("add", None, new, text)
                new += 1

    @overload
    def __getitem__(self, index: int) -> DiffLine: ...

    @overload
    def __getitem__(self, index: slice) -> list[DiffLine]: ...

    def __getitem__(self, index: int | slice) -> DiffLine | list[DiffLine]:
        if isinstance(index, slice):
            return list(self)[index]
        count = len(self.kinds)
        at = index + count if index < 0 else index
        if not 0 <= at < count:
            raise IndexError(index)
        before = self.kinds[:at]
        char = self.kinds[at]
        kind = _KIND_OF_CHAR[char]
        old = self._old + before.count(_CONTEXT) + before.count(_DELETE)
        new = self._new + before.count(_CONTEXT) + before.count(_ADD)
        text = self.texts()[at]
        return DiffLine(kind, None if char == _ADD else old, None if char == _DELETE else new, text)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HunkLines | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are unhashable

    def __repr__(self) -> str:
        return f"HunkLines({list(self)!r})"
