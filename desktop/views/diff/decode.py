"""A build process's results decoded on the GUI thread, a few milliseconds a step (no Qt).

The process's reader thread only reads bytes (the GIL released while it waits); decoding them
on that thread made it hold the GIL in the GUI's way, and on a loaded machine the kernel
would take its core away while it held it (issue 15). Each step here is one short C call or
two (unpickling a chunk of hunks and making its values, splitting one side's text, joining
it for the lexer), so the GUI thread interleaves them with its events within its slice.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any

from desktop.views.diff_highlight import SyntaxLines, lexer_for_path

from .process import Ended
from .wire import Frame, decode_hunks

__all__ = ["decode_steps", "syntax_sides"]

Result = tuple[str, Any]
"""``(kind, data)`` of a :class:`~desktop.views.diff.stream.StreamMessage`."""


def syntax_sides(path: str, old: list[str], new: list[str]) -> tuple[SyntaxLines, SyntaxLines, int]:
    """The sides' lexing state: ``(old, new, longest side in lines)``."""
    lexer = lexer_for_path(path)
    return SyntaxLines(lexer, old), SyntaxLines(lexer, new), max(len(old), len(new))


def decode_steps(path: str, item: Frame | Ended) -> Iterator[Result | None]:
    """Decode one frame (or the process's end) of ``path``'s build step by step: yields
    ``None`` after each step but the last, then the ``(kind, data)`` result.

    A corrupt frame, or an end without ``done``, gives an ``("error", message)`` result.
    """
    if isinstance(item, Ended):
        how = f"exit status {item.status}" if item.status is not None else "no exit status"
        yield (
            "error",
            item.reason or (f"the diff build process stopped ({how}); the hunks shown are kept"),
        )
        return
    try:
        data = pickle.loads(item.payload)  # our own build process's bytes (no model input)
        if item.kind == "lines":
            yield from _lines_steps(path, data)
        elif item.kind == "hunks":
            yield "hunks", decode_hunks(data)
        elif item.kind in ("done", "error"):
            yield item.kind, data
        else:
            yield "error", f"unexpected frame {item.kind!r} from the build process"
    except (ValueError, TypeError, pickle.UnpicklingError, EOFError) as exc:
        yield "error", f"unreadable build result: {type(exc).__name__}: {exc}"


def _lines_steps(path: str, data: Any) -> Iterator[Result | None]:
    (old_count, old_text), (new_count, new_text) = data
    sides: list[list[str]] = []
    for count, text in ((old_count, old_text), (new_count, new_text)):
        yield None
        if isinstance(text, list):
            sides.append([str(line) for line in text])
        elif isinstance(text, str):
            sides.append(text.split("\n") if count else [])
        else:
            raise TypeError(f"a side of type {type(text).__name__}")
    lexer = lexer_for_path(path)
    yield None
    old = SyntaxLines(lexer, sides[0])  # a copy and a join of the side: a few ms
    yield None
    new = SyntaxLines(lexer, sides[1])
    yield "lines", (old, new, max(len(sides[0]), len(sides[1])))
