"""Context-window lines for ``tandem run`` (issue 14): compactions always, the meter on demand."""

from __future__ import annotations

from typing import Any, TextIO

from core.context_window import CompactionEvent, ContextReport, ContextUsageEvent

__all__ = ["ContextPrinter", "compaction_line"]


def compaction_line(event: CompactionEvent) -> str:
    """``[context] compacted (local, threshold): 212 items summarised, 84,912 -> 9,113 tokens``."""
    record = event.record
    if event.undone:
        return f"[context] compaction undone ({record.strategy}): back to {record.tokens_before:,} tokens"
    return (
        f"[context] compacted ({record.strategy}, {record.reason}): "
        f"{record.items_summarised} items summarised, "
        f"{record.tokens_before:,} -> {record.tokens_after:,} tokens"
    )


class ContextPrinter:
    """A ``ContextPolicy.listener`` that prints to ``out``.

    Args:
        out: where to print.
        verbose: also print "context: N% left" after every response (``tandem run --verbose``).
    """

    def __init__(self, out: TextIO, *, verbose: bool = False) -> None:
        self.out = out
        self.verbose = verbose
        self.last: ContextReport | None = None
        self.compactions = 0

    def __call__(self, event: Any) -> None:
        if isinstance(event, CompactionEvent):
            self.compactions += 0 if event.undone else 1
            print(compaction_line(event), file=self.out)
        elif isinstance(event, ContextUsageEvent):
            self.last = event.report
            if self.verbose and event.report.measured:
                print(f"[{event.report.line()}]", file=self.out)

    def print_final(self) -> None:
        """The closing line: context left and compactions made (in verbose mode, or once the
        session compacted or used half its window; a short run's output stays as it was)."""
        last = self.last
        if last is not None and (self.verbose or self.compactions or last.percent_left < 50):
            print(f"{last.line()}, {self.compactions} compaction(s)", file=self.out)
