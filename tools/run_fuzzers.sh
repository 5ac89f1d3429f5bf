#!/usr/bin/env bash
# Runs opscope's libFuzzer targets for a bounded time, seeded from the shared trace fixtures.
#   tools/run_fuzzers.sh BUILD_DIR SECONDS
# BUILD_DIR is a build configured with -DOPSCOPE_FUZZ=ON (make fuzz). Exits non-zero when a
# fuzzer finds a crash, a leak, a timeout or an out-of-memory input (the reproducer is left in
# BUILD_DIR/fuzz-artifacts/).
set -euo pipefail

build=${1:?usage: run_fuzzers.sh BUILD_DIR SECONDS}
seconds=${2:?usage: run_fuzzers.sh BUILD_DIR SECONDS}
fuzzer="$build/fuzz/import_fuzz"

if [[ ! -x "$fuzzer" ]]; then
  cmake --build "$build" --target import_fuzz -j "${JOBS:-2}"
fi

# The shared data as the build was configured (CMake cache variable OPSCOPE_SHARED_DIR).
shared=$(sed -n 's/^OPSCOPE_SHARED_DIR:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
fixtures="$shared/fixtures/traces"
if [[ -z "$shared" || ! -d "$fixtures" ]]; then
  echo "run_fuzzers.sh: trace fixtures not found at '$fixtures' (OPSCOPE_SHARED_DIR in $build/CMakeCache.txt; configure with -DOPSCOPE_SHARED_DIR=...)" >&2
  exit 1
fi

seeds="$build/fuzz-seeds/import"
corpus="$build/fuzz-corpus/import"
artifacts="$build/fuzz-artifacts/"
mkdir -p "$seeds" "$corpus" "$artifacts"

# Seeds: each fixture decompressed and cut down to its first events (valid JSON, a few KB, so
# the fuzzer mutates structure rather than megabytes), plus one gzip seed and a few edge cases.
python3 - "$fixtures" "$seeds" <<'PY'
import gzip, json, os, sys
src, dst = sys.argv[1], sys.argv[2]
n = 0
for dirpath, _, files in os.walk(src):
    for name in sorted(files):
        if not name.endswith(('.json', '.json.gz')):
            continue
        path = os.path.join(dirpath, name)
        opener = gzip.open if name.endswith('.gz') else open
        with opener(path, 'rt') as f:
            doc = json.load(f)
        events = doc.get('traceEvents', [])
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
PY

echo "run_fuzzers.sh: import_fuzz for ${seconds}s ($(ls "$seeds" | wc -l) seeds)"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$fuzzer" "$corpus" "$seeds" \
  -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$artifacts" -print_final_stats=1 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
if [[ $status -ne 0 ]]; then
  echo "run_fuzzers.sh: import_fuzz failed (exit $status); reproducer in $artifacts" >&2
  exit "$status"
fi
echo "run_fuzzers.sh: import_fuzz passed"
