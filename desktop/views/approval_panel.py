"""ApprovalPanel: a non-modal queue of approval requests, shown one at a time."""

from __future__ import annotations

import html
import logging
import re
from collections import deque
from dataclasses import dataclass
from typing import Literal, get_args

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import (
    QFont,
    QKeySequence,
    QResizeEvent,
    QShortcut,
    QTextLayout,
    QTextOption,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

__all__ = [
    "ALLOW_ONCE_KEY",
    "ALWAYS_ALLOW_KEY",
    "ApprovalKind",
    "ApprovalRequest",
    "ApprovalPanel",
    "Decision",
    "REJECT_KEY",
]

_log = logging.getLogger("desktop")

ApprovalKind = Literal["command", "patch", "computer", "mcp"]
"""What a request is about: a shell command, a patch, a computer action, an MCP tool call."""

Decision = Literal["allow_once", "always_allow", "reject"]
"""The answers :attr:`ApprovalPanel.decided` carries."""

ALLOW_ONCE_KEY = "Alt+A"
"""Window-wide shortcut for *Allow once* while a request is shown."""
ALWAYS_ALLOW_KEY = "Alt+Shift+A"
"""Window-wide shortcut for *Always allow* (when the request offers a rule)."""
REJECT_KEY = "Alt+R"
"""Window-wide shortcut for *Reject* (Enter in the message field rejects too)."""

_KIND_LABELS: dict[str, tuple[str, str, str]] = {
    # kind: (badge text, background, foreground)
    "command": ("COMMAND", "#1c2b3d", "#79c0ff"),
    "patch": ("PATCH", "#2d2350", "#d2a8ff"),
    "computer": ("BROWSER", "#12333a", "#56d4dd"),
    "mcp": ("MCP TOOL", "#3d2e12", "#e3b341"),
}
_STYLE = """
ApprovalPanel { background: #1b1e24; border: 1px solid #6b5617; border-radius: 6px; }
ApprovalPanel[destructive="true"] { border: 1px solid #a33b35; }
QLabel { color: #c9d1d9; background: transparent; border: none; }
QLabel#approvalTitle { font-weight: bold; }
QLabel#approvalReason { color: #e3b341; }
ApprovalPanel[destructive="true"] QLabel#approvalReason { color: #ff7b72; }
QLabel#approvalRule { color: #8b949e; }
QLabel#approvalCount { background: #262a32; color: #c9d1d9; border-radius: 8px;
                       padding: 1px 8px; }
QPlainTextEdit#approvalBody { background: #0f1115; color: #c9d1d9; border: 1px solid #2d323b;
                              border-radius: 4px; }
QLineEdit { background: #0f1115; color: #c9d1d9; border: 1px solid #353b45;
            border-radius: 4px; padding: 3px 6px; }
QPushButton { color: #c9d1d9; background: #262a32; border: 1px solid #353b45;
              border-radius: 4px; padding: 4px 12px; }
QPushButton:hover { background: #30353f; }
QPushButton:disabled { color: #6e7681; background: #1f2228; border-color: #2d323b; }
QPushButton#allowOnce { color: #f0f6fc; background: #238636; border-color: #2ea043; }
QPushButton#allowOnce:hover { background: #2ea043; }
ApprovalPanel[destructive="true"] QPushButton#allowOnce { background: #6e2c2c;
                                                          border-color: #a33b35; }
QPushButton#reject { color: #ffb4ad; background: #3b1d1d; border-color: #6e2c2c; }
QPushButton#reject:hover { background: #4a2323; }
"""
_BODY_MAX_LINES = 10
"""Visual (wrapped) lines the command box grows to; beyond that it scrolls."""
_CODE = re.compile(r"`([^`]+)`")
_BREAKS = re.compile(r"([/=,:])")
_SLACK = 2  # px of air under the last line: a rounding never cuts its descenders
_ZWSP = "\u200b"  # a line-break opportunity in long paths and option values


def _wrapped_lines(text: str, option: QTextOption, font: QFont, width: float, limit: int) -> int:
    """How many lines ``text`` takes wrapped as ``option`` says at ``width`` px; counting
    stops past ``limit`` (a 5,000-line heredoc costs no more than ``limit`` lines)."""
    total = 0
    for line in text.split("\n"):
        layout = QTextLayout(line, font)
        layout.setTextOption(option)
        layout.beginLayout()
        count = 0
        while total + count <= limit:
            text_line = layout.createLine()
            if not text_line.isValid():
                break
            text_line.setLineWidth(width)
            count += 1
        layout.endLayout()
        total += max(count, 1)
        if total > limit:
            break
    return total


def _code_html(text: str) -> str:
    """Escape ``text`` for a rich-text label and render ```code``` spans in monospace."""
    parts: list[str] = []
    last = 0
    for match in _CODE.finditer(text):
        parts.append(html.escape(text[last : match.start()]))
        # issue 16: a long path or option value may break after / = , :
        code = _BREAKS.sub(r"\1" + _ZWSP, match.group(1))
        parts.append(
            "<code style='font-family: monospace; background: #262a32;'>"
            f"&nbsp;{html.escape(code)}&nbsp;</code>"
        )
        last = match.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts)


