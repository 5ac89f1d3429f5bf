#include "explorer/synthetic_trace.h"

#include <algorithm>
#include <array>

namespace opscope::explorer {
namespace {

// xorshift64*: deterministic, so generated traces (and test expectations) are reproducible.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
  int64_t Range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % (hi - lo + 1));
  }
};

}  // namespace

Trace MakeSyntheticNeuronTrace(const SyntheticTraceOptions& options) {
  Trace trace;
  trace.metadata().device_type = "NEURON";
  trace.metadata().trace_name = "synthetic";
  Rng rng{options.seed * 0x9e3779b97f4a7c15ull + 1};
  const uint32_t host = trace.AddProcess(4242, "python");
  const uint32_t main_thread = trace.AddThreadTrack(host, 4242, "thread 4242 (python)");
  const uint32_t cpu_util = trace.AddThreadTrack(host, 1, "CPU utilization", TrackKind::kCounter);
  const uint32_t core = trace.AddProcess(0, "NeuronCore 0", /*is_device=*/true);
  const uint32_t exec_track = trace.AddThreadTrack(core, 0, "nc_exec", TrackKind::kDeviceStream);
  static constexpr std::array<const char*, 5> kEngines = {"TensorE", "VectorE", "ScalarE",
                                                          "GpSimdE", "DMA queue 0"};
  static constexpr std::array<const char*, 5> kInstr = {"MatMult", "TensorTensorOp", "Activation",
                                                        "Iota", "dma_copy"};
  std::array<uint32_t, kEngines.size()> engine_tracks{};
  for (size_t e = 0; e < kEngines.size(); ++e) {
    engine_tracks[e] = trace.AddThreadTrack(core, static_cast<int64_t>(e + 1), kEngines[e],
                                            TrackKind::kDeviceEngine);
  }
  static constexpr std::array<const char*, 6> kOps = {"aten::pow",   "aten::mean", "aten::add",
                                                      "aten::rsqrt", "aten::mul",  "aten::mul"};
  const StringId rms = trace.Intern("RMSNorm");
  const StringId user_cat = trace.Intern("user_annotation");
  const StringId op_cat = trace.Intern("cpu_op");
  const StringId rt_name = trace.Intern("nrta_execute_schedule");
  const StringId rt_cat = trace.Intern("privateuse1_runtime");
  const StringId exec_name = trace.Intern("nc_exec_running");
  const StringId kernel_cat = trace.Intern("kernel");
  const StringId instr_cat = trace.Intern(KinetoCategory(ActivityKind::kInstruction));
  const StringId shapes = trace.Intern("[[4, 4096], []]");

  const int k = std::max(0, options.instructions_per_execution);
  const int64_t per_call = 1 + static_cast<int64_t>(kOps.size()) * (3 + k);
  const int64_t calls = std::max<int64_t>(1, options.target_events / per_call);
  int64_t t = 1000;
  int64_t device_free = 0;
  int64_t ext = 1;
  int64_t corr = 1;
  for (int64_t c = 0; c < calls; ++c) {
    Slice call;
    call.name = rms;
    call.category = user_cat;
    call.kind = ActivityKind::kUserAnnotation;
    call.track = main_thread;
    call.ts_ns = t;
    call.external_id = ext++;
    int64_t cursor = t + rng.Range(200, 600);
    for (const char* op_name : kOps) {
      Slice op;
      op.name = trace.Intern(op_name);
      op.category = op_cat;
      op.kind = ActivityKind::kCpuOp;
      op.track = main_thread;
      op.ts_ns = cursor;
      op.external_id = ext++;
      op.input_shapes = shapes;
      Slice rt;
      rt.name = rt_name;
      rt.category = rt_cat;
      rt.kind = ActivityKind::kRuntime;
      rt.track = main_thread;
      rt.ts_ns = cursor + rng.Range(1000, 3000);
      rt.dur_ns = rng.Range(8000, 15000);
      rt.external_id = op.external_id;
      rt.correlation = corr++;
      op.dur_ns = (rt.ts_ns - op.ts_ns) + rt.dur_ns + rng.Range(500, 2000);
      Slice exec;
      exec.name = exec_name;
      exec.category = kernel_cat;
      exec.kind = ActivityKind::kKernel;
      exec.track = exec_track;
      exec.ts_ns = std::max(device_free, rt.ts_ns + rng.Range(2000, 4000));
      exec.dur_ns = rng.Range(4000, 9000);
      exec.external_id = op.external_id;
      exec.correlation = rt.correlation;
      device_free = exec.ts_ns + exec.dur_ns;
      trace.AddSlice(op);
      trace.AddSlice(rt);
      trace.AddSlice(exec);
      // Instructions run back to back on their engines inside the execution.
      std::array<int64_t, kEngines.size()> engine_free{};
      engine_free.fill(exec.ts_ns + 200);
      for (int i = 0; i < k; ++i) {
        const size_t e = static_cast<size_t>(rng.Next() % kEngines.size());
        Slice ins;
        ins.name = trace.Intern(kInstr[e]);
        ins.category = instr_cat;
        ins.kind = ActivityKind::kInstruction;
        ins.track = engine_tracks[e];
        ins.ts_ns = engine_free[e];
        ins.dur_ns =
            std::max<int64_t>(50, (exec.dur_ns - 400) / std::max(1, k) + rng.Range(-40, 40));
        ins.dur_ns = std::min(ins.dur_ns, exec.ts_ns + exec.dur_ns - ins.ts_ns);
        if (ins.dur_ns <= 0) break;
        ins.external_id = op.external_id;
        engine_free[e] = ins.ts_ns + ins.dur_ns;
        trace.AddSlice(ins);
      }
      cursor = op.ts_ns + op.dur_ns + rng.Range(300, 900);
    }
    call.dur_ns = cursor - call.ts_ns;
    trace.AddSlice(call);
    trace.AddCounter({t, static_cast<double>(rng.Range(20, 95)), cpu_util});
    t = std::max(cursor, device_free) + rng.Range(5000, 20000);
  }
  trace.Finalize();
  return trace;
}

}  // namespace opscope::explorer
