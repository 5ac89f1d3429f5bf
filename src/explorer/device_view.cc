#include "explorer/device_view.h"

#include <algorithm>
#include <map>

#include "explorer/chain.h"

namespace opscope::explorer {

void WriteDeviceView(const TraceIndex& index, uint32_t slice, JsonWriter* w) {
  const Trace& trace = index.trace();
  const auto& slices = trace.slices();
  auto is_exec = [&](uint32_t id) {
    const uint32_t lane = index.LaneOf(id);
    return lane != kNone && index.lanes()[lane].group == LaneGroup::kHardware;
  };
  uint32_t exec = kNone;
  if (is_exec(slice)) {
    exec = slice;
  } else {
    const Chain chain = BuildChain(index, slice);
    if (!chain.hardware.empty()) exec = chain.hardware.front();
  }
  w->BeginObject();
  if (exec == kNone) {
    w->Key("execution");
    w->Null();
    w->Key("lanes");
    w->BeginArray();
    w->EndArray();
    w->EndObject();
    return;
  }
  const Slice& e = slices[exec];
  const int64_t t0 = e.ts_ns;
  const int64_t t1 = e.ts_ns + std::max<int64_t>(e.dur_ns, 1);
  const uint32_t process = trace.tracks()[e.track].process;
  std::vector<uint32_t> lanes;
  for (uint32_t i = 0; i < index.lanes().size(); ++i) {
    const Lane& lane = index.lanes()[i];
    if (lane.group == LaneGroup::kEngines && lane.process == process) lanes.push_back(i);
  }
  if (lanes.empty()) {  // engine lanes kept in a process of their own
    for (uint32_t i = 0; i < index.lanes().size(); ++i) {
      if (index.lanes()[i].group == LaneGroup::kEngines) lanes.push_back(i);
    }
  }
  std::map<int64_t, int64_t> ext_count;
  for (uint32_t lane : lanes) {
    for (const LaneRow& row : index.lanes()[lane].rows) {
      size_t i = std::upper_bound(row.end.begin(), row.end.end(), t0) - row.end.begin();
      for (; i < row.ids.size() && row.start[i] < t1; ++i) {
        ++ext_count[slices[row.ids[i]].external_id];
        if (ext_count.size() > 256) break;
      }
    }
  }
  w->Key("execution");
  index.WriteSliceRef(exec, w);
  w->Field("t0", t0);
  w->Field("t1", t1);
  w->Key("lanes");
  w->BeginArray();
  for (uint32_t lane : lanes) w->Int(lane);
  w->EndArray();
  w->Key("ops");
  w->BeginArray();
  for (const auto& [ext, count] : ext_count) {
    std::string_view name = ext == 0 ? "(no op)" : "(unknown op)";
    if (ext != 0) {
      for (uint32_t id : index.WithExternalId(ext)) {
        if (index.IsHostOp(id)) {
          name = trace.Str(slices[id].name);
          break;
        }
      }
    }
    w->BeginObject();
    w->Field("ext", ext);
    w->Field("name", name);
    w->Field("count", count);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace opscope::explorer