class _BodyView(QPlainTextEdit):
    """The read-only command/diff box; tells its panel when its width changes."""

    resized = Signal()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.resized.emit()


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """One thing the agent wants to do that needs the user's answer.

    Attributes:
        id: the request id the answer is sent back with (e.g. the tool call id).
        kind: ``"command"``, ``"patch"``, ``"computer"`` or ``"mcp"``.
        title: one line, e.g. ``"Run a shell command"`` or ``"Edit 2 files"``.
        body: the command text, or a diff summary (shown in monospace).
        reason: why it asks, e.g. ``"asked because `rm -rf src` is destructive (rule:
            destructive-guard)"``; ```code``` spans render in monospace.
        rule_preview: what *Always allow* would match (``"any `git diff …` command"``), or
            ``None`` to disable *Always allow*.
        destructive: highlight the request as dangerous (red frame, reason in red).
        recoverability: for a destructive command, what the checkpoint taken before it will
            make recoverable (``Recoverability.summary()``: "everything it removes is
            recoverable", or "2 ignored files, 1.3 GB, are over the cap and will not be
            recoverable"); ``None`` when not known.

    Raises:
        ValueError: an empty id or an unknown kind.
    """

    id: str
    kind: ApprovalKind
    title: str
    body: str
    reason: str
    rule_preview: str | None = None
    destructive: bool = False
    recoverability: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError("ApprovalRequest.id must be a non-empty string")
        if self.kind not in get_args(ApprovalKind):
            raise ValueError(f"ApprovalRequest.kind must be one of {get_args(ApprovalKind)}")


