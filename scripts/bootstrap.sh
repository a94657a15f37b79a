#!/usr/bin/env bash
# Installs what Tandem needs on a fresh Debian machine (as root) and is safe to re-run:
# system packages (only the missing ones), a venv in .venv with Tandem and its dev tools.
set -euo pipefail
cd "$(dirname "$0")/.."

# bubblewrap: shell sandbox; xvfb & xcb libs: the window without a display; chromium: the browser
APT_PACKAGES=(bubblewrap git chromium xvfb xauth libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxkbcommon-x11-0 fonts-dejavu-core)
command -v npm >/dev/null 2>&1 || APT_PACKAGES+=(nodejs npm)
APT_PACKAGES+=(openssh-client)  # ssh-keygen / ssh: tests/harnesses/test_noninteractive.py
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})); then
    echo "bootstrap: installing ${missing[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.tandem-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e ".[dev,bench]"
    touch "$stamp"
fi

# The Codex CLI, pinned, in a project-local folder (.tools/codex)
bash scripts/install_codex.sh

# Published MCP servers for the tests, pinned, project-local (.tools/mcp-python, .tools/mcp-node)
bash scripts/install_mcp_servers.sh
