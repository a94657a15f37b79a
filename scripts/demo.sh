#!/usr/bin/env bash
# Installs what is needed, then runs Tandem's offline demo (scripted model, no API key):
# the desktop window on a copy of the bundled sample repository. Without a display the window
# runs under Xvfb, answers its own review and approval like a user, and saves screenshots to
# demo-screenshots/; the same session is then printed in the terminal. The research scenario
# (hosted tools and a sub-agent, scripted) is screenshotted too.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    exec .venv/bin/tandem demo "$@"
fi
shots="$PWD/demo-screenshots"
mkdir -p "$shots"
echo "demo: no display, running the window under Xvfb (screenshots in $shots)"
QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1440x900x24 -nolisten tcp" \
    .venv/bin/tandem demo --screenshot "$shots/tandem-demo.png" 2> >(grep -v -e propagateSizeHints -e "unexpected operator" >&2)
echo "demo: saved $shots/tandem-demo-review.png (patch review), $shots/tandem-demo.png (finished run)"
echo "      and $shots/tandem-demo-sandbox.png (what the sandbox hides from commands)"
QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1440x900x24 -nolisten tcp" \
    .venv/bin/tandem demo --scenario research --screenshot "$shots/tandem-research.png" 2> >(grep -v -e propagateSizeHints -e "unexpected operator" >&2)
echo "demo: saved $shots/tandem-research-review.png (MCP approval), $shots/tandem-research.png (hosted activity, sources)"
echo "      and $shots/tandem-research-subagent.png (the Explorer sub-agent's run)"
QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1440x900x24 -nolisten tcp" \
    .venv/bin/tandem demo --scenario browser --screenshot "$shots/tandem-browser-demo.png" 2> >(grep -v -e propagateSizeHints -e "unexpected operator" >&2)
echo "demo: saved $shots/tandem-browser-demo.png (a dev server, real Chromium, the signup form's error)"
echo
exec .venv/bin/tandem demo --headless
