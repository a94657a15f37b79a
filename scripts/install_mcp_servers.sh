#!/usr/bin/env bash
# Installs the published MCP servers the tests run against (issue 18), pinned, project-local:
#   .tools/mcp-python  a venv of its own with mcp-server-git and mcp-server-time (PyPI; they
#                      bring their own `mcp` version, so they stay out of Tandem's venv)
#   .tools/mcp-node    @modelcontextprotocol/server-filesystem (npm), like the Codex CLI
# Safe to re-run. Override the folder with MCP_TOOLS_DIR. Needs python3 (venv) and npm.
set -euo pipefail
cd "$(dirname "$0")/.."

GIT_VERSION="${MCP_SERVER_GIT_VERSION:-2026.10.19}"
TIME_VERSION="${MCP_SERVER_TIME_VERSION:-2026.10.19}"
FS_VERSION="${MCP_SERVER_FILESYSTEM_VERSION:-2026.8.31}"
TOOLS="${MCP_TOOLS_DIR:-.tools}"
PY="$TOOLS/mcp-python"
NODE="$TOOLS/mcp-node"
PYTHON="${PYTHON:-python3}"

py_version() { "$PY/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null || true; }

if [ "$(py_version mcp-server-git)" != "$GIT_VERSION" ] || [ "$(py_version mcp-server-time)" != "$TIME_VERSION" ]; then
    echo "install_mcp_servers: mcp-server-git==$GIT_VERSION mcp-server-time==$TIME_VERSION into $PY"
    [ -x "$PY/bin/python" ] || "$PYTHON" -m venv "$PY"
    "$PY/bin/python" -m pip install --quiet --disable-pip-version-check \
        "mcp-server-git==$GIT_VERSION" "mcp-server-time==$TIME_VERSION"
fi

MANIFEST="$NODE/node_modules/@modelcontextprotocol/server-filesystem/package.json"
fs_version() { [ -f "$MANIFEST" ] && node -e 'process.stdout.write(require(process.argv[1]).version)' "$(realpath "$MANIFEST")" 2>/dev/null || true; }
if [ "$(fs_version)" != "$FS_VERSION" ]; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "install_mcp_servers: npm not found; install Node.js 18+ (apt-get install nodejs npm)" >&2
        exit 1
    fi
    echo "install_mcp_servers: @modelcontextprotocol/server-filesystem@$FS_VERSION into $NODE"
    mkdir -p "$NODE"
    [ -f "$NODE/package.json" ] || printf '{"name":"tandem-mcp-servers","private":true}\n' >"$NODE/package.json"
    npm install --prefix "$NODE" --no-audit --no-fund --loglevel=error --save-exact \
        "@modelcontextprotocol/server-filesystem@$FS_VERSION"
fi
"$PY/bin/mcp-server-git" --help >/dev/null
test -x "$NODE/node_modules/.bin/mcp-server-filesystem"
