#!/usr/bin/env bash
# Installs what is needed, then runs Tandem's offline demo (scripted model, no API key).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/tandem demo --headless "$@"
