"""HiddenPathsEditor: which secret paths the sandbox hides (defaults to untick, extra paths)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from harnesses.shell.secret_paths import default_hidden_paths, display_path, tandem_private_dirs

__all__ = ["HiddenPathsEditor"]

_HINT = (
    "Shell commands in the sandbox see these as empty. Untick a default to show it again; "
    "Tandem's own settings, journal and data stay hidden. Changes apply to the next command."
)


def _same(a: str | Path, b: str | Path) -> bool:
    return os.path.normpath(Path(a).expanduser()) == os.path.normpath(Path(b).expanduser())


class HiddenPathsEditor(QWidget):
    """The default hidden paths as a checklist and the user's extra paths, one per line.

    Attributes:
        defaults: the checklist (ticked: hidden); Tandem's own folders cannot be unticked.
        extra_edit: the user's extra paths (``~/...`` or absolute), one per line.

    Args:
        parent: the Qt parent.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.defaults = QListWidget()
        self.defaults.setObjectName("hiddenDefaults")
        self.defaults.setMinimumHeight(120)
        self._own = [display_path(p) for p in tandem_private_dirs()]
        self._kept_shown: list[str] = []
        for path in default_hidden_paths():
            text = display_path(path)
            item = QListWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, text)
            flags = item.flags() | Qt.ItemFlag.ItemIsUserCheckable
            if text in self._own:
                flags &= ~Qt.ItemFlag.ItemIsEnabled
                item.setToolTip("Tandem's own folder: always hidden")
            elif not os.path.lexists(path):
                item.setToolTip("Not on this computer; hidden if it appears")
            item.setFlags(flags)
            item.setCheckState(Qt.CheckState.Checked)
            self.defaults.addItem(item)
        self.extra_edit = QPlainTextEdit()
        self.extra_edit.setObjectName("hiddenExtra")
        self.extra_edit.setPlaceholderText("More paths to hide, one per line (e.g. ~/work/.env)")
        self.extra_edit.setFixedHeight(64)
        hint = QLabel(_HINT)
        hint.setProperty("role", "hint")
        hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(hint)
        layout.addWidget(self.defaults)
        layout.addWidget(self.extra_edit)

    def set_paths(self, hidden: list[Path], shown: list[Path]) -> None:
        """Show the settings' ``sandbox_hidden_paths`` and ``sandbox_shown_paths``."""
        self.extra_edit.setPlainText("\n".join(str(p) for p in hidden))
        self._kept_shown = []
        for path in shown:
            matched = False
            for row in range(self.defaults.count()):
                item = self.defaults.item(row)
                if _same(item.data(Qt.ItemDataRole.UserRole), path):
                    matched = True
                    if item.flags() & Qt.ItemFlag.ItemIsEnabled:
                        item.setCheckState(Qt.CheckState.Unchecked)
            if not matched:
                self._kept_shown.append(str(path))
        for row in range(self.defaults.count()):
            item = self.defaults.item(row)
            if not any(_same(item.data(Qt.ItemDataRole.UserRole), p) for p in shown):
                item.setCheckState(Qt.CheckState.Checked)

    def hidden_paths(self) -> list[str]:
        """The extra paths as typed (blank lines dropped; validated by the settings model)."""
        return [line.strip() for line in self.extra_edit.toPlainText().splitlines() if line.strip()]

    def shown_paths(self) -> list[str]:
        """The unticked defaults (``~/...``), plus shown paths that are not defaults here."""
        out = list(self._kept_shown)
        for row in range(self.defaults.count()):
            item = self.defaults.item(row)
            if item.checkState() == Qt.CheckState.Unchecked:
                out.append(str(item.data(Qt.ItemDataRole.UserRole)))
        return out
