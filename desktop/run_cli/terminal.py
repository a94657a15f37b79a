"""The terminal side of one ``tandem run`` (issue 16, Build item 2): command output printed
and sent as it comes, prompts on stderr, blocking reads off the event loop."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from core import RunItemStreamEvent
from core.redaction import StreamRedactor
from harnesses.shell import ShellCommandFinished, ShellOutputChunk

from ..transcript_text import print_item
from ..views.ansi import strip_ansi
from .events import EventWriter, item_of
from .journaling import RunJournal

if TYPE_CHECKING:
    from ..headless import HeadlessOptions

__all__ = ["FOLD_HEAD_LINES", "FOLD_TAIL_LINES", "CliRun", "in_thread", "prompt_tty"]

Ask = Callable[[str], str]

FOLD_HEAD_LINES = 20
"""Lines of one command stream printed live before the rest is folded (``--full-output``
prints everything), as ``codex exec`` folds long output."""
FOLD_TAIL_LINES = 10
"""Last lines of a folded stream printed when the command ends, after ``… N lines …``."""


def prompt_tty(text: str) -> str:
    """``input`` with the prompt on stderr, so ``--json``'s stdout holds only events."""
    sys.stderr.write(text)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


class CliRun:
    """What one ``tandem run`` shares between its stream, approvals, reviews and commands."""

    def __init__(
        self,
        options: HeadlessOptions,
        out: TextIO,
        events: EventWriter,
        journal: RunJournal,
        prompt: Ask,
    ) -> None:
        self.options = options
        self.out = out
        self.events = events
        self.journal = journal
        self.prompt = prompt
        self.rejected = 0  # approvals and reviews rejected (exit code 3)
        self.streamed: set[str] = set()  # shell calls whose output was printed live
        self.patch_call = ""  # the last apply_patch call (its proposal's card)
        self.started: dict[str, str] = {}  # call id -> item type (events)
        self.paused: Any = None  # the run state while approvals are asked
        self.rejected_calls: set[str] = set()  # call ids whose approval was rejected
        self.usage: Any = None  # the run's cumulative usage after the latest model pass
        self.full_output = bool(
            getattr(options, "full_output", False) or getattr(options, "verbose", False)
        )
        self._redactors: dict[tuple[str, int, str], StreamRedactor] = {}
        self._at_line_start: dict[tuple[str, int, str], bool] = {}
        self._lines: dict[tuple[str, int, str], int] = {}  # lines printed live per stream
        self._held: dict[tuple[str, int, str], deque[str]] = {}  # a folded stream's tail
        self._partial: dict[tuple[str, int, str], str] = {}
        self._folded: dict[tuple[str, int, str], int] = {}  # lines held back in all

    def on_shell_event(self, event: Any) -> None:
        """The executor's listener: output chunks printed and sent as they come (redacted
        with a carry-over per stream, as the window's terminal)."""
        if isinstance(event, ShellOutputChunk):
            key = (event.call_id, event.command_index, event.stream)
            redactor = self._redactors.setdefault(key, StreamRedactor())
            self._chunk(key, redactor.feed(event.text))
        elif isinstance(event, ShellCommandFinished):
            for stream in ("stdout", "stderr"):
                key = (event.call_id, event.command_index, stream)
                if key in self._redactors:
                    self._chunk(key, self._redactors.pop(key).flush())
                self._unfold(key)
                self._lines.pop(key, None)
                if not self._at_line_start.pop(key, True):
                    self.out.write("\n")

    def _chunk(self, key: tuple[str, int, str], text: str) -> None:
        if not text:
            return
        call_id, index, stream = key
        self.streamed.add(call_id)
        clean = strip_ansi(text)
        for piece in clean.splitlines(keepends=True):
            if not self.full_output and self._lines.get(key, 0) >= FOLD_HEAD_LINES:
                self._hold(key, piece)
                continue
            if self._at_line_start.get(key, True):
                self.out.write("  | ")
            self.out.write(piece)
            self._at_line_start[key] = piece.endswith("\n")
            if piece.endswith("\n"):
                self._lines[key] = self._lines.get(key, 0) + 1
        self.out.flush()
        self._emit_delta(call_id, index, stream, text)

    def _hold(self, key: tuple[str, int, str], piece: str) -> None:
        """Keep a line past the head of a long stream: only the last few are printed."""
        line = self._partial.pop(key, "") + piece
        if not line.endswith("\n"):
            self._partial[key] = line
            return
        self._held.setdefault(key, deque(maxlen=FOLD_TAIL_LINES)).append(line)
        self._folded[key] = self._folded.get(key, 0) + 1

    def _unfold(self, key: tuple[str, int, str]) -> None:
        """At a command's end: ``… N lines …`` for what was held back, then its tail."""
        partial = self._partial.pop(key, "")
        if partial:
            self._held.setdefault(key, deque(maxlen=FOLD_TAIL_LINES)).append(partial + "\n")
            self._folded[key] = self._folded.get(key, 0) + 1
        tail = self._held.pop(key, deque())
        hidden = self._folded.pop(key, 0) - len(tail)
        if hidden > 0:
            if not self._at_line_start.get(key, True):
                self.out.write("\n")
            self.out.write(f"  | … {hidden} more lines (--full-output shows them) …\n")
            self._at_line_start[key] = True
        for line in tail:
            if not self._at_line_start.get(key, True):
                self.out.write("\n")
            self.out.write("  | " + line)
            self._at_line_start[key] = True
        self.out.flush()

    def _emit_delta(self, call_id: str, index: int, stream: str, text: str) -> None:
        self.events.emit(
            "item.updated",
            item={
                "id": call_id,
                "type": "command_execution",
                "command_index": index,
                "stream": stream,
                "delta": text,
            },
        )

    def on_item(
        self, event: RunItemStreamEvent, mcp: Any, mcp_printer: Any, shown: set[str]
    ) -> None:
        """One run item: journaled, printed, sent as an event."""
        raw = event.item.raw_item
        self.journal.append(event.name, {"item": raw})
        if raw.get("type") == "apply_patch_call" and event.name == "tool_called":
            self.patch_call = str(raw.get("call_id", ""))
        found = item_of(event.name, raw, getattr(event.item, "output", None), mcp, self.started)
        if found is not None:
            self.events.emit(found[0], item=found[1])
        if mcp_printer.handle(event):
            return
        if raw.get("type") == "shell_call_output" and raw.get("call_id") in self.rejected_calls:
            print("  rejected: the command did not run", file=self.out)  # not "(exit 1)"
            return
        if raw.get("type") == "shell_call_output" and raw.get("call_id") in self.streamed:
            for entry in raw.get("output", []) or []:  # the output was printed live
                outcome = entry.get("outcome", {})
                if outcome.get("type") == "timeout":
                    print("  | (timed out)", file=self.out)
                elif outcome.get("exit_code"):
                    print(f"  | (exit {outcome.get('exit_code')})", file=self.out)
            return
        print_item(event, self.out, shown_nested=shown)


_T = TypeVar("_T")


async def in_thread(fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)`` (a blocking terminal read) in a daemon thread: unlike
    ``asyncio.to_thread``, Ctrl+C at a prompt does not wait for the read to end at exit."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()

    def work() -> None:
        try:
            value = fn(*args)
        except BaseException as exc:  # handed to the awaiting task (EOFError, Ctrl+D)
            loop.call_soon_threadsafe(_settle, future, None, exc)
        else:
            loop.call_soon_threadsafe(_settle, future, value, None)

    threading.Thread(target=work, name="tandem-prompt", daemon=True).start()
    return await future


def _settle(future: asyncio.Future[Any], value: Any, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(value)
