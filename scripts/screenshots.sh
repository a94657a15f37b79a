#!/usr/bin/env bash
# Produces the screenshots in docs/screenshots/: the demo window during the patch review,
# after the run and with the sandbox indicator's menu open (Xvfb), the research demo (hosted tools, a sub-agent) at its MCP approval and
# at the end, and the window with the live browser view during a scripted browser
# run (real Chromium on a local page), and the Trust II tour (a destructive-command prompt with
# its recoverability line, a restore with Undo restore enabled). Installs what it needs first; safe to re-run.
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
ls -l "$out"
