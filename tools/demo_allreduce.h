// The data-parallel case study behind `opscope demo allreduce`: N simulated NeuronCores, one
// thread each, run a training step per iteration — a matmul (the gradient), then an all_reduce
// of it over a ring on NeuronLink — and each writes its own trace in Neuron's layout with
// `distributedInfo`, as the ranks of a real job would.
//
// Every result is computed for real (the matmul with the CPU kernels, the ring all-reduce moving
// and adding the actual chunks between the ranks' threads) and every time is modeled: the matmul
// by the NeuronCore cost model (docs/neuron-model.md), the collective by the NeuronLink ring model
// (src/device/neuron/ring_collective.h). A straggler's compute is `delay_us` longer every step, so
// the other ranks each wait that long at every all_reduce: the job report must find it and
// (N-1) x delay of waiting per step — ground truth by construction.
//
//   opscope::tools::AllReduceDemoOptions o{.ranks = 4, .straggler = 2, .delay_us = 300};
//   opscope::tools::AllReduceDemoResult r = opscope::tools::RunAllReduceDemo(o);
//   std::cout << opscope::tools::FormatAllReduceDemo(r);
#ifndef OPSCOPE_TOOLS_DEMO_ALLREDUCE_H_
#define OPSCOPE_TOOLS_DEMO_ALLREDUCE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace opscope::tools {

struct AllReduceDemoOptions {
  int ranks = 4;
  int steps = 5;
  int straggler = -1;  // the rank whose compute is delay_us longer every step; -1 = none
  double delay_us = 0;
  int64_t m = 256, k = 512, n = 256;  // matmul [m, k] x [k, n]; the [m, n] result is all-reduced
  std::string preset = "trn1";        // NeuronCore and NeuronLink model preset
  std::string out_dir =
      "profiles";  // traces: <out>/<host>_pid_<pid>/<timestamp>/rank_<r>/trace.json
};

struct AllReduceDemoResult {
  AllReduceDemoOptions options;
  std::string run_dir;
  std::vector<std::string> trace_paths;  // by rank
  int64_t matmul_ns = 0;     // modeled device time of one matmul (without the straggler's delay)
  int64_t allreduce_ns = 0;  // modeled ring all-reduce with every rank arriving together
  int64_t gradient_bytes = 0;
  double max_abs_error = 0;  // the all-reduced gradient on every rank against a direct sum
};

// Throws std::invalid_argument for bad options, std::runtime_error when a trace cannot be
// written (naming the path).
AllReduceDemoResult RunAllReduceDemo(const AllReduceDemoOptions& options);

// What ran, where the traces are, and the expected straggler figure.
std::string FormatAllReduceDemo(const AllReduceDemoResult& result);

}  // namespace opscope::tools

#endif  // OPSCOPE_TOOLS_DEMO_ALLREDUCE_H_
