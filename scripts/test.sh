#!/usr/bin/env bash
# Installs what is needed, then runs the linters, the type checker, the import contracts and
# the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "== ruff"; .venv/bin/ruff check core harnesses desktop tests bench
echo "== mypy (core)"; .venv/bin/mypy
echo "== import-linter"; .venv/bin/lint-imports
echo "== pytest"; exec .venv/bin/python -m pytest "$@"
