#!/usr/bin/env bash
# Runs opscope's libFuzzer targets for a bounded time in all, seeded from the shared fixtures.
# The time is shared by weight (FUZZERS below, each at least 3 s):
#   import_fuzz   the trace importer (and the analyses on what it imports), weight 3
#   op_args_fuzz  the record_shapes args parsers (Input Dims, Input type, Input Strides, Concrete
#                 Inputs), weight 1
#   parquet_fuzz  the Parquet reader (footer, pages, encodings, codecs, assembly), seeded with the
#                 parquet-testing files, weight 1
#   perfetto_fuzz the Perfetto reader and the writer's round trip, seeded from Perfetto's
#                 TrackEvent cases (encoded by protoc) and nested_tracks.perfetto-trace, weight 1
#   xplane_fuzz   the XPlane reader (XSpace protobuf; XProf's JSON), weight 1
#   nsys_fuzz     the Nsight Systems reader (SQLite images), weight 1
#   neuron_json_fuzz the legacy Neuron profiler JSON reader, seeded from fuzz-seeds/neuron_json,
#                 weight 1
#   tools/run_fuzzers.sh BUILD_DIR SECONDS
# BUILD_DIR is a build configured with -DOPSCOPE_FUZZ=ON (make fuzz). Exits non-zero when a
# fuzzer finds a crash, a broken invariant, a leak, a timeout or an out-of-memory input (the
# reproducer is left in BUILD_DIR/fuzz-artifacts/).
set -euo pipefail

build=${1:?usage: run_fuzzers.sh BUILD_DIR SECONDS}
seconds=${2:?usage: run_fuzzers.sh BUILD_DIR SECONDS}
# NAME:WEIGHT:MAX_LEN, run in this order.
FUZZERS=(import_fuzz:3:65536 op_args_fuzz:1:4096 parquet_fuzz:1:65536 perfetto_fuzz:1:65536
          xplane_fuzz:1:16384 nsys_fuzz:1:65536 torch_merge_fuzz:1:32768
          neuron_json_fuzz:1:65536)
total_weight=0
for entry in "${FUZZERS[@]}"; do
  IFS=: read -r _ weight _ <<< "$entry"
  total_weight=$(( total_weight + weight ))
done

for entry in "${FUZZERS[@]}"; do
  fuzzer=${entry%%:*}
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
for entry in "${FUZZERS[@]}"; do
  fuzzer=${entry%%:*}
  mkdir -p "$build/fuzz-seeds/${fuzzer%_fuzz}"
done
mkdir -p "$artifacts"

