"""Desktop tests run Qt headless: the offscreen platform, set before any QApplication."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
