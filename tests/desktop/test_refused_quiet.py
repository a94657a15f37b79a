"""A connection refused is shown in the window and not also dumped on stderr (issue 16)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]


def test_a_refused_connection_is_shown_without_a_traceback_on_stderr(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(_ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.desktop.refused_scenario", str(tmp_path)],
        cwd=_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # the user is told: a notice naming the URL and the cause, and the banner
    assert "NOTICE error Cannot reach http://127.0.0.1:" in done.stdout
    assert "connection refused" in done.stdout
    assert "BANNER True" in done.stdout
    # ...and stderr carries no traceback and none of the error's text (Qt's platform notes
    # such as "does not support propagateSizeHints()" may be there; they are not ours)
    assert "Traceback" not in done.stderr
    for ours in ("run failed", "Cannot reach", "ModelProviderError", "ConnectError"):
        assert ours not in done.stderr
