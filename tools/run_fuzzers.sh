#!/usr/bin/env bash
# Runs opscope's libFuzzer targets for a bounded time in all, seeded from the shared fixtures:
#   import_fuzz   the trace importer (and the analyses on what it imports), 4/6 of the time
#   op_args_fuzz  the record_shapes args parsers (Input Dims, Input type, Input Strides, Concrete
#                 Inputs), 1/6 (10 s of make test's 60)
#   parquet_fuzz  the Parquet reader (footer, pages, encodings, codecs, assembly), seeded with the
#                 parquet-testing files, 1/6
#   tools/run_fuzzers.sh BUILD_DIR SECONDS
# BUILD_DIR is a build configured with -DOPSCOPE_FUZZ=ON (make fuzz). Exits non-zero when a
# fuzzer finds a crash, a broken invariant, a leak, a timeout or an out-of-memory input (the
# reproducer is left in BUILD_DIR/fuzz-artifacts/).
set -euo pipefail

build=${1:?usage: run_fuzzers.sh BUILD_DIR SECONDS}
seconds=${2:?usage: run_fuzzers.sh BUILD_DIR SECONDS}
args_seconds=$(( seconds / 6 > 0 ? seconds / 6 : 1 ))
parquet_seconds=$args_seconds
import_seconds=$(( seconds - args_seconds - parquet_seconds > 0 ? seconds - args_seconds - parquet_seconds : 1 ))

for fuzzer in import_fuzz op_args_fuzz parquet_fuzz; do
  if [[ ! -x "$build/fuzz/$fuzzer" ]]; then
    cmake --build "$build" --target "$fuzzer" -j "${JOBS:-2}"
  fi
done

# The shared data as the build was configured (CMake cache variable OPSCOPE_SHARED_DIR).
shared=$(sed -n 's/^OPSCOPE_SHARED_DIR:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
fixtures="$shared/fixtures/traces"
if [[ -z "$shared" || ! -d "$fixtures" ]]; then
  echo "run_fuzzers.sh: trace fixtures not found at '$fixtures' (OPSCOPE_SHARED_DIR in $build/CMakeCache.txt; configure with -DOPSCOPE_SHARED_DIR=...)" >&2
  exit 1
fi

artifacts="$build/fuzz-artifacts/"
mkdir -p "$build/fuzz-seeds/import" "$build/fuzz-seeds/op_args" "$build/fuzz-seeds/parquet" \
  "$artifacts"

# parquet: the format's own test files (apache/parquet-testing) up to the fuzzer's input size.
parquet_fixtures="$shared/fixtures/parquet/parquet-testing"
if [[ ! -d "$parquet_fixtures" ]]; then
  echo "run_fuzzers.sh: Parquet fixtures not found at '$parquet_fixtures'" >&2
  exit 1
fi
find "$parquet_fixtures" -name '*.parquet' -size -65536c -exec cp {} "$build/fuzz-seeds/parquet/" \;

# import: the inputs the fuzzer found before (fixtures/fuzz-crashes/import_*), kept as seeds so
# every run checks them again (the parse paths once disagreed on them; tests/import checks them
# too).
find "$shared/fixtures/fuzz-crashes" -name 'import_*' -exec cp {} "$build/fuzz-seeds/import/" \; \
  2>/dev/null || true

# Seeds. import: each fixture decompressed and cut down to its first events (valid JSON, a few
# KB, so the fuzzer mutates structure rather than megabytes), plus one gzip seed and a few edge
# cases. op_args: the distinct args objects of the fixtures' ops that carry record_shapes keys,
# as the traces hold them, and their Input Dims / Input Strides texts on their own.
python3 - "$fixtures" "$build/fuzz-seeds" <<'PY'
import gzip, json, os, sys
src, seeds = sys.argv[1], sys.argv[2]
dst = os.path.join(seeds, 'import')
n = 0
shape_keys = ('Input Dims', 'Input type', 'Input Strides', 'Concrete Inputs')
args_seeds = {}
for dirpath, _, files in os.walk(src):
    for name in sorted(files):
        if not name.endswith(('.json', '.json.gz')):
            continue
        path = os.path.join(dirpath, name)
        opener = gzip.open if name.endswith('.gz') else open
        with opener(path, 'rt') as f:
            doc = json.load(f)
        events = doc.get('traceEvents', [])
        for ev in events:
            args = ev.get('args') if isinstance(ev, dict) else None
            if not isinstance(args, dict) or not any(k in args for k in shape_keys):
                continue
            for text in [json.dumps(args)] + [json.dumps(args[k]) for k in ('Input Dims', 'Input Strides') if k in args]:
                if len(args_seeds) < 400 and len(text) < 4096:
                    args_seeds.setdefault(text, len(args_seeds))
        small = {k: v for k, v in doc.items() if k != 'traceEvents' and len(json.dumps(v)) < 2000}
        for part, chunk in enumerate((events[:40], events[len(events) // 2:len(events) // 2 + 40])):
            small['traceEvents'] = chunk
            text = json.dumps(small, indent=1)
            with open(os.path.join(dst, f'seed_{n:03d}.json'), 'w') as out:
                out.write(text)
            n += 1
        if n == 2:
            with gzip.open(os.path.join(dst, 'seed_gzip.json.gz'), 'wt') as out:
                out.write(text)
edge = ['', '{}', '[]', '{"traceEvents": []}', '{"traceEvents": [{"ph": "X"}]}',
        '[{"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 1}, {"ph": "E", "pid": 1, "tid": 1, "ts": 2}]']
for i, text in enumerate(edge):
    with open(os.path.join(dst, f'edge_{i}.json'), 'w') as out:
        out.write(text)
if not args_seeds:
    sys.exit('run_fuzzers.sh: no op with record_shapes args in the fixtures')
for text, i in args_seeds.items():
    with open(os.path.join(seeds, 'op_args', f'seed_{i:03d}.json'), 'w') as out:
        out.write(text)
PY

# run NAME SECONDS MAX_LEN: one fuzzer on its seeds and its corpus (kept between runs).
run() {
  local name=$1 time=$2 max_len=$3
  local seeds="$build/fuzz-seeds/${name%_fuzz}" corpus="$build/fuzz-corpus/${name%_fuzz}"
  mkdir -p "$corpus"
  echo "run_fuzzers.sh: $name for ${time}s ($(ls "$seeds" | wc -l) seeds)"
  local status
  set +e
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  "$build/fuzz/$name" "$corpus" "$seeds" \
    -max_total_time="$time" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts" -print_final_stats=1 2>&1 | tail -n 25
  status=${PIPESTATUS[0]}
  set -e
  if [[ $status -ne 0 ]]; then
    echo "run_fuzzers.sh: $name failed (exit $status); reproducer in $artifacts" >&2
    exit "$status"
  fi
  echo "run_fuzzers.sh: $name passed"
}

run import_fuzz "$import_seconds" 65536
run op_args_fuzz "$args_seconds" 4096
run parquet_fuzz "$parquet_seconds" 65536
