"""TopBar: repository, branch, model, approval mode, sandbox state and token usage."""

from __future__ import annotations

from pathlib import PurePath

from PySide6.QtCore import QPoint, Qt, Signal, Slot
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from resources import read_text

from .context_meter import ContextMeter
from .mcp_status import McpStatusButton

__all__ = ["MODES", "TopBar", "format_tokens"]

#: Approval modes: (id, badge text, menu description), in order of increasing freedom.
MODES = (
    ("read-only", "Read-only", "No writes; commands run in a read-only sandbox"),
    ("ask", "Ask", "Ask before each command and patch unless a rule allows it"),
    ("auto", "Auto", "Sandboxed commands and checkpointed patches run without asking"),
    ("full", "Full access", "No sandbox and no questions (destructive commands still ask)"),
)
_PILL_HEIGHT = 22  # px; the style sheet rounds pills with a radius of half this
_MODE_ALIASES = {"full-access": "full", "readonly": "read-only", "read_only": "read-only"}
_SANDBOX = {
    "on": ("✓ Sandbox", "Commands run in a bubblewrap sandbox"),
    "off": ("⚠ No sandbox", "Commands run without a sandbox"),
    "unavailable": ("✕ Sandbox unavailable", "No sandbox is available on this system"),
}


def format_tokens(count: int) -> str:
    """A token count for display: ``950``, ``12.3k``, ``1.2M`` (one decimal, no trailing .0)."""
    for suffix, size in (("M", 1_000_000), ("k", 1_000)):
        if abs(count) >= size:
            text = f"{count / size:.1f}"
            if text.endswith(".0"):
                text = text[:-2]
            if suffix == "k" and text == "1000":  # 999,950+ rounds into the next unit
                return "1M"
            return text + suffix
    return str(count)


def _pill(name: str) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setFixedHeight(_PILL_HEIGHT)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return label


def _info(menu: QMenu, text: str, *, heading: bool = False) -> None:
    """A line of information in ``menu``: shown, not clickable (``heading``: in bold)."""
    action = menu.addAction(text)
    action.setEnabled(False)
    if heading:
        font = action.font()
        font.setBold(True)
        action.setFont(font)


def _repolish(widget: QWidget) -> None:
    widget.style().unpolish(widget)
    widget.style().polish(widget)


