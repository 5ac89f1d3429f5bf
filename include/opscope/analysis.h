// Trace analysis: import torch.profiler / Kineto traces and compute what a peer tool reports.
//
//   opscope::Trace trace;
//   opscope::ImportStats stats;
//   opscope::Status st = opscope::ImportTrace("rank-0.pt.trace.json.gz", &trace, &stats);
//   if (!st.ok()) { std::cerr << st.message() << "\n"; return 1; }
//   opscope::DeviceTimeline tl = opscope::ComputeDeviceTimeline(trace);
//   opscope::OpSummary ops = opscope::ComputeOpSummary(trace);
//   std::cout << opscope::FormatReport(trace, {.sort_by = "device_time_total", .rows = 20});
//
// Every figure is in nanoseconds of the trace's host clock. The definitions follow TraceLens
// (gpu_timeline, ops_summary, kernel_summary) so the numbers can be held against it:
//   - device activity = kernel, memcpy and memset slices (device annotations are excluded);
//   - communication = device kernels/memsets whose name contains, in any case, "nccl", "rccl",
//     "msccl", "cross_device_reduce" or Neuron's collective library's "nccom";
//   - an activity's launcher = the innermost cpu_op enclosing the runtime call that launched it
//     (bound through `correlation`); activity with no runtime call has no launcher.
//
// Thread safety: all functions are pure over a finalized const Trace and may run concurrently.
// Those taking `threads` split their pass over the slices into ranges run on that many threads
// (the calling thread counts; 1 = the calling thread alone) and merge the ranges in a fixed
// order: the result is the same for every thread count.
#ifndef OPSCOPE_ANALYSIS_H_
#define OPSCOPE_ANALYSIS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/key_averages.h"
#include "opscope/neuron_device.h"
#include "opscope/perf_analysis.h"
#include "opscope/status.h"
#include "opscope/trace.h"

