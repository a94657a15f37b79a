"""A diff build in its own process (:mod:`.worker`), read by threads that hold no GIL to speak of.

A writer thread starts the process (for a proposal's hunks with ``-S``: about 40 ms, no
harness or Qt imported; the ``fork``/``exec`` took the GUI thread 6-26 ms) and encodes the request (a few ms, mostly in C) and writes it; a reader
thread reads the frames back (blocked in ``os.read``, the GIL released) and decodes each (a
few short C calls: unpickling a chunk of hunks, splitting a side's text); the GUI thread only
takes the results, a few at a time within its slice. (Decoding the sides' lines on the GUI
thread took it 43 ms at load 3, in one piece.) The
build itself never runs in the GUI process, so it never holds the GUI's GIL, and the kernel
schedules it as another task at a lower priority (issue 15: stalls under load were the GUI
thread waiting for a worker thread's GIL or for a core).

The process is not an agent process (it runs Tandem's own module on Tandem's own data, no
model output reaches its command line); it dies at the end of its input, so with Tandem too.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .build import EditorHunk
from .wire import Frame, frame, read_frame, write_all

__all__ = ["BuildProcess", "Ended"]

_ROOT = Path(__file__).resolve().parents[3]  # the folder holding the ``desktop`` package
_WORKER = "desktop.views.diff.worker"
_ENV_KEYS = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "SYSTEMROOT")


class Ended(NamedTuple):
    """A build process ended before its ``done`` or ``error`` frame (crashed or killed).

    Attributes:
        token: the build's token.
        status: its exit status (negative: the signal that ended it), or ``None``.
        reason: why, when it never ran (``""`` otherwise).
    """

    token: int
    status: int | None
    reason: str = ""


def _environment() -> dict[str, str]:
    """A small environment: no secrets of the GUI's, the ``desktop`` package importable."""
    env = {k: v for k, v in os.environ.items() if k in _ENV_KEYS or k.startswith("XDG_")}
    env["PYTHONPATH"] = str(_ROOT)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


_SLICE_HUNKS = 500
"""Hunks per request frame: pickling 500 plain tuples holds the GIL under a millisecond (one
pickle of 4,167 hunks as named tuples held it 32 ms, in the GUI's way)."""


def _request_frames(
    token: int,
    path: str,
    old: str | None,
    new: str | None,
    hunks: Sequence[EditorHunk] | None,
) -> Iterator[bytes]:
    """The request: a ``build`` frame (``(path, old, new, hunk count or None)``), then the
    hunks as plain tuples (the fields of :class:`~desktop.views.diff.wire.WireHunk`) in
    ``hunks`` frames of :data:`_SLICE_HUNKS`."""
    yield frame("build", token, (path, old, new, None if hunks is None else len(hunks)))
    for first in range(0, len(hunks) if hunks is not None else 0, _SLICE_HUNKS):
        assert hunks is not None
        yield frame(
            "hunks",
            token,
            [
                (
                    h.id,
                    h.old_start,
                    h.old_lines,
                    h.new_start,
                    h.new_lines,
                    tuple(h.lines),
                    h.old_text,
                    h.new_text,
                )
                for h in hunks[first : first + _SLICE_HUNKS]
            ],
        )


