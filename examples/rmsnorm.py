"""RMSNorm three ways on the simulated NeuronCore, profiled as torch.profiler profiles them.

The reference story's code, line for line with `opscope` in place of `torch`: a naive RMSNorm
(six ATen ops, six device executions), the fused ``rms_norm`` (one op, one execution) and the
naive code compiled with ``compile(backend="neuron")`` (one Torch-Compiled Region, one
execution). The tables have the same rows and device times as ``opscope demo rmsnorm``.

    PYTHONPATH=build/python /usr/bin/python3 examples/rmsnorm.py [--out DIR] [--device cpu]
"""

import argparse
import sys

import opscope
from opscope.profiler import NeuronConfig, ProfileMode, ProfilerActivity, profile

EPS = 1e-6


def rmsnorm_naive(x, w):
    x_sq = x * x
    mean_sq = opscope.mean(x_sq, dim=-1, keepdim=True)
    r = opscope.rsqrt(mean_sq + EPS)
    return x * r * w


def rmsnorm_fused(x, w):
    return opscope.rms_norm(x, [x.shape[-1]], weight=w, eps=EPS)


def variants(device):
    backend = "neuron" if device.startswith("neuron") else "cpu"
    return [("naive", rmsnorm_naive), ("fused", rmsnorm_fused),
            ("compiled", opscope.compile(rmsnorm_naive, backend=backend))]


def synchronize(device):
    if device.startswith("neuron"):
        opscope.neuron.synchronize()


def profile_variant(fn, x, w, device, iters=10, warmup=2, out_dir=None):
    """Warm-up calls, then `iters` profiled calls with a synchronize in the loop (without it
    the profiler may stop before the device finished and the device columns come out empty),
    recording memory (profile_memory) as the demo does."""
    for _ in range(warmup):
        fn(x, w)
    synchronize(device)
    config = NeuronConfig(modes=[ProfileMode.DEVICE, ProfileMode.RUNTIME],
                          correlate_device_time=True, profile_output_dir=out_dir)
    y = None
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
                 record_shapes=True, profile_memory=True, experimental_config=config) as prof:
        for _ in range(iters):
            y = None  # each call starts from the same allocation, as in `opscope demo rmsnorm`
            y = fn(x, w)
            synchronize(device)
    return prof, y


def run(device="neuron", rows=128, hidden=4096, iters=10, warmup=2, out_dir=None):
    """Returns {variant: (profile, output)}."""
    x = opscope.randn(rows, hidden, seed=0).to(device)
    w = opscope.randn(hidden, seed=1).to(device)
    results = {}
    for name, fn in variants(device):
        results[name] = profile_variant(fn, x, w, device, iters, warmup, out_dir)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="neuron")
    parser.add_argument("--out", default=None, help="write each variant's profile under DIR")
    args = parser.parse_args(argv)
    sort_by = ("self_privateuse1_time_total" if args.device.startswith("neuron")
               else "self_cpu_time_total")
    for name, (prof, _) in run(args.device, out_dir=args.out).items():
        print(f"== {name} ==")
        print(prof.key_averages().table(sort_by=sort_by, row_limit=12))
    return 0


if __name__ == "__main__":
    sys.exit(main())