namespace opscope {

// ---------------------------------------------------------------------------------------------
// Device timeline (TraceLens gpu_timeline)

struct DeviceTimeline {
  int64_t start_ns = 0;              // first device activity start
  int64_t end_ns = 0;                // last device activity end
  int64_t total_ns = 0;              // end - start
  int64_t busy_ns = 0;               // union of all device activity
  int64_t idle_ns = 0;               // total - busy
  int64_t computation_ns = 0;        // union of compute kernels and memsets
  int64_t total_comm_ns = 0;         // union of communication kernels
  int64_t exposed_comm_ns = 0;       // communication not overlapped by computation
  int64_t total_memcpy_ns = 0;       // union of memcpy
  int64_t exposed_memcpy_ns = 0;     // memcpy not overlapped by computation or communication
  uint64_t activities = 0;           // device activity slices counted
  uint64_t unlinked_activities = 0;  // activity with no runtime call or op (left out by default)
  std::string ToJson() const;
};

// Over every device process of the trace together (as TraceLens does); `process` (an index into
// trace.processes()) restricts it to one device. As TraceLens does by default, activity linked to
// no runtime call or op (e.g. launched before profiling started) is left out unless
// `include_unlinked`. XLA profiles (TraceMetadata::timeline_rule kXla) follow TraceLens's JAX
// report instead: every activity counts, and the memcpy figures are activity named copy*, memcpy*
// or memset*.
DeviceTimeline ComputeDeviceTimeline(const Trace& trace, uint32_t process = kNone,
                                     bool include_unlinked = false, int threads = 1);

// One device's timeline: ComputeDeviceTimeline restricted to its process (TraceLens's per-GPU
// gpu_timeline).
struct DeviceTimelineOfDevice {
  std::string device;        // the process's label, else its name, else "<device type> <pid>"
  uint32_t process = kNone;  // index into trace.processes()
  DeviceTimeline timeline;
  // {"device": ..., then DeviceTimeline::ToJson's keys}
  std::string ToJson() const;
};

// Every process that holds device activity (kernel, memcpy, memset), in process order.
std::vector<DeviceTimelineOfDevice> ComputeDeviceTimelines(const Trace& trace, int threads = 1);

// ---------------------------------------------------------------------------------------------
// Per-op device time (TraceLens ops_summary)

struct OpDeviceTime {
  std::string name;
  int64_t count = 0;              // op instances that launched device activity directly
  int64_t calls = 0;              // all instances of the op (cpu_op slices with this name)
  int64_t direct_device_ns = 0;   // sum over instances of the union of their direct activity
  int64_t subtree_device_ns = 0;  // the same for activity launched anywhere under the op
  int64_t direct_activities = 0;  // device activity slices launched directly
};

struct OpSummary {
  std::vector<OpDeviceTime> rows;  // sorted by direct_device_ns descending, then name
  int64_t total_direct_device_ns = 0;
  uint64_t unattributed_activities = 0;  // device activity with no launcher op
  std::string ToJson() const;
};

// `subtree` false leaves subtree_device_ns at 0 and skips its cost (the per-rank summaries of a
// job need only the direct figures).
OpSummary ComputeOpSummary(const Trace& trace, bool subtree = true, int threads = 1);

// ---------------------------------------------------------------------------------------------
// Kernel summary (TraceLens kernel_summary): per (parent op, kernel, stream)

struct KernelStats {
  std::string parent_op;  // launcher op name; empty when the activity has no launcher
  std::string kernel;
  int64_t stream = 0;  // the device track's tid
  int64_t count = 0;
  int64_t sum_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double mean_ns() const { return count ? static_cast<double>(sum_ns) / count : 0.0; }
};

struct KernelSummary {
  std::vector<KernelStats> rows;  // sorted by sum_ns descending
  int64_t total_ns = 0;           // sum over all rows
  std::string ToJson() const;
};

KernelSummary ComputeKernelSummary(const Trace& trace, int threads = 1);

// ---------------------------------------------------------------------------------------------
// Launch statistics: runtime call duration and launch delay (device start - runtime call start)

struct DurationStats {
  int64_t count = 0;
  int64_t sum_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  // Percentiles by linear interpolation between order statistics (numpy.percentile's default,
  // "linear"): with the values sorted, p = v[floor(h)] + (h - floor(h)) * (v[floor(h)+1] -
  // v[floor(h)]) where h = (count - 1) * q. Two values give p99 = v0 + 0.99 * (v1 - v0).
  double p50_ns = 0;
  double p99_ns = 0;
  double mean_ns() const { return count ? static_cast<double>(sum_ns) / count : 0.0; }
};

struct RuntimeCallStats {
  std::string name;            // runtime API ("cudaLaunchKernel", "hipModuleLaunchKernel", ...)
  DurationStats duration;      // of the runtime call itself
  DurationStats launch_delay;  // device activity start - runtime call start, per linked activity
};

struct LaunchStatistics {
  DurationStats duration;                 // all runtime calls that launched device activity
  DurationStats launch_delay;             // all linked device activity
  std::vector<RuntimeCallStats> by_name;  // sorted by duration sum descending
  uint64_t unlinked_activities = 0;       // device activity without a runtime call
  std::string ToJson() const;
};

LaunchStatistics ComputeLaunchStatistics(const Trace& trace, int threads = 1);

// ---------------------------------------------------------------------------------------------
// Device activity as the timeline counts it, and the idle gaps between it

// One activity the device timeline counts (kernel, memcpy or memset linked to a runtime call or
// op) and the op the ops and kernel summaries credit it to (kNone when none).
struct AttributedActivity {
  uint32_t slice = kNone;
  uint32_t launcher = kNone;
};

// The timeline's activities in slice order, with the same selection as ComputeDeviceTimeline and
// the same launcher as ComputeOpSummary, so figures built on them agree with the report's.
std::vector<AttributedActivity> TimelineActivities(const Trace& trace);

// A stretch with no device activity between two busy stretches of the timeline (all devices
// together, touching activities merged, as ComputeDeviceTimeline does).
struct IdleGap {
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  uint32_t before = kNone;  // the activity that ends the busy stretch before the gap
  uint32_t after = kNone;   // the activity that starts the one after it
};

struct IdleGaps {
  int64_t count = 0;
  int64_t total_ns = 0;          // always the timeline's idle_ns
  std::vector<IdleGap> largest;  // the longest `keep`, longest first (then earliest)
};

IdleGaps ComputeIdleGaps(const Trace& trace, size_t keep = 5);

// ---------------------------------------------------------------------------------------------
// Memory timeline (profile_memory traces: "[memory]" instant events)

// One op's share of the memory live at a device's peak.
struct MemoryHolder {
  std::string op;           // the innermost host op enclosing the allocation on its thread
  int64_t bytes = 0;        // bytes it allocated that were not yet freed at the peak
  int64_t allocations = 0;  // those allocations
};

struct DeviceMemory {
  int64_t device_type = 0;  // c10::DeviceType of the events ("Device Type")
  int64_t device_id = -1;   // "Device Id" (-1 for the host)
  std::string device;       // "CPU", "CUDA:0", "HIP:0", "NEURON:0", ...
  // After each event: allocated and reserved bytes as the allocator reported them ("Total
  // Allocated", "Total Reserved"; reserved -1 when the trace does not say). Where "Total
  // Allocated" is absent, allocated is the running sum of "Bytes".
  struct Sample {
    int64_t ts_ns = 0;
    int64_t allocated = 0;
    int64_t reserved = -1;
  };
  std::vector<Sample> samples;
  int64_t allocations = 0, frees = 0;
  // Sum of "Bytes" over allocations, and of -"Bytes" over frees.
  int64_t allocated_bytes = 0, freed_bytes = 0;
  // Allocated before the first event (its "Total Allocated" minus its "Bytes"; 0 where the trace
  // has no totals): memory the device already held when the trace began. peak_allocated -
  // allocated_at_start is the most the traced code held on top of it.
  int64_t allocated_at_start = 0;
  int64_t peak_allocated = 0;  // the highest allocated sample (its first occurrence)
  int64_t peak_ts_ns = 0;
  int64_t peak_reserved = -1;  // the highest reserved sample
  // Allocations made during the trace and not freed at the peak, grouped by op, most bytes
  // first (at most `top` rows); memory allocated before the trace began has no event and is
  // not among them.
  std::vector<MemoryHolder> holders_at_peak;
};

struct MemoryTimeline {
  std::vector<DeviceMemory> devices;  // by (device type, device id)
  uint64_t events = 0;                // "[memory]" events read
  // `samples`: include every sample (can be long); false writes only the peaks and holders.
  std::string ToJson(bool samples = true) const;
};

MemoryTimeline ComputeMemoryTimeline(const Trace& trace, size_t top = 10);

// ---------------------------------------------------------------------------------------------
// Trace diff

struct OpDiff {
  enum class Change : uint8_t { kAdded, kRemoved, kChanged, kUnchanged };
  std::string name;
  Change change = Change::kUnchanged;
  // Calls, host time and device total are the report's key_averages host row for the name (cpu
  // op, runtime call or annotation; ProfilerStep#N as "ProfilerStep*").
  int64_t calls_a = 0, calls_b = 0;          // key_averages count
  int64_t cpu_ns_a = 0, cpu_ns_b = 0;        // key_averages cpu_time_total
  int64_t device_ns_a = 0, device_ns_b = 0;  // direct device time (OpDeviceTime)
  // key_averages device_time_total: device time under the row's events, so an annotation such as
  // "Torch-Compiled Region: 0/0" that launches nothing itself still shows its device time.
  int64_t device_total_ns_a = 0, device_total_ns_b = 0;
  // Device activities the op launched directly (OpDeviceTime::direct_activities): fusing ops
  // shows here as fewer executions.
  int64_t executions_a = 0, executions_b = 0;
  // |device delta| when either side has device time, else |cpu delta|; rows sort by this.
  int64_t impact_ns() const;
};

// One device activity name (kernel, memcpy, memset) in both traces, as HTA's trace diff counts
// them: every activity of the trace, linked or not.
struct KernelDiff {
  std::string name;
  OpDiff::Change change = OpDiff::Change::kUnchanged;
  int64_t count_a = 0, count_b = 0;
  int64_t total_ns_a = 0, total_ns_b = 0;  // summed duration
  int64_t impact_ns() const;               // |total_ns_b - total_ns_a|
};

struct TraceDiff {
  std::vector<OpDiff> rows;  // added/removed/changed first by impact; unchanged omitted
  // Added, removed and changed device activity names by impact (same rule as rows: changed when
  // the count differs or the total moves by more than 5% and 1 us); unchanged omitted.
  std::vector<KernelDiff> kernels;
  DeviceTimeline timeline_a, timeline_b;
  // Engines, opcodes and DMA of the two traces' NeuronCores (present when either has them).
  NeuronDeviceDiff neuron_device;
  std::string ToJson() const;
  std::string ToText(int row_limit = 30) const;
};

TraceDiff DiffTraces(const Trace& a, const Trace& b);
std::string_view ToString(OpDiff::Change change);

// ---------------------------------------------------------------------------------------------
// The `opscope report` output

struct ReportOptions {
  std::string sort_by;  // key_averages sort key; empty = device total if any, else cpu total
  int rows = 20;        // row limit for each table
  // The file the trace was read from, named in the header ("file" in JSON); the trace's own
  // traceName (often a path on the recording machine) is shown only as metadata.
  std::string file = "";
  // key_averages(group_by_input_shape=True): one row per (op, Input Dims).
  bool group_by_input_shape = false;
  // Also the performance model with its roofline, the idle-time breakdown and the critical path
  // (opscope/perf_analysis.h).
  bool perf = false;
  // The roofline's device: a built-in name or a TraceLens arch JSON file; empty = from the trace.
  // ValidateReportOptions rejects a name or file that cannot be used; the report itself leaves
  // the roofline out and names the error.
  std::string device_spec = "";
  // Device specs besides the built-in ones (the CLI adds the simulated NeuronCore's).
  std::vector<DeviceSpec> extra_device_specs = {};
  // The critical path's step: the instance-th slice whose name contains this text.
  std::string critical_path_step = "ProfilerStep";
  int critical_path_instance = 0;
  // The idle-time breakdown's kernel-wait threshold (IdleBreakdownOptions), microseconds.
  double consecutive_kernel_delay_us = 30;
  // Add the memory timeline per device (text section, "memory" in JSON).
  bool memory = false;
  // Threads that compute the analyses (key_averages, timeline, op and kernel summaries, launch
  // statistics; each split per range of tracks, and run side by side): 0 = as many as the
  // import's default would take (ImportOptions::threads = 0) for a trace of 200000 slices or
  // more, else 1; N = N. The report's bytes are the same for every count.
  int threads = 0;
};

// Every figure of the report, computed once: what FormatReport prints and ReportJson writes.
// Viewers (the Explorer) show these so they never disagree with `opscope report`.
struct Report {
  KeyAverages key_averages;
  DeviceTimeline timeline;
  // One per device when the trace has two or more ("device_timelines" in JSON); else empty.
  std::vector<DeviceTimelineOfDevice> device_timelines;
  OpSummary ops;
  KernelSummary kernels;
  LaunchStatistics launches;
};

// The options that name things from outside the program: kNotFound / kInvalidInput for a
// device spec ChooseDeviceSpec cannot use (the message lists the known names), Ok otherwise.
Status ValidateReportOptions(const Trace& trace, const ReportOptions& options);

// Only options.group_by_input_shape (the key_averages grouping) and options.threads matter here.
Report ComputeReport(const Trace& trace, const ReportOptions& options = {});

// key_averages table, device timeline, top kernels and launch statistics as text. A trace that
// yields no key_averages table gets a line saying why in its place.
std::string FormatReport(const Trace& trace, const ReportOptions& options = {});
// The same content as one JSON document (what `opscope report --json` prints).
std::string ReportJson(const Trace& trace, const ReportOptions& options = {});
// The same, from figures already computed for `trace`.
std::string ReportJson(const Trace& trace, const Report& report, const ReportOptions& options = {});

}  // namespace opscope

#endif  // OPSCOPE_ANALYSIS_H_
