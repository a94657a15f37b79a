"""Under ``TANDEM_NO_SKIPS=1`` (``scripts/test.sh``) a skipped test or module fails the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE = "tests/support/skip_probe.py"


def _run(**env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in ("TANDEM_NO_SKIPS", "SKIP_MODULE")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", PROBE],
        cwd=ROOT,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("env", "summary"),
    [
        ({}, "1 passed, 1 skipped, 1 xfailed"),
        ({"TANDEM_NO_SKIPS": "1"}, "1 failed, 1 passed, 1 xfailed"),
        ({"SKIP_MODULE": "1"}, "1 skipped"),
        ({"SKIP_MODULE": "1", "TANDEM_NO_SKIPS": "1"}, "1 error"),
    ],
)
def test_skips_fail_only_under_the_setting(env: dict[str, str], summary: str) -> None:
    assert _run(**env).startswith(summary)
