"""PyTorch itself as the reference for `opscope report`'s key_averages table.

Profiles small real models with the installed torch (Debian's python3-torch 1.13: the legacy
autograd profiler, CPU), exports each trace with torch's own export_chrome_trace (a top-level JSON
array without categories), and checks that `opscope report TRACE --sort KEY --rows -1` prints
torch's own `key_averages().table(sort_by=KEY, row_limit=-1)` text, character for character, for
several sort keys. The expected texts are produced by torch in this run, never stored.

With profile_memory=True torch keeps its allocator's "[memory]" records (Bytes, Device Type) but
its legacy export leaves them out; the test appends each record to the exported trace as the
"[memory]" instant event Kineto writes, at the same relative time torch's own parser uses, so the
tables' memory columns (CPU Mem, Self CPU Mem, "[memory]" rows) are checked too. With
record_shapes=True and with_flops=True the test writes each event's shapes as the "Input Dims" arg
Kineto writes and the trace's "with_flops" metadata, and checks the "Total FLOPs" column (opscope
counts FLOPs from the shapes; torch from the op's arguments) and --group-by-input-shape.

usage: torch_reference_test.py OPSCOPE_BINARY WORK_DIR
Exits 77 (ctest's skip code) with a message when torch cannot be imported.
"""

import difflib
import os
import subprocess
import sys

SORT_KEYS = ["cpu_time_total", "self_cpu_time_total", "cpu_time", "count"]
MEMORY_SORT_KEYS = ["cpu_memory_usage", "self_cpu_memory_usage", "cpu_time_total"]


def mlp_training(torch):
    """A small MLP: forward, backward and an SGD step, twice."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 16)

    def run():
        for _ in range(2):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
    return run


def naive_rmsnorm(torch):
    """RMSNorm written op by op, as the demo's unfused version is."""
    x = torch.randn(64, 256)
    weight = torch.ones(256)

    def run():
        for _ in range(3):
            ms = x.pow(2).mean(-1, keepdim=True)
            x * torch.rsqrt(ms + 1e-6) * weight
    return run


def nested_record_function(torch):
    """record_function ranges nested in themselves (PyTorch merges an only child of the same
    name into its parent) and ops of zero recorded duration (views, detach)."""
    x = torch.randn(32, 32)
    rf = torch.autograd.profiler.record_function

    def run():
        with rf("outer"):
            with rf("outer"):
                x.relu()
            with rf("inner"):
                y = x @ x
                with rf("inner"):
                    y.view(-1).detach()
            for _ in range(4):
                x.t().detach()
    return run


CASES = [("mlp_training", mlp_training), ("naive_rmsnorm", naive_rmsnorm),
         ("nested_record_function", nested_record_function)]
MEMORY_CASES = [("mlp_training", mlp_training), ("naive_rmsnorm", naive_rmsnorm)]
FLOPS_SORT_KEYS = ["flops", "cpu_time_total"]


def bmm_attention(torch):
    """Batched matmuls (bmm, baddbmm) and elementwise ops with FLOPs, besides mm/addmm."""
    q = torch.randn(4, 16, 32)
    k = torch.randn(4, 32, 16)
    bias = torch.randn(4, 16, 16)

    def run():
        for _ in range(2):
            s = torch.baddbmm(bias, q, k) * 0.125
            (torch.bmm(s.softmax(-1), q) + 1.0).sum()
    return run


FLOPS_CASES = [("mlp_training", mlp_training), ("bmm_attention", bmm_attention)]


def add_input_dims(prof, path):
    """Writes each exported event's recorded shapes as its "Input Dims" arg and marks the trace
    with_flops, as a Kineto trace recorded with record_shapes and with_flops is."""
    import json
    with open(path) as f:
        events = json.load(f)
    exported = [e for e in prof.function_events if e.trace_name is not None]
    slices = [e for e in events if e.get("ph") == "X"]
    assert len(exported) == len(slices), (len(exported), len(slices))
    for fe, ev in zip(exported, slices):
        assert fe.trace_name == ev["name"], (fe.trace_name, ev["name"])
        ev["args"]["Input Dims"] = fe.input_shapes
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "with_flops": True, "record_shapes": True}, f)


def add_memory_events(prof, path):
    """Appends torch's "[memory]" records to the trace at `path` as Kineto's instant events."""
    import json
    results = prof.kineto_results
    start = results.trace_start_us()
    with open(path) as f:
        events = json.load(f)
    for e in results.events():
        if e.name() != "[memory]":
            continue
        events.append({"name": "[memory]", "ph": "i", "s": "t", "cat": "cpu_instant_event",
                       "ts": e.start_us() - start, "pid": "CPU functions",
                       "tid": e.start_thread_id(),
                       "args": {"Bytes": e.nbytes(), "Device Type": int(e.device_type()),
                                "Device Id": e.device_index()}})
    with open(path, "w") as f:
        json.dump(events, f)


def check(binary, name, path, averages, keys, flags=()):
    """Compares opscope's report of `path` with torch's table for each sort key; returns the
    number of failures."""
    failures = 0
    for key in keys:
        expected = averages.table(sort_by=key, row_limit=-1)
        proc = subprocess.run([binary, "report", path, "--sort", key, "--rows", "-1", *flags],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            failures += 1
            print(f"FAIL {name} --sort {key}: exit {proc.returncode}\n{proc.stderr}")
            continue
        # The table must appear whole, as complete lines.
        if ("\n" + expected) in ("\n" + proc.stdout):
            print(f"ok   {name} --sort {key} ({expected.count(chr(10))} lines)")
            continue
        failures += 1
        print(f"FAIL {name} --sort {key}: torch's table is not in opscope's report")
        start = proc.stdout.find("-----")
        got = proc.stdout[start:start + len(expected)] if start >= 0 else proc.stdout
        sys.stdout.writelines(difflib.unified_diff(
            expected.splitlines(True), got.splitlines(True), "torch", "opscope report"))
    return failures


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    binary, work = sys.argv[1], sys.argv[2]
    try:
        import torch
    except ImportError as e:
        print(f"SKIPPED: torch cannot be imported by {sys.executable} ({e}); "
              "install Debian's python3-torch (make deps) to run PyTorch reference tests")
        return 77
    os.makedirs(work, exist_ok=True)
    failures = 0
    checks = 0
    for memory, cases, keys in [(False, CASES, SORT_KEYS), (True, MEMORY_CASES, MEMORY_SORT_KEYS)]:
        for name, make in cases:
            run = make(torch)
            run()  # warm up so first-call allocations do not dominate
            with torch.autograd.profiler.profile(profile_memory=memory) as prof:
                run()
            name += "_memory" if memory else ""
            path = os.path.join(work, name + ".json")
            prof.export_chrome_trace(path)
            if memory:
                add_memory_events(prof, path)
            failures += check(binary, name, path, prof.key_averages(), keys)
            checks += len(keys)
    for name, make in FLOPS_CASES:
        run = make(torch)
        run()
        with torch.autograd.profiler.profile(record_shapes=True, with_flops=True) as prof:
            run()
        name += "_flops"
        path = os.path.join(work, name + ".json")
        prof.export_chrome_trace(path)
        add_input_dims(prof, path)
        failures += check(binary, name, path, prof.key_averages(), FLOPS_SORT_KEYS)
        failures += check(binary, name + "_by_shape", path,
                          prof.key_averages(group_by_input_shape=True), ["cpu_time_total"],
                          ["--group-by-input-shape"])
        checks += len(FLOPS_SORT_KEYS) + 1
    print(f"{checks - failures} of {checks} tables match torch {torch.__version__}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
