// libFuzzer target for the merge of a torch.profiler trace with a Neuron profile
// (src/import/neuron/torch_merge.h): the input is two traces in Kineto JSON separated by a NUL
// byte, read as the torch trace and as the profile's trace (device processes, runtime calls,
// executions, ids and args as any input gives them), then merged. Whatever the two hold, the merge
// must give a finalized trace whose slices lie on its tracks, never a crash or a hang, and
// key_averages and the report must hold on it. Seeds: fuzz-seeds/torch_merge.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "import/neuron/torch_merge.h"
#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/key_averages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view first = input.substr(0, nul);
  const std::string_view second = nul == std::string_view::npos ? "" : input.substr(nul + 1);
  opscope::ImportOptions options;
  options.threads = 1;
  opscope::Trace torch, neuron, merged;
  (void)opscope::ImportTraceFromMemory(first, &torch, nullptr, options);
  (void)opscope::ImportTraceFromMemory(second, &neuron, nullptr, options);
  neuron.metadata().device_type = "NEURON";
  opscope::import::neuron::MergeTorchNeuron(torch, neuron, {}, &merged);
  if (!merged.finalized()) __builtin_trap();
  if (merged.slices().size() > torch.slices().size() + neuron.slices().size()) __builtin_trap();
  for (const opscope::Slice& s : merged.slices()) {
    if (s.track >= merged.tracks().size()) __builtin_trap();
  }
  for (const opscope::Flow& f : merged.flows()) {
    if (f.from != opscope::kNone && f.from >= merged.slices().size()) __builtin_trap();
  }
  (void)opscope::KeyAverages::FromTrace(merged).Table("self_privateuse1_time_total");
  (void)opscope::ReportJson(merged);
  return 0;
}
