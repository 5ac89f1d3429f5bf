// The one JSON writer of a critical path (CriticalPath, perf_analysis.h), used by `opscope report
// --perf --json` ("critical_path") and the Explorer's critical-path view: every time an exact
// integer of nanoseconds, times since the trace's base_time_ns (written beside them), so epoch
// timestamps lose nothing. Internal to the analysis library and the Explorer.
#ifndef OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_JSON_H_
#define OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_JSON_H_

#include <cstdint>
#include <functional>

#include "base/json_writer.h"
#include "opscope/perf_analysis.h"

namespace opscope::analysis {

struct CriticalPathJsonOptions {
  int top_events = -1;  // events listed, most path time first (-1: all)
  bool path = true;     // the path's edges, in order
  // Called inside each listed event's object after its own fields (the Explorer adds a reference
  // to the slice its timeline can jump to).
  std::function<void(uint32_t slice, JsonWriter* w)> event_fields;
  // Maps each time written (start_ns, end_ns, the coverage's gaps, events' ts_ns: trace ns,
  // relative to base_time_ns) to the output's time axis; when set, base_time_ns is left out (the
  // Explorer writes times relative to the trace's start, exact in a browser's doubles).
  std::function<int64_t(int64_t)> to_output;
};

// Writes into an open object: ok, error (when !ok), step, base_time_ns (unless to_output),
// start_ns, end_ns, length_ns, graph_nodes, graph_edges, path_edges, path_slices, breakdown
// {device_compute_ns, communication_ns, host_ops_ns, launch_overhead_ns, idle_ns}, coverage
// {step_ns, outside_step_ns, total_ns, path_ns, covered_percent, rest {host_gaps_ns, sync_waits_ns,
// runtime_lock_ns, before_path_ns, after_path_ns, threads_not_connected_ns, out_of_order_ns},
// threads_not_connected, gaps [{start_ns, end_ns, cause}], notes [..]}, events [{slice, name,
// bound_by, ts_ns, dur_ns, on_path_ns}], events_total, and with options.path the path [{from_slice,
// from, to_slice, to, type, weight_ns}].
void WriteCriticalPathFields(const Trace& trace, const CriticalPath& cp,
                             const CriticalPathJsonOptions& options, JsonWriter* w);

}  // namespace opscope::analysis

#endif  // OPSCOPE_ANALYSIS_PERF_CRITICAL_PATH_JSON_H_