# neuron_json: small device and system profiles of the documented structure, kept in the tree.
cp "$(dirname "$0")"/../fuzz-seeds/neuron_json/*.json "$build/fuzz-seeds/neuron_json/"

# parquet: the format's own test files (apache/parquet-testing) up to the fuzzer's input size.
parquet_fixtures="$shared/fixtures/parquet/parquet-testing"
if [[ ! -d "$parquet_fixtures" ]]; then
  echo "run_fuzzers.sh: Parquet fixtures not found at '$parquet_fixtures'" >&2
  exit 1
fi
find "$parquet_fixtures" -name '*.parquet' -size -65536c -exec cp {} "$build/fuzz-seeds/parquet/" \;

# perfetto: Perfetto's TrackEvent conformance cases as binary traces (protoc encodes them, as the
# conformance test does) and the binary fixture.
perfetto_fixtures="$shared/fixtures/perfetto"
cp "$perfetto_fixtures/nested_tracks.perfetto-trace" "$build/fuzz-seeds/perfetto/"
if command -v protoc > /dev/null; then
  python3 "$(dirname "$0")/../tests/import/perfetto/extract_cases.py" \
    --tests "$perfetto_fixtures/track_event/tests.py" --proto "$perfetto_fixtures/perfetto_trace.proto" \
    --protoc "$(command -v protoc)" --out "$build/fuzz-seeds/perfetto-cases" > /dev/null
  cp "$build"/fuzz-seeds/perfetto-cases/*.pftrace "$build/fuzz-seeds/perfetto/"
else
  echo "run_fuzzers.sh: protoc not found; perfetto_fuzz starts from nested_tracks.perfetto-trace alone" >&2
fi

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

# Seeds of the binary readers. xplane: small XSpaces re-encoded from protoc's decode of the GPU
# fixture (each plane's first lines and events, with the metadata they name), the corrupt TPU
# fixture's first KiB, and an XProf trace JSON; nsys: small exports with nsys's own table
# definitions and the pipit fixture's first rows (Python's sqlite3, 1 KiB pages).
python3 - "$shared" "$build/fuzz-seeds" "$(dirname "$0")/../tests/import/xplane" <<'PY'
import os, sqlite3, sys
shared, seeds, xplane_tools = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, xplane_tools)
import xspace_text

def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)

def field(tag, wire, payload):
    key = varint(tag << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload

def message(msg, schema):
    """Re-encode a decoded message: schema maps a field name to (tag, wire or a sub-schema)."""
    out = b""
    for name, values in msg.items():
        if name not in schema:
            continue
        tag, kind = schema[name]
        for v in values:
            if isinstance(kind, dict):
                out += field(tag, 2, message(v, kind))
            elif kind == "string":
                out += field(tag, 2, v.encode())
            elif kind == "double":
                import struct
                out += varint(tag << 3 | 1) + struct.pack("<d", v)
            else:
                out += field(tag, 0, v)
    return out

STAT = {"metadata_id": (1, "int"), "double_value": (2, "double"), "uint64_value": (3, "int"),
        "int64_value": (4, "int"), "str_value": (5, "string"), "ref_value": (7, "int")}
EVENT = {"metadata_id": (1, "int"), "offset_ps": (2, "int"), "duration_ps": (3, "int"),
         "stats": (4, STAT)}
LINE = {"id": (1, "int"), "name": (2, "string"), "timestamp_ns": (3, "int"),
        "display_name": (11, "string"), "events": (4, EVENT)}
EMD = {"id": (1, "int"), "name": (2, "string"), "display_name": (4, "string"), "stats": (5, STAT)}
SMD = {"id": (1, "int"), "name": (2, "string")}
ENTRY_E = {"key": (1, "int"), "value": (2, EMD)}
ENTRY_S = {"key": (1, "int"), "value": (2, SMD)}
PLANE = {"id": (1, "int"), "name": (2, "string"), "lines": (3, LINE),
         "event_metadata": (4, ENTRY_E), "stat_metadata": (5, ENTRY_S), "stats": (6, STAT)}

out = os.path.join(seeds, "xplane")
proto = os.path.join(shared, "reference", "xplane")
gpu = os.path.join(shared, "fixtures", "traces", "xplane", "tensorflow-profiler")
n = 0
for name in sorted(os.listdir(gpu)):
    if not name.endswith(".xplane.pb"):
        continue
    space = xspace_text.decode(os.path.join(gpu, name), proto)
    for plane in space.get("planes", []):
        lines = [dict(l, events=l.get("events", [])[:4]) for l in plane.get("lines", [])[:3]]
        used_e = {xspace_text.one(e, "metadata_id", 0) for l in lines for e in l["events"]}
        used_s = {xspace_text.one(s, "metadata_id", 0) for l in lines for e in l["events"]
                  for s in e.get("stats", [])} | {xspace_text.one(s, "metadata_id", 0)
                                                  for s in plane.get("stats", [])}
        small = dict(plane, lines=lines,
                     event_metadata=[e for e in plane.get("event_metadata", [])
                                     if xspace_text.one(e, "key", 0) in used_e],
                     stat_metadata=[e for e in plane.get("stat_metadata", [])
                                    if xspace_text.one(e, "key", 0) in used_s])
        with open(os.path.join(out, f"plane_{n:02d}.xplane.pb"), "wb") as f:
            f.write(field(1, 2, message(small, PLANE)))
        n += 1
with open(os.path.join(shared, "fixtures", "traces", "xplane", "xprof", "tpu_inference_2.xplane.pb"), "rb") as f:
    corrupt = f.read(1024)
with open(os.path.join(out, "corrupt_tpu.xplane.pb"), "wb") as f:
    f.write(corrupt)
with open(os.path.join(out, "xprof.trace.json"), "w") as f:
    f.write('{"displayTimeUnit":"ns","traceEvents":['
            '{"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:GPU:0"}},'
            '{"ph":"M","pid":1,"tid":13,"name":"thread_name","args":{"name":"Stream #13"}},'
            '{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"XLA Ops"}},'
            '{"pid":1,"tid":13,"name":"k","ts":1.0000005,"dur":2.5e-06,"ph":"X",'
            '"args":{"correlation_id":"3","hlo_op":"f"}},'
            '{"pid":1,"tid":2,"name":"f","ts":1,"dur":3.0004999999999999,"ph":"X"}]}')

out = os.path.join(seeds, "nsys")
source = sqlite3.connect("file:" + os.path.join(shared, "fixtures", "nsys", "pipit",
                                                "saxpy-mpi-cuda_nsys_perlmutter0.sqlite") +
                         "?immutable=1", uri=True)
tables = ["StringIds", "ThreadNames", "PROCESSES", "TARGET_INFO_GPU", "EXPORT_META_DATA",
          "TARGET_INFO_SESSION_START_TIME", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME",
          "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
          "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"]
for seed, rows in enumerate((2, 6)):
    path = os.path.join(out, f"export_{seed}.sqlite")
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size = 1024")
    for table in tables:
        (sql,) = source.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
        db.execute(sql)
        # StringIds: the short names (a few strings are whole configuration files).
        query = (f"SELECT * FROM {table} WHERE length(CAST(value AS BLOB)) < 200" if table == "StringIds"
                 else f"SELECT * FROM {table} LIMIT {rows}")
        for row in source.execute(query):
            db.execute(f"INSERT INTO {table} VALUES ({','.join('?' * len(row))})", row)
    db.commit()
    db.execute("VACUUM")
    db.close()
PY

# torch_merge: a torch trace (an op, its runtime call with an execution id, its device event) and a
# Neuron-like trace (the runtime call with that id, a hardware execution, one with no ids) separated
# by a NUL byte; and the same pair with no epoch base times.
python3 - "$build/fuzz-seeds/torch_merge" <<'PY'
import json, os, sys
out = sys.argv[1]
def ev(cat, name, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}
torch = [ev("cpu_op", "aten::mul", 100, 100, 10.0, 500.0, **{"External id": 1}),
         ev("privateuse1_runtime", "nrta_execute_schedule", 100, 100, 20.0, 50.0,
            **{"External id": 1, "correlation": 11, "execution_id": 7}),
         ev("kernel", "nc_exec_running", 0, 0, 100.0, 250.0, **{"External id": 1, "correlation": 11}),
         ev("cpu_op", "aten::add", 100, 100, 600.0, 400.0, **{"External id": 2})]
neuron = [ev("privateuse1_runtime", "nrta_execute_schedule", 100, 100, 20.0, 50.0,
             correlation=1, flow_id=["f1"], extra_attributes={"execution_id": 7}),
          ev("kernel", "nc_exec_running", 0, 0, 100.0, 300.0, correlation=1, flow_id=["f1"]),
          ev("privateuse1_runtime", "nrta_execute_schedule", 100, 100, 620.0, 40.0, correlation=2),
          ev("kernel", "nc_exec_running", 0, 0, 700.0, 403.3, correlation=2),
          {"ph": "M", "name": "process_labels", "pid": 0, "args": {"labels": "NEURON 0"}}]
for name, base in (("ids_and_time", 1700000000000000000), ("no_epoch", None)):
    docs = []
    for events in (torch, neuron):
        d = {"schemaVersion": 1, "traceEvents": events}
        if base is not None:
            d["baseTimeNanoseconds"] = base
        docs.append(json.dumps(d).encode())
    with open(os.path.join(out, name), "wb") as f:
        f.write(docs[0] + b"\0" + docs[1])
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

for entry in "${FUZZERS[@]}"; do
  IFS=: read -r fuzzer weight max_len <<< "$entry"
  time=$(( seconds * weight / total_weight ))
  run "$fuzzer" $(( time > 3 ? time : 3 )) "$max_len"
done
