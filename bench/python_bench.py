#!@Python_EXECUTABLE@
"""The Python module against the CLI, side by side on one generated trace.

    build/bench/python_bench                 1 GiB generated trace (about 6M slices)
    build/bench/python_bench --mb 128        a quick run
    OPSCOPE_PYTHON_BENCH_MB=128 build/bench/python_bench

Figures (best of --runs, each in a fresh process so caches of one do not help the other):
  - `opscope report --json FILE` (the CLI) against `opscope.load(FILE)` + `trace.report_json()`
    in Python: the same import and the same analyses. Target: Python within 10 % of the CLI.
  - `Trace.slices()`: the DataFrame of every slice, scaled to 3M slices. Target: < 1 s.
The generated file is kept in /tmp (reused by later runs of the same size).
"""

import argparse
import os
import subprocess
import sys
import time

BINARY_DIR = "@PROJECT_BINARY_DIR@"
PYTHON = "@Python_EXECUTABLE@"
SLICES_TARGET = 3_000_000


def generate(path, mb):
    """A Kineto trace of ~mb MiB: per step a ProfilerStep annotation over cpu_ops, each
    launching a kernel through a runtime call (External id / correlation), as real traces."""
    if os.path.exists(path):
        return
    target = mb * 1024 * 1024
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write('{"schemaVersion": 1, "deviceProperties": [], "traceEvents": [\n')
        written, ts, ext, first = 0, 1_000_000, 1, True
        ops = ["aten::mm", "aten::add", "aten::mul", "aten::rsqrt", "aten::mean", "aten::copy_"]
        while written < target:
            parts = []
            for step in range(100):
                start = ts
                for i in range(60):
                    op = ops[i % len(ops)]
                    parts.append(
                        f'{{"ph": "X", "cat": "cpu_op", "name": "{op}", "pid": 1, "tid": 1, '
                        f'"ts": {ts}, "dur": 8.5, "args": {{"External id": {ext}}}}}')
                    parts.append(
                        f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", '
                        f'"pid": 1, "tid": 1, "ts": {ts + 1}, "dur": 4.25, '
                        f'"args": {{"External id": {ext}, "correlation": {ext}}}}}')
                    parts.append(
                        f'{{"ph": "X", "cat": "kernel", "name": "kernel_{op[6:]}", "pid": 0, '
                        f'"tid": 7, "ts": {ts + 6}, "dur": 7.5, '
                        f'"args": {{"External id": {ext}, "correlation": {ext}, "stream": 7}}}}')
                    ts += 10
                    ext += 1
                parts.append(
                    f'{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{step}", '
                    f'"pid": 1, "tid": 1, "ts": {start}, "dur": {ts - start}}}')
            chunk = ",\n".join(parts)
            f.write(chunk if first else ",\n" + chunk)
            first = False
            written += len(chunk)
        f.write("\n]}\n")
    os.replace(tmp, path)


def timed(cmd, env=None):
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"python_bench: {' '.join(cmd)} failed: {out.stderr[-2000:]}")
    return elapsed, out.stdout


CHILD = """
import sys, time
t0 = time.perf_counter()
import opscope
t1 = time.perf_counter()
trace = opscope.load(sys.argv[1])
t2 = time.perf_counter()
doc = trace.report_json()
t3 = time.perf_counter()
frame = trace.slices()
t4 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, len(frame), len(frame.columns))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int,
                        default=int(os.environ.get("OPSCOPE_PYTHON_BENCH_MB", "1024")))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    path = f"/tmp/opscope_python_bench_{args.mb}mb.json"
    t = time.perf_counter()
    generate(path, args.mb)
    size_mb = os.path.getsize(path) / 1e6
    print(f"trace: {path}, {size_mb:.0f} MB (ready in {time.perf_counter() - t:.1f} s)")

    env = dict(os.environ, PYTHONPATH=os.path.join(BINARY_DIR, "python"))
    cli, py, load, report, slices = [], [], [], [], []
    rows = cols = 0
    for _ in range(args.runs):
        elapsed, _ = timed([os.path.join(BINARY_DIR, "opscope"), "report", "--json", path])
        cli.append(elapsed)
        elapsed, out = timed([PYTHON, "-c", CHILD, path], env)
        imp, ld, rep, sl, rows, cols = out.split()
        py.append(elapsed - float(imp) - float(sl))  # process + load + report, as the CLI
        load.append(float(ld))
        report.append(float(rep))
        slices.append(float(sl))
    best = min
    ratio = best(py) / best(cli)
    print(f"CLI    opscope report --json: {best(cli):.3f} s ({size_mb / best(cli):.0f} MB/s)")
    print(f"Python load + report_json:   {best(py):.3f} s (load {best(load):.3f} s, "
          f"report {best(report):.3f} s)")
    print(f"Python / CLI = {ratio:.3f} (target <= 1.10): {'met' if ratio <= 1.10 else 'NOT met'}")
    rows = int(rows)
    per_3m = best(slices) * SLICES_TARGET / max(rows, 1)
    print(f"Trace.slices(): {rows} slices x {cols} columns in {best(slices):.3f} s "
          f"= {per_3m:.3f} s per 3M slices (target < 1 s): {'met' if per_3m < 1 else 'NOT met'}")


if __name__ == "__main__":
    main()
