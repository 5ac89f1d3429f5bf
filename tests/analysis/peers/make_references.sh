#!/bin/sh
# Regenerates the peers' answers the analysis tests compare opscope with (tests/data/peers/): HTA's
# idle-time breakdown and critical path (hta_reference.py) and TraceLens's perf report CSVs, on the
# shared fixture traces and on the traces of tests/data/traces/ (make_traces.py writes the
# synthetic ones; make_torch_traces.py the ones Debian's PyTorch records on this machine's CPU).
#
#   tests/analysis/peers/make_references.sh [SHARED_DIR]     (default: ../shared beside the repo)
#
# Needs Debian's python3 with pandas, numpy, networkx (HTA) and the peers' sources under
# SHARED_DIR/peers (HTA commit f4d0062, TraceLens commit 171dd74; SHARED_DIR/peers/README.md).
set -eu
repo=$(cd "$(dirname "$0")/../../.." && pwd)
shared=${1:-$repo/../shared}
[ -d "$shared/peers/hta" ] || shared=/work/shared
py=/usr/bin/python3
fixtures=$shared/fixtures/traces
out=$repo/tests/data/peers
mkdir -p "$out/hta" "$out/tracelens"

$py "$repo/tests/analysis/peers/make_traces.py" "$repo/tests/data/traces"

hta() {  # TRACE NAME [--step STEP:INSTANCE ...]
  trace=$1 name=$2
  shift 2
  HTA_DISABLE_NS_ROUNDING=1 PYTHONPATH=$shared/peers/hta \
    $py "$repo/tests/analysis/peers/hta_reference.py" "$trace" "$out/hta/$name.json" "$@" \
    > "$out/hta/$name.log" 2>&1 || echo "HTA failed on $trace: $out/hta/$name.log" >&2
  rm -f "$out/hta/$name.log"
}

tracelens() {  # TRACE NAME (timestamps moved near 0 first, exactly: see rebase.py)
  rm -rf "$out/tracelens/$2"
  tmp=$(mktemp -d)
  $py "$repo/tests/analysis/peers/rebase.py" "$1" "$tmp/trace.json.gz"
  PYTHONPATH=$shared/peers/tracelens $py -m TraceLens.Reporting.generate_perf_report_pytorch \
    --profile_json_path "$tmp/trace.json.gz" --output_csvs_dir "$out/tracelens/$2" \
    --short_kernel_study > /dev/null 2>&1 || echo "TraceLens failed on $1" >&2
  rm -rf "$tmp"
  # Only the sheets the tests read.
  rm -f "$out/tracelens/$2/gpu_timeline.csv" "$out/tracelens/$2/ops_summary.csv"
}

hta "$fixtures/hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz" \
  simple_add --step "[param|pytorch.model.alex_net|0|0|0|measure|forward]:0"
hta "$fixtures/hta/nccl_parser_config/nccl_data.json.gz" nccl_data --step ProfilerStep:0
hta "$fixtures/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz" \
  ns_resolution --step ProfilerStep:0 --step ProfilerStep:1
hta "$fixtures/hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz" cpu_only \
  --step ProfilerStep:0
hta "$fixtures/hta/triton_example/triton_example.json.gz" triton_example --step ProfilerStep:0
hta "$fixtures/hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz" mi250_minitoy \
  --step ProfilerStep:0 --step ProfilerStep:1
hta "$fixtures/hta/mtia_inference_trace/mtia_inference_rank_0.json.gz" mtia_inference
for m in Qwen_Qwen1.5-0.5B-Chat__1016005 Falconsai_nsfw_image_detection__1016002; do
  hta "$fixtures/tracelens/mi300/$m.json.gz" "$m" --step ProfilerStep:0
done
for t in "$repo"/tests/data/traces/*.json.gz; do
  name=$(basename "$t" .json.gz)
  case $name in perf_*) continue ;; esac  # make_perf_references.sh's
  hta "$t" "$name" --step ProfilerStep:0 --step ProfilerStep:1 --step ProfilerStep:2
  tracelens "$t" "$name"
done
