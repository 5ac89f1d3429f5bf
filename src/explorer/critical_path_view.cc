// The Explorer's critical path tab (critical_path_view.h): the step's path and idle causes as JSON.
#include "explorer/critical_path_view.h"

#include <algorithm>
#include <map>
#include <utility>

#include "base/json_writer.h"

namespace opscope::explorer {
namespace {

// The lane of each device stream, keyed by (device pid, stream tid): its first slice's lane.
std::map<std::pair<int64_t, int64_t>, int64_t> StreamLanes(const TraceIndex& index) {
  const Trace& trace = index.trace();
  std::map<std::pair<int64_t, int64_t>, int64_t> lanes;
  std::vector<bool> seen(trace.tracks().size(), false);
  for (uint32_t i = 0; i < trace.slices().size(); ++i) {
    const uint32_t track = trace.slices()[i].track;
    if (track >= seen.size() || seen[track] || !index.OnDevice(i)) continue;
    seen[track] = true;
    const Track& tr = trace.tracks()[track];
    const uint32_t lane = index.LaneOf(i);
    if (tr.process >= trace.processes().size() || lane == kNone) continue;
    lanes.try_emplace({trace.processes()[tr.process].pid, tr.tid}, lane);
  }
  return lanes;
}

void WriteIdle(const TraceIndex& index, const IdleBreakdown& idle, JsonWriter* w) {
  w->BeginObject();
  w->Field("consecutive_kernel_delay_ns", idle.consecutive_kernel_delay_ns);
  w->Key("streams");
  w->BeginArray();
  const auto lanes = StreamLanes(index);
  for (const StreamIdle& s : idle.streams) {
    w->BeginObject();
    w->Field("device", s.device);
    w->Field("stream", s.stream);
    const auto lane = lanes.find({s.device, s.stream});
    w->Field("lane", lane == lanes.end() ? int64_t{-1} : lane->second);
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
  int64_t path_slices = 0;
  auto mark = [&](uint32_t slice) {
    if (slice < view.on_path.size() && !view.on_path[slice]) {
      view.on_path[slice] = true;
      ++path_slices;
    }
  };
  for (const CriticalPathEdge& e : cp.path) {
    mark(e.from_slice);
    mark(e.to_slice);
  }
  JsonWriter w;
  w.BeginObject();
  w.Field("ok", cp.ok);
  w.Field("error", cp.error);
  w.Field("step", cp.annotation);
  w.Field("start_ns", index.ToApi(cp.start_ns));
  w.Field("end_ns", index.ToApi(cp.end_ns));
  w.Field("length_ns", cp.length_ns);
  w.Field("graph_nodes", cp.nodes);
  w.Field("graph_edges", cp.edges);
  w.Field("path_edges", static_cast<int64_t>(cp.path.size()));
  w.Field("path_slices", path_slices);
  w.Key("breakdown");
  w.BeginObject();
  w.Field("device_compute_ns", cp.device_compute_ns);
  w.Field("communication_ns", cp.communication_ns);
  w.Field("host_ops_ns", cp.host_ops_ns);
  w.Field("launch_overhead_ns", cp.launch_overhead_ns);
  w.Field("idle_ns", cp.idle_ns);
  w.EndObject();
  w.Key("events");
  w.BeginArray();
  const size_t shown = std::min(cp.events.size(), static_cast<size_t>(std::max(0, top_events)));
  for (size_t i = 0; i < shown; ++i) {
    const CriticalPathEvent& e = cp.events[i];
    if (e.slice >= trace.slices().size()) continue;
    w.BeginObject();
    w.Key("event");
    index.WriteSliceRef(e.slice, &w);
    w.Field("bound_by", e.bound_by);
    w.Field("on_path_ns", e.on_path_ns);
    w.EndObject();
  }
  w.EndArray();
  w.Field("events_total", static_cast<int64_t>(cp.events.size()));
  w.Key("idle_breakdown");
  WriteIdle(index, ComputeIdleBreakdown(trace), &w);
  w.EndObject();
  view.json = w.Take();
  return view;
}

}  // namespace opscope::explorer
