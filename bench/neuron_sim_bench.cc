// How fast the simulated Neuron device models work: executions/s and instructions/s.
//
// Three measurements, side by side in one run:
//   1. the cost model alone (lower + list-schedule a program), per program;
//   2. the whole device path (enqueue, worker, schedule, completion) with the fixed cost and
//      the clock drift set to 0 so nothing waits for modeled time, no profiler;
//   3. the same with a profiling session recording DEVICE + RUNTIME activity.
// Each prints executions/s, instructions/s, and how many times faster than real time the model
// simulates the device (modeled device time / host wall time; the baseline is real time).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/usage.h"
#include "device/neuron/aten_programs.h"
#include "device/neuron/device.h"
#include "device/neuron/instruction_graph.h"
#include "opscope/activity.h"
#include "opscope/neuron.h"
#include "opscope/profiler.h"

namespace {

using opscope::neuron::Program;

double Seconds(int64_t ns) { return double(ns) * 1e-9; }

struct Workload {
  std::string name;
  std::vector<Program> programs;  // one "call"
};

std::vector<Workload> Workloads() {
  using opscope::neuron::EagerProgram;
  using opscope::neuron::FusedRmsNormProgram;
  using opscope::neuron::Shape2D;
  std::vector<Workload> w;
  for (int64_t rows : {128, 2048}) {
    const Shape2D x{rows, 4096}, col{rows, 1}, wt{1, 4096};
    Workload naive{"naive rmsnorm [" + std::to_string(rows) + ", 4096]", {}};
    naive.programs.push_back(EagerProgram("aten::mul", {x, x}, x));
    naive.programs.push_back(EagerProgram("aten::mean", {x}, col));
    naive.programs.push_back(EagerProgram("aten::add", {col}, col));
    naive.programs.push_back(EagerProgram("aten::rsqrt", {col}, col));
    naive.programs.push_back(EagerProgram("aten::mul", {x, col}, x));
    naive.programs.push_back(EagerProgram("aten::mul", {x, wt}, x));
    w.push_back(std::move(naive));
    w.push_back(
        {"fused rmsnorm [" + std::to_string(rows) + ", 4096]", {FusedRmsNormProgram(rows, 4096)}});
  }
  return w;
}

void ModelOnly(const Workload& w, const opscope::neuron::Params& params) {
  opscope::neuron::InstructionGraph graph;
  int64_t executions = 0, instructions = 0, modeled_ns = 0;
  const int64_t t0 = opscope::NowNs();
  int64_t t1 = t0;
  while (t1 - t0 < 300'000'000) {  // ~0.3 s
    for (const Program& p : w.programs) {
      graph.Lower(p, params);
      modeled_ns +=
          graph.Schedule(params) + int64_t((params.exec_launch_us + params.exec_complete_us) * 1e3);
      instructions += int64_t(graph.instructions().size());
      ++executions;
    }
    t1 = opscope::NowNs();
  }
  const double s = Seconds(t1 - t0);
  std::printf("  %-28s model only   %10.0f exec/s  %12.0f instr/s  %8.0fx real time\n",
              w.name.c_str(), executions / s, instructions / s, double(modeled_ns) / (t1 - t0));
}

void DevicePath(const Workload& w, bool profiled) {
  opscope::neuron::Params params = opscope::neuron::Preset("trn1");
  // Nothing to wait for: measure the simulator, not the model's time.
  params.exec_launch_us = params.exec_complete_us = params.program_switch_us = 0;
  params.first_exec_load_us = 0;
  params.max_inflight_executions = 63;
  params.clock_drift_ppm = 0;
  opscope::neuron::NeuronDevice dev(params);
  opscope::ProfilerOptions o;
  o.activities = {opscope::ProfilerActivity::kCPU, opscope::ProfilerActivity::kPrivateUse1};
  o.max_device_activities = 50'000'000;
  o.device.max_events_per_nc = 50'000'000;
  opscope::Profiler prof(o);
  if (profiled) prof.Start();
  const int64_t t0 = opscope::NowNs();
  int64_t t1 = t0, executions = 0;
  const int64_t instr0 = dev.instructions();
  while (t1 - t0 < 300'000'000) {
    for (int i = 0; i < 20; ++i) {
      for (const Program& p : w.programs) {
        dev.Execute(0, p, 0);
        ++executions;
      }
    }
    dev.Synchronize();
    t1 = opscope::NowNs();
  }
  if (profiled) prof.Stop();
  const double s = Seconds(t1 - t0);
  std::printf("  %-28s %-12s %10.0f exec/s  %12.0f instr/s\n", w.name.c_str(),
              profiled ? "device+prof" : "device", executions / s,
              (dev.instructions() - instr0) / s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    constexpr const char* kUsage = "usage: neuron_sim_bench (no arguments)";
    return opscope::bench::Usage(kUsage, opscope::bench::WantsHelp(argc, argv) ? nullptr : argv[1]);
  }
  const opscope::neuron::Params params = opscope::neuron::Preset("trn1");
  std::printf("neuron_sim_bench: how fast the simulated NeuronCore (trn1) models work\n");
  std::printf(
      "(\"x real time\" = modeled device time incl. launch and completion, %.0f us per "
      "execution, divided by host time)\n",
      params.exec_launch_us + params.exec_complete_us);
  for (const Workload& w : Workloads()) {
    ModelOnly(w, params);
    DevicePath(w, false);
    DevicePath(w, true);
  }
  return 0;
}
