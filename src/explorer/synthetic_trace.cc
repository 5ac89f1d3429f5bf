// The generated Neuron-style trace (MakeSyntheticNeuronTrace, explorer.h) for tests, benchmarks
// and --synthetic.
#include <algorithm>
#include <array>

#include "opscope/explorer.h"

namespace opscope {
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

constexpr std::array<const char*, 5> kEngines = {"TensorE", "VectorE", "ScalarE", "GpSimdE",
                                                 "DMA queue 0"};
constexpr std::array<const char*, 5> kInstr = {"MatMult", "TensorTensorOp", "Activation", "Iota",
                                               "dma_copy"};
constexpr std::array<const char*, 6> kOps = {"aten::pow",   "aten::mean", "aten::add",
                                             "aten::rsqrt", "aten::mul",  "aten::mul"};

// Builds the trace one RMSNorm call at a time. The order of random draws and of string
// interning is part of the output: the same seed gives the same trace, slice ids included.
class SyntheticNeuronTrace {
 public:
  SyntheticNeuronTrace(uint64_t seed, int instructions_per_execution)
      : rng_{seed * 0x9e3779b97f4a7c15ull + 1},
        instructions_(std::max(0, instructions_per_execution)) {
    trace_.metadata().device_type = "NEURON";
    trace_.metadata().trace_name = "synthetic";
    AddTracks();
    InternNames();
  }

  // Slices one call adds: the annotation and, per op, the op, its runtime call, its execution
  // and its instructions.
  int64_t SlicesPerCall() const {
    return 1 + static_cast<int64_t>(kOps.size()) * (3 + instructions_);
  }

  // One RMSNorm call of six ops, then a CPU-utilization sample and an idle gap.
  void AddCall() {
    Slice call = HostSlice(rms_, user_cat_, ActivityKind::kUserAnnotation, t_);
    int64_t cursor = t_ + rng_.Range(200, 600);
    for (const char* op_name : kOps) cursor = AddOp(op_name, cursor);
    call.dur_ns = cursor - call.ts_ns;
    trace_.AddSlice(call);
    trace_.AddCounter({t_, static_cast<double>(rng_.Range(20, 95)), cpu_util_});
    t_ = std::max(cursor, device_free_) + rng_.Range(5000, 20000);
  }

  Trace Finish() {
    trace_.Finalize();
    return std::move(trace_);
  }

 private:
  void AddTracks() {
    const uint32_t host = trace_.AddProcess(4242, "python");
    main_thread_ = trace_.AddThreadTrack(host, 4242, "thread 4242 (python)");
    cpu_util_ = trace_.AddThreadTrack(host, 1, "CPU utilization", TrackKind::kCounter);
    const uint32_t core = trace_.AddProcess(0, "NeuronCore 0", /*is_device=*/true);
    exec_track_ = trace_.AddThreadTrack(core, 0, "nc_exec", TrackKind::kDeviceStream);
    for (size_t e = 0; e < kEngines.size(); ++e) {
      engine_tracks_[e] = trace_.AddThreadTrack(core, static_cast<int64_t>(e + 1), kEngines[e],
                                                TrackKind::kDeviceEngine);
    }
  }

  void InternNames() {
    rms_ = trace_.Intern("RMSNorm");
    user_cat_ = trace_.Intern("user_annotation");
    op_cat_ = trace_.Intern("cpu_op");
    rt_name_ = trace_.Intern("nrta_execute_schedule");
    rt_cat_ = trace_.Intern("privateuse1_runtime");
    exec_name_ = trace_.Intern("nc_exec_running");
    kernel_cat_ = trace_.Intern("kernel");
    instr_cat_ = trace_.Intern(KinetoCategory(ActivityKind::kInstruction));
    shapes_ = trace_.Intern("[[4, 4096], []]");
  }

  Slice HostSlice(StringId name, StringId category, ActivityKind kind, int64_t ts_ns) {
    Slice s;
    s.name = name;
    s.category = category;
    s.kind = kind;
    s.track = main_thread_;
    s.ts_ns = ts_ns;
    s.external_id = ext_++;
    return s;
  }

