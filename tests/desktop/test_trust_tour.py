"""The Trust II screenshot tour runs end to end (a real window, offscreen) and shows what it
claims: the prompt before ``git clean -fdx``, the restore bringing ``.env`` back, *Undo
restore* enabled."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_trust_tour_saves_both_screenshots(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "trust_tour.py"), str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "trust tour: .env back: True | undo restore enabled: True" in done.stdout
    for name in ("tandem-destructive-prompt.png", "tandem-restore.png"):
        data = (tmp_path / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000, name
