"""The diff build process: ``python -m desktop.views.diff.worker`` (no Qt).

One process per build: it reads one ``build`` frame (:mod:`.wire`) on its standard input (and
the proposal's hunks after it, in ``hunks`` frames), and
writes the build's ``hunks`` (``CHUNK_HUNKS`` at a time, with their layouts; the sides'
``lines`` after the first chunk), then ``done`` or ``error`` frames on its standard output,
and exits. Running in its own process, a
build never holds the GUI process's GIL, and the GUI's parent sets it at a lower CPU priority
(issue 15). It stops at once at the end of its input (the GUI closed the pipe, or died); the
GUI kills it to cancel. It imports no harness and no Qt (a 40 ms start with ``-S``); only a
diff it makes itself (no proposal hunks) imports git's door.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable

from .build import hunk_chunks, hunk_layout
from .model import split_lines
from .wire import WireHunk, encode_hunks, encode_sides, frame, read_frame, write_all

__all__ = ["main", "run_build"]


def run_build(
    token: int,
    request: tuple[str, str | None, str | None, list[WireHunk] | None],
    send: Callable[[bytes], None],
) -> None:
    """Build one file's diff and ``send`` its frames (``bytes``).

    Args:
        token: the build's token, put in every frame.
        request: ``(path, old, new, hunks)`` as :meth:`DiffStream.start
            <desktop.views.diff.stream.DiffStream.start>` takes them (``hunks``: a proposal's,
            as :class:`~desktop.views.diff.wire.WireHunk` values, or ``None`` to diff).
        send: writes one frame.

    Bad input or a git failure ends with an ``error`` frame instead of ``done``.
    """
    path, old, new, hunks = request
    try:
        split = split_lines(old or ""), split_lines(new or "")
        lines_sent = False
        for batch in hunk_chunks(path, old, new, hunks=hunks, split=split):
            send(frame("hunks", token, encode_hunks(batch, [hunk_layout(h) for h in batch])))
            if not lines_sent:  # after the first screen's hunks: they show sooner
                _send_lines(token, split, send)
                lines_sent = True
        if not lines_sent:
            _send_lines(token, split, send)
        send(frame("done", token, None))
    except Exception as exc:  # shown in the view, nothing lost
        send(frame("error", token, f"{type(exc).__name__}: {exc}"))


def _send_lines(
    token: int, split: tuple[list[str], list[str]], send: Callable[[bytes], None]
) -> None:
    sides = [[line.rstrip("\r\n") for line in side] for side in split]
    send(frame("lines", token, encode_sides(*sides)))


def _exit_at_end_of_input(fd: int) -> None:
    """Wait for the end of the GUI's pipe (closed, or the GUI died), then stop at once."""
    try:
        while os.read(fd, 1 << 16):
            pass
    except OSError:
        pass
    os._exit(0)


def main() -> int:
    """Serve one build (the process's entry point); 0 when done, 2 without a request."""
    out = os.dup(1)
    os.dup2(2, 1)  # a stray print goes to stderr, never into the frames
    try:
        request = read_frame(0)
    except (OSError, ValueError):
        request = None
    if request is None or request.kind != "build":
        return 2

    def send(data: bytes) -> None:
        try:
            write_all(out, data)
        except OSError:  # the GUI is gone
            os._exit(0)

    path, old, new, count = pickle.loads(request.payload)
    hunks: list[WireHunk] | None = None
    if count is not None:
        hunks = []
        while len(hunks) < count:
            part = read_frame(0)
            if part is None or part.kind != "hunks":
                return 2
            hunks.extend(WireHunk(*fields) for fields in pickle.loads(part.payload))
    threading.Thread(target=_exit_at_end_of_input, args=(0,), daemon=True).start()
    run_build(request.token, (path, old, new, hunks), send)
    return 0


if __name__ == "__main__":
    os._exit(main())  # nothing buffered (frames are written with os.write): no teardown
