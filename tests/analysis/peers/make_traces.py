#!/usr/bin/python3
"""Writes the Kineto traces the peer-reference tests run on: CUDA-shaped training steps made from a
seeded random generator, so that HTA's and TraceLens's answers for them are computed on traces
opscope's code was not written against.

  /usr/bin/python3 tests/analysis/peers/make_traces.py OUT_DIR

Each trace holds ProfilerStep#N steps of a model's forward (on the main thread), backward (on an
autograd thread, as PyTorch runs it for CUDA) and optimizer, with what real traces show and the
analyses must handle:
  - cpu_ops with record_shapes args (GEMMs, in-place broadcast binaries, copies, norms,
    upsampling, reductions) launching kernels on two streams; cudaMemcpyAsync copies; memsets;
  - runtime calls that end slightly after their op (clock skew between the profiler's op clock
    and CUPTI's) and ops that start inside their predecessor;
  - blocking synchronizations (cudaStreamSynchronize, cudaDeviceSynchronize) with their
    cuda_sync events (Stream Sync, Context Sync), cudaEventRecord + cudaStreamWaitEvent with
    Stream Wait Event; host gaps between top-level ops; a data-loader thread calling
    cudaHostAlloc while the main thread launches; a thread that never touches the device;
  - device stalls of more than 1.5 ms between queued kernels, and gaps of a few microseconds.
Variants: timestamps in microseconds with nanosecond decimals near 0, or whole microseconds
since the epoch; with or without cuda_sync events; with or without ac2g flows.
"""
import gzip
import json
import os
import random
import sys

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, at::native::{}, std::array<char*, {}> >(int, at::native::{}, std::array<char*, {}>)"
REDUCE = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)"
LAYER_NORM = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)"
UPSAMPLE = "void at::native::(anonymous namespace)::upsample_nearest1d_out_frame<float, at::native::nearest_idx>(float const*, unsigned long, unsigned long, unsigned long, unsigned long, float, float*)"
COPY = "void at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)"


def contiguous(shape):
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(d, 1)
    return list(reversed(strides))


