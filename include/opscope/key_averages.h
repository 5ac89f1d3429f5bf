// key_averages(): per-op aggregates of a trace, printed exactly as torch.profiler prints them.
//
// The same code serves the live profiler (Profiler::key_averages()) and imported traces
// (opscope report): both build a Trace and aggregate it here.
//
//   opscope::KeyAverages avg =
//       opscope::KeyAverages::FromTrace(trace, {.group_by_input_shape = true});
//   std::cout << avg.Table("self_privateuse1_time_total", /*row_limit=*/10);
//   std::string json = avg.ToJson();
//
// Device time is attributed as PyTorch does: each device activity linked to a host op (through
// External id / correlation) adds to that op's self device time; an op's device total is its own
// plus its children's. Memory is attributed as PyTorch's _parse_kineto_results does: every host
// event (cpu op, annotation, runtime call) is charged with each "[memory]" event whose time lies
// within its start and end, both inclusive, on any thread.
#ifndef OPSCOPE_KEY_AVERAGES_H_
#define OPSCOPE_KEY_AVERAGES_H_

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/trace.h"

namespace opscope {

struct KeyAveragesOptions {
  bool group_by_input_shape = false;
  // Threads FromTrace runs its per-thread passes on (the calling thread counts; 1 = it alone);
  // the rows are the same for every count.
  int threads = 1;
};

// One row of the table. Times in nanoseconds.
struct KeyAverage {
  std::string key;           // op name
  std::string input_shapes;  // only when grouped by input shape
  bool is_user_annotation = false;
  bool is_device = false;  // a device activity row (kernel, memcpy, ...): no CPU time
  int64_t count = 0;
  int64_t self_cpu_time_total_ns = 0;
  int64_t cpu_time_total_ns = 0;
  int64_t self_device_time_total_ns = 0;
  int64_t device_time_total_ns = 0;
  // Bytes allocated minus bytes freed ("[memory]" events of profile_memory traces) while the
  // row's events ran, host memory (CPU) and device memory (CUDA/HIP/PrivateUse1) apart; the self
  // figures leave out what the events' children allocated. A row named "[memory]" holds the
  // events that fell inside no host op, as PyTorch adds it.
  int64_t cpu_memory_usage = 0;
  int64_t self_cpu_memory_usage = 0;
  int64_t device_memory_usage = 0;
  int64_t self_device_memory_usage = 0;
  // with_flops traces: floating-point operations of the row's events, from each op's "flops" arg
  // when the trace carries one, else from its Input Dims as PyTorch counts them (mm, addmm, bmm,
  // baddbmm, mul, add, conv2d); 0 for ops PyTorch does not count.
  int64_t flops = 0;
};

// Thrown by Table() for a sort key PyTorch would reject; what() lists the accepted keys.
class BadSortKey : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class KeyAverages {
 public:
  static KeyAverages FromTrace(const Trace& trace, const KeyAveragesOptions& options = {});
  // The table of some of the trace's slices (indices sorted ascending, e.g. those of a time
  // range), as FromTrace would give for a trace holding only them, without building that trace.
  static KeyAverages FromSlices(const Trace& trace, std::span<const uint32_t> slices,
                                const KeyAveragesOptions& options = {});

  // PyTorch's EventList.table(): `sort_by` is any attribute PyTorch accepts (self_cpu_time_total,
  // cpu_time_total, self_cuda_time_total, self_privateuse1_time_total, device_time_total, count,
  // ...; empty = insertion order); `row_limit` < 0 = all rows.
  std::string Table(std::string_view sort_by = "", int row_limit = 100) const;
  // The same rows (sorted the same way) as a JSON document.
  std::string ToJson(std::string_view sort_by = "", int row_limit = -1) const;

  const std::vector<KeyAverage>& rows() const { return rows_; }
  // Upper-cased device name for column headers ("NEURON", "CUDA"); empty = no device.
  const std::string& device_name() const { return device_name_; }
  bool has_device_time() const;
  // The trace (or range) holds "[memory]" events: the table shows the memory columns, as
  // torch.profiler's does with profile_memory=True.
  bool has_memory() const { return has_memory_; }
  // The trace was recorded with with_flops (its "with_flops" metadata, or "flops" args): the
  // table shows the "Total FLOPs" column (scaled as PyTorch scales it) when some row has FLOPs.
  bool has_flops() const { return has_flops_; }
  bool grouped_by_input_shape() const { return options_.group_by_input_shape; }
  // Events dropped while recording (shown under the table).
  uint64_t dropped_events() const { return dropped_events_; }
  // Device activity (kernel, memcpy, memset) linked to no host op (shown under the table).
  uint64_t unmatched_device_activity() const { return unmatched_device_activity_; }

 private:
  template <typename Slices>
  static KeyAverages Aggregate(const Trace& trace, const Slices& slices,
                               const KeyAveragesOptions& options);

  std::vector<KeyAverage> rows_;
  std::string device_name_;
  KeyAveragesOptions options_;
  uint64_t dropped_events_ = 0;
  uint64_t unmatched_device_activity_ = 0;
  bool has_memory_ = false;
  bool has_flops_ = false;
};

}  // namespace opscope

#endif  // OPSCOPE_KEY_AVERAGES_H_
