"""Screenshots for the README, taken by the tests that set the scene (``scripts/screenshots.sh``).

``TANDEM_SCREENSHOT_DIR`` unset (every test run): nothing is saved and nothing is checked.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QApplication, QWidget

__all__ = ["save_shot"]


def save_shot(widget: QWidget, name: str, *, screen: bool = False) -> Path | None:
    """Save ``widget`` (or, with ``screen``, the whole screen: menus and popups are windows
    of their own) as ``$TANDEM_SCREENSHOT_DIR/name``; ``None`` when the variable is unset."""
    folder = os.environ.get("TANDEM_SCREENSHOT_DIR")
    if not folder:
        return None
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    QApplication.processEvents()
    shown = QApplication.primaryScreen()
    image = shown.grabWindow(0) if screen and shown is not None else widget.grab()
    image.save(str(path))
    return path
