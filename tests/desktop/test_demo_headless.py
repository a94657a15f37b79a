"""``tandem demo --headless`` replays the bundled session through the real runner and tools."""

from __future__ import annotations

import io
import subprocess
import sys

from desktop.demo import run_headless_demo


async def test_headless_demo_transcript():
    out = io.StringIO()
    code = await run_headless_demo(out)
    text = out.getvalue()
    assert code == 0, text
    assert "-> find_todos" in text and "src/inventory.py:5: # TODO" in text
    assert "apply_patch update_file src/inventory.py" in text and "Updated src/inventory.py" in text
    assert "FAILED (failures=1)" in text  # the tests ran in the shell before the fix...
    assert text.rstrip().endswith("sample repository tests: green")  # ...and pass after it
    assert "checkpoints:" in text and "model requests" in text


def test_console_script_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "desktop.cli", "demo", "--headless"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Fixed" in result.stdout
