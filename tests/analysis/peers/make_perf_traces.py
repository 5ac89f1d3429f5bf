#!/usr/bin/python3
"""Writes the Kineto traces the performance-model reference test runs on: CUDA-shaped (H100) forward
passes whose ops TraceLens models, made from a seeded random generator (deterministic), with the
structures that decide an op instance's kernel time:
  - ops whose kernels are launched by their children (aten::linear > aten::addmm,
    aten::conv2d > aten::convolution > aten::cudnn_convolution, aten::scaled_dot_product_attention >
    aten::_scaled_dot_product_flash_attention > aten::_flash_attention_forward, aten::mul whose
    scalar-tensor operand is copied to the device by a child aten::to > aten::_to_copy > aten::copy_);
  - aten::layer_norm around aten::native_layer_norm (both modeled);
  - ops launching two kernels, on one stream or on two that overlap;
  - a last launch that ends after its op by under 1 us (CUPTI's clock against the op's), one
    that ends over 1 us after it, one that starts in its op's last microsecond, one that starts
    before its op; a child op that ends after its parent; an op starting just before its
    predecessor ends;
  - in-place broadcast binaries (aten::add_ [[4, 768, 14, 14], [1, 768, 1, 1], []]), mul and copy_
    (kernels and cudaMemcpyAsync), upsample_nearest1d/2d (one without an output size), reductions.

  /usr/bin/python3 tests/analysis/peers/make_perf_traces.py OUT_DIR
"""
import gzip
import json
import os
import random

from make_traces import contiguous  # the same contiguous strides
import sys

EW = "void at::native::vectorized_elementwise_kernel<4, at::native::{0}, std::array<char*, {1}> >(int, at::native::{0}, std::array<char*, {1}>)"
COPY = "void at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)"
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
CONV = "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn"
FLASH = "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)"
LN = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)"
UP1 = "void at::native::(anonymous namespace)::upsample_nearest1d_out_frame<float, at::native::nearest_idx>(float const*, unsigned long, unsigned long, unsigned long, unsigned long, float, float*)"
UP2 = "void at::native::(anonymous namespace)::upsample_nearest2d_nhwc_out_frame<c10::BFloat16, at::native::nearest_idx>(c10::BFloat16 const*, c10::BFloat16*, long, long, long, long, long, long, float, float, unsigned long)"
RED = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)"
BF, F = "c10::BFloat16", "float"
EARLY, LATE = -2, -1  # launch placements: starting before the op, starting in its last us


