#!/usr/bin/env bash
# Browser tests of the Explorer in real headless Chromium.
#   tools/run_browser_tests.sh BUILD_DIR [TEST.mjs...]   (default: every test, explorer.test.mjs)
# Installs Debian's chromium if missing and playwright-core into tests/browser/node_modules,
# generates the demo profile, starts `opscope explore` on a free loopback port with the demo
# profile and two CUDA fixture traces (a small one, and a real model with deep Python stacks),
# generates a 4-rank job with a straggler (`opscope demo allreduce`), writes its `opscope report
# --json` and serves it with a second `opscope explore` (the job page), serves a named pipe and a
# corrupt trace with a third (the loading state; the test writes the trace into the pipe), serves a
# folder of single traces with a fourth (an epoch-timestamp copy of the small fixture and a trace
# of look-alike names, tests/browser/make_traces.mjs: not one job), writes
# `opscope report --memory --json` of the real model's trace (the memory lanes' reference), runs
# tests/browser/explorer.test.mjs, writes screenshots into BUILD_DIR/browser-artifacts/, stops
# the servers, and exits non-zero on any failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
shift || true
TESTS=("$@")
[ ${#TESTS[@]} -eq 0 ] && TESTS=(explorer.test.mjs)
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
SERVER_PIDS=()
cleanup() {
  for pid in "${SERVER_PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
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

# A multi-rank job: 4 simulated NeuronCores, rank 2 computing 300 us longer every step, its rank
# files moved to epoch timestamps (~1.67e18 ns) as a real job's are.
JOB="$WORK/job"
if ! "$OPSCOPE" demo allreduce --ranks 4 --steps 3 --straggler 2 --delay-us 300 --out "$WORK/job-demo" \
    >"$WORK/job-demo.log" 2>&1; then
  echo "run_browser_tests: 'opscope demo allreduce' failed:" >&2
  tail -5 "$WORK/job-demo.log" >&2 || true
  exit 1
fi
node "$ROOT/tests/browser/make_traces.mjs" shift "$WORK/job-demo" "$JOB"

# A folder of single traces (not one job): an epoch copy of the small CUDA trace and a trace of
# names that shorten alike, deep Python frames and kernels of several durations.
SINGLES="$WORK/singles"
node "$ROOT/tests/browser/make_traces.mjs" epoch "$CUDA_SMALL" "$SINGLES/epoch_simple_add.json"
node "$ROOT/tests/browser/make_traces.mjs" names "$SINGLES/names.json"
if ! "$OPSCOPE" report "$JOB" --json >"$WORK/job-report.json" 2>"$WORK/job-report.log"; then
  echo "run_browser_tests: 'opscope report $JOB --json' failed:" >&2
  cat "$WORK/job-report.log" >&2
  exit 1
fi

# The memory timeline of the real trace, as the CLI reports it (the memory lanes' reference).
if ! "$OPSCOPE" report --memory --json "$CUDA_DEEP" >"$WORK/memory-report.json" 2>"$WORK/memory-report.log"; then
  echo "run_browser_tests: 'opscope report --memory --json $CUDA_DEEP' failed:" >&2
  cat "$WORK/memory-report.log" >&2
  exit 1
fi

# 3. The servers, on free loopback ports: start_server LOG PATTERN ARGS... sets URL to the first
# match of PATTERN in the server's output.
start_server() {
  local log=$1 pattern=$2
  shift 2
  "$OPSCOPE" explore "$@" --port 0 >"$log" 2>&1 &
  local pid=$!
  SERVER_PIDS+=("$pid")
  URL=""
  for _ in $(seq 1 600); do
    URL=$(grep -o -m1 "$pattern" "$log" || true)
    [ -n "$URL" ] && break
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  if [ -z "$URL" ]; then
    echo "run_browser_tests: opscope explore $* did not start:" >&2
    cat "$log" >&2
    exit 1
  fi
}
start_server "$WORK/server.log" 'http://127\.0\.0\.1:[0-9]*/' "${PATHS[@]}"
echo "run_browser_tests: Explorer at $URL"
start_server "$WORK/job-server.log" 'http://127\.0\.0\.1:[0-9]*/job\.html' "$JOB"
JOB_URL=$URL
start_server "$WORK/singles-server.log" 'http://127\.0\.0\.1:[0-9]*/job\.html' "$SINGLES"
SINGLES_URL=$URL
# The loading state: a server on a named pipe the test writes the small CUDA trace into (the
# import waits for it), beside a truncated trace that cannot be opened.
STREAM="$WORK/stream"
mkdir -p "$STREAM"
mkfifo "$STREAM/streamed.json.gz"
printf '{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1},{"ph":"X","name":"b' \
  >"$STREAM/corrupt.json"
start_server "$WORK/stream-server.log" 'http://127\.0\.0\.1:[0-9]*/' \
  "$STREAM/streamed.json.gz" "$STREAM/corrupt.json"
STREAM_URL=$URL
URL=$(grep -o -m1 'http://127\.0\.0\.1:[0-9]*/' "$WORK/server.log")
echo "run_browser_tests: job page at $JOB_URL, loading state at $STREAM_URL"

# 4. The tests.
rm -rf "$ARTIFACTS"
mkdir -p "$ARTIFACTS"
status=0
(cd "$ROOT/tests/browser" &&
  OPSCOPE_URL="$URL" OPSCOPE_JOB_URL="$JOB_URL" OPSCOPE_JOB_REPORT="$WORK/job-report.json" \
    OPSCOPE_MEMORY_REPORT="$WORK/memory-report.json" \
    OPSCOPE_STREAM_URL="$STREAM_URL" OPSCOPE_STREAM_FIFO="$STREAM/streamed.json.gz" \
    OPSCOPE_STREAM_TRACE="$CUDA_SMALL" \
    OPSCOPE_SINGLES_URL="$SINGLES_URL" OPSCOPE_EPOCH_TRACE="$SINGLES/epoch_simple_add.json" \
    CHROMIUM="$CHROMIUM" ARTIFACTS="$ARTIFACTS" \
    node --test --test-reporter=spec "${TESTS[@]}") || status=$?
cp "$WORK/server.log" "$ARTIFACTS/server.log" || true
cp "$WORK/job-server.log" "$ARTIFACTS/job-server.log" || true
cp "$WORK/stream-server.log" "$ARTIFACTS/stream-server.log" || true
cp "$WORK/singles-server.log" "$ARTIFACTS/singles-server.log" || true
echo "run_browser_tests: screenshots in $ARTIFACTS"
if [ "$status" -ne 0 ]; then
  echo "run_browser_tests: FAILED" >&2
fi
exit "$status"
