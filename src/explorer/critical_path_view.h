// The Explorer's "why is it slow" view: HTA's single-rank critical path of one step
// (ComputeCriticalPath) and HTA's idle-time breakdown per stream (ComputeIdleBreakdown), as JSON
// for the UI's Critical path panel, and the set of slices the path runs through, which the
// timeline highlights (WriteSliceMarks).
#ifndef OPSCOPE_EXPLORER_CRITICAL_PATH_VIEW_H_
#define OPSCOPE_EXPLORER_CRITICAL_PATH_VIEW_H_

#include <string>
#include <vector>

#include "explorer/trace_index.h"
#include "opscope/perf_analysis.h"

namespace opscope::explorer {

// Immutable once made; safe to share between request threads.
struct CriticalPathView {
  // The report's critical_path object (analysis/perf/critical_path_json.h: exact integer
  // nanoseconds, coverage with its gaps, no path edge list), each event with "event": a slice
  // reference, plus "idle_breakdown":{"consecutive_kernel_delay_us","streams":[{"device",
  // "stream","lane","host_wait_ns","kernel_wait_ns","other_ns","host_wait_intervals",
  // "kernel_wait_intervals","other_intervals"}]}. `events` lists at most `top_events` of the
  // path's events, most path time first.
  std::string json;
  std::vector<bool> on_path;  // per slice index: the path runs through the slice
};

CriticalPathView MakeCriticalPathView(const TraceIndex& index, const CriticalPathOptions& options,
                                      int top_events);

}  // namespace opscope::explorer

#endif  // OPSCOPE_EXPLORER_CRITICAL_PATH_VIEW_H_
