// Device timeline: busy / idle / computation / exposed communication and memcpy (TraceLens
// gpu_timeline definitions).
#include <algorithm>

#include "analysis/device_activity.h"
#include "base/json_writer.h"
#include "base/parallel_for.h"
#include "opscope/analysis.h"

namespace opscope {

using analysis::Interval;

namespace {

// One range of slices' timeline activity, each kind's intervals already merged.
struct TimelinePart {
  std::vector<Interval> all, comp, comm, memcpy;
  uint64_t activities = 0, unlinked = 0;
};

TimelinePart ScanTimeline(const Trace& trace, std::pair<uint32_t, uint32_t> range, uint32_t process,
                          bool include_unlinked) {
  TimelinePart part;
  const auto& slices = trace.slices();
  const auto& tracks = trace.tracks();
  analysis::CommunicationNames is_communication(trace);
  for (uint32_t i = range.first; i < range.second; ++i) {
    const Slice& s = slices[i];
    if (!analysis::IsTimelineActivity(s.kind)) continue;
    if (process != kNone && (s.track >= tracks.size() || tracks[s.track].process != process)) {
      continue;
    }
    if (!analysis::IsLinked(trace, i)) ++part.unlinked;
    if (!analysis::CountsInTimeline(trace, i, include_unlinked)) continue;
    const Interval iv{s.ts_ns, s.ts_ns + s.dur_ns};
    part.all.push_back(iv);
    if (analysis::InMemcpyBucket(trace, s)) {
      part.memcpy.push_back(iv);
    } else if (is_communication(s.name)) {
      part.comm.push_back(iv);
    } else {
      part.comp.push_back(iv);
    }
    ++part.activities;
  }
  analysis::MergeIntervals(&part.all);
  analysis::MergeIntervals(&part.comp);
  analysis::MergeIntervals(&part.comm);
  analysis::MergeIntervals(&part.memcpy);
  return part;
}

// The union of every part's intervals of one kind: the same set whatever the parts.
std::vector<Interval> Union(std::vector<TimelinePart>& parts,
                            std::vector<Interval> TimelinePart::*member) {
  if (parts.size() == 1) return std::move(parts.front().*member);
  std::vector<Interval> out;
  for (TimelinePart& p : parts) out.insert(out.end(), (p.*member).begin(), (p.*member).end());
  analysis::MergeIntervals(&out);
  return out;
}

}  // namespace

// Ranges of slices (a track's slices are contiguous, so a range is a run of tracks, a long track
// split) are scanned in parallel, each merging its own intervals; the union of the parts is the
// same set of intervals for any split, so every figure is the same for every thread count.
DeviceTimeline ComputeDeviceTimeline(const Trace& trace, uint32_t process, bool include_unlinked,
                                     int threads) {
  const auto ranges = internal::SplitRange(static_cast<uint32_t>(trace.slices().size()),
                                           analysis::AnalysisParts(threads));
  std::vector<TimelinePart> parts(std::max<size_t>(ranges.size(), 1));
  internal::ParallelFor(threads, ranges.size(), [&](size_t i) {
    parts[i] = ScanTimeline(trace, ranges[i], process, include_unlinked);
  });
  DeviceTimeline tl;
  for (const TimelinePart& p : parts) {
    tl.activities += p.activities;
    tl.unlinked_activities += p.unlinked;
  }
  std::vector<Interval> all = Union(parts, &TimelinePart::all);
  if (all.empty()) return tl;
  const std::vector<Interval> comp = Union(parts, &TimelinePart::comp);
  const std::vector<Interval> comm = Union(parts, &TimelinePart::comm);
  const std::vector<Interval> memcpy = Union(parts, &TimelinePart::memcpy);
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

std::vector<DeviceTimelineOfDevice> ComputeDeviceTimelines(const Trace& trace, int threads) {
  const auto& tracks = trace.tracks();
  std::vector<bool> holds_activity(trace.processes().size(), false);
  for (const Slice& s : trace.slices()) {
    if (!analysis::IsTimelineActivity(s.kind) || s.track >= tracks.size()) continue;
    const uint32_t p = tracks[s.track].process;
    if (p < holds_activity.size()) holds_activity[p] = true;
  }
  std::vector<DeviceTimelineOfDevice> out;
  for (uint32_t p = 0; p < holds_activity.size(); ++p) {
    if (!holds_activity[p]) continue;
    const Process& proc = trace.processes()[p];
    DeviceTimelineOfDevice d;
    d.process = p;
    if (proc.labels != 0) {
      d.device = std::string(trace.Str(proc.labels));
    } else if (proc.name != 0) {
      d.device = std::string(trace.Str(proc.name));
    } else {
      const std::string& type = trace.metadata().device_type;
      d.device = (type.empty() ? std::string("device") : type) + " " +
                 (proc.pid_text.empty() ? std::to_string(proc.pid) : proc.pid_text);
    }
    d.timeline = ComputeDeviceTimeline(trace, p, false, threads);
    out.push_back(std::move(d));
  }
  return out;
}

namespace {

void WriteTimelineFields(const DeviceTimeline& tl, JsonWriter* w) {
  const std::pair<const char*, int64_t> fields[] = {
      {"start_ns", tl.start_ns},
      {"end_ns", tl.end_ns},
      {"total_ns", tl.total_ns},
      {"busy_ns", tl.busy_ns},
      {"idle_ns", tl.idle_ns},
      {"computation_ns", tl.computation_ns},
      {"total_comm_ns", tl.total_comm_ns},
      {"exposed_comm_ns", tl.exposed_comm_ns},
      {"total_memcpy_ns", tl.total_memcpy_ns},
      {"exposed_memcpy_ns", tl.exposed_memcpy_ns},
  };
  for (const auto& [k, v] : fields) {
    w->Key(k);
    w->Int(v);
  }
  w->Key("activities");
  w->Int(static_cast<int64_t>(tl.activities));
  w->Key("unlinked_activities");
  w->Int(static_cast<int64_t>(tl.unlinked_activities));
}

}  // namespace

std::string DeviceTimeline::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  WriteTimelineFields(*this, &w);
  w.EndObject();
  return w.Take();
}

std::string DeviceTimelineOfDevice::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  w.Field("device", device);
  WriteTimelineFields(timeline, &w);
  w.EndObject();
  return w.Take();
}

}  // namespace opscope
