"""Command blocks and their bounded, styled output: the terminal view's data (no Qt)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, TypeAlias

from desktop.views.ansi import LINE_RESET, AnsiParser, Style

__all__ = [
    "BlockRecorder",
    "BlockStatus",
    "CommandBlock",
    "Line",
    "OutputRun",
    "ScrollbackLimits",
    "Source",
    "Stream",
    "TerminalModel",
]

Stream: TypeAlias = Literal["stdout", "stderr"]
Source: TypeAlias = Literal["agent", "codex", "user"]
BlockStatus: TypeAlias = Literal["running", "exit", "timeout", "killed"]

_TRUNCATED_STYLE = Style(dim=True, italic=True)


class OutputRun(NamedTuple):
    """Styled text from one stream, without newlines."""

    text: str
    style: Style
    stream: Stream


#: One output line: its runs in order (an empty tuple is an empty line).
Line: TypeAlias = tuple[OutputRun, ...]


@dataclass(frozen=True, slots=True)
class ScrollbackLimits:
    """How much output is kept (all counts in characters or lines, newlines counted as chars).

    Per block, the first ``head_lines``/``head_chars`` and the last ``tail_lines``/``tail_chars``
    are kept and the middle is dropped behind an "N lines omitted" marker; a line longer than
    ``max_line_chars`` is cut. Across blocks, the oldest finished blocks are evicted while more
    than ``max_total_chars`` are kept or there are more than ``max_blocks`` blocks.
    """

    head_lines: int = 200
    head_chars: int = 40_000
    tail_lines: int = 3_000
    tail_chars: int = 400_000
    max_line_chars: int = 4_000
    max_total_chars: int = 4_000_000
    max_blocks: int = 500

    def block_chars(self) -> int:
        """Upper bound of the characters one block keeps (head + tail + the partial line)."""
        return self.head_chars + self.tail_chars + self.max_line_chars + 200


@dataclass(slots=True)
class CommandBlock:
    """One command and its output.

    Lines carry serial numbers (0-based, in arrival order): ``head`` holds serials
    ``[0, len(head))``, ``tail`` holds ``[first_tail_serial, next_serial)``; the
    ``omitted_lines`` in between were dropped. ``partial`` is the unfinished last line.
    ``version`` grows on every change, for views that poll.
    """

    block_id: str
    command: str
    cwd: str
    sandboxed: bool | None = None
    sandbox_note: str | None = None
    source: Source = "agent"
    started_at: float = field(default_factory=time.time)
    status: BlockStatus = "running"
    exit_code: int | None = None
    duration_ms: int | None = None
    head: list[Line] = field(default_factory=list)
    tail: deque[Line] = field(default_factory=deque)
    tail_sizes: deque[int] = field(default_factory=deque)
    head_full: bool = False
    partial: list[OutputRun] = field(default_factory=list)
    partial_chars: int = 0
    truncated_chars: int = 0
    omitted_lines: int = 0
    head_chars: int = 0
    tail_chars: int = 0
    first_tail_serial: int = 0
    next_serial: int = 0
    received_chars: int = 0
    version: int = 0
    parsers: dict[str, AnsiParser] = field(default_factory=dict)

    @property
    def running(self) -> bool:
        """Whether the command has not finished yet."""
        return self.status == "running"

    def kept_chars(self) -> int:
        """Characters held for this block (lines incl. newlines, plus the partial line)."""
        return self.head_chars + self.tail_chars + self.partial_chars

    def partial_line(self) -> Line:
        """The unfinished last line, with a truncation note if it was cut."""
        return _with_truncation(tuple(self.partial), self.truncated_chars)

    def lines(self) -> Iterator[Line | int]:
        """Head lines, then the omitted count (an ``int``, only if > 0), then tail lines."""
        yield from self.head
        if self.omitted_lines:
            yield self.omitted_lines
        yield from self.tail

    def text(self) -> str:
        """The kept output as plain text, with "… N lines omitted …" where lines were dropped."""
        out: list[str] = []
        for line in self.lines():
            if isinstance(line, int):
                out.append(omitted_marker(line))
            else:
                out.append("".join(run.text for run in line))
        out.append("".join(run.text for run in self.partial_line()))
        return "\n".join(out)


def omitted_marker(count: int) -> str:
    """The line shown where ``count`` lines were dropped."""
    return f"… {count} line{'s' if count != 1 else ''} omitted …"


def _with_truncation(line: Line, truncated: int) -> Line:
    if not truncated:
        return line
    return (*line, OutputRun(f" … [{truncated} chars truncated]", _TRUNCATED_STYLE, "stdout"))


class TerminalModel:
    """All command blocks in start order, with bounded scrollback.

    Args:
        limits: the scrollback bounds (defaults: :class:`ScrollbackLimits`).
    """

    def __init__(self, limits: ScrollbackLimits | None = None) -> None:
        self.limits = limits or ScrollbackLimits()
        self._blocks: dict[str, CommandBlock] = {}
        self._total_chars = 0
        self._evicted: list[str] = []

    def __len__(self) -> int:
        return len(self._blocks)

    def __contains__(self, block_id: object) -> bool:
        return block_id in self._blocks

    def blocks(self) -> list[CommandBlock]:
        """The blocks kept, oldest first."""
        return list(self._blocks.values())

    def block(self, block_id: str) -> CommandBlock:
        """The block ``block_id``.

        Raises:
            KeyError: no such block (never started, or evicted).
        """
        return self._blocks[block_id]

    def kept_chars(self) -> int:
        """Characters held across all blocks."""
        return self._total_chars

    def drain_evicted(self) -> list[str]:
        """Ids of blocks evicted since the last call (for views to drop their widgets)."""
        evicted, self._evicted = self._evicted, []
        return evicted

    def start_block(
        self,
        block_id: str,
        command: str,
        cwd: str,
        sandboxed: bool | None = None,
        source: Source = "agent",
        sandbox_note: str | None = None,
        started_at: float | None = None,
    ) -> CommandBlock:
        """Add a running block; ``started_at`` is epoch seconds (now if omitted).

        Raises:
            ValueError: ``block_id`` is already in use.
        """
        if block_id in self._blocks:
            raise ValueError(f"block {block_id!r} already exists")
        block = CommandBlock(block_id, command, cwd, sandboxed, sandbox_note, source)
        if started_at is not None:
            block.started_at = started_at
        self._blocks[block_id] = block
        self._evict()
        return block

    def append(self, block_id: str, stream: Stream, text: str) -> CommandBlock:
        """Parse ``text`` (ANSI, any chunking) from ``stream`` into ``block_id``'s output.

        Each stream keeps its own ANSI state; both share the current line. Per-block bounds are
        applied at once, then older finished blocks are evicted if the total is too large.

        Raises:
            KeyError: no such block.
        """
        block = self._blocks[block_id]
        before = block.kept_chars()
        parser = block.parsers.get(stream)
        if parser is None:
            parser = block.parsers[stream] = AnsiParser()
        block.received_chars += len(text)
        max_line = self.limits.max_line_chars
        for seg in parser.feed(text):
            if seg is LINE_RESET:
                block.partial.clear()
                block.partial_chars = 0
                block.truncated_chars = 0
                continue
            text, style = seg  # type: ignore[misc]
            if "\n" not in text:
                partial = block.partial
                if (
                    partial
                    and partial[-1].style is style
                    and partial[-1].stream == stream
                    and block.partial_chars + len(text) <= max_line
                ):
                    partial[-1] = OutputRun(partial[-1].text + text, style, stream)
                    block.partial_chars += len(text)
                else:
                    self._extend_partial(block, text, style, stream)
                continue
            pieces = text.split("\n")
            self._extend_partial(block, pieces[0], style, stream)
            self._end_line(block)
            middle = pieces[1:-1]
            if middle and block.head_full:
                self._add_tail_lines(block, middle, style, stream)
            else:
                for piece in middle:
                    self._extend_partial(block, piece, style, stream)
                    self._end_line(block)
            self._extend_partial(block, pieces[-1], style, stream)
        self._trim_tail(block)
        block.version += 1
        self._total_chars += block.kept_chars() - before
        self._evict(keep=block_id)
        return block

    def finish_block(
        self, block_id: str, exit_code: int | None, outcome: str, duration_ms: int | None
    ) -> CommandBlock:
        """Mark ``block_id`` finished; ``outcome`` is ``exit``, ``timeout`` or ``killed``.

        Raises:
            KeyError: no such block.
            ValueError: an unknown outcome.
        """
        if outcome not in ("exit", "timeout", "killed"):
            raise ValueError(f"unknown outcome {outcome!r}")
        block = self._blocks[block_id]
        block.status = outcome  # type: ignore[assignment]
        block.exit_code = exit_code
        block.duration_ms = duration_ms
        block.version += 1
        self._evict()
        return block

    def clear(self) -> None:
        """Drop every finished block (their ids are reported by :meth:`drain_evicted`)."""
        for block_id in [b.block_id for b in self._blocks.values() if not b.running]:
            self._remove(block_id)
            self._evicted.append(block_id)

    def _extend_partial(self, block: CommandBlock, text: str, style: Style, stream: Stream) -> None:
        if not text:
            return
        room = self.limits.max_line_chars - block.partial_chars
        if room < len(text):
            block.truncated_chars += len(text) - max(room, 0)
            text = text[: max(room, 0)]
            if not text:
                return
        partial = block.partial
        if partial and partial[-1].style is style and partial[-1].stream == stream:
            partial[-1] = OutputRun(partial[-1].text + text, style, stream)
        else:
            partial.append(OutputRun(text, style, stream))
        block.partial_chars += len(text)

    def _end_line(self, block: CommandBlock) -> None:
        line = _with_truncation(tuple(block.partial), block.truncated_chars)
        size = block.partial_chars + 1 + (len(line[-1].text) if block.truncated_chars else 0)
        block.partial.clear()
        block.partial_chars = 0
        block.truncated_chars = 0
        limits = self.limits
        if not block.head_full:
            if len(block.head) < limits.head_lines and block.head_chars + size <= limits.head_chars:
                block.head.append(line)
                block.head_chars += size
                block.first_tail_serial = block.next_serial = len(block.head)
                return
            block.head_full = True
        block.tail.append(line)
        block.tail_sizes.append(size)
        block.tail_chars += size
        block.next_serial += 1

    def _add_tail_lines(
        self, block: CommandBlock, texts: list[str], style: Style, stream: Stream
    ) -> None:
        """Append complete one-run lines to a block whose head is full (the bulk path)."""
        limits = self.limits
        keep = limits.tail_lines
        if len(texts) >= keep:  # everything older goes, and so do the first new lines
            skipped = len(texts) - keep
            block.omitted_lines += len(block.tail) + skipped
            block.tail.clear()
            block.tail_sizes.clear()
            block.tail_chars = 0
            block.next_serial += skipped
            block.first_tail_serial = block.next_serial
            texts = texts[skipped:]
        max_chars = limits.max_line_chars
        sizes = [len(t) + 1 for t in texts]
        if max(sizes) > max_chars + 1:
            for piece in texts:
                self._extend_partial(block, piece, style, stream)
                self._end_line(block)
            return
        block.tail.extend([(OutputRun(t, style, stream),) if t else () for t in texts])
        block.tail_sizes.extend(sizes)
        block.tail_chars += sum(sizes)
        block.next_serial += len(texts)

    def _trim_tail(self, block: CommandBlock) -> None:
        limits = self.limits
        tail = block.tail
        sizes = block.tail_sizes
        while tail and (len(tail) > limits.tail_lines or block.tail_chars > limits.tail_chars):
            tail.popleft()
            block.tail_chars -= sizes.popleft()
            block.omitted_lines += 1
            block.first_tail_serial += 1

    def _evict(self, keep: str | None = None) -> None:
        limits = self.limits
        for block in list(self._blocks.values()):
            if (
                self._total_chars <= limits.max_total_chars
                and len(self._blocks) <= limits.max_blocks
            ):
                return
            if not block.running and block.block_id != keep:
                self._remove(block.block_id)
                self._evicted.append(block.block_id)

    def _remove(self, block_id: str) -> None:
        block = self._blocks.pop(block_id)
        self._total_chars -= block.kept_chars()


class BlockRecorder:
    """What the session journal keeps of each command block (issue 16: a reopened session
    shows its terminal blocks): the header, the exit, the duration and a bounded copy of
    the (already redacted) output, ``head_chars`` from the start and ``tail_chars`` from
    the end, with the count of characters left out between them.

    :meth:`finish` returns the ``shell_block`` payload that :meth:`TerminalView.restore_block`
    (``desktop.views.terminal_view``) shows again: ``{"block_id", "command", "cwd",
    "sandboxed", "source", "sandbox_note", "started_at" (epoch s), "exit_code", "outcome",
    "duration_ms", "output": [[stream, text], ...], "omitted_chars", "omitted_at"}`` (the
    characters left out sit before ``output[omitted_at]``).

    Args:
        head_chars: characters kept from the start of the output.
        tail_chars: characters kept from the end.
    """

    def __init__(self, *, head_chars: int = 4_000, tail_chars: int = 16_000) -> None:
        self.head_chars = head_chars
        self.tail_chars = tail_chars
        self._blocks: dict[str, dict[str, object]] = {}

    def start(
        self,
        block_id: str,
        command: str,
        cwd: str,
        sandboxed: bool | None,
        source: str = "agent",
        sandbox_note: str | None = None,
    ) -> None:
        """A command started (same arguments as ``TerminalView.on_command_started``)."""
        self._blocks[block_id] = {
            "block_id": block_id,
            "command": command,
            "cwd": cwd,
            "sandboxed": sandboxed,
            "source": source,
            "sandbox_note": sandbox_note,
            "started_at": time.time(),
            "head": [],
            "head_len": 0,
            "tail": deque(),
            "tail_len": 0,
            "omitted_chars": 0,
        }

    def feed(self, block_id: str, stream: str, text: str) -> None:
        """Output ``text`` arrived on ``stream``; unknown blocks are ignored."""
        block = self._blocks.get(block_id)
        if block is None or not text:
            return
        head: list[list[str]] = block["head"]  # type: ignore[assignment]
        room = self.head_chars - int(block["head_len"])  # type: ignore[call-overload]
        if room > 0:
            head.append([stream, text[:room]])
            block["head_len"] = int(block["head_len"]) + min(room, len(text))  # type: ignore[call-overload]
            text = text[room:]
        if not text:
            return
        tail: deque[list[str]] = block["tail"]  # type: ignore[assignment]
        tail.append([stream, text])
        size = int(block["tail_len"]) + len(text)  # type: ignore[call-overload]
        while size > self.tail_chars and tail:
            extra = size - self.tail_chars
            first = tail[0]
            if len(first[1]) <= extra:
                tail.popleft()
                size -= len(first[1])
                block["omitted_chars"] = int(block["omitted_chars"]) + len(first[1])  # type: ignore[call-overload]
            else:
                first[1] = first[1][extra:]
                size -= extra
                block["omitted_chars"] = int(block["omitted_chars"]) + extra  # type: ignore[call-overload]
        block["tail_len"] = size

    def finish(
        self, block_id: str, exit_code: int | None, outcome: str, duration_ms: int | None
    ) -> dict[str, object] | None:
        """The command ended: its journal payload (``None`` for an unknown block)."""
        block = self._blocks.pop(block_id, None)
        if block is None:
            return None
        head: list[list[str]] = block.pop("head")  # type: ignore[assignment]
        output = [*head, *block.pop("tail")]  # type: ignore[misc]
        for key in ("head_len", "tail_len"):
            block.pop(key)
        block.update(
            exit_code=exit_code,
            outcome=outcome,
            duration_ms=duration_ms,
            output=output,
            omitted_at=len(head),
        )
        return block
