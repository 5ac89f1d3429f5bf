// The Device tab's view of a selection (device_view.h): engines, opcodes and DMA of the executions.
#include "explorer/device_view.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "explorer/chain.h"

namespace opscope::explorer {
namespace {

bool IsExecution(const TraceIndex& index, uint32_t id) {
  const uint32_t lane = index.LaneOf(id);
  return lane != kNone && index.lanes()[lane].group == LaneGroup::kHardware;
}

// The device executions the view is about: the selected one, or those the selection's chain
// reaches (an op's kernels, an instruction's execution), in time order.
std::vector<uint32_t> Executions(const TraceIndex& index, uint32_t slice) {
  if (IsExecution(index, slice)) return {slice};
  return BuildChain(index, slice).hardware;
}

// Lanes of `group` on `process` (or, if none, on any process: engine lanes kept apart).
std::vector<uint32_t> LanesOf(const TraceIndex& index, LaneGroup group, uint32_t process) {
  std::vector<uint32_t> lanes;
  for (uint32_t i = 0; i < index.lanes().size(); ++i) {
    if (index.lanes()[i].group == group && index.lanes()[i].process == process) lanes.push_back(i);
  }
  if (lanes.empty() && group == LaneGroup::kEngines) {
    for (uint32_t i = 0; i < index.lanes().size(); ++i) {
      if (index.lanes()[i].group == group) lanes.push_back(i);
    }
  }
  return lanes;
}

struct LaneUse {
  int64_t busy_ns = 0;  // union of the lane's events, clipped to the range
  int64_t events = 0;
  int64_t first_ns = INT64_MAX, last_ns = INT64_MIN;  // first start, last end
};

LaneUse UseOf(const Lane& lane, int64_t t0, int64_t t1) {
  LaneUse use;
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const LaneRow& row : lane.rows) {
    size_t i = std::upper_bound(row.end.begin(), row.end.end(), t0) - row.end.begin();
    for (; i < row.ids.size() && row.start[i] < t1; ++i) {
      spans.emplace_back(std::max(row.start[i], t0), std::min(row.end[i], t1));
      ++use.events;
      use.first_ns = std::min(use.first_ns, row.start[i]);
      use.last_ns = std::max(use.last_ns, row.end[i]);
    }
  }
  std::sort(spans.begin(), spans.end());
  int64_t cur_start = 0, cur_end = INT64_MIN;
  for (const auto& [a, b] : spans) {
    if (a > cur_end) {
      if (cur_end > cur_start) use.busy_ns += cur_end - cur_start;
      cur_start = a;
      cur_end = b;
    } else {
      cur_end = std::max(cur_end, b);
    }
  }
  if (cur_end > cur_start) use.busy_ns += cur_end - cur_start;
  return use;
}

// {"t0","t1"} in API time, or null when the range is empty.
void WriteRange(const TraceIndex& index, const char* key, int64_t t0, int64_t t1, JsonWriter* w) {
  w->Key(key);
  if (t1 <= t0) {
    w->Null();
    return;
  }
  w->BeginObject();
  w->Field("t0", index.ToApi(t0));
  w->Field("t1", index.ToApi(t1));
  w->EndObject();
}

// The device model's "execution phases" lane (one span per phase of each execution), beside the
// engine and DMA queue lanes.
bool IsPhaseLane(const Lane& lane) {
  constexpr std::string_view kPhases = "execution phases";
  return lane.title.size() >= kPhases.size() &&
         lane.title.compare(lane.title.size() - kPhases.size(), kPhases.size(), kPhases) == 0;
}

// "phases":[{"name","dur"}...]: the spans of the phase lane within [t0, t1), in time order;
// empty when the trace has no such lane.
void WritePhases(const TraceIndex& index, uint32_t lane, int64_t t0, int64_t t1, JsonWriter* w) {
  w->Key("phases");
  w->BeginArray();
  if (lane != kNone) {
    std::vector<std::pair<int64_t, uint32_t>> spans;
    for (const LaneRow& row : index.lanes()[lane].rows) {
      for (size_t i = 0; i < row.ids.size(); ++i) {
        if (row.start[i] >= t0 && row.start[i] < t1) spans.emplace_back(row.start[i], row.ids[i]);
      }
    }
    std::sort(spans.begin(), spans.end());
    for (const auto& [ts, id] : spans) {
      const Slice& s = index.trace().slices()[id];
      w->BeginObject();
      w->Field("name", index.trace().Str(s.name));
      w->Field("dur", s.dur_ns);
      w->EndObject();
    }
  }
  w->EndArray();
}

// The framework ops that issued the instructions in range (by External id), with counts.
void WriteIssuingOps(const TraceIndex& index, const std::vector<uint32_t>& lanes, int64_t t0,
                     int64_t t1, JsonWriter* w) {
  const auto& slices = index.trace().slices();
  std::map<int64_t, int64_t> ext_count;
  for (uint32_t lane : lanes) {
    for (const LaneRow& row : index.lanes()[lane].rows) {
      size_t i = std::upper_bound(row.end.begin(), row.end.end(), t0) - row.end.begin();
      for (; i < row.ids.size() && row.start[i] < t1 && ext_count.size() <= 256; ++i) {
        ++ext_count[slices[row.ids[i]].external_id];
      }
    }
  }
  w->Key("ops");
  w->BeginArray();
  for (const auto& [ext, count] : ext_count) {
    std::string_view name = ext == 0 ? "(no op)" : "(unknown op)";
    for (uint32_t id : index.WithExternalId(ext)) {
      if (ext != 0 && index.IsHostOp(id)) {
        name = index.trace().Str(slices[id].name);
        break;
      }
    }
    w->BeginObject();
    w->Field("ext", ext);
    w->Field("name", name);
    w->Field("count", count);
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace

void WriteDeviceView(const TraceIndex& index, uint32_t slice, JsonWriter* w) {
  const auto& slices = index.trace().slices();
  const std::vector<uint32_t> execs = Executions(index, slice);
  w->BeginObject();
  if (execs.empty()) {
    w->Field("mode", "none");
    w->Key("execution");
    w->Null();
    w->Key("lanes");
    w->BeginArray();
    w->EndArray();
    w->EndObject();
    return;
  }
  const Slice& e = slices[execs.front()];
  const uint32_t process = index.trace().tracks()[e.track].process;
  std::vector<uint32_t> lanes = LanesOf(index, LaneGroup::kEngines, process);
  const bool engines = !lanes.empty();
  int64_t t0 = e.ts_ns, t1 = e.ts_ns + std::max<int64_t>(e.dur_ns, 1);
  if (!engines) {  // streams: every kernel of the selection, on the streams of its device
    lanes = LanesOf(index, LaneGroup::kHardware, process);
    for (uint32_t x : execs) {
      t0 = std::min(t0, slices[x].ts_ns);
      t1 = std::max(t1, slices[x].ts_ns + std::max<int64_t>(slices[x].dur_ns, 1));
    }
  }
  w->Field("mode", engines ? "engines" : "streams");
  w->Key("execution");
  index.WriteSliceRef(execs.front(), w);
  w->Field("executions", static_cast<uint64_t>(execs.size()));
  w->Field("t0", index.ToApi(t0));
  w->Field("t1", index.ToApi(t1));
  w->Key("lanes");
  w->BeginArray();
  for (uint32_t lane : lanes) w->Int(lane);
  w->EndArray();
  int64_t first = INT64_MAX, last = INT64_MIN;  // of the instructions, phases left out
  uint32_t phase_lane = kNone;
  w->Key("utilization");
  w->BeginArray();
  for (uint32_t lane : lanes) {
    const LaneUse use = UseOf(index.lanes()[lane], t0, t1);
    if (engines && IsPhaseLane(index.lanes()[lane])) {
      phase_lane = lane;
    } else {
      first = std::min(first, use.first_ns);
      last = std::max(last, use.last_ns);
    }
    w->BeginObject();
    w->Field("lane", lane);
    w->Field("busy_ns", use.busy_ns);
    w->Field("events", use.events);
    w->EndObject();
  }
  w->EndArray();
  // Neuron: the stretch before the first instruction is the execution's launch (its phases before
  // the engines: library load, program switch, launch, tensor binding, eager dispatch), the one
  // after the last its completion (docs/neuron-model.md, "What one device execution costs").
  WriteRange(index, "launch", engines && first != INT64_MAX ? t0 : 0,
             engines ? std::min(first, t1) : 0, w);
  WriteRange(index, "completion", engines && last != INT64_MIN ? std::max(last, t0) : 0,
             engines ? t1 : 0, w);
  WritePhases(index, phase_lane, t0, t1, w);
  if (engines) WriteIssuingOps(index, lanes, t0, t1, w);
  w->EndObject();
}

}  // namespace opscope::explorer
