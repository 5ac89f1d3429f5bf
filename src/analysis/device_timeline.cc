// Device timeline: busy / idle / computation / exposed communication and memcpy (TraceLens
// gpu_timeline definitions).
#include <algorithm>

#include "analysis/device_activity.h"
#include "opscope/analysis.h"
#include "trace/json_writer.h"

namespace opscope {

using analysis::Interval;

DeviceTimeline ComputeDeviceTimeline(const Trace& trace, uint32_t process, bool include_unlinked) {
  std::vector<Interval> all, comp, comm, memcpy;
  DeviceTimeline tl;
  const auto& slices = trace.slices();
  const auto& tracks = trace.tracks();
  analysis::CommunicationNames is_communication(trace);
  for (uint32_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    if (!analysis::IsTimelineActivity(s.kind)) continue;
    if (process != kNone && (s.track >= tracks.size() || tracks[s.track].process != process)) {
      continue;
    }
    if (!analysis::IsLinked(trace, i)) {
      ++tl.unlinked_activities;
      if (!include_unlinked) continue;
    }
    const Interval iv{s.ts_ns, s.ts_ns + s.dur_ns};
    all.push_back(iv);
    if (s.kind == ActivityKind::kMemcpy) {
      memcpy.push_back(iv);
    } else if (is_communication(s.name)) {
      comm.push_back(iv);
    } else {
      comp.push_back(iv);
    }
    ++tl.activities;
  }
  if (all.empty()) return tl;
  analysis::MergeIntervals(&all);
  analysis::MergeIntervals(&comp);
  analysis::MergeIntervals(&comm);
  analysis::MergeIntervals(&memcpy);
  tl.start_ns = all.front().begin;
  tl.end_ns = all.back().end;
  tl.total_ns = tl.end_ns - tl.start_ns;
  tl.busy_ns = analysis::Length(all);
  tl.idle_ns = tl.total_ns - tl.busy_ns;
  tl.computation_ns = analysis::Length(comp);
  tl.total_comm_ns = analysis::Length(comm);
  tl.exposed_comm_ns = analysis::Length(analysis::Subtract(comm, comp));
  tl.total_memcpy_ns = analysis::Length(memcpy);
  tl.exposed_memcpy_ns =
      analysis::Length(analysis::Subtract(analysis::Subtract(memcpy, comp), comm));
  return tl;
}

std::string DeviceTimeline::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  const std::pair<const char*, int64_t> fields[] = {
      {"start_ns", start_ns},
      {"end_ns", end_ns},
      {"total_ns", total_ns},
      {"busy_ns", busy_ns},
      {"idle_ns", idle_ns},
      {"computation_ns", computation_ns},
      {"total_comm_ns", total_comm_ns},
      {"exposed_comm_ns", exposed_comm_ns},
      {"total_memcpy_ns", total_memcpy_ns},
      {"exposed_memcpy_ns", exposed_memcpy_ns},
  };
  for (const auto& [k, v] : fields) {
    w.Key(k);
    w.Int(v);
  }
  w.Key("activities");
  w.Int(static_cast<int64_t>(activities));
  w.Key("unlinked_activities");
  w.Int(static_cast<int64_t>(unlinked_activities));
  w.EndObject();
  return w.Take();
}

}  // namespace opscope
