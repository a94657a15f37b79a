"""The main window's tabs that its first frame does not show, built on first use (issue 15)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QTabWidget, QVBoxLayout, QWidget

if TYPE_CHECKING:  # imported when their tab is built
    from .browser_session import BrowserSession
    from .controller import Controller
    from .views.browser_placeholder import BrowserPlaceholder
    from .views.browser_view import BrowserView
    from .views.checkpoints_view import CheckpointsView
    from .views.services_view import ServicesView
    from .views.terminal_view import TerminalView

__all__ = ["BROWSER_VIEW_SLOTS", "LazyTabs"]

#: The browser session's signals the live view subscribes to, and its slot for each.
BROWSER_VIEW_SLOTS = (
    ("frameReady", "show_frame"),
    ("actionMarked", "mark_action"),
    ("urlChanged", "set_url"),
    ("controlChanged", "set_control"),
    ("gateChanged", "set_gate_state"),
    ("notice", "add_notice"),
)


class LazyTabs:
    """Mixin of :class:`~desktop.main_window.MainWindow`: the Terminal, Browser and
    Checkpoints tabs start as empty pages and get their view when first shown, at the first
    access to :attr:`terminal` / :attr:`browser` / :attr:`checkpoints` (a command's signal,
    the checkpoints list, a browser session's event), or at :meth:`build_lazy_tabs` (right
    after the first paint). What reached them before is applied when they are built."""

    controller: Controller
    tabs: QTabWidget

    def _init_lazy_tabs(
        self, browser_session: BrowserSession | None, names: tuple[str, ...]
    ) -> None:
        """Add the empty pages ``names`` (Terminal, Browser, Checkpoints) to :attr:`tabs`."""
        self._browser_session = browser_session
        self._terminal: TerminalView | None = None
        self._services_view: ServicesView | None = None
        self._browser: BrowserView | BrowserPlaceholder | None = None
        self._browser_message = ""
        self._checkpoints: CheckpointsView | None = None
        self._undo_restore_available = False
        self._pages: list[QVBoxLayout] = []
        for name in names:
            page = QWidget()
            holder = QVBoxLayout(page)
            holder.setContentsMargins(0, 0, 0, 0)
            self._pages.append(holder)
            self.tabs.addTab(page, name)

    @property
    def terminal(self) -> TerminalView:
        """The Terminal tab's view (built at the first access)."""
        if self._terminal is None:
            self._build_terminal()
        assert self._terminal is not None
        return self._terminal

    @property
    def services_view(self) -> ServicesView | None:
        """The background services under the terminal (``None`` without services)."""
        if self._terminal is None:
            self._build_terminal()
        return self._services_view

    @property
    def browser(self) -> BrowserView | BrowserPlaceholder:
        """The Browser tab's view: the live view, or a placeholder without a browser."""
        if self._browser is None:
            self._build_browser()
        assert self._browser is not None
        return self._browser

    @property
    def checkpoints(self) -> CheckpointsView:
        """The Checkpoints tab's view (built at the first access)."""
        if self._checkpoints is None:
            self._build_checkpoints()
        assert self._checkpoints is not None
        return self._checkpoints

    def build_lazy_tabs(self) -> None:
        """Build the tabs the first frame did not show (call it after the first paint)."""
        for built in (self.terminal, self.browser, self.checkpoints):
            assert built is not None

    def set_browser_message(self, message: str) -> None:
        """Why the browser tool is off, shown by the Browser tab's placeholder."""
        self._browser_message = message
        if self._browser is not None and self._browser_session is None:  # the placeholder
            self._browser.set_message(message)  # type: ignore[union-attr]

    def _build_terminal(self) -> None:
        from .views.services_view import ServicesView
        from .views.terminal_view import TerminalView

        self._terminal = TerminalView()
        page: QWidget = self._terminal
        services = getattr(self.controller.workspace, "services", None)
        if services is not None:  # background services under the terminal (issue 11)
            self._services_view = ServicesView(services)
            page = QSplitter(Qt.Orientation.Vertical)
            page.addWidget(self._terminal)
            page.addWidget(self._services_view)
            page.setStretchFactor(0, 4)
            page.setStretchFactor(1, 1)
        self._pages[0].addWidget(page)
        page.show()  # at once, not at the next event loop turn, when the tab is showing
        self._terminal.killRequested.connect(self.controller.kill_command)

    def _build_browser(self) -> None:
        from .views.browser_placeholder import BrowserPlaceholder
        from .views.browser_view import BrowserView

        if self._browser_session is not None:
            self._browser = BrowserView(self._browser_session)
        else:
            self._browser = BrowserPlaceholder()
            if self._browser_message:
                self._browser.set_message(self._browser_message)
        self._pages[1].addWidget(self._browser)
        self._browser.show()

    def _build_checkpoints(self) -> None:
        from .views.checkpoints_view import CheckpointsView

        self._checkpoints = CheckpointsView()
        self._pages[2].addWidget(self._checkpoints)
        self._checkpoints.show()
        c = self.controller
        self._checkpoints.set_undo_available(self._undo_restore_available)
        self._checkpoints.diffRequested.connect(c.diff_checkpoints)
        self._checkpoints.restoreRequested.connect(c.restore_checkpoint)
        self._checkpoints.undoRestoreRequested.connect(c.undo_restore)

    def _browser_first(self, slot: str, *args: Any) -> None:
        """A browser session signal before the view exists: build it (it connects itself for
        the next ones; Qt does not call a connection made during the emission) and hand it
        this one."""
        if self._browser is None:
            getattr(self.browser, slot)(*args)
