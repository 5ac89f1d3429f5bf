"""PyTorch itself as the reference for `opscope report`'s key_averages table.

Profiles small real models with the installed torch (Debian's python3-torch 1.13: the legacy
autograd profiler, CPU), exports each trace with torch's own export_chrome_trace (a top-level JSON
array without categories), and checks that `opscope report TRACE --sort KEY --rows -1` prints
torch's own `key_averages().table(sort_by=KEY, row_limit=-1)` text, character for character, for
several sort keys. The expected texts are produced by torch in this run, never stored.

usage: torch_reference_test.py OPSCOPE_BINARY WORK_DIR
Exits 77 (ctest's skip code) with a message when torch cannot be imported.
"""

import difflib
import os
import subprocess
import sys

SORT_KEYS = ["cpu_time_total", "self_cpu_time_total", "cpu_time", "count"]


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
    for name, make in CASES:
        run = make(torch)
        run()  # warm up so first-call allocations do not dominate
        with torch.autograd.profiler.profile() as prof:
            run()
        path = os.path.join(work, name + ".json")
        prof.export_chrome_trace(path)
        averages = prof.key_averages()
        for key in SORT_KEYS:
            expected = averages.table(sort_by=key, row_limit=-1)
            proc = subprocess.run([binary, "report", path, "--sort", key, "--rows", "-1"],
                                  capture_output=True, text=True)
            checks += 1
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
    print(f"{checks - failures} of {checks} tables match torch {torch.__version__}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
