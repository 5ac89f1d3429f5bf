// Shared pieces of the analyses: interval arithmetic over device activity and the launcher rule.
#ifndef OPSCOPE_ANALYSIS_DEVICE_ACTIVITY_H_
#define OPSCOPE_ANALYSIS_DEVICE_ACTIVITY_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "opscope/trace.h"

namespace opscope::analysis {

// [begin_ns, end_ns)
struct Interval {
  int64_t begin;
  int64_t end;
};

// Sorts and merges overlapping or touching intervals in place.
void MergeIntervals(std::vector<Interval>* intervals);
// Total length of sorted, merged intervals.
int64_t Length(const std::vector<Interval>& merged);
// `from` minus `remove`; both sorted and merged. The result is sorted and merged.
std::vector<Interval> Subtract(const std::vector<Interval>& from,
                               const std::vector<Interval>& remove);
// Length of the union of `intervals` (a copy is merged).
int64_t UnionLength(std::vector<Interval> intervals);

// Activity the device figures count: kernels, memcpy and memset (as TraceLens does; device
// annotations and engine instructions would double count the executions they describe).
bool IsTimelineActivity(ActivityKind kind);
// Linked to a runtime call or an op: the device timeline counts only such activity (as TraceLens
// does by default; unlinked activity was typically launched before profiling started).
bool IsLinked(const Trace& trace, uint32_t activity);
// Whether the device timeline counts slice `i`: timeline activity, linked to a runtime call or op
// (TraceMetadata::timeline_rule kKineto, unless `include_unlinked`) or not (kXla: TraceLens's JAX
// report counts every activity on a device stream).
bool CountsInTimeline(const Trace& trace, uint32_t i, bool include_unlinked = false);
// The timeline's memcpy bucket: memcpy activity (kKineto), or activity named copy* / memcpy* /
// memset* in any case (kXla, TraceLens's JAX report).
bool InMemcpyBucket(const Trace& trace, const Slice& activity);
// Collective-communication kernels, by name, case-insensitively: NCCL's
// ("ncclDevKernel_AllReduce...", "ncclKernel_..."), RCCL's ("rcclGenericKernel"), MSCCL's, the
// custom all-reduce kernels of vLLM/SGLang ("cross_device_reduce_1stage<...>", which TraceLens
// also counts as communication), and Neuron's collective library's (nccom; the simulated
// device's "nccom_all_reduce_ring"; the Neuron runtime's "cc_running" event of a collective on a
// NeuronCore, as the profiler's legacy JSON names it). The one classifier every analysis uses
// (timeline, job report, Explorer).
bool IsCommunication(std::string_view name);

// IsCommunication of a trace's interned names, each distinct name classified once: for passes
// over every slice, where a few kernel names repeat many times. Not thread safe; `trace`
// outlives it.
class CommunicationNames {
 public:
  explicit CommunicationNames(const Trace& trace) : trace_(trace) {}
  bool operator()(StringId name) {
    if (name >= known_.size()) known_.resize(name + size_t{1}, kUnknown);
    if (known_[name] == kUnknown) known_[name] = IsCommunication(trace_.Str(name)) ? 1 : 0;
    return known_[name] == 1;
  }

 private:
  static constexpr int8_t kUnknown = -1;
  const Trace& trace_;
  std::vector<int8_t> known_;  // by name id: kUnknown, 0 or 1
};

// The op a device activity is attributed to (TraceLens's "kernel launcher"): walk up from the
// runtime call that launched it (linked by correlation) on the launching thread, skipping python
// functions, user annotations (e.g. "nccl:all_reduce") and the pass-through "execute" op, to the
// innermost enclosing cpu_op (record_param_comms for NCCL kernels, as key_averages and TraceLens
// credit them); when none encloses the call, the runtime call
// itself. Activity without a runtime call falls back to the op its External id names, else kNone.
// An op on the device's own timeline (XLA's op level, read from XPlane) that the activity's link
// names is its launcher before any of these: it is the op the activity ran as a part of.
uint32_t LauncherOf(const Trace& trace, uint32_t activity);

// The analyses' threads (ReportOptions::threads): `requested` > 0 as given; 0 = the import's
// default (the cores the machine's runnable threads leave free, DefaultThreadsNow) for a trace of
// at least kParallelAnalysisSlices slices, else 1 (below that, starting threads costs more than it
// saves).
inline constexpr size_t kParallelAnalysisSlices = 200000;
int AnalysisThreads(int requested, size_t slices);
// Ranges of slices a parallel analysis splits the trace into: several per thread, so a thread
// that got a core late still finds work; 1 for one thread (the serial pass exactly).
inline size_t AnalysisParts(int threads) {
  return threads <= 1 ? 1 : 4 * static_cast<size_t>(threads);
}

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_DEVICE_ACTIVITY_H_
