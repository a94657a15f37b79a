"""ContextMeter: "context: 62% left" in the top bar, with the breakdown as its tooltip (issue 14)."""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QLabel, QWidget

from core.context_window import ContextReport

__all__ = ["ContextMeter", "breakdown_text"]

_ORDER = ("instructions", "tools", "summary", "messages", "tool outputs", "other")


def breakdown_text(report: ContextReport) -> str:
    """The tooltip: window, use, where it goes, threshold and how it was measured."""
    lines = [
        f"Context window: {report.window:,} tokens",
        f"Latest request: {report.used:,} tokens ({'measured' if report.measured else 'estimated'}"
        f", {report.method})",
    ]
    if report.cached:
        lines.append(f"  cached: {report.cached:,}")
    for name in _ORDER:
        if report.breakdown.get(name):
            lines.append(f"  {name}: {report.breakdown[name]:,}")
    lines.append(f"Compaction starts at {report.threshold:,} tokens")
    lines.append(f"Compactions in force: {report.compactions}")
    return "\n".join(lines)


class ContextMeter(QLabel):
    """Shows how much of the context window is left; hidden until the first report."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextMeter")
        self.report: ContextReport | None = None
        self.hide()

    @Slot(object)
    def set_report(self, report: ContextReport) -> None:
        """Show ``report`` (a :class:`~core.context_window.ContextReport`)."""
        self.report = report
        self.setText(f"context: {report.percent_left}% left")
        self.setProperty("level", "low" if report.percent_left < 20 else "ok")
        self.setToolTip(breakdown_text(report))
        self.style().unpolish(self)
        self.style().polish(self)
        self.show()