class ApprovalPanel(QFrame):
    """The approval queue: one request at a time with a "1 of 3" badge, never modal.

    Requests arrive through :meth:`enqueue` (first in, first shown). The user answers with
    *Allow once* (``Alt+A``), *Always allow* (``Alt+Shift+A``; beside it the text of the rule
    it would add) or *Reject* (``Alt+R``, or Enter in the message field) with an optional
    message to the model; the answer is emitted as :attr:`decided` and the next request
    shows. The shortcuts work anywhere in the window while a request is shown. With
    ``auto_hide`` the panel hides itself while the queue is empty.

    Signals:
        decided(str request_id, str decision, str message): decision is ``"allow_once"``,
            ``"always_allow"`` or ``"reject"``; message is the stripped text of the message
            field for a rejection, else ``""``.
        pendingCountChanged(int): the queue length after every change.

    Args:
        parent: the parent widget.
        auto_hide: hide while no request is pending (default ``True``).
    """

    decided = Signal(str, str, str)
    pendingCountChanged = Signal(int)

    def __init__(self, parent: QWidget | None = None, *, auto_hide: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("approvalPanel")
        self.setStyleSheet(_STYLE)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self._queue: deque[ApprovalRequest] = deque()
        self._auto_hide = auto_hide

        self.kind_badge = QLabel()
        self.kind_badge.setObjectName("approvalKind")
        self.title_label = QLabel()
        self.title_label.setObjectName("approvalTitle")
        self.title_label.setTextFormat(Qt.TextFormat.PlainText)
        self.count_badge = QLabel()
        self.count_badge.setObjectName("approvalCount")
        self.count_badge.setToolTip("Pending approval requests")
        header = QHBoxLayout()
        header.addWidget(self.kind_badge)
        header.addWidget(self.title_label, 1)
        header.addWidget(self.count_badge)

        self.reason_label = QLabel()
        self.reason_label.setObjectName("approvalReason")
        self.reason_label.setTextFormat(Qt.TextFormat.RichText)
        self.reason_label.setWordWrap(True)
        self.reason_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.recoverability_label = QLabel()
        self.recoverability_label.setObjectName("approvalRecoverability")
        self.recoverability_label.setTextFormat(Qt.TextFormat.PlainText)
        self.recoverability_label.setWordWrap(True)
        self.recoverability_label.hide()

        self.body_view = _BodyView()
        self.body_view.setObjectName("approvalBody")
        self.body_view.setReadOnly(True)
        # issue 16: the whole command is readable: wrapped (anywhere inside a long token),
        # up to _BODY_MAX_LINES lines tall, a vertical scrollbar beyond, never a horizontal one
        self.body_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.body_view.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.body_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.body_view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.body_view.resized.connect(self._refit)
        font = self.body_view.font()
        font.setFamily("monospace")
        font.setStyleHint(font.StyleHint.Monospace)
        self.body_view.setFont(font)

        self.message_edit = QLineEdit()
        self.message_edit.setObjectName("approvalMessage")
        self.message_edit.setPlaceholderText(
            "Optional message to the model, sent with Reject (Enter rejects)"
        )
        self.message_edit.returnPressed.connect(self.reject)

        self.allow_once_button = QPushButton("Allow once")
        self.allow_once_button.setObjectName("allowOnce")
        self.allow_once_button.setToolTip(f"Run it this time only ({ALLOW_ONCE_KEY})")
        self.always_allow_button = QPushButton("Always allow")
        self.always_allow_button.setObjectName("alwaysAllow")
        self.rule_label = QLabel()
        self.rule_label.setObjectName("approvalRule")
        self.rule_label.setTextFormat(Qt.TextFormat.RichText)
        self.rule_label.setWordWrap(True)
        self.reject_button = QPushButton("Reject")
        self.reject_button.setObjectName("reject")
        self.reject_button.setToolTip(
            f"Refuse, sending the message (if any) to the model ({REJECT_KEY})"
        )
        for button in (self.allow_once_button, self.always_allow_button, self.reject_button):
            button.setAutoDefault(False)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.allow_once_button.clicked.connect(self.allow_once)
        self.always_allow_button.clicked.connect(self.always_allow)
        self.reject_button.clicked.connect(self.reject)

        buttons = QHBoxLayout()
        buttons.addWidget(self.allow_once_button)
        buttons.addWidget(self.always_allow_button)
        buttons.addWidget(self.rule_label, 1)
        buttons.addWidget(self.reject_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(6)
        layout.addLayout(header)
        layout.addWidget(self.reason_label)
        layout.addWidget(self.recoverability_label)
        layout.addWidget(self.body_view)
        layout.addWidget(self.message_edit)
        layout.addLayout(buttons)

        self._shortcuts: list[QShortcut] = []
        for key, slot in (
            (ALLOW_ONCE_KEY, self.allow_once),
            (ALWAYS_ALLOW_KEY, self.always_allow),
            (REJECT_KEY, self.reject),
        ):
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(slot)
            self._shortcuts.append(shortcut)
        self._show_current()

    # -- queries ---------------------------------------------------------------------------

    def pending_count(self) -> int:
        """How many requests wait for an answer (the shown one included)."""
        return len(self._queue)

    def current(self) -> ApprovalRequest | None:
        """The request shown now, or ``None``."""
        return self._queue[0] if self._queue else None

    def pending(self) -> tuple[ApprovalRequest, ...]:
        """All pending requests, the shown one first."""
        return tuple(self._queue)

    # -- slots -----------------------------------------------------------------------------

    @Slot(object)
    def enqueue(self, request: ApprovalRequest) -> None:
        """Queue ``request`` (shown at once if the queue was empty).

        A request whose id is already pending is ignored (a replayed event).
        """
        if any(r.id == request.id for r in self._queue):
            _log.debug("approval request %s already pending", request.id)
            return
        self._queue.append(request)
        if len(self._queue) == 1:
            self._show_current()
        else:
            self._update_count()
        self.pendingCountChanged.emit(len(self._queue))

    @Slot(str)
    def withdraw(self, request_id: str) -> None:
        """Drop a pending request without an answer (the run was cancelled, or the
        request was answered elsewhere). Unknown ids are ignored."""
        for index, request in enumerate(self._queue):
            if request.id == request_id:
                del self._queue[index]
                if index == 0:
                    self.message_edit.clear()
                    self._show_current()
                else:
                    self._update_count()
                self.pendingCountChanged.emit(len(self._queue))
                return

    @Slot()
    def clear(self) -> None:
        """Drop every pending request without answers (e.g. when switching sessions)."""
        if not self._queue:
            return
        self._queue.clear()
        self.message_edit.clear()
        self._show_current()
        self.pendingCountChanged.emit(0)

    @Slot()
    def allow_once(self) -> None:
        """Answer the shown request with ``"allow_once"`` (no-op when none is shown)."""
        self._decide("allow_once")

    @Slot()
    def always_allow(self) -> None:
        """Answer with ``"always_allow"``; a no-op when the request offers no rule."""
        current = self.current()
        if current is not None and current.rule_preview is not None:
            self._decide("always_allow")

    @Slot()
    def reject(self) -> None:
        """Answer with ``"reject"`` and the message field's text."""
        self._decide("reject")

    # -- internals -------------------------------------------------------------------------

    def _decide(self, decision: Decision) -> None:
        if not self._queue:
            return
        request = self._queue.popleft()
        message = self.message_edit.text().strip() if decision == "reject" else ""
        self.message_edit.clear()
        self._show_current()
        self.decided.emit(request.id, decision, message)
        self.pendingCountChanged.emit(len(self._queue))

    def _update_count(self) -> None:
        count = len(self._queue)
        self.count_badge.setText(f"1 of {count}" if count else "")
        self.count_badge.setVisible(count > 0)

    def _show_current(self) -> None:
        request = self.current()
        self._update_count()
        enabled = request is not None
        for button in (self.allow_once_button, self.reject_button):
            button.setEnabled(enabled)
        self.message_edit.setEnabled(enabled)
        for shortcut in self._shortcuts:
            shortcut.setEnabled(enabled)
        if request is None:
            self.kind_badge.clear()
            self.title_label.setText("No pending approvals")
            self.reason_label.clear()
            self.reason_label.setToolTip("")
            self.recoverability_label.clear()
            self.recoverability_label.hide()
            self.body_view.clear()
            self.rule_label.clear()
            self.always_allow_button.setEnabled(False)
            self._set_destructive(False)
            if self._auto_hide:
                self.hide()
            return
        text, bg, fg = _KIND_LABELS[request.kind]
        self.kind_badge.setText(text)
        self.kind_badge.setStyleSheet(
            f"QLabel {{ background: {bg}; color: {fg}; border-radius: 8px; padding: 1px 8px;"
            " font-weight: bold; }"
        )
        self.title_label.setText(request.title)
        self.title_label.setToolTip(request.title)
        warning = "\u26a0 " if request.destructive else ""
        self.reason_label.setText(warning + _code_html(request.reason))
        self.reason_label.setToolTip(request.reason)
        self.reason_label.setVisible(bool(request.reason))
        self._show_recoverability(request.recoverability)
        self.body_view.setPlainText(request.body)
        self._fit_body(request.body)
        if request.rule_preview is not None:
            self.always_allow_button.setEnabled(True)
            if request.kind == "mcp":  # a decision for this run, not a saved rule
                self.always_allow_button.setToolTip(
                    f"Allow now and {request.rule_preview} (not saved; {ALWAYS_ALLOW_KEY})"
                )
                self.rule_label.setText("also allows " + _code_html(request.rule_preview))
            else:
                self.always_allow_button.setToolTip(
                    f"Allow now and add a rule for {request.rule_preview} "
                    f"(revocable in Settings; {ALWAYS_ALLOW_KEY})"
                )
                several = "; " in request.rule_preview  # one rule per command of the line
                label = "adds rules: " if several else "adds rule: "
                self.rule_label.setText(label + _code_html(request.rule_preview))
        else:
            self.always_allow_button.setEnabled(False)
            self.always_allow_button.setToolTip("No rule can be offered for this request")
            self.rule_label.setText("no rule can allow this request" if request.destructive else "")
        self._set_destructive(request.destructive)
        if self._auto_hide:
            self.show()

    def _fit_body(self, body: str) -> None:
        """Size the body box to ``body`` wrapped at the box's width: every line shown up to
        ``_BODY_MAX_LINES``, then a vertical scrollbar. The height counts the frame, the
        document margin and the viewport margins, not just the text lines."""
        view = self.body_view
        metrics = view.fontMetrics()
        doc_margin = view.document().documentMargin()
        frame = 2 * view.frameWidth()
        margins = view.contentsMargins()
        inner = view.width() - frame - margins.left() - margins.right()
        option = view.document().defaultTextOption()
        option.setWrapMode(view.wordWrapMode())
        width = max(1.0, inner - 2 * doc_margin - view.cursorWidth())
        # past the cap the box scrolls: a narrower text beside the scrollbar changes nothing
        lines = _wrapped_lines(body, option, view.font(), width, _BODY_MAX_LINES)
        shown = min(max(lines, 1), _BODY_MAX_LINES)
        height = (
            shown * metrics.lineSpacing()
            + int(2 * doc_margin + 0.5)
            + frame
            + margins.top()
            + margins.bottom()
            + _SLACK
        )
        view.setFixedHeight(height)

    @Slot()
    def _refit(self) -> None:
        """The box's width changed: the command wraps differently."""
        if self.current() is not None:
            self._fit_body(self.body_view.toPlainText())

    def _show_recoverability(self, line: str | None) -> None:
        """The checkpoint's promise for a destructive command, green when it covers
        everything, amber when something will not be recoverable."""
        if not line:
            self.recoverability_label.clear()
            self.recoverability_label.hide()
            return
        complete = line.startswith("everything")
        colour = "#3fb950" if complete else "#d29922"
        mark = "\u2713" if complete else "\u26a0"
        self.recoverability_label.setText(f"{mark} Checkpoint first: {line}")
        self.recoverability_label.setStyleSheet(f"QLabel {{ color: {colour}; }}")
        self.recoverability_label.show()

    def _set_destructive(self, value: bool) -> None:
        if self.property("destructive") == value:
            return
        self.setProperty("destructive", value)
        # Re-polish so the [destructive="true"] selectors apply to the panel and children.
        self.setStyleSheet(_STYLE)
