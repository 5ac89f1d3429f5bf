// The report's NeuronCore section: per engine instructions, busy time and utilization, the top
// opcodes, DMA traffic and the HBM peak, from a Neuron profile (src/import/neuron) or opscope's
// simulated NeuronCore (src/device/neuron) alike, and where the profile carries its own Summary /
// OpcodeSummary tables, whether their figures agree with the ones computed from the slices.
//
// What it reads of the trace (the lanes both writers give a NeuronCore's process):
//   - engine lanes: every device track holding instruction slices (ActivityKind::kInstruction)
//     other than the DMA queues ("DMA queue ..." / "dma_...") and the simulated device's
//     "execution phases"; the engine is the profile's own name (neuronProfile.engine_lanes maps a
//     timeline-track lane to its Instruction.engine), the opcode the slice's name;
//   - DMA lanes: their slices are packets, args {"bytes": N};
//   - executions: kernel slices on "nc_exec (execution queue)"; their union is the span an
//     engine's utilization is measured over (the device's instruction extent when it has none);
//   - counters "HBM bytes in use..." for the peak; TraceMetadata::extra "neuronProfile" for the
//     Metadata bandwidths and the Summary / OpcodeSummary rows.
// Pure over a finalized const Trace; safe to call concurrently. src/analysis/neuron_device*.cc.
#ifndef OPSCOPE_NEURON_DEVICE_H_
#define OPSCOPE_NEURON_DEVICE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/trace.h"

namespace opscope {

struct NeuronEngineStats {
  std::string device;  // the NeuronCore's process name
  std::string engine;  // as the profile names it ("Vector", "TensorMatrix", "TensorE", ...)
  int64_t instructions = 0;
  int64_t busy_ns = 0;   // union of the engine's instruction intervals
  int64_t total_ns = 0;  // sum of instruction durations
  int64_t span_ns = 0;   // the device's execution span
  double utilization() const {
    return span_ns > 0 ? static_cast<double>(busy_ns) / static_cast<double>(span_ns) : 0.0;
  }
};

struct NeuronOpcodeStats {
  std::string engine;
  std::string opcode;
  int64_t count = 0;
  int64_t total_ns = 0;  // sum of instruction durations
};

struct NeuronDmaStats {
  int64_t packets = 0;
  int64_t bytes = 0;
  int64_t busy_ns = 0;  // per device union over its DMA lanes, summed over devices
  int64_t queues = 0;
  // Metadata.dma_ddr_bandwidth in GB/s (10^9 bytes/s); 0 when the profile does not give it.
  double bandwidth_gbps = 0;
  double gbps() const {  // bytes per busy ns = GB/s
    return busy_ns > 0 ? static_cast<double>(bytes) / static_cast<double>(busy_ns) : 0.0;
  }
};

// One figure the profile's own Summary / OpcodeSummary gives and the slices give again.
struct NeuronSummaryCheck {
  std::string device;
  std::string figure;  // "Summary.vector_engine_instruction_count", "OpcodeSummary ...", ...
  double profile = 0;
  double computed = 0;
  bool agree = false;  // counts and bytes exactly; times within 1% (or 1 ns)
};

struct NeuronDeviceReport {
  bool present = false;                    // the trace has Neuron engine or DMA activity
  int64_t span_ns = 0;                     // execution span, summed over devices
  std::vector<NeuronEngineStats> engines;  // by device, then busy time
  std::vector<NeuronOpcodeStats> opcodes;  // by total time
  NeuronDmaStats dma;
  bool has_hbm = false;
  double hbm_peak_bytes = 0;
  int64_t hbm_peak_ts_ns = 0;
  double hbm_bandwidth_gbps = 0;  // Metadata.hbm_ddr_bandwidth in GB/s; 0 unknown
  std::vector<NeuronSummaryCheck> checks;

  // The `neuron_device` JSON object; `rows` < 0: every opcode.
  std::string ToJson(int rows) const;
  // The report's "NeuronCore" section (ends with a newline).
  void AppendText(int rows, std::string* out) const;
};

NeuronDeviceReport ComputeNeuronDevice(const Trace& trace);

// The name a diff matches engines by across writers: the simulated device's "TensorE" and a
// profile's "Tensor" / "TensorMatrix" are "tensor"; likewise vector, scalar, gpsimd ("Pool"),
// sync ("SP"); other names lowercased. A physical core suffix is kept.
std::string EngineKey(std::string_view engine);
// Opcodes match case-insensitively ("tensor_tensor" = "TENSOR_TENSOR").
std::string OpcodeKey(std::string_view opcode);

// `opscope diff`'s NeuronCore rows: engines and opcodes matched by key.
struct NeuronDeviceDiffRow {
  std::string key;
  std::string name_a, name_b;  // as each trace names it ("" when absent)
  int64_t count_a = 0, count_b = 0;
  int64_t ns_a = 0, ns_b = 0;  // engines: busy; opcodes: total
};
struct NeuronDeviceDiff {
  bool present = false;
  std::vector<NeuronDeviceDiffRow> engines, opcodes;
  NeuronDmaStats dma_a, dma_b;
  std::string ToJson() const;
  void AppendText(int rows, std::string* out) const;
};
NeuronDeviceDiff DiffNeuronDevice(const NeuronDeviceReport& a, const NeuronDeviceReport& b);

}  // namespace opscope

#endif  // OPSCOPE_NEURON_DEVICE_H_
