// A generated Neuron-style trace of any size, for the Explorer's tests, benchmark and
// `opscope explore --synthetic N`: RMSNorm calls (user_annotation) made of six aten ops, each
// launching nrta_execute_schedule -> nc_exec_running on NeuronCore 0 -> engine instructions
// (TensorE/VectorE/ScalarE/GpSimdE/DMA) carrying the op's External id, plus a CPU counter.
#ifndef OPSCOPE_EXPLORER_SYNTHETIC_TRACE_H_
#define OPSCOPE_EXPLORER_SYNTHETIC_TRACE_H_

#include <cstdint>

#include "opscope/trace.h"

namespace opscope::explorer {

struct SyntheticTraceOptions {
  int64_t target_events = 10000;  // slices to generate, about (whole RMSNorm calls)
  int instructions_per_execution = 10;
  uint64_t seed = 1;
};

// Returns a finalized trace.
Trace MakeSyntheticNeuronTrace(const SyntheticTraceOptions& options);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_SYNTHETIC_TRACE_H_
