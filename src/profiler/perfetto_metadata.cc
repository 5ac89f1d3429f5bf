// The Perfetto exporter's plan: lanes, kinds, flow ids, and opscope's metadata entry
// (perfetto_writer.h; the entry's keys are in docs/formats.md).
#include <algorithm>
#include <limits>
#include <map>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "profiler/perfetto_writer.h"
#include "trace/perfetto_protos.h"

namespace opscope::internal {

PerfettoWriter::PerfettoWriter(const Trace& trace) : trace_(trace) {
  uint64_t uuid = 1;  // 0 is Perfetto's default track
  for (size_t i = 0; i < trace.processes().size(); ++i) process_uuid_.push_back(uuid++);
  for (size_t i = 0; i < trace.tracks().size(); ++i) track_uuid_.push_back(uuid++);
  int64_t min_ts = 0;
  for (const Slice& s : trace.slices()) min_ts = std::min(min_ts, s.ts_ns);
  for (const Instant& i : trace.instants()) min_ts = std::min(min_ts, i.ts_ns);
  for (const CounterSample& c : trace.counters()) min_ts = std::min(min_ts, c.ts_ns);
  shift_ns_ = min_ts < 0 ? -min_ts : 0;
  PlanLanes();
  for (auto& lanes : lane_uuid_) {
    for (uint64_t& u : lanes) u = uuid++;
  }
  PlanKinds();
  PlanFlows();
}

int32_t PerfettoWriter::DescriptorPid(uint32_t process) const {
  const Process& p = trace_.processes()[process];
  if (p.pid_text.empty() && p.pid >= std::numeric_limits<int32_t>::min() &&
      p.pid <= std::numeric_limits<int32_t>::max()) {
    return static_cast<int32_t>(p.pid);
  }
  return 0x40000000 + static_cast<int32_t>(process);  // the real one is in the metadata entry
}

// Each track's slices into lanes where they nest: a slice goes to the first lane whose innermost
// open slice (after those that ended by its start are closed) encloses it.
void PerfettoWriter::PlanLanes() {
  const size_t tracks = trace_.tracks().size();
  lanes_.assign(tracks, {});
  lane_uuid_.assign(tracks, {});
  std::vector<std::vector<int64_t>> open;  // per lane: ends of the open slices
  for (uint32_t t = 0; t < tracks; ++t) {
    const auto [begin, end] = trace_.TrackSlices(t);
    open.clear();
    for (uint32_t i = begin; i < end; ++i) {
      const Slice& s = trace_.slices()[i];
      const int64_t s_end = SatAdd(s.ts_ns, s.dur_ns);
      size_t lane = 0;
      for (; lane < open.size(); ++lane) {
        std::vector<int64_t>& stack = open[lane];
        while (!stack.empty() && stack.back() <= s.ts_ns) stack.pop_back();
        if (stack.empty() || s_end <= stack.back()) break;
      }
      if (lane == open.size()) {
        open.emplace_back();
        lanes_[t].emplace_back();
      }
      open[lane].push_back(s_end);
      lanes_[t][lane].push_back(i);
    }
    if (lanes_[t].size() > 1) lane_uuid_[t].assign(lanes_[t].size() - 1, 0);
  }
}

void PerfettoWriter::PlanKinds() {
  std::unordered_map<StringId, std::map<ActivityKind, uint64_t>> counts;
  for (const Slice& s : trace_.slices()) ++counts[s.category][s.kind];
  for (const auto& [category, kinds] : counts) {
    const auto most =
        std::max_element(kinds.begin(), kinds.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    kind_of_category_[category] = most->first;
  }
}

// Flows keep their id as the Perfetto flow id when they have the most common category and name
// and an id no other such flow has; the rest get kListedFlowBit | their ordinal, listed in the
// metadata entry with their id, category and name.
void PerfettoWriter::PlanFlows() {
  const std::vector<Flow>& flows = trace_.flows();
  const size_t n = trace_.slices().size();
  std::map<std::pair<StringId, StringId>, uint64_t> kinds;
  for (const Flow& f : flows) ++kinds[{f.category, f.name}];
  if (!kinds.empty()) {
    const auto most =
        std::max_element(kinds.begin(), kinds.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    flow_category_ = most->first.first;
    flow_name_ = most->first.second;
  }
  std::vector<uint64_t> ids;
  for (const Flow& f : flows) {
    if (f.category == flow_category_ && f.name == flow_name_) ids.push_back(f.id);
  }
  std::sort(ids.begin(), ids.end());
  auto unique_id = [&](uint64_t id) {
    auto [lo, hi] = std::equal_range(ids.begin(), ids.end(), id);
    return hi - lo == 1;
  };
  out_begin_.assign(n + 1, 0);
  in_begin_.assign(n + 1, 0);
  std::vector<uint64_t> pf(flows.size(), 0);
  for (uint32_t k = 0; k < flows.size(); ++k) {
    const Flow& f = flows[k];
    if (f.from >= n || f.to >= n || f.from == f.to) continue;
    const bool plain = f.category == flow_category_ && f.name == flow_name_ && f.id != 0 &&
                       (f.id & opscope::perfetto::kListedFlowBit) == 0 && unique_id(f.id);
    pf[k] = plain ? f.id : (opscope::perfetto::kListedFlowBit | k);
    if (!plain) listed_flows_.push_back(k);
    ++out_begin_[f.from + 1];
    ++in_begin_[f.to + 1];
  }
  for (size_t i = 0; i < n; ++i) {
    out_begin_[i + 1] += out_begin_[i];
    in_begin_[i + 1] += in_begin_[i];
  }
  out_ids_.assign(out_begin_[n], 0);
  in_ids_.assign(in_begin_[n], 0);
  std::vector<uint32_t> out_fill(out_begin_.begin(), out_begin_.end() - 1);
  std::vector<uint32_t> in_fill(in_begin_.begin(), in_begin_.end() - 1);
  for (uint32_t k = 0; k < flows.size(); ++k) {
    if (pf[k] == 0) continue;
    out_ids_[out_fill[flows[k].from]++] = pf[k];
    in_ids_[in_fill[flows[k].to]++] = pf[k];
  }
}

std::string PerfettoWriter::MetadataJson() const {
  JsonWriter w;
  w.BeginObject();
  TraceMetadataFields(&w);
  ProcessAndTrackFields(&w);
  LaneKindAndFlowFields(&w);
  w.EndObject();
  return w.Take();
}

// The model's TraceMetadata: version, times, extra entries, drops and warnings.
void PerfettoWriter::TraceMetadataFields(JsonWriter* w) const {
  const TraceMetadata& md = trace_.metadata();
  w->Field("version", opscope::perfetto::kOpscopeMetadataVersion);
  w->Field("schema_version", md.schema_version);
  w->Field("base_time_ns", md.base_time_ns);
  w->Field("time_shift_ns", shift_ns_);
  w->Field("device_type", md.device_type);
  w->Field("trace_name", md.trace_name);
  w->Key("extra");
  w->BeginArray();
  for (const auto& [key, raw] : md.extra) {
    w->BeginArray();
    w->String(key);
    w->String(raw);  // as text: its spacing is part of it
    w->EndArray();
  }
  w->EndArray();
  w->Key("dropped");
  w->BeginArray();
  for (const auto& [reason, count] : md.dropped) {
    w->BeginArray();
    w->String(reason);
    w->Uint(count);
    w->EndArray();
  }
  w->EndArray();
  w->Field("skipped_events", md.skipped_events);
  w->Key("warnings");
  w->BeginArray();
  for (const std::string& warning : md.warnings) w->String(warning);
  w->EndArray();
}

// Processes and tracks as the model holds them, with their uuids in the file.
void PerfettoWriter::ProcessAndTrackFields(JsonWriter* w) const {
  w->Key("processes");
  w->BeginArray();
  for (uint32_t i = 0; i < trace_.processes().size(); ++i) {
    const Process& p = trace_.processes()[i];
    w->BeginObject();
    w->Field("uuid", process_uuid_[i]);
    w->Field("pid", p.pid);
    w->Field("pid_text", p.pid_text);
    w->Field("name", trace_.Str(p.name));
    w->Field("labels", trace_.Str(p.labels));
    w->Field("sort_index", p.sort_index);
    w->Field("is_device", p.is_device);
    w->EndObject();
  }
  w->EndArray();
  w->Key("tracks");
  w->BeginArray();
  for (uint32_t i = 0; i < trace_.tracks().size(); ++i) {
    const Track& t = trace_.tracks()[i];
    w->BeginObject();
    w->Field("uuid", track_uuid_[i]);
    w->Field("process", process_uuid_[t.process]);
    w->Field("tid", t.tid);
    w->Field("tid_text", t.tid_text);
    w->Field("name", trace_.Str(t.name));
    w->Field("sort_index", t.sort_index);
    w->Field("kind", opscope::perfetto::kTrackKindNames[static_cast<int>(t.kind)]);
    w->EndObject();
  }
  w->EndArray();
}

// Which Perfetto tracks are lanes of which, the activity kind of each category, and the flows
// written by ordinal.
void PerfettoWriter::LaneKindAndFlowFields(JsonWriter* w) const {
  w->Key("lanes");
  w->BeginArray();
  for (uint32_t t = 0; t < lane_uuid_.size(); ++t) {
    for (uint64_t lane : lane_uuid_[t]) {
      w->BeginArray();
      w->Uint(lane);
      w->Uint(track_uuid_[t]);
      w->EndArray();
    }
  }
  w->EndArray();
  w->Key("kinds");
  w->BeginArray();
  for (const auto& [category, kind] : kind_of_category_) {
    w->BeginArray();
    w->String(trace_.Str(category));
    w->String(ActivityKindName(kind));
    w->EndArray();
  }
  w->EndArray();
  w->Field("flow_category", trace_.Str(flow_category_));
  w->Field("flow_name", trace_.Str(flow_name_));
  w->Key("flows");
  w->BeginArray();
  for (uint32_t k : listed_flows_) {
    const Flow& f = trace_.flows()[k];
    w->BeginArray();
    w->Uint(k);
    w->Uint(f.id);
    w->String(trace_.Str(f.category));
    w->String(trace_.Str(f.name));
    w->EndArray();
  }
  w->EndArray();
}

}  // namespace opscope::internal
