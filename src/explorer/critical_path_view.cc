// The Explorer's critical-path view (critical_path_view.h): the analysis's critical path written
// by the report's own writer (analysis/perf/critical_path_json.h), the idle time per stream with
// each stream's lane, and the set of slices the path runs through for the timeline's marks.
#include "explorer/critical_path_view.h"

#include <algorithm>
#include <utility>

#include "analysis/perf/critical_path_json.h"
#include "base/json_writer.h"

namespace opscope::explorer {
namespace {

// The lane of each track: its first slice's lane (kNone when it has none).
std::vector<uint32_t> TrackLanes(const TraceIndex& index) {
  const Trace& trace = index.trace();
  std::vector<uint32_t> lanes(trace.tracks().size(), kNone);
  for (uint32_t i = 0; i < trace.slices().size(); ++i) {
    const uint32_t track = trace.slices()[i].track;
    if (track < lanes.size() && lanes[track] == kNone) lanes[track] = index.LaneOf(i);
  }
  return lanes;
}

void WriteIdle(const TraceIndex& index, const IdleBreakdown& idle, JsonWriter* w) {
  w->BeginObject();
  w->Field("consecutive_kernel_delay_us", idle.consecutive_kernel_delay_us);
  w->Key("streams");
  w->BeginArray();
  const auto lanes = TrackLanes(index);
  for (const StreamIdle& s : idle.streams) {
    w->BeginObject();
    w->Field("device", s.device);
    w->Field("stream", s.stream);
    const uint32_t lane = s.track < lanes.size() ? lanes[s.track] : kNone;
    w->Field("lane", lane == kNone ? int64_t{-1} : int64_t{lane});
    w->Field("host_wait_ns", s.host_wait_ns);
    w->Field("kernel_wait_ns", s.kernel_wait_ns);
    w->Field("other_ns", s.other_ns);
    w->Field("host_wait_intervals", s.host_wait_intervals);
    w->Field("kernel_wait_intervals", s.kernel_wait_intervals);
    w->Field("other_intervals", s.other_intervals);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace

CriticalPathView MakeCriticalPathView(const TraceIndex& index, const CriticalPathOptions& options,
                                      int top_events) {
  const Trace& trace = index.trace();
  const CriticalPath cp = ComputeCriticalPath(trace, options);
  CriticalPathView view;
  view.on_path.assign(trace.slices().size(), false);
  for (const CriticalPathEdge& e : cp.path) {
    for (const uint32_t slice : {e.from_slice, e.to_slice}) {
      if (slice < view.on_path.size()) view.on_path[slice] = true;
    }
  }
  JsonWriter w;
  w.BeginObject();
  // The report's writer (one format, exact nanoseconds), each event with the slice reference the
  // timeline jumps to.
  analysis::CriticalPathJsonOptions o;
  o.top_events = std::max(0, top_events);
  o.path = false;
  o.to_output = [&](int64_t ns) { return index.ToApi(ns); };
  o.event_fields = [&](uint32_t slice, JsonWriter* out) {
    out->Key("event");
    index.WriteSliceRef(slice, out);
  };
  analysis::WriteCriticalPathFields(trace, cp, o, &w);
  w.Key("idle_breakdown");
  WriteIdle(index, ComputeIdleBreakdown(trace), &w);
  w.EndObject();
  view.json = w.Take();
  return view;
}

}  // namespace opscope::explorer
