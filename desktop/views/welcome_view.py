"""WelcomeView: what ``tandem`` shows with no folder to open (issue 16, Build item 5):
*Open folder…*, the recent folders, and the offline demo."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

__all__ = ["WelcomeView"]

_STYLE = """
QWidget#welcome { background: #0d1117; }
QLabel#welcomeTitle { color: #f0f6fc; font-size: 22pt; font-weight: 600; }
QLabel#welcomeLead { color: #8b949e; font-size: 11pt; }
QLabel#welcomeSection { color: #8b949e; font-size: 9pt; font-weight: 600;
    letter-spacing: 1px; margin-top: 12px; }
QLabel#welcomeEmpty { color: #6e7681; }
QPushButton { background: #21262d; color: #c9d1d9; border: 1px solid #30363d;
    border-radius: 6px; padding: 8px 14px; text-align: left; }
QPushButton:hover { background: #30363d; }
QPushButton#welcomeOpen { background: #238636; color: #ffffff; border-color: #2ea043;
    font-weight: 600; }
QPushButton#welcomeOpen:hover { background: #2ea043; }
QPushButton#welcomeRecent { background: transparent; border: 1px solid transparent; }
QPushButton#welcomeRecent:hover { background: #161b22; border-color: #30363d; }
"""


class WelcomeView(QWidget):
    """The welcome page: big *Open folder…*, the recent folders (whole path, most recent
    first, missing ones left out), *Try the demo*.

    Emits what the user picked; asking about a risky folder and opening it is the
    caller's job (:class:`desktop.welcome.WelcomeWindow`).

    Args:
        recent: recently opened folders, most recent first (``Settings.recent_folders``).
        parent: the Qt parent.
    """

    #: *Open folder…* was clicked (the caller shows the folder dialog).
    openFolderRequested = Signal()
    #: A recent folder was clicked (its ``Path``).
    recentChosen = Signal(object)
    #: *Try the demo* was clicked.
    demoRequested = Signal()

    def __init__(self, recent: Sequence[Path] = (), parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcome")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet(_STYLE)
        title = QLabel("Tandem")
        title.setObjectName("welcomeTitle")
        lead = QLabel(
            "Open a project folder to start. The agent works in that folder only: it reads "
            "files, proposes changes for you to review and runs commands in a sandbox."
        )
        lead.setObjectName("welcomeLead")
        lead.setWordWrap(True)
        self.open_button = QPushButton("Open folder…")
        self.open_button.setObjectName("welcomeOpen")
        self.open_button.setToolTip("Choose a repository folder (Ctrl+O)")
        self.open_button.setShortcut("Ctrl+O")
        self.open_button.clicked.connect(self.openFolderRequested)
        self.demo_button = QPushButton("Try the demo (offline, no API key)")
        self.demo_button.setObjectName("welcomeDemo")
        self.demo_button.setToolTip(
            "A scripted session on a copy of a small sample repository: a bug found, a fix "
            "reviewed, the tests run"
        )
        self.demo_button.clicked.connect(self.demoRequested)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.demo_button)
        buttons.addStretch(1)

        section = QLabel("RECENT FOLDERS")
        section.setObjectName("welcomeSection")
        self.recent_buttons: list[QPushButton] = []
        recent_box = QVBoxLayout()
        recent_box.setSpacing(2)
        for folder in recent:
            if not Path(folder).is_dir():
                continue
            button = QPushButton(f"{Path(folder).name or folder}    {folder}")
            button.setObjectName("welcomeRecent")
            button.setToolTip(str(folder))
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.clicked.connect(lambda _=False, f=Path(folder): self.recentChosen.emit(f))
            recent_box.addWidget(button)
            self.recent_buttons.append(button)
        self.empty = QLabel("No recent folders yet.")
        self.empty.setObjectName("welcomeEmpty")
        self.empty.setVisible(not self.recent_buttons)
        recent_box.addWidget(self.empty)

        card = QFrame()
        card.setMaximumWidth(720)
        card.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        inner = QVBoxLayout(card)
        inner.setSpacing(10)
        inner.addWidget(title)
        inner.addWidget(lead)
        inner.addSpacing(8)
        inner.addLayout(buttons)
        inner.addWidget(section)
        inner.addLayout(recent_box)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(48, 48, 48, 48)
        outer.addStretch(1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(card, 3)
        row.addStretch(1)
        outer.addLayout(row)
        outer.addStretch(2)

    def recent_folders(self) -> list[Path]:
        """The folders listed, top to bottom."""
        return [Path(b.toolTip()) for b in self.recent_buttons]
