#!/usr/bin/env bash
# Browser tests of the Explorer in real headless Chromium.
#   tools/run_browser_tests.sh BUILD_DIR
# Installs Debian's chromium if missing and playwright-core into tests/browser/node_modules,
# generates the demo profile, starts `opscope explore` on a free loopback port with the demo
# profile and two CUDA fixture traces (a small one, and a real model with deep Python stacks),
# runs tests/browser/explorer.test.mjs, writes screenshots into BUILD_DIR/browser-artifacts/,
# stops the server, and exits non-zero on any failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OPSCOPE="$BUILD/opscope"
ARTIFACTS="$BUILD/browser-artifacts"

if [ ! -x "$OPSCOPE" ]; then
  echo "run_browser_tests: $OPSCOPE is not built (run make build first)" >&2
  exit 1
fi

# 1. Chromium from Debian, and playwright-core from npm (pinned by package-lock.json).
if ! command -v chromium >/dev/null 2>&1; then
  "$ROOT/tools/install_deps.sh" chromium
fi
CHROMIUM=$(command -v chromium)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  "$ROOT/tools/install_deps.sh" nodejs npm
fi
if [ ! -f "$ROOT/tests/browser/node_modules/playwright-core/package.json" ]; then
  (cd "$ROOT/tests/browser" && { npm ci --no-audit --no-fund || npm install --no-audit --no-fund; })
fi

# 2. Data: the demo profile (a synthetic Neuron-style trace if the demo fails) and two CUDA fixtures.
WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# The shared data as the build was configured (CMake cache variable OPSCOPE_SHARED_DIR).
SHARED=$(sed -n 's/^OPSCOPE_SHARED_DIR:PATH=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
CUDA_SMALL="$SHARED/fixtures/traces/hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz"
CUDA_DEEP="$SHARED/fixtures/traces/tracelens/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
for f in "$CUDA_SMALL" "$CUDA_DEEP"; do
  if [ -z "$SHARED" ] || [ ! -f "$f" ]; then
    echo "run_browser_tests: the fixture trace $f is missing (OPSCOPE_SHARED_DIR in $BUILD/CMakeCache.txt; configure with -DOPSCOPE_SHARED_DIR=...)" >&2
    exit 1
  fi
done

PATHS=()
if "$OPSCOPE" demo rmsnorm --out "$WORK/profile" >"$WORK/demo.log" 2>&1; then
  PATHS+=("$WORK/profile")
else
  echo "run_browser_tests: 'opscope demo rmsnorm' failed; using a synthetic Neuron-style trace:" >&2
  tail -5 "$WORK/demo.log" >&2 || true
  PATHS+=(--synthetic 20000)
fi
PATHS+=("$CUDA_SMALL" "$CUDA_DEEP")

# 3. The server, on a free loopback port.
"$OPSCOPE" explore "${PATHS[@]}" --port 0 >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
URL=""
for _ in $(seq 1 600); do
  URL=$(grep -o -m1 'http://127\.0\.0\.1:[0-9]*/' "$WORK/server.log" || true)
  [ -n "$URL" ] && break
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
  sleep 0.1
done
if [ -z "$URL" ]; then
  echo "run_browser_tests: opscope explore did not start:" >&2
  cat "$WORK/server.log" >&2
  exit 1
fi
echo "run_browser_tests: Explorer at $URL"

# 4. The tests.
rm -rf "$ARTIFACTS"
mkdir -p "$ARTIFACTS"
status=0
(cd "$ROOT/tests/browser" &&
  OPSCOPE_URL="$URL" CHROMIUM="$CHROMIUM" ARTIFACTS="$ARTIFACTS" \
    node --test --test-reporter=spec explorer.test.mjs) || status=$?
cp "$WORK/server.log" "$ARTIFACTS/server.log" || true
echo "run_browser_tests: screenshots in $ARTIFACTS"
if [ "$status" -ne 0 ]; then
  echo "run_browser_tests: FAILED" >&2
fi
exit "$status"
