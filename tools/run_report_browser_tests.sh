#!/usr/bin/env bash
# Browser tests of the self-contained HTML reports (`opscope report|diff|check ... --html`).
#   tools/run_report_browser_tests.sh BUILD_DIR
# Installs playwright-core into tests/browser/node_modules (as run_browser_tests.sh does), then runs
# tests/browser/html_report.test.mjs: it generates the demo profiles and a trace of hostile names
# with BUILD_DIR/opscope, writes each kind of report, and opens them from file:// URLs in headless
# Debian chromium with the network refused. Exits non-zero on any failure; screenshots are left in
# BUILD_DIR/report-browser-artifacts/.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
if [ ! -x "$BUILD/opscope" ]; then
  echo "run_report_browser_tests: $BUILD/opscope is not built (run make build first)" >&2
  exit 1
fi
if ! command -v chromium >/dev/null 2>&1; then
  "$ROOT/tools/install_deps.sh" chromium
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  "$ROOT/tools/install_deps.sh" nodejs npm
fi
if [ ! -f "$ROOT/tests/browser/node_modules/playwright-core/package.json" ]; then
  (cd "$ROOT/tests/browser" && { npm ci --no-audit --no-fund || npm install --no-audit --no-fund; })
fi
WORK="$BUILD/report-browser-artifacts"
# A real model's trace (the fixture the Explorer's browser tests use), when the build knows the
# shared data (CMake cache variable OPSCOPE_SHARED_DIR): roofline points and memory curves.
SHARED=$(sed -n 's/^OPSCOPE_SHARED_DIR:PATH=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
FIXTURE_TRACE="$SHARED/fixtures/traces/tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
[ -n "$SHARED" ] && [ -f "$FIXTURE_TRACE" ] || FIXTURE_TRACE=""
export FIXTURE_TRACE
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$ROOT/tests/browser"
OPSCOPE="$BUILD/opscope" WORK="$WORK" CHROMIUM=$(command -v chromium) \
  node --test --test-reporter=spec html_report.test.mjs
