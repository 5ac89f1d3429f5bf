"""The importer fuzzer's corpus through opscope.load: every input gives a Trace or a
TraceError, never a crash or another exception.

The seeds are made as tools/run_fuzzers.sh makes them (each fixture cut to 40 events at its
start and middle, one gzip seed, the edge cases), each also cut and corrupted at random
(fixed seeds); the inputs a fuzz build saved (build-fuzz/fuzz-corpus/import) are added when
present."""

import functools
import gzip
import json
import random

import pytest

import opscope
from conftest import BINARY_DIR, SOURCE_DIR, all_fixture_traces

EDGE = ["", "{}", "[]", '{"traceEvents": []}', '{"traceEvents": [{"ph": "X"}]}',
        '[{"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 1}, '
        '{"ph": "E", "pid": 1, "tid": 1, "ts": 2}]']
SAVED_CORPUS_LIMIT = 300


@functools.lru_cache(maxsize=None)
def seeds():
    out = [text.encode() for text in EDGE]
    for path in all_fixture_traces():
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt") as f:
            doc = json.load(f)
        events = doc.get("traceEvents", [])
        small = {k: v for k, v in doc.items()
                 if k != "traceEvents" and len(json.dumps(v)) < 2000}
        mid = len(events) // 2
        for chunk in (events[:40], events[mid:mid + 40]):
            small["traceEvents"] = chunk
            out.append(json.dumps(small, indent=1).encode())
    if len(out) > len(EDGE):
        out.append(gzip.compress(out[len(EDGE)]))
    return tuple(out)


def mutations(data, rng, n=12):
    for _ in range(n):
        b = bytearray(data)
        op = rng.randrange(4)
        if op == 0 and b:  # cut short
            b = b[: rng.randrange(len(b))]
        elif op == 1 and b:  # overwrite bytes
            for _ in range(rng.randrange(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 2:  # insert structural characters
            for _ in range(rng.randrange(1, 4)):
                b.insert(rng.randrange(len(b) + 1), ord(rng.choice('{}[]",:\\0-e.')))
        elif b:  # duplicate a span
            i = rng.randrange(len(b))
            b[i:i] = b[i: i + rng.randrange(1, 200)]
        yield bytes(b)


def saved_corpus():
    for root in (BINARY_DIR.parent / "build-fuzz", SOURCE_DIR / "build-fuzz"):
        folder = root / "fuzz-corpus" / "import"
        if folder.is_dir():
            return [p.read_bytes() for p in sorted(folder.iterdir())[:SAVED_CORPUS_LIMIT]]
    return []


def check(path):
    try:
        trace = opscope.load(path)
    except opscope.TraceError as e:
        assert str(e) and e.file == str(path)
        return "error"
    # What loaded is usable end to end.
    trace.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    trace.slices()
    trace.ops()
    return "ok"


def test_fuzz_corpus_through_load(tmp_path):
    rng = random.Random(15)
    inputs = []
    for seed in seeds():
        inputs.append(seed)
        inputs.extend(mutations(seed, rng))
    inputs.extend(saved_corpus())
    outcomes = {"ok": 0, "error": 0}
    for i, data in enumerate(inputs):
        path = tmp_path / f"input_{i:04d}.json"
        path.write_bytes(data)
        outcomes[check(path)] += 1
        path.unlink()
    # The corpus holds both valid and broken traces; both paths ran.
    assert outcomes["ok"] > 10 and outcomes["error"] > 10, outcomes


def test_load_bytes_matches_load(tmp_path):
    data = seeds()[len(EDGE)]
    path = tmp_path / "seed.json"
    path.write_bytes(data)
    assert len(opscope.load_bytes(data)) == len(opscope.load(path))
    with pytest.raises(opscope.TraceError) as info:
        opscope.load_bytes(data[: len(data) // 2])
    assert info.value.offset > 0 and info.value.file == ""