  // An op starting at `cursor` with its runtime call and the execution it launches; returns
  // where the next op starts.
  int64_t AddOp(const char* op_name, int64_t cursor) {
    Slice op = HostSlice(trace_.Intern(op_name), op_cat_, ActivityKind::kCpuOp, cursor);
    op.input_shapes = shapes_;
    Slice rt;
    rt.name = rt_name_;
    rt.category = rt_cat_;
    rt.kind = ActivityKind::kRuntime;
    rt.track = main_thread_;
    rt.ts_ns = cursor + rng_.Range(1000, 3000);
    rt.dur_ns = rng_.Range(8000, 15000);
    rt.external_id = op.external_id;
    rt.correlation = corr_++;
    op.dur_ns = (rt.ts_ns - op.ts_ns) + rt.dur_ns + rng_.Range(500, 2000);
    Slice exec;
    exec.name = exec_name_;
    exec.category = kernel_cat_;
    exec.kind = ActivityKind::kKernel;
    exec.track = exec_track_;
    exec.ts_ns = std::max(device_free_, rt.ts_ns + rng_.Range(2000, 4000));
    exec.dur_ns = rng_.Range(4000, 9000);
    exec.external_id = op.external_id;
    exec.correlation = rt.correlation;
    device_free_ = exec.ts_ns + exec.dur_ns;
    trace_.AddSlice(op);
    trace_.AddSlice(rt);
    trace_.AddSlice(exec);
    AddInstructions(exec);
    return op.ts_ns + op.dur_ns + rng_.Range(300, 900);
  }

  // Instructions run back to back on their engines inside the execution.
  void AddInstructions(const Slice& exec) {
    std::array<int64_t, kEngines.size()> engine_free{};
    engine_free.fill(exec.ts_ns + 200);
    for (int i = 0; i < instructions_; ++i) {
      const size_t e = static_cast<size_t>(rng_.Next() % kEngines.size());
      Slice ins;
      ins.name = trace_.Intern(kInstr[e]);
      ins.category = instr_cat_;
      ins.kind = ActivityKind::kInstruction;
      ins.track = engine_tracks_[e];
      ins.ts_ns = engine_free[e];
      ins.dur_ns = std::max<int64_t>(
          50, (exec.dur_ns - 400) / std::max(1, instructions_) + rng_.Range(-40, 40));
      ins.dur_ns = std::min(ins.dur_ns, exec.ts_ns + exec.dur_ns - ins.ts_ns);
      if (ins.dur_ns <= 0) break;
      ins.external_id = exec.external_id;
      engine_free[e] = ins.ts_ns + ins.dur_ns;
      trace_.AddSlice(ins);
    }
  }

  Trace trace_;
  Rng rng_;
  const int instructions_;
  uint32_t main_thread_ = kNone, cpu_util_ = kNone, exec_track_ = kNone;
  std::array<uint32_t, kEngines.size()> engine_tracks_{};
  StringId rms_ = 0, user_cat_ = 0, op_cat_ = 0, rt_name_ = 0, rt_cat_ = 0, exec_name_ = 0,
           kernel_cat_ = 0, instr_cat_ = 0, shapes_ = 0;
  int64_t t_ = 1000;         // start of the next call, ns
  int64_t device_free_ = 0;  // when the NeuronCore finishes its last execution, ns
  int64_t ext_ = 1;
  int64_t corr_ = 1;
};

}  // namespace

Trace MakeSyntheticNeuronTrace(const SyntheticTraceOptions& options) {
  SyntheticNeuronTrace gen(options.seed, options.instructions_per_execution);
  const int64_t calls = std::max<int64_t>(1, options.target_events / gen.SlicesPerCall());
  for (int64_t c = 0; c < calls; ++c) gen.AddCall();
  return gen.Finish();
}

}  // namespace opscope
