#!/usr/bin/python3
"""Writes a copy of a Kineto trace with every timestamp moved by one whole number of microseconds,
so that the earliest starts near 0: the peers read timestamps as float64 microseconds, which at
epoch magnitudes (1.7e15 us) hold only quarter microseconds, and their decisions (was a launch
before the previous kernel's end?) would follow that rounding rather than the trace. The shift is
exact (decimal arithmetic on the text) and leaves every duration and every difference of times as
written.

  /usr/bin/python3 tests/analysis/peers/rebase.py IN.json[.gz] OUT.json[.gz]
"""
import decimal
import gzip
import json
import math
import sys


def _open(path, mode):
    return gzip.open(path, mode + "t") if path.endswith(".gz") else open(path, mode)


def _number(d):
    """A Decimal as the JSON number text it is: integral values without a fraction."""
    return int(d) if d == d.to_integral_value() else float(d)


def rebase(src, dst):
    with _open(src, "r") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    times = [e["ts"] for e in events if isinstance(e, dict) and "ts" in e]
    base = math.floor(min(times)) if times else 0
    for e in events:
        if not isinstance(e, dict):
            continue
        for key in ("ts", "dur"):
            if key in e and isinstance(e[key], (int, decimal.Decimal)):
                e[key] = _number(decimal.Decimal(e[key]) - (base if key == "ts" else 0))
    if isinstance(doc, dict) and "baseTimeNanoseconds" in doc:
        doc["baseTimeNanoseconds"] = int(doc["baseTimeNanoseconds"]) + int(base) * 1000

    def default(o):
        if isinstance(o, decimal.Decimal):
            return _number(o)
        raise TypeError(type(o))

    with _open(dst, "w") as f:
        json.dump(doc, f, default=default)
    return base


if __name__ == "__main__":
    rebase(sys.argv[1], sys.argv[2])