class BuildProcess:
    """One build of one file in a process of its own.

    Args:
        token: the build's token (in every frame it sends).
        path: the file (workspace-relative POSIX path).
        old: the current content, or ``None``.
        new: the proposed content, or ``None``.
        hunks: a proposal's hunks to convert, or ``None`` for git's line diff.
        inbox: where the reader thread puts ``(token, decode(item))`` for each
            :class:`~desktop.views.diff.wire.Frame`, then for an :class:`Ended` if the process
            ended without a ``done``/``error`` frame.
        nice: the process's nice value (Linux/macOS; a refusal leaves the GUI's).
        decode: turns a frame (or the end) into what the GUI takes, on the reader thread (a
            few C calls per frame: unpickling, splitting; it never holds the GIL for long);
            the item itself by default.

    A process that cannot be started ends the build with an :class:`Ended` (``reason`` set).
    """

    def __init__(
        self,
        token: int,
        path: str,
        old: str | None,
        new: str | None,
        hunks: Sequence[EditorHunk] | None,
        inbox: queue.SimpleQueue[tuple[int, Any]],
        *,
        nice: int = 0,
        decode: Callable[[Frame | Ended], Any] | None = None,
    ) -> None:
        self.token = token
        self._inbox = inbox
        self._decode: Callable[[Frame | Ended], Any] = decode or (lambda item: item)
        self._lock = threading.Lock()
        self._killed = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._started = threading.Event()
        self._reader: threading.Thread | None = None
        self._writer = threading.Thread(
            target=self._start_and_write,
            args=(path, old, new, hunks, nice),
            name=f"tandem-diff-w{token}",
            daemon=True,
        )
        self._writer.start()

    @property
    def pid(self) -> int | None:
        """The process's id once started (``None`` before, or if it could not start)."""
        return self._proc.pid if self._proc is not None else None

    def wait_started(self, timeout_s: float) -> int | None:
        """Wait (bounded, s) until the process is started or failed to; its id or ``None``."""
        self._started.wait(timeout_s)
        return self.pid

    def _start_and_write(
        self,
        path: str,
        old: str | None,
        new: str | None,
        hunks: Sequence[EditorHunk] | None,
        nice: int,
    ) -> None:
        """On the writer thread: start the process (``fork``/``exec`` and the wait for it,
        6-26 ms, kept off the GUI thread), start the reader, write the request."""
        try:
            with self._lock:
                if self._killed:
                    raise OSError("cancelled before it started")
                self._proc = subprocess.Popen(  # Tandem's own module: see the module docstring
                    # -S (no site-packages): a proposal's hunks need the standard library
                    # only; a diff of its own imports git's door, which needs the packages
                    [sys.executable, *(["-S"] if hunks is not None else []), "-m", _WORKER],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    cwd=_ROOT,
                    env=_environment(),
                    bufsize=0,
                )
        except OSError as exc:  # no process here (limits, a sandbox): the build fails, shown
            self._started.set()
            reason = f"could not start the diff build process: {exc}"
            self._inbox.put((self.token, self._decode(Ended(self.token, None, reason))))
            return
        _lower(self._proc.pid, nice)
        self._reader = threading.Thread(
            target=self._read, args=(self._proc,), name=f"tandem-diff-r{self.token}", daemon=True
        )
        self._reader.start()
        self._started.set()
        stdin = self._proc.stdin
        assert stdin is not None
        try:  # the pipe stays open until the end: its end stops the process
            for data in _request_frames(self.token, path, old, new, hunks):
                write_all(stdin.fileno(), data)
        except (OSError, ValueError):  # the process died or was killed: the reader reports it
            pass

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        stdout = proc.stdout
        assert stdout is not None
        last: Frame | None = None
        try:
            while (found := read_frame(stdout.fileno())) is not None:
                if found.kind in ("done", "error"):
                    last = found  # put once the process is gone: "not building" = reaped
                    break
                self._inbox.put((self.token, self._decode(found)))
        except (OSError, ValueError):
            pass
        self._writer.join()
        if proc.stdin is not None and not proc.stdin.closed:
            proc.stdin.close()
        try:
            status: int | None = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            status = proc.wait()
        stdout.close()
        end = last if last is not None else Ended(self.token, status)
        self._inbox.put((self.token, self._decode(end)))

    def kill(self) -> None:
        """Stop the build now (SIGKILL; before it started: it never starts); the reader
        thread reaps the process."""
        with self._lock:
            self._killed = True
            if self._proc is not None and self._proc.poll() is None:
                self._proc.kill()

    def alive(self) -> bool:
        """Whether the build may still send something (its process starting or running)."""
        reader = self._reader
        return self._writer.is_alive() or (reader is not None and reader.is_alive())

    def join(self, timeout_s: float) -> bool:
        """Wait for the end of the build (bounded, s); whether it ended."""
        deadline = time.monotonic() + timeout_s
        self._started.wait(timeout_s)
        reader = self._reader
        if reader is not None:
            reader.join(max(0.0, deadline - time.monotonic()))
        self._writer.join(max(0.0, deadline - time.monotonic()))
        return not self.alive()


def _lower(pid: int, nice: int) -> None:
    """Set process ``pid`` at ``nice`` (Linux/macOS); a refusal leaves it."""
    if not nice or not hasattr(os, "setpriority"):
        return
    try:
        os.setpriority(os.PRIO_PROCESS, pid, nice)
    except OSError:
        pass
