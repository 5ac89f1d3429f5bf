#!/usr/bin/env bash
# Runs every benchmark built in BUILD_DIR/bench and prints their figures.
# Usage: tools/run_benchmarks.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
shopt -s nullglob
status=0
for bench in "$build"/bench/*_bench; do
  [ -x "$bench" ] || continue
  echo "=== $(basename "$bench") ==="
  "$bench" || { echo "benchmark $(basename "$bench") failed" >&2; status=1; }
  echo
done
exit $status
