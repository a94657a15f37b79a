#!/usr/bin/env bash
# Installs what is needed, then runs the linters, the type checker, the import contracts and
# the whole test suite. The Qt test modules each run in their own pytest process: Qt keeps
# process-wide state (one QApplication, deferred deletions), and isolating them keeps one
# module's leftovers from reaching another's event processing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "== ruff"; .venv/bin/ruff check core harnesses desktop tests bench
echo "== mypy (core)"; .venv/bin/mypy
echo "== import-linter"; .venv/bin/lint-imports
echo "== pytest"
# Every prerequisite is installed above: a skipped test is a check that did not run, and fails
# (tests/conftest.py).
export TANDEM_NO_SKIPS=1
status=0
summary=$(mktemp)
run() {
    local log
    log=$(mktemp)
    .venv/bin/python -m pytest "$@" 2>&1 | tee "$log" || status=1
    tail -n 1 "$log" >> "$summary"
    rm -f "$log"
}
run --ignore=tests/desktop "$@"
for module in tests/desktop/test_*.py; do
    run "$module" "$@"
done
passed=$( (grep -oE '[0-9]+ passed' "$summary" || true) | awk '{s += $1} END {print s + 0}')
failed=$( (grep -oE '[0-9]+ (failed|error|errors)' "$summary" || true) | awk '{s += $1} END {print s + 0}')
skipped=$( (grep -oE '[0-9]+ skipped' "$summary" || true) | awk '{s += $1} END {print s + 0}')
rm -f "$summary"
[ "$failed" -eq 0 ] && [ "$skipped" -eq 0 ] || status=1
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
