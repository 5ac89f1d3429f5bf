#!/bin/sh
# Regenerates the performance-model references: make_perf_traces.py writes the CUDA-shaped traces
# tests/data/traces/perf_*.json.gz, and TraceLens's perf report of each goes to
# tests/data/peers/tracelens/<trace> (analysis_perf_model_test compares opscope's perf_model with
# every row of its perf-model sheets).
#
#   tests/analysis/peers/make_perf_references.sh [SHARED_DIR]     (default: ../shared beside the repo)
#
# Needs Debian's python3 with pandas and TraceLens's source under SHARED_DIR/peers/tracelens
# (commit 171dd74; SHARED_DIR/peers/README.md). Each trace is run as
#   rebase.py TRACE tmp/trace.json.gz
#   PYTHONPATH=SHARED_DIR/peers/tracelens python3 -m TraceLens.Reporting.generate_perf_report_pytorch \
#     --profile_json_path tmp/trace.json.gz --output_csvs_dir tests/data/peers/tracelens/NAME \
#     --short_kernel_study
set -eu
repo=$(cd "$(dirname "$0")/../../.." && pwd)
shared=${1:-$repo/../shared}
[ -d "$shared/peers/tracelens" ] || shared=/work/shared
py=/usr/bin/python3
out=$repo/tests/data/peers/tracelens
mkdir -p "$out"

$py "$repo/tests/analysis/peers/make_perf_traces.py" "$repo/tests/data/traces"
for t in "$repo"/tests/data/traces/perf_*.json.gz; do
  name=$(basename "$t" .json.gz)
  rm -rf "${out:?}/$name"
  tmp=$(mktemp -d)
  $py "$repo/tests/analysis/peers/rebase.py" "$t" "$tmp/trace.json.gz"
  PYTHONPATH=$shared/peers/tracelens $py -m TraceLens.Reporting.generate_perf_report_pytorch \
    --profile_json_path "$tmp/trace.json.gz" --output_csvs_dir "$out/$name" \
    --short_kernel_study > /dev/null 2>&1 || echo "TraceLens failed on $t" >&2
  rm -rf "$tmp"
  # Only the sheets the tests read.
  rm -f "$out/$name/gpu_timeline.csv" "$out/$name/ops_summary.csv"
done
