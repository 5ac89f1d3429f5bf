#!/usr/bin/env bash
# Runs every benchmark built in BUILD_DIR/bench and prints their figures.
# Usage: tools/run_benchmarks.sh [BUILD_DIR]
# NEURON_BENCH_ARGS: flags for neuron_bench (default profile: 10 M instructions, 1 M DMA packets;
# the full size is "--instructions 50000000 --dma 5000000").
set -euo pipefail
build=${1:-build}
shopt -s nullglob
status=0
for bench in "$build"/bench/*_bench; do
  [ -x "$bench" ] || continue
  echo "=== $(basename "$bench") ==="
  args=()
  if [ "$(basename "$bench")" = neuron_bench ] && [ -n "${NEURON_BENCH_ARGS:-}" ]; then
    read -ra args <<<"$NEURON_BENCH_ARGS"
  fi
  "$bench" "${args[@]}" || { echo "benchmark $(basename "$bench") failed" >&2; status=1; }
  echo
done
exit $status
