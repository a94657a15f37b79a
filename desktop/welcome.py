"""First launch (issue 16, Build item 5): ``tandem`` with no folder and no last folder opens
a welcome window instead of working on whatever the current directory is; the home folder
and ``/`` are opened only after a question.

``run_app`` (``desktop.app``) awaits :func:`choose_start` before it builds the real session,
so the main window and its workspace are made only once a folder (or the demo) is chosen.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox, QWidget

from .views.welcome_view import WelcomeView

__all__ = ["WelcomeChoice", "WelcomeWindow", "choose_start", "needs_welcome", "risky_folder"]


@dataclass(frozen=True, slots=True)
class WelcomeChoice:
    """What the user picked on the welcome window.

    Attributes:
        folder: the folder to open (``None`` with ``demo``).
        demo: open the offline demo instead.
    """

    folder: Path | None = None
    demo: bool = False


def risky_folder(path: Path, *, home: Path | None = None) -> str | None:
    """Why opening ``path`` deserves a question, or ``None``: it is the home folder
    (``$HOME``; every project, key and dotfile of the user) or the file-system root.

    Args:
        path: the folder about to be opened (resolved here).
        home: the home folder (default ``Path.home()``).
    """
    where = Path(os.path.realpath(path))
    if where == Path(where.anchor):
        return f"{where} is the root of the whole file system."
    if where == Path(os.path.realpath(home or Path.home())):
        return f"{where} is your home folder: every project, key and dotfile in it."
    return None


def needs_welcome(folder: Path | None, last_folder: Path | None) -> bool:
    """Whether ``tandem`` shows the welcome window: no folder was given and the last one
    (``Settings.last_folder``) is unset or gone, or the folder to open is risky
    (:func:`risky_folder`: the window then asks first)."""
    target = folder or (last_folder if last_folder is not None and last_folder.is_dir() else None)
    return target is None or risky_folder(target) is not None


class WelcomeWindow(QMainWindow):
    """The welcome page in a window of its own (closed once a choice is made).

    Args:
        recent: ``Settings.recent_folders``.
        ask_first: a risky folder that was asked for (``tandem ~``, or the last folder):
            the question is asked as soon as the window shows.
        parent: the Qt parent.
    """

    #: The user chose: a :class:`WelcomeChoice`, or ``None`` (the window was closed).
    chosen = Signal(object)

    def __init__(
        self,
        recent: list[Path] | tuple[Path, ...] = (),
        *,
        ask_first: Path | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Tandem")
        self.resize(1100, 700)
        self.view = WelcomeView(recent)
        self.setCentralWidget(self.view)
        self.view.openFolderRequested.connect(self.show_folder_dialog)
        self.view.recentChosen.connect(self.choose_folder)
        self.view.demoRequested.connect(lambda: self._finish(WelcomeChoice(demo=True)))
        self.question: QMessageBox | None = None
        self._done = False
        self._ask_first = ask_first

    def showEvent(self, event: object) -> None:
        super().showEvent(event)  # type: ignore[arg-type]
        if self._ask_first is not None:
            folder, self._ask_first = self._ask_first, None
            self.choose_folder(folder)

    def show_folder_dialog(self) -> None:
        """The folder dialog (non-modal); the chosen folder goes to :meth:`choose_folder`."""
        dialog = QFileDialog(self, "Open a project folder", str(Path.home()))
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda path: self.choose_folder(Path(path)))
        dialog.open()

    def choose_folder(self, folder: Path) -> None:
        """Open ``folder``: at once, or after a question when it is risky; a folder that
        does not exist (a stale recent entry) is said and nothing opens."""
        if not folder.is_dir():
            QMessageBox.warning(self, "Tandem", f"{folder} is not a folder.")
            return
        reason = risky_folder(folder)
        if reason is None:
            self._finish(WelcomeChoice(folder=folder))
            return
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "Open this folder?",
            f"{reason}\n\nThe agent would read it and could propose changes anywhere in it. "
            "Open a project folder instead, unless you mean it.",
            QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(
            lambda _result: (
                box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Open
                and self._finish(WelcomeChoice(folder=folder))
            )
        )
        self.question = box
        box.open()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._done:
            self._done = True
            self.chosen.emit(None)
        super().closeEvent(event)

    def _finish(self, choice: WelcomeChoice) -> bool:
        if not self._done:
            self._done = True
            self.chosen.emit(choice)
            self.close()
        return True


async def choose_start(
    recent: list[Path] | tuple[Path, ...], *, ask_first: Path | None = None
) -> WelcomeChoice | None:
    """Show the welcome window and wait for the user's choice (``None``: closed)."""
    future: asyncio.Future[WelcomeChoice | None] = asyncio.get_running_loop().create_future()
    window = WelcomeWindow(recent, ask_first=ask_first)
    window.chosen.connect(lambda choice: future.done() or future.set_result(choice))
    window.show()
    try:
        return await future
    finally:
        window.deleteLater()
