// The RMSNorm case study behind `opscope demo rmsnorm`: profile each implementation (variant) of
// RMSNorm on a device, after warm-up, and report key_averages tables, per-call device time,
// device executions, host time and bytes moved, plus a comparison across variants.
//
//   auto variants = opscope::tools::RmsNormVariants();      // naive, fused
//   variants.push_back({"compiled", "...", my_compiled_fn});  // more variants slot in here
//   opscope::tools::DemoReport r = opscope::tools::RunRmsNormDemo(options, variants);
//   std::cout << opscope::tools::FormatDemoText(r);
#ifndef OPSCOPE_TOOLS_DEMO_RMSNORM_H_
#define OPSCOPE_TOOLS_DEMO_RMSNORM_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "opscope/key_averages.h"
#include "opscope/tensor.h"

namespace opscope::tools {

// Profiled iterations per variant, at most: each keeps its trace events (about 0.2 MB).
inline constexpr int kMaxDemoIters = 1000;

struct DemoOptions {
  std::string device = "neuron";  // "neuron" or "cpu" (any torch-style device string)
  int64_t rows = 128;             // the default shape shows the reference story's structure
  int64_t hidden = 4096;
  int iters = 10;  // profiled iterations per variant
  int warmup = 2;  // unprofiled iterations first (hide first-execution load)
  double eps = 1e-6;
  bool sync = true;            // synchronize the device after each profiled iteration
  bool flush_on_stop = false;  // with sync off: let the profiler flush the device at stop
  std::string out_dir;         // traces go to ProfileRunDirectory(out_dir)/<variant>/ (profiler.h)
  int row_limit = 12;          // rows per key_averages table
};

// One implementation of RMSNorm: y = run(x, w) with x [rows, hidden] and w [hidden] on the
// demo's device. `description` is printed above its table.
struct DemoVariant {
  std::string name;
  std::string description;
  std::function<Tensor(const Tensor& x, const Tensor& w, double eps)> run;
};

// naive (x*x, mean, +eps, rsqrt, x*r, *w) and fused (rms_norm -> aten::_fused_rms_norm).
std::vector<DemoVariant> RmsNormVariants();

struct VariantResult {
  std::string name;
  std::string description;
  KeyAverages averages;
  std::string sort_key;    // the key the table is sorted by
  std::string trace_path;  // "" when no --out
  // Per profiled call (per iteration), from the trace.
  double device_us_per_call = 0;  // sum of device executions (nc_exec_running)
  double device_executions_per_call = 0;
  double host_self_cpu_us_per_call = 0;  // sum of host ops' self CPU time
  double bytes_per_call = 0;             // bytes the device moved (DMA), 0 when not known
  double wall_us_per_call = 0;           // host wall time of the profiled loop (incl. waiting)
  // Share of device time by op key, e.g. {"aten::mul", 0.51}, largest first.
  std::vector<std::pair<std::string, double>> device_share;
  // Memory of the demo's device per call, from the recorded "[memory]" events (profile_memory)
  // read back through opscope's importer and memory timeline (not from the allocator): the peak
  // allocated above what was allocated when the call began, and what the call allocated.
  std::string memory_device;               // "NEURON:0", "CPU"; "" when no event was recorded
  int64_t peak_memory_bytes_per_call = 0;  // the highest over the profiled calls
  double allocated_bytes_per_call = 0;
  double allocations_per_call = 0;
  uint64_t in_flight_at_stop = 0;  // device executions still running when the profiler stopped
  double max_abs_error = 0;        // vs the CPU reference rms_norm
};

struct DemoReport {
  DemoOptions options;
  std::string device;  // resolved device ("neuron:0", "cpu")
  std::string model;   // the Neuron model preset ("trn1"), "" on cpu
  std::vector<VariantResult> variants;
};

// Runs every variant under the profiler (CPU + PrivateUse1, correlate_device_time, record_shapes,
// profile_memory). Each call starts with the previous call's output released, so every call
// starts from the same allocation and the recorded peak is one call's. Throws
// std::runtime_error (or TensorError) with a clear message for bad options.
DemoReport RunRmsNormDemo(const DemoOptions& options, const std::vector<DemoVariant>& variants);

// The tables, per-variant summaries, the comparison and any warnings, as printed.
std::string FormatDemoText(const DemoReport& report);
// The same results as one JSON document.
std::string FormatDemoJson(const DemoReport& report);
// The --no-sync warning for one variant ("" when nothing was in flight).
std::string InFlightWarning(const VariantResult& result);

}  // namespace opscope::tools

#endif  // OPSCOPE_TOOLS_DEMO_RMSNORM_H_
