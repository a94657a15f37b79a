"""InstructionsButton: the top bar's ``AGENTS.md \u00d72`` pill listing the instruction files loaded
for the last run (size, truncation), each opening the file on click (issue 16, item 1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from harnesses.instructions import ProjectInstructions, describe

__all__ = ["InstructionsButton"]


def _open_with_desktop(path: Path) -> None:
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


class InstructionsButton(QToolButton):
    """``AGENTS.md \u00d7N`` (``!`` when the cap cut a file); its menu has one entry per file in
    load order, e.g. ``AGENTS.md — project, 1.2 KiB`` or ``~/.codex/AGENTS.md — global,
    Codex, 40.0 KiB, truncated to 32.0 KiB``; choosing one opens it.

    Fed with :class:`harnesses.instructions.ProjectInstructions` through :meth:`set_instructions`
    (at start-up, then at each run, which reads the files again). With no file it says
    ``no AGENTS.md`` and its menu says where files would be looked for.

    Args:
        opener: opens a file (default: the desktop's handler, ``QDesktopServices``).
        parent: the Qt parent.

    Signals:
        fileOpened(str): a file was chosen in the menu (its absolute path), after ``opener``.
    """

    fileOpened = Signal(str)

    def __init__(
        self, opener: Callable[[Path], Any] | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("instructionsButton")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._opener = opener or _open_with_desktop
        self.menu = QMenu(self)
        self.clicked.connect(self.show_menu)
        self.lines: list[str] = []
        self.instructions: ProjectInstructions | None = None
        self.set_instructions(None)

    @Slot(object)
    def set_instructions(self, loaded: ProjectInstructions | None) -> None:
        """Show the files of ``loaded`` (``None``: nothing loaded yet)."""
        self.instructions = loaded
        self.menu.clear()
        self.lines = []
        files = loaded.files if loaded is not None else ()
        if not files:
            self.setText("no AGENTS.md")
            self.setToolTip(
                "No AGENTS.md found: Tandem reads the one in its config folder, "
                "$CODEX_HOME/AGENTS.md, and each AGENTS.md from the repository root down "
                "to this folder."
            )
            action = self.menu.addAction("No AGENTS.md found")
            action.setEnabled(False)
            self.setProperty("state", "none")
        else:
            assert loaded is not None
            self.setText(f"AGENTS.md \u00d7{len(files)}" + (" !" if loaded.truncated else ""))
            for file in files:
                line = f"{file.label(loaded.repository)} — {describe(file)}"
                self.lines.append(line)
                action = self.menu.addAction(line)
                action.setToolTip(str(file.path))
                action.triggered.connect(lambda _c=False, p=file.path: self.open_file(p))
            self.menu.addSeparator()
            total = self.menu.addAction(
                f"{loaded.total_bytes} of {loaded.cap_bytes} bytes used (Settings: "
                "agents_md_cap_bytes)"
            )
            total.setEnabled(False)
            self.setToolTip(
                "Instruction files in the agent's instructions:\n" + "\n".join(self.lines)
            )
            self.setProperty("state", "truncated" if loaded.truncated else "ok")
        self.style().unpolish(self)
        self.style().polish(self)

    def open_file(self, path: Path) -> None:
        """Open ``path`` with the opener and emit :attr:`fileOpened`."""
        self._opener(path)
        self.fileOpened.emit(str(path))

    @Slot()
    def show_menu(self) -> None:
        """Open the list of files under the pill (``popup``: never a nested loop)."""
        self.menu.popup(self.mapToGlobal(self.rect().bottomLeft()))
