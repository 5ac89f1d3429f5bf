// libFuzzer target for the legacy Neuron JSON reader (src/import/neuron/legacy_json.h), fed
// directly on the bytes so that inputs whose top-level keys no longer look like a Neuron profile
// still reach it: any bytes must give a finalized trace or an error with a message, never a crash
// or a hang; slices stay on real tracks with non-negative durations, and the analyses hold on what
// was read. Seeds: small device and system profiles of the documented structure
// (fuzz-seeds/neuron_json).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "import/neuron/legacy_json.h"
#include "opscope/analysis.h"
#include "opscope/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  opscope::ImportOptions options;
  options.threads = 1;
  opscope::Trace trace;
  opscope::ImportStats stats;
  const opscope::Status st =
      opscope::import::neuron::ReadNeuronJsonBytes(input, &trace, &stats, options);
  if (!trace.finalized()) __builtin_trap();
  if (!st.ok() && st.message().empty()) __builtin_trap();
  for (const opscope::Slice& s : trace.slices()) {
    if (s.dur_ns < 0 || s.track >= trace.tracks().size()) __builtin_trap();
  }
  for (const opscope::CounterSample& c : trace.counters()) {
    if (c.track >= trace.tracks().size()) __builtin_trap();
  }
  (void)opscope::ReportJson(trace);
  return 0;
}
