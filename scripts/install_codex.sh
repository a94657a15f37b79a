#!/usr/bin/env bash
# Installs the pinned Codex CLI (npm package @openai/codex) into .tools/codex; safe to re-run.
#
# The binary ends up at .tools/codex/node_modules/.bin/codex (the JS launcher) and the static
# binary under .tools/codex/node_modules/@openai/codex-linux-*/vendor/*/bin/codex, where
# harnesses.codex finds it. Override the version with CODEX_VERSION (tests are checked against
# the pinned one) and the folder with CODEX_INSTALL_DIR. Needs npm (node >= 18).
set -euo pipefail
cd "$(dirname "$0")/.."

CODEX_VERSION="${CODEX_VERSION:-0.171.0}"
PREFIX="${CODEX_INSTALL_DIR:-.tools/codex}"
MANIFEST="$PREFIX/node_modules/@openai/codex/package.json"

installed_version() {
    [ -f "$MANIFEST" ] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$(realpath "$MANIFEST")" 2>/dev/null || true
}

if [ "$(installed_version)" = "$CODEX_VERSION" ] && [ -x "$PREFIX/node_modules/.bin/codex" ]; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "install_codex: npm not found; install Node.js 18+ (apt-get install nodejs npm)" >&2
    exit 1
fi
echo "install_codex: installing @openai/codex@$CODEX_VERSION into $PREFIX"
mkdir -p "$PREFIX"
# A private package.json keeps npm from walking up to another project's manifest.
[ -f "$PREFIX/package.json" ] || printf '{"name":"tandem-codex-cli","private":true}\n' >"$PREFIX/package.json"
npm install --prefix "$PREFIX" --no-audit --no-fund --loglevel=error --save-exact \
    "@openai/codex@$CODEX_VERSION"
if [ "$(installed_version)" != "$CODEX_VERSION" ]; then
    echo "install_codex: expected @openai/codex@$CODEX_VERSION, found '$(installed_version)'" >&2
    exit 1
fi
"$PREFIX/node_modules/.bin/codex" --version