class Trace:
    def __init__(self, seed, epoch, sync_events, flows):
        self.rng = random.Random(seed)
        self.epoch = epoch
        self.sync_events = sync_events
        self.flows = flows
        self.events = []
        self.ext = 0
        self.corr = 0
        self.pid, self.main, self.bwd, self.loader, self.pin = 4242, 4242, 4250, 4260, 4270
        self.base = 1_712_195_495_000_000_000 if epoch else 3_000_000_000  # ns
        self.stream_free = {7: self.base, 20: self.base}
        self.stream_last = {7: None, 20: None}  # correlation of the last launch per stream
        self.pending = []  # (ts of the activity start, stream) of launches, for stalls

    # Times: integer ns internally; whole microseconds for epoch traces.
    def q(self, ns):
        return (ns // 1000) * 1000 if self.epoch else ns

    def us(self, ns):
        if self.epoch:
            return ns // 1000
        return float(f"{ns // 1000}.{ns % 1000:03d}")

    def dur(self, lo_us, hi_us):
        ns = int(self.rng.uniform(lo_us, hi_us) * 1000)
        return max(self.q(ns), 1000 if self.epoch else 1)

    def x(self, cat, name, tid, ts, dur, args, pid=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": self.pid if pid is None else pid,
             "tid": tid, "ts": self.us(ts), "dur": self.us(dur) if not self.epoch else dur // 1000,
             "args": args}
        self.events.append(e)
        return e

    def op(self, name, tid, ts, dur, dims=None, types=None, concrete=None):
        if isinstance(dims, tuple):  # (dims, concrete inputs)
            dims, concrete = dims
        self.ext += 1
        args = {"External id": self.ext, "Record function id": 0, "Ev Idx": len(self.events)}
        if dims is not None:
            args["Input Dims"] = dims
            args["Input type"] = types
            args["Input Strides"] = [contiguous(d) if d else [] for d in dims]
            args["Concrete Inputs"] = concrete or ["" for _ in dims]
        return self.x("cpu_op", name, tid, ts, dur, args)

    # A runtime call with its device activity; returns the host time after the call.
    def launch(self, tid, ts, stream, kind, name, dev_us, rt="cudaLaunchKernel", rt_end=None,
               stall=False, wait_for=None):
        self.corr += 1
        c = self.corr
        rt_dur = self.dur(2, 6) if rt_end is None else rt_end - ts
        self.x("cuda_runtime", rt, tid, ts, rt_dur,
               {"External id": self.ext, "cbid": 211, "correlation": c})
        start = max(ts + self.dur(3, 8), self.stream_free[stream])
        if wait_for is not None:
            start = max(start, wait_for)
        r = self.rng.random()
        if stall:
            start += self.dur(1600, 2600)
        elif r < 0.3 and self.stream_free[stream] > ts:
            start += self.dur(0.004, 4) if not self.epoch else 0
        elif r < 0.45:
            start += self.dur(5, 40)
        start = self.q(start)
        d = self.dur(*dev_us)
        cat = {"kernel": "kernel", "memcpy": "gpu_memcpy", "memset": "gpu_memset"}[kind]
        args = {"External id": self.ext, "device": 0, "context": 1, "stream": stream,
                "correlation": c}
        if kind == "kernel":
            args.update({"registers per thread": 32, "shared memory": 0, "blocks per SM": 1.5,
                         "grid": [128, 1, 1], "block": [256, 1, 1]})
        else:
            args["bytes"] = 1 << 20
        self.x(cat, name, stream, start, d, args, pid=0)
        if self.flows:
            self.events.append({"ph": "s", "id": c, "pid": self.pid, "tid": tid,
                                "ts": self.us(ts), "cat": "ac2g", "name": "ac2g"})
            self.events.append({"ph": "f", "id": c, "pid": 0, "tid": stream,
                                "ts": self.us(start), "cat": "ac2g", "name": "ac2g", "bp": "e"})
        self.stream_free[stream] = start + d
        self.stream_last[stream] = c
        return ts + rt_dur

    def sync(self, tid, ts, streams, rt, kind):
        self.corr += 1
        c = self.corr
        end = max(ts + self.dur(2, 5), max(self.stream_free[s] for s in streams) + self.dur(1, 3))
        end = self.q(end)
        self.x("cuda_runtime", rt, tid, ts, end - ts,
               {"External id": self.ext, "cbid": 131, "correlation": c})
        # The host resumes a little after the call returns: no two host events share an instant
        # (the peers order such ties by float rounding).
        if self.sync_events:
            stream = streams[0] if kind == "Stream Sync" else 4294967295
            sync_tid = streams[0] if kind == "Stream Sync" else -1
            start = self.q(max(ts + 1000, min(self.stream_free[s] for s in streams)))
            start = min(start, end - (1000 if self.epoch else 1))
            self.x("cuda_sync", kind, sync_tid, start, max(end - start - 1, 1),
                   {"External id": self.ext, "cuda_sync_kind": kind, "stream": stream,
                    "correlation": c, "device": 0, "context": 1}, pid=0)
        return end + self.dur(0.5, 2)

    def stream_wait(self, tid, ts):
        """cudaEventRecord on stream 7, cudaStreamWaitEvent on stream 20: the next launch on 20
        waits for the last kernel on 7."""
        self.corr += 1
        record = self.corr
        d = self.dur(1, 3)
        self.x("cuda_runtime", "cudaEventRecord", tid, ts, d,
               {"External id": self.ext, "cbid": 135, "correlation": record})
        ts += d + self.dur(0.5, 1)
        self.corr += 1
        c = self.corr
        d = self.dur(1, 3)
        self.x("cuda_runtime", "cudaStreamWaitEvent", tid, ts, d,
               {"External id": self.ext, "cbid": 147, "correlation": c})
        if self.sync_events:
            self.x("cuda_sync", "Stream Wait Event", 20, self.q(ts + 2000), 1000 if self.epoch else 500,
                   {"External id": self.ext, "cuda_sync_kind": "Stream Wait Event",
                    "wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": record,
                    "wait_on_cuda_event_id": 1, "stream": 20, "correlation": c, "device": 0,
                    "context": 1}, pid=0)
        return ts + d, self.stream_free[7]

    # One modeled op with its launches: (name, dims, types, [(stream, kind, kernel, dev_us)]).
    def model_op(self, tid, ts, spec, parent_gap=True):
        name, dims, types, kernels = spec
        children = []
        t = ts + self.dur(1, 4)
        skew = 0
        for i, (stream, kind, kname, dev) in enumerate(kernels):
            last = i == len(kernels) - 1
            if kind == "memcpy":
                rt = "cudaMemcpyAsync"
            elif kind == "memset":
                rt = "cudaMemsetAsync"
            else:
                rt = "cudaLaunchKernel"
            # The last launch sometimes ends just after its op (CUPTI's clock against the op's).
            skew = self.dur(0.1, 0.9) if last and not self.epoch and self.rng.random() < 0.25 else 0
            children.append((t, stream, kind, kname, dev, rt, skew))
            t += self.dur(6, 12)
        end = t + self.dur(1, 3)
        self.op(name, tid, ts, end - ts, dims, types)
        for (ct, stream, kind, kname, dev, rt, sk) in children:
            stall = self.rng.random() < 0.03
            # A skewed launch ends `sk` after its op does.
            rt_end = end + sk if sk else None
            self.launch(tid, ct, stream, kind, kname, dev, rt=rt, rt_end=rt_end, stall=stall)
        return end

    def specs(self):
        b = self.rng.choice([2, 4, 8])
        h = self.rng.choice([512, 768, 1024])
        s = self.rng.choice([128, 197, 256])
        bf, f = "c10::BFloat16", "float"
        ew = lambda fn, n: ELEMENTWISE.format(fn, n, fn, n)
        return [
            ("aten::mm", [[b * s, h], [h, 4 * h]], [bf, bf], [(7, "kernel", GEMM, (20, 80))]),
            ("aten::addmm", [[4 * h], [b * s, 4 * h], [4 * h, h], [], []],
             [bf, bf, bf, "Scalar", "Scalar"], [(7, "kernel", GEMM, (20, 80))]),
            ("aten::add_", [[4, h, 14, 14], [1, h, 1, 1], []], [f, f, "Scalar"],
             [(7, "kernel", ew("CUDAFunctor_add<float>", 3), (3, 12))]),
            ("aten::mul", [[b, s, h], [b, s, h]], [bf, bf],
             [(7, "kernel", ew("BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >", 3), (2, 9))]),
            ("aten::mul", [[b, s, h], []], [bf, "Scalar"],
             [(20, "kernel", ew("AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >", 2), (2, 6))]),
            ("aten::copy_", [[b, s, h], [b, s, h], []], [bf, f, "Scalar"],
             [(7, "kernel", COPY, (3, 10))]),
            ("aten::copy_", [[b * s, h], [b * s, h], []], [f, f, "Scalar"],
             [(7, "memcpy", "Memcpy HtoD (Pinned -> Device)", (5, 30))]),
            ("aten::upsample_nearest1d", ([[b, h // 4, s], [], []], ["", f"[{2 * s}]", ""]),
             [f, "", ""],
             [(20, "kernel", UPSAMPLE, (3, 9))]),
            ("aten::sum", ([[b, s, h], [], [], []], ["", "[-1]", "False", ""]),
             [bf, "", "Scalar", ""],
             [(20, "kernel", REDUCE, (4, 15))]),
            ("aten::zero_", [[b, s, h]], [bf], [(20, "memset", "Memset (Device)", (1, 4))]),
        ]

    def layer_norm(self, tid, ts, h, b, s):
        """aten::layer_norm around aten::native_layer_norm around the launch (TraceLens models
        both)."""
        bf = "c10::BFloat16"
        dims = [[b, s, h], [], [h], [h], [], []]
        types = [bf, "", bf, bf, "Scalar", "Scalar"]
        inner_ts = ts + self.dur(1, 3)
        launch_ts = inner_ts + self.dur(2, 4)
        end_inner = launch_ts + self.dur(7, 10)
        end = end_inner + self.dur(1, 2)
        self.op("aten::layer_norm", tid, ts, end - ts, dims, types,
                ["", f"[{h}]", "", "", "1e-05", "True"])
        self.op("aten::native_layer_norm", tid, inner_ts, end_inner - inner_ts,
                [[b, s, h], [], [h], [h], []], [bf, "", bf, bf, "Scalar"],
                ["", f"[{h}]", "", "", "1e-05"])
        self.launch(tid, launch_ts, 7, "kernel", LAYER_NORM, (5, 14))
        return end

    def step(self, n):
        rng = self.rng
        t0 = max(self.stream_free.values()) + self.dur(30, 80)
        t0 = self.q(t0)
        t = t0 + self.dur(5, 10)
        ops = self.specs()
        # Forward on the main thread.
        fwd_start = t
        for i in range(rng.randint(14, 22)):
            if rng.random() < 0.12:
                t = self.layer_norm(self.main, t, 768, 2, 128)
            else:
                t = self.model_op(self.main, t, rng.choice(ops))
            # Host gaps between top-level ops; now and then a long one (Python work).
            t += self.dur(1, 6) if rng.random() < 0.85 else self.dur(60, 300)
            if rng.random() < 0.08:
                t, ready = self.stream_wait(self.main, t)
                t = self.launch(self.main, t + self.dur(1, 2), 20, "kernel",
                                ELEMENTWISE.format("FillFunctor<float>", 1, "FillFunctor<float>", 1),
                                (2, 5), wait_for=ready)
            if rng.random() < 0.08:
                t = self.sync(self.main, t + self.dur(1, 2), [7], "cudaStreamSynchronize",
                              "Stream Sync")
        self.x("user_annotation", "## forward ##", self.main, fwd_start, t - fwd_start,
               {"External id": 0})
        # Backward on the autograd thread while the main thread waits.
        t += self.dur(10, 30)
        bwd_end = t
        for i in range(rng.randint(8, 14)):
            name, dims, types, kernels = rng.choice(ops)
            outer = t
            t += self.dur(1, 3)
            t = self.model_op(self.bwd, t, (name, dims, types, kernels))
            end = t + self.dur(1, 3)
            self.op(f"autograd::engine::evaluate_function: {name[6:].capitalize()}Backward0",
                    self.bwd, outer, end - outer)
            t = end + self.dur(2, 8)
            bwd_end = t
        # Optimizer and the end of the step on the main thread.
        t = bwd_end + self.dur(5, 15)
        opt_start = t
        for i in range(rng.randint(3, 6)):
            t = self.model_op(self.main, t, ops[2]) + self.dur(1, 3)
        self.x("user_annotation", "Optimizer.step#SGD.step", self.main, opt_start, t - opt_start,
               {"External id": 0})
        if rng.random() < 0.7:
            t = self.sync(self.main, t + self.dur(1, 3), [7, 20], "cudaDeviceSynchronize",
                          "Context Sync")
        else:
            t = self.sync(self.main, t + self.dur(1, 3), [7], "cudaStreamSynchronize",
                          "Stream Sync")
        end = t + self.dur(5, 20)
        self.x("user_annotation", f"ProfilerStep#{n}", self.main, t0, end - t0, {"External id": 0})
        # A data loader allocating pinned memory meanwhile (shares the CUDA runtime's lock).
        lt = t0 + self.dur(20, 200)
        for i in range(rng.randint(2, 4)):
            d = self.dur(10, 60)
            self.corr += 1
            self.x("cuda_runtime", "cudaHostAlloc", self.loader, lt, d,
                   {"External id": 0, "cbid": 27, "correlation": self.corr})
            lt += d + self.dur(20, 300)
        # A thread that never touches the device.
        pt = t0 + self.dur(10, 100)
        for i in range(rng.randint(2, 4)):
            d = self.dur(20, 120)
            self.op("aten::pin_memory", self.pin, pt, d)
            pt += d + self.dur(30, 200)
        return end

    def write(self, path, steps):
        for n in range(steps):
            self.step(n + 10)
        meta = []
        for tid, name in ((self.main, "python"), (self.bwd, "autograd"), (self.loader, "loader"),
                          (self.pin, "pin_memory")):
            meta.append({"name": "thread_name", "ph": "M", "ts": self.us(self.base), "pid": self.pid,
                         "tid": tid, "args": {"name": name}})
        meta.append({"name": "process_name", "ph": "M", "ts": self.us(self.base), "pid": 0, "tid": 0,
                     "args": {"name": "python3"}})
        for s in (7, 20):
            meta.append({"name": "thread_name", "ph": "M", "ts": self.us(self.base), "pid": 0,
                         "tid": s, "args": {"name": f"stream {s}"}})
        doc = {"schemaVersion": 1,
               "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",
                                     "totalGlobalMem": 85045870592, "computeMajor": 9,
                                     "computeMinor": 0, "numSms": 132}],
               "traceEvents": meta + self.events, "traceName": os.path.basename(path)}
        if not self.epoch:
            doc["baseTimeNanoseconds"] = 1_712_195_400_000_000_000
        with gzip.open(path, "wt") as f:
            json.dump(doc, f)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    variants = [
        ("synthetic_h100_ns.json.gz", dict(seed=11, epoch=False, sync_events=True, flows=True), 4),
        ("synthetic_h100_epoch.json.gz", dict(seed=23, epoch=True, sync_events=True, flows=True), 3),
        ("synthetic_h100_nosync.json.gz", dict(seed=37, epoch=False, sync_events=False, flows=True), 3),
    ]
    for name, kw, steps in variants:
        Trace(**kw).write(os.path.join(out, name), steps)


if __name__ == "__main__":
    main()
