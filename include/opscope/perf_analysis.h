// Why is it slow: a performance model per op with a roofline (TraceLens's perf report), what the
// device waits for (HTA's idle time breakdown) and the critical path through a step (HTA's
// single-rank critical path analysis). docs/perf-model.md gives every definition and its source.
//
//   std::optional<opscope::DeviceSpec> spec;
//   opscope::Status st = opscope::ChooseDeviceSpec(trace, "", &spec);  // from deviceProperties
//   opscope::PerfModel pm = opscope::ComputePerfModel(trace, {.device = spec});
//   for (const opscope::PerfModelRow& r : pm.rows) use(r.name, r.gflops, r.bound);
//   opscope::IdleBreakdown idle = opscope::ComputeIdleBreakdown(trace);
//   opscope::CriticalPath cp = opscope::ComputeCriticalPath(trace, {.annotation = "ProfilerStep"});
//
// Times are nanoseconds of the trace's host clock unless a name says otherwise (_us, _mb).
// Thread safety: all functions are pure over a finalized const Trace.
#ifndef OPSCOPE_PERF_ANALYSIS_H_
#define OPSCOPE_PERF_ANALYSIS_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opscope/status.h"
#include "opscope/trace.h"

namespace opscope {

// ---------------------------------------------------------------------------------------------
// Device peaks for the roofline

struct DeviceSpec {
  std::string name;        // "MI300X"
  std::string source;      // where the figures come from
  double mem_bw_gbps = 0;  // peak memory bandwidth, GB/s (1e9 bytes/s)
  // Peak TFLOPS per compute spec, with TraceLens's keys ("matrix_bf16", "vector_fp32", ...).
  std::vector<std::pair<std::string, double>> tflops;
  // 0 when the spec is not listed.
  double PeakTflops(std::string_view compute_spec) const;
};

// H100, H200, B200, MI300X, MI355X, trn1, trn2 from public datasheets.
const std::vector<DeviceSpec>& BuiltinDeviceSpecs();
// The name under which a caller supplies opscope's simulated NeuronCore (its model's own peaks,
// which the analysis layer does not depend on; the opscope CLI supplies them as
// opscope-neuron-trn1 and opscope-neuron-trn2 from the Neuron model's presets).
inline constexpr std::string_view kSimulatedNeuronSpec = "opscope-neuron-trn1";
// A built-in spec by its name ("H100", case-insensitive) or by a device name as traces record it
// ("AMD Instinct MI300X VF", "NVIDIA H100 80GB HBM3").
std::optional<DeviceSpec> FindDeviceSpec(std::string_view name);
// `name_or_file`: a name of `extra` or of the built-in table, or a JSON file in TraceLens's arch
// format ({"name": ..., "mem_bw_gbps": ..., "max_achievable_tflops": {"matrix_bf16": ...}}).
// Empty: chosen from the trace (its deviceProperties name; opscope's own NeuronCore traces get
// `extra`'s kSimulatedNeuronSpec), and `*spec` left empty when the trace's device is not known.
// An unknown name or unreadable file is kNotFound, a malformed file kInvalidInput.
Status ChooseDeviceSpec(const Trace& trace, std::string_view name_or_file,
                        std::optional<DeviceSpec>* spec, const std::vector<DeviceSpec>& extra = {});
// The first device's name in the trace's deviceProperties ("" when none).
std::string TraceDeviceName(const Trace& trace);

// ---------------------------------------------------------------------------------------------
// Performance model per op (TraceLens: ops_summary_by_category, ops_unique_args, the perf-model
// sheets, unified_perf_summary and the short-kernel study)

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct PerfStats {  // over an op's instances with device time; NaN when none had any
  double mean = kNaN, median = kNaN, min = kNaN, max = kNaN;
};

struct KernelBrief {  // one kernel name under a row: launches and device time
  std::string name;
  int64_t stream = 0;
  int64_t count = 0;
  int64_t total_ns = 0;
};

struct PerfModelRow {
  std::string name;
  std::string category;      // TraceLens's: GEMM, SDPA_fwd, NORM_fwd, elementwise, other, ...
  std::string sheet;         // TraceLens's perf-report sheet of a modeled op (GEMM, ...); ""
  std::string input_dims;    // JSON text as recorded: [[16, 559, 1024], [1024]]
  std::string dtypes;        // ["c10::BFloat16", "Scalar"]
  std::string strides;       // [[572416, 1024, 1], [1]]
  std::string concrete;      // ["", "1"]
  int64_t count = 0;         // instances
  bool has_model = false;    // a model exists for the op and its args fit it
  std::string model_error;   // why the model did not apply
  std::string compute_spec;  // matrix_bf16, vector_fp32; "" when unknown
  double gflops = kNaN, data_moved_mb = kNaN, flops_per_byte = kNaN;  // MB = 2^20 bytes
  PerfStats tflops_per_s, tb_per_s;  // per instance, from its device (kernel) time
  int64_t kernel_time_ns_sum = 0;    // per instance: union of its subtree's device activity
  PerfStats kernel_time_us;
  // TraceLens's "param: " values the row is grouped by (sheets only).
  std::vector<std::pair<std::string, std::string>> params;
  // Roofline against the device spec (NaN / "" without one).
  double pct_compute_roof = kNaN;  // mean TFLOPS/s over the peak of the compute spec, percent
  double pct_memory_roof = kNaN;   // mean TB/s over the peak bandwidth, percent
  std::string bound;               // "compute" or "memory" (TraceLens's roofline rule)
  std::vector<KernelBrief> kernels;
  uint32_t example_slice = kNone;  // the first instance
  double percent = 0;              // of the rows' kernel time
};

struct CategoryTime {
  std::string category;
  int64_t count = 0;      // kernel-launching op instances
  int64_t direct_ns = 0;  // sum over them of the union of their direct device activity
  double percent = 0;
};

struct UniqueArgsRow {  // one op name with one set of args, over its kernel-launching instances
  std::string name, category, input_dims, dtypes, strides, concrete;
  int64_t count = 0;
  int64_t direct_ns_sum = 0, subtree_ns_sum = 0;
  PerfStats direct_us;  // per instance
  std::vector<KernelBrief> kernels;
  uint32_t example_slice = kNone;
  double percent = 0;
};

struct ShortKernels {  // kernels under a threshold (TraceLens's short-kernel study)
  struct Row {
    std::string parent_op, input_dims, strides, concrete, kernel;
    int64_t count = 0;
    int64_t sum_ns = 0;
    double percent_of_total = 0;  // of the device timeline's total time
  };
  struct Bin {
    double start_us = 0, end_us = 0;
    int64_t count = 0;
  };
  double threshold_us = 10;
  int64_t kernels = 0;    // short kernels in all
  std::vector<Row> rows;  // by sum descending
  std::vector<Bin> bins;  // numpy.histogram of the short kernels' durations
};

struct PerfModel {
  std::optional<DeviceSpec> device;
  std::vector<PerfModelRow> rows;         // unified_perf_summary, by kernel time descending
  std::vector<PerfModelRow> modeled_ops;  // every modeled op, grouped by name + params (sheets)
  std::vector<CategoryTime> ops_by_category;
  std::vector<UniqueArgsRow> unique_args;
  ShortKernels short_kernels;
  int64_t total_time_ns = 0;  // the device timeline's total (percent base of short kernels)
  int64_t failed_models = 0;  // modeled op instances whose args did not fit their model
};

struct PerfModelOptions {
  std::optional<DeviceSpec> device;  // no roofline without one
  double short_kernel_threshold_us = 10;
  int histogram_bins = 100;
};

PerfModel ComputePerfModel(const Trace& trace, const PerfModelOptions& options = {});

// ---------------------------------------------------------------------------------------------
// Idle time per device stream (HTA get_idle_time_breakdown)

struct StreamIdle {
  int64_t device = 0;  // the device process's pid
  // HTA's stream: the events' "stream" arg where recorded (MTIA's differ from their tracks'
  // tids), else the stream track's tid.
  int64_t stream = 0;
  uint32_t track = kNone;  // the stream's track (Trace::tracks())
  int64_t host_wait_ns = 0, kernel_wait_ns = 0, other_ns = 0;
  int64_t host_wait_intervals = 0, kernel_wait_intervals = 0, other_intervals = 0;
};

struct IdleBreakdownOptions {
  // HTA's consecutive_kernel_delay: a gap shorter than this, after an event whose successor was
  // already issued, is kernel wait (launch overhead between back-to-back kernels). HTA compares
  // it with gaps in the trace's own unit, microseconds (its docstring says nanoseconds); 30 by
  // default.
  double consecutive_kernel_delay_us = 30;
};

struct IdleBreakdown {
  double consecutive_kernel_delay_us = 30;  // the threshold used
  std::vector<StreamIdle> streams;          // by device, then stream
};

IdleBreakdown ComputeIdleBreakdown(const Trace& trace, const IdleBreakdownOptions& options = {});

// ---------------------------------------------------------------------------------------------
// Critical path (HTA critical_path_analysis, one rank)

struct CriticalPathEvent {  // an event the path runs through, with the path time it accounts for
  uint32_t slice = kNone;
  std::string name;
  std::string bound_by;  // cpu_bound, gpu_compute_bound, gpu_communication_bound, ... (HTA)
  int64_t ts_ns = 0, dur_ns = 0;
  int64_t on_path_ns = 0;
};

struct CriticalPathEdge {  // consecutive path nodes: an event's span, a dependency or a delay
  uint32_t from_slice = kNone, to_slice = kNone;
  bool from_start = false, to_start = false;  // the node is the slice's start (else its end)
  std::string type;  // HTA's: critical_path_operator, ..._kernel_launch_delay, ...
  int64_t weight_ns = 0;
};

// What the critical path leaves out of its step: HTA's graph weighs some links 0 (a host gap
// between top-level ops, a wait for the device with no device edge to carry it, a wait for the
// CUDA runtime's lock) and joins only the threads its rules link, so the path's weighted length is
// often a fraction of the step. The parts below add up exactly:
//   path_ns + host_gaps_ns + sync_waits_ns + runtime_lock_ns + before_path_ns + after_path_ns +
//   threads_not_connected_ns + out_of_order_ns == total_ns
// where total_ns is the step's duration plus the path's time outside it (device work launched in
// the step and still running after its end).
struct CriticalPathCoverage {
  int64_t step_ns = 0;          // the step's duration
  int64_t outside_step_ns = 0;  // the path's time outside the step (device work past its end)
  int64_t total_ns = 0;         // step_ns + outside_step_ns
  int64_t path_ns = 0;          // the path's weighted length (CriticalPath::length_ns)
  int64_t host_gaps_ns = 0;     // between consecutive top-level ops of a thread
  int64_t sync_waits_ns = 0;    // blocking calls and sync edges: the host waiting for the device
  int64_t runtime_lock_ns = 0;  // waiting for the CUDA runtime's lock held by another call
  int64_t before_path_ns = 0;   // from the step's start to the path's first event
  int64_t after_path_ns = 0;    // from the path's last event to the step's end
  // The part of the step before and after the path during which host threads with no link to
  // the path were busy (a data loader, a thread HTA's forward/backward merge does not join).
  int64_t threads_not_connected_ns = 0;
  int64_t threads_not_connected = 0;  // how many such threads
  // Signed: edges whose time ran backwards (events out of order by clock skew or rounding).
  int64_t out_of_order_ns = 0;
  struct Gap {  // a stretch of the step the path does not weigh, by cause
    int64_t start_ns = 0, end_ns = 0;
    std::string cause;  // host_gap, sync_wait, runtime_lock, before_path, after_path,
                        // thread_not_connected
  };
  std::vector<Gap> gaps;  // in time order
  // What the trace lacks for the analysis ("no cuda_sync events: ...").
  std::vector<std::string> notes;
};

struct CriticalPath {
  // A result, not a failure of the call: `ok` false says the step has no path and `error` why,
  // as report --perf prints it ("none: ...") and its JSON carries it ("error").
  bool ok = false;
  std::string error;       // why there is no path; "" when ok
  std::string annotation;  // the step's name
  int64_t start_ns = 0, end_ns = 0;
  int64_t length_ns = 0;         // sum of the path's edge weights
  int64_t nodes = 0, edges = 0;  // of the graph
  int64_t distinct_edges = 0;    // edges between distinct pairs of nodes (networkx's count)
  // The path's time by what bounds it (HTA bound_by).
  int64_t device_compute_ns = 0;          // gpu_compute_bound
  int64_t communication_ns = 0;           // gpu_communication_bound
  int64_t host_ops_ns = 0;                // cpu_bound
  int64_t launch_overhead_ns = 0;         // gpu_kernel_launch_overhead
  int64_t idle_ns = 0;                    // gpu_kernel_kernel_overhead: gaps between kernels
  std::vector<CriticalPathEdge> path;     // in path order
  std::vector<CriticalPathEvent> events;  // by on_path_ns descending
  CriticalPathCoverage coverage;          // step_ns and notes also when !ok
};

struct CriticalPathOptions {
  // Events within the instance-th slice whose name contains `annotation` (HTA's rule); the whole
  // trace when empty or when no slice matches "ProfilerStep" (the default).
  std::string annotation = "ProfilerStep";
  int instance = 0;
  // HTA's CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE: a weight-0 launch edge also for kernels that
  // follow the previous one on their stream (keeps launches causal in what-if simulations).
  bool zero_weight_launch_edges = false;
};

CriticalPath ComputeCriticalPath(const Trace& trace, const CriticalPathOptions& options = {});

}  // namespace opscope

#endif  // OPSCOPE_PERF_ANALYSIS_H_
