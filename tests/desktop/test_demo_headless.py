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


async def test_headless_research_demo_shows_hosted_activity_and_the_sub_agent():
    out = io.StringIO()
    code = await run_headless_demo(out, scenario="research")
    text = out.getvalue()
    assert code == 0, text
    assert "[web_search] python decimal ROUND_HALF_EVEN money rounding -> 3 sources from docs.python.org, peps.python.org" in text
    assert "https://peps.python.org/pep-0327/" in text
    # the Explorer sub-agent read the real sample repository through the workspace shell
    assert 'Explorer │ $ grep -rn "price" src tests' in text
    assert "Explorer │ | src/inventory.py:6:" in text
    assert "[code_interpreter] from decimal import Decimal, ROUND_HALF_EVEN -> 6 lines of output" in text
    assert "[mcp] handbook: 2 tools" in text
    assert "? read_page asks for approval: approved (demo)" in text
    assert "Round half-even (banker's rounding)" in text  # the MCP call ran after the approval
    assert "[tool_search] loaded pricing.round_money" in text
    assert "[image_generation] Bar chart: sum([0.10] * 1000) as float and as Decimal -> 480 x 270 image" in text
    assert "[1] Floating-Point Arithmetic: Issues and Limitations https://docs.python.org/3/tutorial/floatingpoint.html" in text
    assert "sample repository tests" not in text  # research changes nothing


def test_unknown_scenario_is_refused():
    result = subprocess.run(
        [sys.executable, "-m", "desktop.cli", "demo", "--headless", "--scenario", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "invalid choice: 'nope'" in result.stderr
