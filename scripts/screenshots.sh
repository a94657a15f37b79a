#!/usr/bin/env bash
# Produces the screenshots in docs/screenshots/: the demo window during the patch review,
# after the run and with the sandbox indicator's menu open (Xvfb), the research demo (hosted tools, a sub-agent) at its MCP approval and
# at the end, and the window with the live browser view during a scripted browser
# run (real Chromium on a local page), and the Trust II tour (a destructive-command prompt with
# its recoverability line, a restore with Undo restore enabled), and issue 16's welcome, AGENTS.md list,
# retry banner and 1440x900 diff, and issue 15's 50,000-line diff streamed in at 1440x900. Installs what it needs first; safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
out="$PWD/docs/screenshots"
mkdir -p "$out"
QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1440x900x24 -nolisten tcp" \
    .venv/bin/tandem demo --screenshot "$out/tandem-demo.png" 2> >(grep -v -e propagateSizeHints -e "unexpected operator" >&2)
QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1440x900x24 -nolisten tcp" \
    .venv/bin/tandem demo --scenario research --screenshot "$out/tandem-research.png" 2> >(grep -v -e propagateSizeHints -e "unexpected operator" >&2)
QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1440x900x24 -nolisten tcp" \
    .venv/bin/tandem demo --scenario browser --screenshot "$out/tandem-browser-demo.png" 2> >(grep -v -e propagateSizeHints -e "unexpected operator" >&2)
QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1440x900x24 -nolisten tcp" \
    .venv/bin/python scripts/trust_tour.py "$out" 2> >(grep -v -e propagateSizeHints >&2)
TANDEM_SCREENSHOT_DIR="$out" .venv/bin/python -m pytest -q -p no:cacheprovider tests/desktop/test_browser_window.py
# issue 16: the welcome window, the AGENTS.md list, the retry banner, a diff at 1440x900 (each
# test saves its scene when TANDEM_SCREENSHOT_DIR is set; a real X server for the open menu)
for t in "test_welcome.py::test_window_lists_recent_folders_and_opens_one" \
         "test_instructions_view.py::test_window_lists_files_and_request_carries_them" \
         "test_retry_banner.py::test_closed_port_in_the_window" \
         "test_diff_width.py::test_at_1440x900_the_diff_is_unified_and_readable" \
         "test_diff_large_shot.py::test_a_50k_line_diff_streams_in_and_reads_side_by_side"; do
    TANDEM_SCREENSHOT_DIR="$out" QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1440x900x24 -nolisten tcp" \
        .venv/bin/python -m pytest -q -p no:cacheprovider "tests/desktop/$t"
done
ls -l "$out"
