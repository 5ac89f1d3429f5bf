// The linking rules of a torch.profiler trace with the Neuron profile of the same run
// (torch_merge.h): which of the Neuron profile's runtime calls and executions belong to which of
// the torch trace's framework ops, by the ids both carry, else by time, and the clock offset
// between the two. Works on the two traces as read (finalized, slice indices of each); the copy
// into the merged trace (torch_merge.cc) applies the result.
#ifndef OPSCOPE_IMPORT_NEURON_TORCH_LINK_H_
#define OPSCOPE_IMPORT_NEURON_TORCH_LINK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "opscope/trace.h"

namespace opscope::import::neuron {

// How one Neuron slice was linked.
enum class LinkRule : uint8_t { kNone, kId, kTime };

struct TorchNeuronLinks {
  // Added to a Neuron profile time (ns past its base) to put it on the torch trace's clock (ns
  // past the torch trace's base).
  int64_t neuron_shift_ns = 0;
  // Whether the two clocks could be aligned (both state epoch times, or id-linked runtime calls
  // gave the offset); when false nothing is linked by time.
  bool aligned = false;
  // Per Neuron slice: the torch op (a cpu_op slice of the torch trace) its runtime call or
  // execution belongs to, kNone when none; and the rule that linked it.
  std::vector<uint32_t> op_of;
  std::vector<LinkRule> rule;
  // Per Neuron execution with no runtime call of its own: the torch trace's runtime call that
  // launched it (kNone when none).
  std::vector<uint32_t> torch_runtime_of;
  // What is left out of the merged trace: torch runtime calls the Neuron profile has too (same
  // id), the torch trace's device activity when the Neuron profile has executions, the Neuron
  // profile's framework events when the torch trace has framework ops.
  std::vector<bool> drop_torch, drop_neuron;
  uint64_t torch_device_dropped = 0, torch_runtime_replaced = 0, neuron_framework_dropped = 0;
  uint64_t linked_by_id = 0, linked_by_time = 0, unlinked = 0;
  std::vector<std::string> warnings;
};

// Computes the clock offset, the drops and the links. `torch` and `neuron` are finalized.
TorchNeuronLinks LinkTorchNeuron(const Trace& torch, const Trace& neuron);

}  // namespace opscope::import::neuron

#endif  // OPSCOPE_IMPORT_NEURON_TORCH_LINK_H_