class TopBar(QFrame):
    """The strip above the conversation; every part is set through a slot.

    Clicking the approval-mode badge opens a small menu (non-blocking ``popup``); choosing a
    mode emits :attr:`modeChangeRequested` but does not change the badge: the window calls
    :meth:`set_mode` once the session has switched. Clicking the sandbox indicator opens a
    menu of what sandboxed commands cannot see or change (issue 11), whose last entry emits
    :attr:`settingsRequested`.

    Args:
        parent: the Qt parent.
    """

    #: The user picked approval mode ``mode`` (``read-only``, ``ask``, ``auto``, ``full``).
    modeChangeRequested = Signal(str)
    #: The user asked to change what the sandbox hides (the indicator's menu).
    settingsRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setStyleSheet(read_text("styles", "dark.qss"))
        self.mode = ""
        self.repo_name = QLabel("No repository")
        self.repo_name.setObjectName("repoName")
        self.repo_path = QLabel()
        self.repo_path.setObjectName("repoPath")
        self.repo_path.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.repo_path.setMinimumWidth(40)
        self.branch = _pill("branch")
        self.branch.setToolTip("Current Git branch")
        self.branch.hide()
        self.model = _pill("model")
        self.model.setToolTip("Model")
        self.model.hide()
        self.mode_badge = QToolButton()
        self.mode_badge.setObjectName("modeBadge")
        self.mode_badge.setCursor(Qt.CursorShape.PointingHandCursor)
        self.mode_badge.setFixedHeight(_PILL_HEIGHT)
        self.mode_badge.clicked.connect(self.show_mode_menu)
        self.sandbox = QToolButton()
        self.sandbox.setObjectName("sandbox")
        self.sandbox.setCursor(Qt.CursorShape.PointingHandCursor)
        self.sandbox.setFixedHeight(_PILL_HEIGHT)
        self.sandbox.clicked.connect(self.show_sandbox_menu)
        self.sandbox.hide()
        self.sandbox_menu = QMenu(self)
        self._sandbox_state = ""
        self._sandbox_tip = ""
        self._protection = ""
        self._hidden: list[str] = []
        self._protected: list[str] = []
        self.usage = QLabel()
        self.usage.setObjectName("usage")
        self.context_meter = ContextMeter()  # issue 14: "context: 62% left"

        self.mode_menu = QMenu(self)
        group = QActionGroup(self.mode_menu)
        self._mode_actions: dict[str, QAction] = {}
        for mode, text, description in MODES:
            action = QAction(f"{text}  —  {description}", self.mode_menu)
            action.setCheckable(True)
            action.setData(mode)
            action.triggered.connect(lambda _checked=False, m=mode: self._request(m))
            group.addAction(action)
            self.mode_menu.addAction(action)
            self._mode_actions[mode] = action

        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 6)
        layout.setSpacing(8)
        layout.addWidget(self.repo_name)
        layout.addWidget(self.branch)
        layout.addWidget(self.repo_path, 1)
        self.mcp_status = McpStatusButton()  # issue 18: local MCP servers' states
        self.mcp_status.setFixedHeight(_PILL_HEIGHT)
        for widget in (self.model, self.mode_badge, self.sandbox, self.mcp_status, self.usage):
            layout.addWidget(widget)
        layout.addWidget(self.context_meter)
        self.set_mode("ask")
        self.set_usage(0, 0, 0)

    # -- slots -----------------------------------------------------------------------------

    @Slot(str, object)
    def set_repository(self, path: str, branch: str | None) -> None:
        """Show the repository at ``path`` and its ``branch`` (``None``: not a Git repo)."""
        name = PurePath(path).name or path
        self.repo_name.setText(name)
        self.repo_name.setToolTip(path)
        self.repo_path.setText(path)
        self.repo_path.setToolTip(path)
        self.branch.setVisible(True)
        if branch:
            self.branch.setText(f"⎇ {branch}")
            self.branch.setToolTip(f"Git branch {branch}")
        else:
            self.branch.setText("not a Git repository")
            self.branch.setToolTip("Checkpoints use a private shadow repository")

    @Slot(str)
    def set_model(self, name: str) -> None:
        """Show the model ``name``."""
        self.model.setText(name)
        self.model.setToolTip(f"Model: {name}")
        self.model.setVisible(bool(name))

    @Slot(str)
    def set_mode(self, mode: str) -> None:
        """Show approval ``mode`` (``read-only``, ``ask``, ``auto`` or ``full``) as the badge."""
        mode = _MODE_ALIASES.get(mode, mode)
        info = {m: (text, description) for m, text, description in MODES}
        text, description = info.get(mode, (mode, "Unknown approval mode"))
        self.mode = mode
        self.mode_badge.setText(f"{text} ▾")
        self.mode_badge.setToolTip(f"Approval mode: {text}. {description}.\nClick to change.")
        self.mode_badge.setProperty("mode", mode)
        _repolish(self.mode_badge)
        for name, action in self._mode_actions.items():
            action.setChecked(name == mode)

    @Slot(str, str)
    def set_sandbox(self, state: str, detail: str) -> None:
        """Show the sandbox ``state`` (``on``, ``off``, ``unavailable``); ``detail`` is the why."""
        text, default_tip = _SANDBOX.get(state, (state, ""))
        self.sandbox.setText(text)
        self._sandbox_state = state
        self._sandbox_tip = detail or default_tip
        self.sandbox.setToolTip(self._sandbox_tip + (self._protection if state == "on" else ""))
        self.sandbox.setProperty("state", state)
        self.sandbox.setVisible(True)
        _repolish(self.sandbox)

    @Slot(object, object)
    def set_sandbox_protection(self, hidden: list[str], protected: list[str]) -> None:
        """List what commands cannot see (``hidden``: ``~/.ssh``...) and cannot change
        (``protected``: ``.git/config``...) in the sandbox indicator's tooltip."""
        self._hidden, self._protected = list(hidden), list(protected)
        self._protection = ""
        if hidden:
            self._protection += "\n\nHidden from commands:\n" + "\n".join(f"  {p}" for p in hidden)
        if protected:
            self._protection += "\n\nRead-only git paths:\n" + "\n".join(
                f"  {p}" for p in protected
            )
        self.sandbox.setToolTip(self._sandbox_tip + self._protection)

    @Slot(int, int, int)
    def set_usage(self, input_tokens: int, output_tokens: int, total_tokens: int) -> None:
        """Show the session's token usage (counts in tokens)."""
        self.usage.setText(
            f"↑{format_tokens(input_tokens)}  ↓{format_tokens(output_tokens)}"
            f"  ·  {format_tokens(total_tokens)} tokens"
        )
        self.usage.setToolTip(
            f"Tokens this session\ninput: {input_tokens:,}\noutput: {output_tokens:,}\n"
            f"total: {total_tokens:,}"
        )

    @Slot(object)
    def set_context(self, report: object) -> None:
        """Show the context window left (a ``core.context_window.ContextReport``)."""
        self.context_meter.set_report(report)  # type: ignore[arg-type]

    @Slot()
    def show_mode_menu(self) -> None:
        """Open the approval-mode menu under the badge (``popup``: never a nested loop)."""
        self.mode_menu.popup(self.mode_badge.mapToGlobal(QPoint(0, self.mode_badge.height() + 2)))

    @Slot()
    def show_sandbox_menu(self) -> None:
        """Open the sandbox menu under the indicator (``popup``: never a nested loop): the
        state, the paths hidden from commands and the read-only git paths (when the sandbox
        is on), and *Change what is hidden…*."""
        menu = self.sandbox_menu
        menu.clear()
        _info(menu, self._sandbox_tip or self.sandbox.text())
        if self._sandbox_state == "on":
            menu.addSeparator()
            _info(menu, f"Hidden from commands ({len(self._hidden)}):", heading=True)
            for path in self._hidden or ["nothing"]:
                _info(menu, "    " + path)
            _info(menu, "Read-only for commands:", heading=True)
            for path in self._protected or ["nothing"]:
                _info(menu, "    " + path)
        else:
            _info(menu, "Secrets are not hidden and .git is not protected without the sandbox.")
        menu.addSeparator()
        change = menu.addAction("Change what is hidden…")
        change.triggered.connect(self.settingsRequested)
        menu.popup(self.sandbox.mapToGlobal(QPoint(0, self.sandbox.height() + 2)))

    # -- internals -------------------------------------------------------------------------

    def _request(self, mode: str) -> None:
        self.modeChangeRequested.emit(mode)
        # The badge (and the check mark) show the mode in force until set_mode says otherwise.
        self._mode_actions[mode].setChecked(mode == self.mode)
        current = self._mode_actions.get(self.mode)
        if current is not None:
            current.setChecked(True)