class Trace:
    """Times are integer ns internally, written as microseconds with three decimals."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.events = []
        self.ext = self.corr = 0
        self.pid, self.tid = 1717, 1717
        self.stream_free = {7: 0, 13: 0}

    def us(self, ns):
        return float(f"{ns // 1000}.{ns % 1000:03d}")

    def d(self, lo_us, hi_us):
        return int(self.rng.uniform(lo_us, hi_us) * 1000)

    def x(self, cat, name, pid, tid, ts, dur, args):
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
                            "ts": self.us(ts), "dur": self.us(dur), "args": args})

    def op(self, at, ext, name, ts, dur, dims, types, concrete=None):
        args = {"External id": ext, "Record function id": 0, "Ev Idx": at,
                "Sequence number": ext}
        if dims is not None:
            args["Input Dims"] = dims
            args["Input type"] = types
            args["Input Strides"] = [contiguous(d) if d else [] for d in dims]
            args["Concrete Inputs"] = concrete or ["" for _ in dims]
        self.x("cpu_op", name, self.pid, self.tid, ts, dur, args)
        self.events.insert(at, self.events.pop())

    def launch(self, ext, ts, rt_dur, stream, kind, name, dev_us, overlap=False):
        self.corr += 1
        c = self.corr
        rt = {"kernel": "cudaLaunchKernel", "memcpy": "cudaMemcpyAsync"}[kind]
        self.x("cuda_runtime", rt, self.pid, self.tid, ts, rt_dur,
               {"External id": ext, "cbid": 211 if kind == "kernel" else 41, "correlation": c})
        start = ts + self.d(3, 8)
        if not overlap:
            start = max(start, self.stream_free[stream] + self.d(0.5, 3))
        dur = self.d(*dev_us)
        args = {"External id": ext, "device": 0, "context": 1, "stream": stream,
                "correlation": c}
        if kind == "kernel":
            args.update({"registers per thread": 32, "shared memory": 0, "grid": [264, 1, 1],
                         "block": [256, 1, 1]})
            cat = "kernel"
        else:
            args.update({"bytes": 4, "memory bandwidth (GB/s)": 0.5})
            cat = "gpu_memcpy"
        self.x(cat, name, 0, stream, start, dur, args)
        self.events.append({"ph": "s", "id": c, "pid": self.pid, "tid": self.tid,
                            "ts": self.us(ts), "cat": "ac2g", "name": "ac2g"})
        self.events.append({"ph": "f", "id": c, "pid": 0, "tid": stream, "ts": self.us(start),
                            "cat": "ac2g", "name": "ac2g", "bp": "e"})
        self.stream_free[stream] = max(self.stream_free[stream], start + dur)

    def node(self, ts, spec):
        """spec: (name, dims, types, concrete, body); body: a list of child specs and launches
        ("L", stream, kind, kernel, (lo_us, hi_us), bleed_ns, overlap). Writes the op, then its
        children and launches in time order; returns the op's end."""
        name, dims, types, concrete, body = spec
        self.ext += 1
        ext = self.ext
        at = len(self.events)
        t = ts + self.d(1, 3)
        bleeding = []
        straddle_end = None
        for item in body:
            if item[0] == "S":  # a child op that ends after this op (its clock rounded apart)
                straddle_end = self.node(t, item[1])
                t = straddle_end - self.d(1.2, 2.5)
            elif item[0] == "L":
                _, stream, kind, kname, dev, bleed, overlap = item
                rt_dur = self.d(3, 6)
                if bleed == EARLY:  # starts before the op (CUPTI's clock ahead of the op's)
                    self.launch(ext, ts - self.d(0.1, 0.6), rt_dur, stream, kind, kname, dev,
                                overlap)
                elif bleed:  # ends `bleed` after the op: placed once the op's end is known
                    bleeding.append((t, stream, kind, kname, dev, bleed, overlap))
                else:
                    self.launch(ext, t, rt_dur, stream, kind, kname, dev, overlap)
                t += rt_dur + self.d(1, 3)
            else:
                t = self.node(t, item) + self.d(1, 2)
        end = t if straddle_end is not None else t + self.d(1, 3)
        for (lt, stream, kind, kname, dev, bleed, overlap) in bleeding:
            if bleed == LATE:  # starts in the op's last microsecond and ends after it
                lt = end - self.d(0.2, 0.8)
                self.launch(ext, lt, self.d(2, 4), stream, kind, kname, dev, overlap)
            else:
                self.launch(ext, lt, end - lt + bleed, stream, kind, kname, dev, overlap)
        self.op(at, ext, name, ts, end - ts, dims, types, concrete)
        return end

    def specs(self, b, s, h):
        L = lambda stream, kind, kname, dev, bleed=0, overlap=False: (
            "L", stream, kind, kname, dev, bleed, overlap)
        mul_k = EW.format("BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >", 3)
        add_k = EW.format("CUDAFunctor_add<float>", 3)
        to_copy = ("aten::to", [[], [], [], [], []], ["Scalar", "ScalarType", "", "", ""],
                   ["", "15", "False", "False", ""],
                   [("aten::_to_copy", [[]], [F], None,
                     [("aten::copy_", [[], [], []], [BF, F, "Scalar"], ["", "", "False"],
                       [L(7, "memcpy", "Memcpy HtoD (Pageable -> Device)", (1, 2))])])])
        return [
            ("aten::linear", [[b, s, h], [3 * h, h], [3 * h]], [BF, BF, BF], None,
             [("aten::addmm", [[3 * h], [b * s, h], [h, 3 * h], [], []],
               [BF, BF, BF, "Scalar", "Scalar"], ["", "", "", "1", "1"],
               [L(7, "kernel", GEMM, (20, 60))])]),
            ("aten::matmul", [[b, s, h], [h, h]], [BF, BF], None,
             [("aten::mm", [[b * s, h], [h, h]], [BF, BF], None,
               [L(7, "kernel", GEMM, (15, 40), bleed=self.d(0.1, 0.9))])]),
            ("aten::conv2d", [[4, 256, 28, 28], [768, 256, 3, 3], [768], [], [], [], []],
             [BF, BF, BF, "", "", "", "Scalar"], ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"],
             [("aten::convolution",
               [[4, 256, 28, 28], [768, 256, 3, 3], [768], [], [], [], [], [], []],
               [BF, BF, BF, "", "", "", "Scalar", "", "Scalar"],
               ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"],
               [("aten::_convolution",
                 [[4, 256, 28, 28], [768, 256, 3, 3], [768], [], [], [], [], [], [], [], [], [], []],
                 [BF, BF, BF, "", "", "", "Scalar", "", "Scalar", "Scalar", "Scalar", "Scalar",
                  "Scalar"],
                 ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "False",
                  "False", "True", "True"],
                 [("aten::cudnn_convolution",
                   [[4, 256, 28, 28], [768, 256, 3, 3], [], [], [], [], [], [], []],
                   [BF, BF, "", "", "", "Scalar", "Scalar", "Scalar", "Scalar"], None,
                   [L(7, "kernel", CONV, (40, 90))]),
                  ("aten::add_", [[4, 768, 28, 28], [1, 768, 1, 1], []], [BF, BF, "Scalar"],
                   ["", "", "1"], [L(7, "kernel", add_k, (4, 9))])])])]),
            ("aten::scaled_dot_product_attention",
             [[b, 12, s, 64], [b, 12, s, 64], [b, 12, s, 64], [], [], [], [], []],
             [BF, BF, BF, "", "Scalar", "Scalar", "", "Scalar"],
             ["", "", "", "", "0.0", "True", "", "False"],
             [("aten::_scaled_dot_product_flash_attention",
               [[b, 12, s, 64], [b, 12, s, 64], [b, 12, s, 64], [], [], [], []],
               [BF, BF, BF, "Scalar", "Scalar", "Scalar", ""],
               ["", "", "", "0.0", "True", "False", ""],
               [("aten::_flash_attention_forward", [[b, s, 12, 64], [b, s, 12, 64],
                                                    [b, s, 12, 64]], [BF, BF, BF], None,
                 [L(7, "kernel", FLASH, (30, 70))])])]),
            ("aten::layer_norm", [[b, s, h], [], [h], [h], [], []], [BF, "", BF, BF, "Scalar",
                                                                     "Scalar"],
             ["", f"[{h}]", "", "", "1e-05", "True"],
             [("aten::native_layer_norm", [[b, s, h], [], [h], [h], []], [BF, "", BF, BF, "Scalar"],
               ["", f"[{h}]", "", "", "1e-05"], [L(7, "kernel", LN, (6, 14))])]),
            # A mul by a 0-dim CPU tensor: its child copies the scalar to the device first.
            ("aten::mul", [[b, s, h], []], [BF, F], None,
             [to_copy, L(7, "kernel", mul_k, (3, 8))]),
            # mul and copy_ launching two kernels: on one stream, on two overlapping ones, with
            # the last launch ending after the op.
            ("aten::mul", [[b, s, h], [b, s, h]], [BF, BF], None,
             [L(7, "kernel", mul_k, (3, 8)), L(7, "kernel", mul_k, (3, 8), bleed=self.d(0.1, 0.9))]),
            ("aten::mul", [[b, s, 4 * h], [b, s, 4 * h]], [BF, BF], None,
             [L(7, "kernel", mul_k, (5, 12)), L(13, "kernel", mul_k, (5, 12), overlap=True)]),
            ("aten::copy_", [[b, s, h], [b, s, h], []], [BF, F, "Scalar"], ["", "", "False"],
             [L(7, "kernel", COPY, (3, 9)), L(7, "kernel", COPY, (3, 9),
                                             bleed=self.d(0.1, 0.9))]),
            ("aten::copy_", [[b * s, h], [b * s, h], []], [F, F, "Scalar"], ["", "", "True"],
             [L(13, "memcpy", "Memcpy HtoD (Pinned -> Device)", (8, 25), bleed=self.d(1.2, 3))]),
            ("aten::add_", [[4, 768, 14, 14], [1, 768, 1, 1], []], [F, F, "Scalar"], ["", "", "1"],
             [L(7, "kernel", add_k, (2, 6))]),
            ("aten::upsample_nearest1d", [[b, h // 4, s], [], []], [F, "", ""],
             ["", f"[{2 * s}]", ""], [L(13, "kernel", UP1, (3, 9))]),
            ("aten::upsample_nearest2d", [[4, 256, 14, 14], [], [], []], [BF, "", "", ""],
             ["", "[28, 28]", "", ""], [L(13, "kernel", UP2, (4, 10))]),
            ("aten::upsample_nearest2d", [[4, 256, 14, 14], [], [], []], [BF, "", "", ""],
             ["", "", "[2.0, 2.0]", ""], [L(13, "kernel", UP2, (4, 10))]),
            # A mul whose child copy_'s launch starts in the copy's last microsecond and ends
            # after it; a mul whose child copy_ ends after the mul.
            ("aten::mul", [[b, s, h], [1]], [BF, BF], None,
             [("aten::copy_", [[1], [1], []], [BF, F, "Scalar"], ["", "", "False"],
               [L(7, "kernel", COPY, (1, 3), bleed=LATE)]),
              L(7, "kernel", mul_k, (3, 8))]),
            ("aten::mul", [[b, s, h], [h]], [BF, BF], None,
             [L(7, "kernel", mul_k, (3, 8)),
              ("S", ("aten::copy_", [[h], [h], []], [BF, F, "Scalar"], ["", "", "False"],
                     [L(7, "kernel", COPY, (1, 3))]))]),
            # A copy_ whose first launch starts before the op does.
            ("aten::copy_", [[b, s, 4 * h], [b, s, 4 * h], []], [BF, BF, "Scalar"],
             ["", "", "False"],
             [L(7, "kernel", COPY, (3, 9), bleed=EARLY), L(13, "kernel", COPY, (3, 9))]),
            ("aten::mean", [[b, s, h], [], [], []], [F, "", "Scalar", ""],
             ["", "[-1]", "True", ""], [L(7, "kernel", RED, (4, 12))]),
        ]

    def write(self, path, steps):
        t = 1_000_000
        for n in range(steps):
            step_start = t
            b, s, h = self.rng.choice([(2, 128, 768), (4, 197, 768), (2, 256, 1024)])
            specs = self.specs(b, s, h)
            order = specs * 2
            self.rng.shuffle(order)
            for i, spec in enumerate(order):
                end = self.node(t, spec)
                # Now and then the next op starts just before this one ends.
                t = end - self.d(0.2, 0.8) if i % 9 == 4 else end + self.d(2, 8)
            t = max(t, max(self.stream_free.values())) + self.d(5, 10)
            self.x("user_annotation", f"ProfilerStep#{n}", self.pid, self.tid, step_start,
                   t - step_start, {"External id": 0})
            t += self.d(20, 50)
        meta = [{"name": "thread_name", "ph": "M", "ts": 0, "pid": self.pid, "tid": self.tid,
                 "args": {"name": "python"}},
                {"name": "process_name", "ph": "M", "ts": 0, "pid": 0, "tid": 0,
                 "args": {"name": "python3"}}]
        meta += [{"name": "thread_name", "ph": "M", "ts": 0, "pid": 0, "tid": s,
                  "args": {"name": f"stream {s}"}} for s in (7, 13)]
        doc = {"schemaVersion": 1,
               "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",
                                     "totalGlobalMem": 85045870592, "computeMajor": 9,
                                     "computeMinor": 0, "maxThreadsPerBlock": 1024,
                                     "maxThreadsPerMultiprocessor": 2048,
                                     "regsPerBlock": 65536, "warpSize": 32,
                                     "sharedMemPerBlock": 49152, "numSms": 132}],
               "cupti_version": 24, "cuda_runtime_version": 12040, "cuda_driver_version": 12040,
               "traceEvents": meta + self.events, "traceName": os.path.basename(path),
               "baseTimeNanoseconds": 1_712_195_400_000_000_000}
        # mtime 0: the same bytes on every run.
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            gz.write(json.dumps(doc).encode())


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    Trace(seed=101).write(os.path.join(out, "perf_h100_forward.json.gz"), 4)
    Trace(seed=202).write(os.path.join(out, "perf_h100_forward_b.json.gz"), 3)


if __name__ == "__main__":
    main()
