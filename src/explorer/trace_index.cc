// TraceIndex (trace_index.h): lanes, level-of-detail tiles and queries over one finalized trace.
#include "explorer/trace_index.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "base/huge_array.h"
#include "base/parallel_for.h"
#include "base/saturating.h"
#include "trace/track_ranges.h"

namespace opscope::explorer {
namespace {

constexpr uint32_t kMaxRows = 512;  // deeper nesting is kept in the model but not drawn

bool IsCopyOrSyncName(std::string_view name) {
  for (std::string_view needle : {"emcpy", "emset", "ynchronize", "tensor_write", "tensor_read",
                                  "StreamWait", "EventSync", "Sync"}) {
    if (name.find(needle) != std::string_view::npos) return true;
  }
  return false;
}

// Host-side kinds: they belong on host lanes whatever process the trace puts them in (Kineto
// writes some python_function events under pid 0, which is also GPU 0's pid).
bool IsHostKind(ActivityKind k) {
  return k == ActivityKind::kCpuOp || k == ActivityKind::kUserAnnotation ||
         k == ActivityKind::kPythonFunction || k == ActivityKind::kRuntime ||
         k == ActivityKind::kDriver;
}

// Order of roles inside one thread's lanes: the Python stack above the ops it calls.
int RoleOrder(LaneRole role) { return role == LaneRole::kPython ? 0 : 1 + static_cast<int>(role); }

std::string Trimmed(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return std::string(s);
}

// A host process: its name, else the pid as the trace wrote it.
std::string ProcessTitle(const Trace& t, uint32_t p) {
  if (p >= t.processes().size()) return "?";
  const Process& proc = t.processes()[p];
  // Device processes read better by their label ("GPU 0") than by the host's process name.
  if (proc.is_device && proc.labels != 0) return Trimmed(t.Str(proc.labels));
  if (proc.name != 0) return Trimmed(t.Str(proc.name));
  if (!proc.pid_text.empty()) return proc.pid_text;
  return fmt::format("pid {}", proc.pid);
}

// A device: its label ("GPU 0", "NEURON 0"), else the device type and pid ("GPU 3").
std::string DeviceTitle(const Trace& t, uint32_t p) {
  if (p >= t.processes().size()) return "device";
  const Process& proc = t.processes()[p];
  if (proc.labels != 0) return Trimmed(t.Str(proc.labels));
  if (!proc.pid_text.empty()) return proc.pid_text;
  const std::string& type = t.metadata().device_type;
  if (type == "CUDA") return fmt::format("GPU {}", proc.pid);
  if (!type.empty()) return fmt::format("{} {}", type, proc.pid);
  if (proc.name != 0) return Trimmed(t.Str(proc.name));
  return fmt::format("device {}", proc.pid);
}

std::string TrackTitle(const Trace& t, uint32_t tr) {
  const Track& track = t.tracks()[tr];
  if (track.name != 0) {
    std::string name = Trimmed(t.Str(track.name));
    if (!name.empty()) return name;
  }
  if (!track.tid_text.empty()) return track.tid_text;
  if (track.kind == TrackKind::kDeviceStream) return fmt::format("stream {}", track.tid);
  return fmt::format("thread {}", track.tid);
}

}  // namespace

std::string_view LaneGroupKey(LaneGroup group) {
  switch (group) {
    case LaneGroup::kFramework:
      return "framework";
    case LaneGroup::kInteraction:
      return "interaction";
    case LaneGroup::kRuntime:
      return "runtime";
    case LaneGroup::kHardware:
      return "hardware";
    case LaneGroup::kEngines:
      return "engines";
    case LaneGroup::kCounters:
      return "counters";
    case LaneGroup::kMemory:
      return "memory";
  }
  return "other";
}

TraceIndex::TraceIndex(const Trace& trace, int threads, IndexBuild build)
    : trace_(trace), memory_(trace), threads_(std::max(1, threads)) {
  const auto& slices = trace_.slices();
  neuron_style_ = trace_.metadata().device_type == "NEURON" ||
                  trace_.strings().Find("nc_exec_running") != kNone;
  for (const Slice& s : slices) {
    if (s.kind == ActivityKind::kInstruction) neuron_style_ = true;
  }
  ComputeExtent();
  if (build == IndexBuild::kEager) BuildDeferred();
  BuildLanes(threads);
  BuildCounterLanes();
  BuildMemoryLanes();
  TitleLanes();
}

// [start_ns_, end_ns_]: every slice, counter sample and memory sample; at least 1 us.
void TraceIndex::ComputeExtent() {
  start_ns_ = INT64_MAX;
  end_ns_ = INT64_MIN;
  for (const Slice& s : trace_.slices()) {
    start_ns_ = std::min(start_ns_, s.ts_ns);
    end_ns_ = std::max(end_ns_, s.ts_ns + std::max<int64_t>(s.dur_ns, 0));
  }
  for (const CounterSample& c : trace_.counters()) {
    start_ns_ = std::min(start_ns_, c.ts_ns);
    end_ns_ = std::max(end_ns_, c.ts_ns);
  }
  int64_t first = 0, last = 0;
  if (memory_.Extent(&first, &last)) {
    start_ns_ = std::min(start_ns_, first);
    end_ns_ = std::max(end_ns_, last);
  }
  if (start_ns_ > end_ns_) start_ns_ = end_ns_ = 0;
  if (end_ns_ == start_ns_) end_ns_ = start_ns_ + 1000;
}

bool TraceIndex::OnDevice(uint32_t slice) const {
  const Slice& s = trace_.slices()[slice];
  if (IsHostKind(s.kind)) return false;
  if (s.track >= trace_.tracks().size()) return false;
  const Track& track = trace_.tracks()[s.track];
  if (track.kind == TrackKind::kDeviceStream || track.kind == TrackKind::kDeviceEngine) return true;
  return track.process != kNone && trace_.processes()[track.process].is_device;
}

bool TraceIndex::IsHostOp(uint32_t slice) const {
  const ActivityKind k = trace_.slices()[slice].kind;
  return (k == ActivityKind::kCpuOp || k == ActivityKind::kUserAnnotation ||
          k == ActivityKind::kPythonFunction) &&
         !OnDevice(slice);
}

std::string_view LaneRoleKey(LaneRole role) {
  switch (role) {
    case LaneRole::kOps:
      return "ops";
    case LaneRole::kPython:
      return "python";
    case LaneRole::kInteraction:
      return "interaction";
    case LaneRole::kRuntime:
      return "runtime";
    case LaneRole::kStream:
      return "stream";
    case LaneRole::kEngine:
      return "engine";
    case LaneRole::kCounter:
      return "counter";
    case LaneRole::kMemory:
      return "memory";
  }
  return "ops";
}

TraceIndex::LaneKey TraceIndex::ClassifySlice(uint32_t i, const RuntimeDevices& runtime_device,
                                              std::vector<int8_t>* copy_name) const {
  const Slice& s = trace_.slices()[i];
  const Track& track = trace_.tracks()[s.track];
  LaneKey key{s.track, LaneGroup::kFramework, LaneRole::kOps, kNone};
  if (OnDevice(i)) {
    const bool engine =
        track.kind == TrackKind::kDeviceEngine || s.kind == ActivityKind::kInstruction;
    key.group = engine ? LaneGroup::kEngines : LaneGroup::kHardware;
    key.role = engine ? LaneRole::kEngine : LaneRole::kStream;
  } else if (s.kind == ActivityKind::kRuntime || s.kind == ActivityKind::kDriver) {
    int8_t& is_copy = (*copy_name)[s.name];
    if (is_copy < 0) is_copy = IsCopyOrSyncName(trace_.Str(s.name)) ? 1 : 0;
    if (is_copy) {
      key.group = LaneGroup::kInteraction;
      key.role = LaneRole::kInteraction;
    } else {
      key.group = LaneGroup::kRuntime;
      key.role = LaneRole::kRuntime;
      auto it = runtime_device.find(i);
      if (it != runtime_device.end()) key.device = it->second;
    }
  } else if (s.kind == ActivityKind::kSync || s.kind == ActivityKind::kMemcpy ||
             s.kind == ActivityKind::kMemset) {
    key.group = LaneGroup::kInteraction;
    key.role = LaneRole::kInteraction;
  } else if (s.kind == ActivityKind::kPythonFunction) {
    key.role = LaneRole::kPython;
  }
  return key;
}

Lane TraceIndex::MakeLane(const LaneKey& key) const {
  const Track& track = trace_.tracks()[key.track];
  Lane lane;
  lane.group = key.group;
  lane.role = key.role;
  lane.process = track.process;
  lane.track = key.track;
  lane.device_process = key.device;
  const Process* sort_proc = nullptr;
  if (key.device != kNone) {
    sort_proc = &trace_.processes()[key.device];
  } else if (track.process != kNone) {
    sort_proc = &trace_.processes()[track.process];
  }
  lane.sort_key[0] = static_cast<int64_t>(key.group);
  lane.sort_key[1] = sort_proc ? sort_proc->sort_index : 0;
  lane.sort_key[2] = sort_proc ? sort_proc->pid : 0;
  lane.sort_key[3] = track.sort_index * 1000003 + track.tid;
  lane.sort_key[4] = RoleOrder(key.role);
  return lane;
}

// One range of whole tracks' lanes, in the order their first slices come.
struct TraceIndex::LanePart {
  std::map<std::tuple<uint32_t, int, int, uint32_t>, uint32_t> lane_of;
  std::vector<Lane> lanes;
  std::vector<std::vector<uint32_t>> members;  // per lane, slice indices in order
  std::vector<uint32_t> unrowed;               // slices without a track
};

void TraceIndex::ClassifyRange(std::pair<uint32_t, uint32_t> range,
                               const RuntimeDevices& runtime_device, LanePart* part) const {
  const auto& slices = trace_.slices();
  const auto& tracks = trace_.tracks();
  std::vector<int8_t> copy_name(trace_.strings().size(), -1);
  for (uint32_t i = range.first; i < range.second; ++i) {
    if (slices[i].track >= tracks.size()) {
      part->unrowed.push_back(i);
      continue;
    }
    const LaneKey key = ClassifySlice(i, runtime_device, &copy_name);
    auto [it, inserted] =
        part->lane_of.emplace(std::make_tuple(key.track, static_cast<int>(key.group),
                                              static_cast<int>(key.role), key.device),
                              static_cast<uint32_t>(part->lanes.size()));
    if (inserted) {
      part->lanes.push_back(MakeLane(key));
      part->members.emplace_back();
    }
    part->members[it->second].push_back(i);
  }
}

// Lanes are keyed by (track, group, role, device process): every lane lies within one track, so
// ranges of whole tracks are classified on their own and their lanes, taken in range order, come
// in the order one pass over the slices creates them. Rows are then stacked lane by lane.
void TraceIndex::BuildLanes(int threads) {
  const auto& slices = trace_.slices();
  const auto& tracks = trace_.tracks();
  const uint32_t n = static_cast<uint32_t>(slices.size());
  slice_lane_.assign(n, kNone);
  slice_depth_.assign(n, 0);

  // Which device each runtime call drives, from the device activity linked to it.
  RuntimeDevices runtime_device;
  for (uint32_t i = 0; i < n; ++i) {
    if (!IsDeviceActivity(slices[i].kind) && !OnDevice(i)) continue;
    const DeviceLink& link = trace_.Link(i);
    if (link.runtime != kNone) runtime_device[link.runtime] = tracks[slices[i].track].process;
  }

  std::vector<std::pair<uint32_t, uint32_t>> ranges = {{0, n}};
  if (threads > 1) ranges = internal::TrackRanges(trace_, 4 * static_cast<size_t>(threads));
  std::vector<LanePart> parts(ranges.size());
  internal::ParallelFor(threads, ranges.size(),
                        [&](size_t p) { ClassifyRange(ranges[p], runtime_device, &parts[p]); });
  std::vector<Lane> lanes;
  std::vector<std::vector<uint32_t>> members;
  for (LanePart& part : parts) {
    unrowed_.insert(unrowed_.end(), part.unrowed.begin(), part.unrowed.end());
    for (size_t l = 0; l < part.lanes.size(); ++l) {
      lanes.push_back(std::move(part.lanes[l]));
      members.push_back(std::move(part.members[l]));
    }
  }
  parts.clear();

  std::vector<uint32_t> order(lanes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::lexicographical_compare(lanes[a].sort_key, lanes[a].sort_key + 5, lanes[b].sort_key,
                                        lanes[b].sort_key + 5);
  });
  lanes_.resize(lanes.size());
  std::vector<std::vector<uint32_t>> too_deep(lanes.size());
  internal::ParallelFor(threads, order.size(), [&](size_t pos) {
    lanes_[pos] = std::move(lanes[order[pos]]);
    StackRows(members[order[pos]], static_cast<uint32_t>(pos), &lanes_[pos], &too_deep[pos]);
  });
  for (const std::vector<uint32_t>& ids : too_deep) {
    unrowed_.insert(unrowed_.end(), ids.begin(), ids.end());
  }
}

// Writes only the lane's own slices' entries of slice_lane_ / slice_depth_: lanes are stacked
// concurrently. Two passes: each slice's depth first (counting the rows' sizes), then the rows,
// each reserved at its final size on huge pages: grown by push_back, a lane of millions of slices
// copied its rows at every doubling into fresh memory (a third of a first view).
void TraceIndex::StackRows(const std::vector<uint32_t>& ids, uint32_t lane_id, Lane* lane,
                           std::vector<uint32_t>* unrowed) {
  const auto& slices = trace_.slices();
  lane->num_events = ids.size();
  std::vector<int64_t> stack_end;
  std::vector<size_t> row_sizes;
  for (uint32_t id : ids) {
    const Slice& s = slices[id];
    const int64_t st = s.ts_ns;
    const int64_t en = st + std::max<int64_t>(s.dur_ns, 0);
    while (!stack_end.empty() && stack_end.back() <= st) stack_end.pop_back();
    const uint32_t depth = static_cast<uint32_t>(stack_end.size());
    stack_end.push_back(en);
    slice_lane_[id] = lane_id;
    slice_depth_[id] = static_cast<uint16_t>(std::min(depth, kMaxRows));
    if (depth >= kMaxRows) continue;
    if (row_sizes.size() <= depth) row_sizes.resize(depth + 1, 0);
    ++row_sizes[depth];
  }
  lane->rows.resize(row_sizes.size());
  for (size_t d = 0; d < row_sizes.size(); ++d) {
    LaneRow& row = lane->rows[d];
    internal::ReserveHuge(&row.ids, row_sizes[d]);
    internal::ReserveHuge(&row.start, row_sizes[d]);
    internal::ReserveHuge(&row.end, row_sizes[d]);
    internal::ReserveHuge(&row.busy, row_sizes[d] + 1);
    row.busy.push_back(0);
  }
  for (uint32_t id : ids) {
    const uint32_t depth = slice_depth_[id];
    if (depth >= kMaxRows) {
      unrowed->push_back(id);
      continue;
    }
    const Slice& s = slices[id];
    const int64_t en = s.ts_ns + std::max<int64_t>(s.dur_ns, 0);
    LaneRow& row = lane->rows[depth];
    row.ids.push_back(id);
    row.start.push_back(s.ts_ns);
    row.end.push_back(en);
    row.busy.push_back(row.busy.back() + (en - s.ts_ns));
  }
}

std::string TraceIndex::LaneTitle(const Lane& lane, bool prefix_process) const {
  if (lane.group == LaneGroup::kMemory) {
    return "Memory: " + memory_.device(lane.memory_device).device;
  }
  if (lane.group == LaneGroup::kHardware || lane.group == LaneGroup::kEngines) {
    return fmt::format("{} · {}", DeviceTitle(trace_, lane.process),
                       TrackTitle(trace_, lane.track));
  }
  if (lane.group == LaneGroup::kCounters) {
    if (lane.track >= trace_.tracks().size()) return "counter";
    return fmt::format("{} · {}", ProcessTitle(trace_, lane.process),
                       TrackTitle(trace_, lane.track));
  }
  std::string title = TrackTitle(trace_, lane.track);
  const bool device_process = lane.process != kNone && trace_.processes()[lane.process].is_device;
  if (device_process) {
    title = fmt::format("{} · {}", DeviceTitle(trace_, lane.process), title);
  } else if (prefix_process) {
    title = fmt::format("{} · {}", ProcessTitle(trace_, lane.process), title);
  }
  switch (lane.role) {
    case LaneRole::kPython:
      return title + " · Python stack";
    case LaneRole::kInteraction:
      return title + " · copies & sync";
    case LaneRole::kRuntime:
      if (lane.device_process == kNone) return title + " · runtime";
      return fmt::format("{} · runtime → {}", title, DeviceTitle(trace_, lane.device_process));
    default:
      return title;
  }
}

void TraceIndex::TitleLanes() {
  // Host lanes are named by thread; the process is added only where it tells lanes apart (two
  // processes with a thread of the same name) or where it is a pseudo-process ("Spans").
  std::map<std::string, int> count;
  for (Lane& lane : lanes_) {
    const bool string_pid =
        lane.process != kNone && !trace_.processes()[lane.process].pid_text.empty();
    lane.title = LaneTitle(lane, string_pid);
    ++count[lane.title];
  }
  for (Lane& lane : lanes_) {
    if (count[lane.title] > 1) lane.title = LaneTitle(lane, true);
  }
  count.clear();
  for (const Lane& lane : lanes_) ++count[lane.title];
  std::map<std::string, int> used;
  for (Lane& lane : lanes_) {
    if (count[lane.title] < 2) continue;
    if (lane.process != kNone) {
      lane.title += fmt::format(" (pid {})", trace_.processes()[lane.process].pid);
    }
    if (int k = used[lane.title]++; k > 0) lane.title += fmt::format(" #{}", k + 1);
  }
}

void TraceIndex::BuildCounterLanes() {
  const auto& counters = trace_.counters();
  if (counters.empty()) return;
  std::map<uint32_t, std::vector<uint32_t>> by_track;
  for (uint32_t i = 0; i < counters.size(); ++i) by_track[counters[i].track].push_back(i);
  for (auto& [track, ids] : by_track) {
    std::stable_sort(ids.begin(), ids.end(),
                     [&](uint32_t a, uint32_t b) { return counters[a].ts_ns < counters[b].ts_ns; });
    Lane lane;
    lane.group = LaneGroup::kCounters;
    lane.track = track;
    lane.role = LaneRole::kCounter;
    if (track < trace_.tracks().size()) lane.process = trace_.tracks()[track].process;
    lane.num_events = ids.size();
    for (uint32_t id : ids) {
      lane.counter_ts.push_back(counters[id].ts_ns);
      lane.counter_value.push_back(counters[id].value);
    }
    lanes_.push_back(std::move(lane));
  }
}

// One lane per device of the memory timeline, in its order (device type, then id).
void TraceIndex::BuildMemoryLanes() {
  for (uint32_t d = 0; d < memory_.size(); ++d) {
    Lane lane;
    lane.group = LaneGroup::kMemory;
    lane.role = LaneRole::kMemory;
    lane.memory_device = d;
    lane.num_events = memory_.device(d).samples.size();
    lanes_.push_back(std::move(lane));
  }
}

std::vector<uint32_t> TraceIndex::Lookup(const std::vector<std::pair<int64_t, uint32_t>>& map,
                                         int64_t key) {
  std::vector<uint32_t> out;
  auto it = std::lower_bound(map.begin(), map.end(), std::make_pair(key, uint32_t{0}));
  for (; it != map.end() && it->first == key; ++it) out.push_back(it->second);
  return out;
}

// The id lookups, each a pass and a sort of its own, side by side; once.
void TraceIndex::BuildDeferred() const {
  std::call_once(id_lookups_once_, [this] {
    const auto& slices = trace_.slices();
    internal::ParallelFor(threads_, 2, [&](size_t task) {
      auto& map = task == 0 ? by_external_id_ : by_correlation_;
      map.reserve(slices.size() / 2);
      for (uint32_t i = 0; i < slices.size(); ++i) {
        const int64_t id = task == 0 ? slices[i].external_id : slices[i].correlation;
        if (id != 0) map.emplace_back(id, i);
      }
      std::sort(map.begin(), map.end());
    });
  });
}

std::vector<uint32_t> TraceIndex::WithExternalId(int64_t ext) const {
  BuildDeferred();
  return Lookup(by_external_id_, ext);
}

std::vector<uint32_t> TraceIndex::WithCorrelation(int64_t corr) const {
  BuildDeferred();
  return Lookup(by_correlation_, corr);
}

std::vector<uint32_t> TraceIndex::Descendants(uint32_t slice, size_t limit) const {
  std::vector<uint32_t> out;
  const auto& slices = trace_.slices();
  const Slice& s = slices[slice];
  const int64_t end = s.ts_ns + std::max<int64_t>(s.dur_ns, 0);
  const auto range = trace_.TrackSlices(s.track);
  for (uint32_t i = slice + 1; i < range.second && out.size() < limit; ++i) {
    if (slices[i].ts_ns >= end && !(slices[i].ts_ns == end && slices[i].dur_ns == 0)) break;
    if (slices[i].ts_ns + slices[i].dur_ns <= end) out.push_back(i);
  }
  return out;
}

void TraceIndex::WriteTraceHeader(JsonWriter* w) const {
  const TraceMetadata& md = trace_.metadata();
  w->Key("trace");
  w->BeginObject();
  w->Field("start_ns", ToApi(start_ns_));
  w->Field("end_ns", ToApi(end_ns_));
  w->Field("origin_ns", std::to_string(start_ns_));
  w->Field("base_time_ns", std::to_string(md.base_time_ns));
  w->Field("device_type", md.device_type);
  w->Field("neuron", neuron_style_);
  w->Field("slices", static_cast<uint64_t>(trace_.slices().size()));
  w->Field("counters", static_cast<uint64_t>(trace_.counters().size()));
  w->Field("memory_events", memory_.timeline().events);
  w->Field("skipped_events", md.skipped_events);
  uint64_t dropped = 0;
  for (const auto& d : md.dropped) dropped += d.second;
  w->Field("dropped_events", dropped);
  w->Key("kinds");  // names of the kind codes in viewport items
  w->BeginArray();
  for (int k = 0; k <= static_cast<int>(ActivityKind::kOther); ++k) {
    w->String(ActivityKindName(static_cast<ActivityKind>(k)));
  }
  w->EndArray();
  w->EndObject();
}

void TraceIndex::WriteLane(uint32_t lane_id, JsonWriter* w) const {
  const Lane& lane = lanes_[lane_id];
  w->BeginObject();
  w->Field("id", lane_id);
  w->Field("title", lane.title);
  w->Field("role", LaneRoleKey(lane.role));
  w->Field("rows", static_cast<uint32_t>(lane.rows.size()));
  w->Field("counter", lane.group == LaneGroup::kCounters);
  w->Field("events", static_cast<uint64_t>(lane.num_events));
  w->Field("process", lane.process == kNone ? int64_t{-1} : int64_t{lane.process});
  w->Field("device_process",
           lane.device_process == kNone ? int64_t{-1} : int64_t{lane.device_process});
  if (lane.group == LaneGroup::kCounters && !lane.counter_value.empty()) {
    auto [lo, hi] = std::minmax_element(lane.counter_value.begin(), lane.counter_value.end());
    w->Field("min", *lo);
    w->Field("max", *hi);
  }
  if (lane.group == LaneGroup::kMemory) {
    w->Key("memory");
    memory_.WriteDevice(lane.memory_device, start_ns_, w);
  }
  w->EndObject();
}

// A group's lanes; the hardware group holds the memory group first, and is written for it
// alone when the trace has memory lanes but no device streams.
void TraceIndex::WriteGroup(LaneGroup g, JsonWriter* w) const {
  static constexpr std::string_view kNeuronTitles[kNumLaneGroups] = {
      "framework",      "framework-device interaction",
      "runtime",        "hardware",
      "device engines", "counters",
      "device memory"};
  static constexpr std::string_view kOtherTitles[kNumLaneGroups] = {
      "host threads",   "framework-device interaction",
      "runtime",        "device streams",
      "device engines", "counters",
      "device memory"};
  const bool memory = g == LaneGroup::kHardware && memory_.size() > 0;
  bool any = memory;
  for (const Lane& lane : lanes_) any |= lane.group == g;
  if (!any) return;
  w->BeginObject();
  w->Field("key", LaneGroupKey(g));
  w->Field("title", (neuron_style_ ? kNeuronTitles : kOtherTitles)[static_cast<int>(g)]);
  if (g == LaneGroup::kMemory) w->Field("top", true);  // drawn above its parent's lanes
  w->Key("lanes");
  w->BeginArray();
  for (uint32_t i = 0; i < lanes_.size(); ++i) {
    if (lanes_[i].group == g) WriteLane(i, w);
  }
  w->EndArray();
  if (memory) {
    w->Key("groups");
    w->BeginArray();
    WriteGroup(LaneGroup::kMemory, w);
    w->EndArray();
  }
  w->EndObject();
}

void TraceIndex::WriteLanes(JsonWriter* w) const {
  w->BeginObject();
  WriteTraceHeader(w);
  w->Key("groups");
  w->BeginArray();
  for (int g = 0; g < kNumLaneGroups; ++g) {
    if (static_cast<LaneGroup>(g) != LaneGroup::kMemory) WriteGroup(static_cast<LaneGroup>(g), w);
  }
  w->EndArray();
  w->EndObject();
}

// The pixel size of a viewport query.
struct TraceIndex::ViewportScale {
  explicit ViewportScale(const ViewportQuery& q)
      : ns_per_px(std::max(1e-3, static_cast<double>(q.t1 - q.t0) / std::max(1, q.width_px))),
        min_dur(std::max(0.0, q.min_px) * ns_per_px),
        px_ns(std::max<int64_t>(1, static_cast<int64_t>(std::ceil(ns_per_px)))) {}
  double ns_per_px;
  double min_dur;  // slices shorter than this (ns) are merged into blocks
  int64_t px_ns;   // one pixel, rounded up, ns
};

uint32_t ViewportNames::Index(uint32_t source, const Trace& trace, StringId id) {
  const uint64_t key = (uint64_t{source} << 32) | id;
  auto [it, inserted] = index_.emplace(key, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(trace.Str(id));
  return it->second;
}

void ViewportNames::Write(JsonWriter* w) const {
  w->Key("strings");
  w->BeginArray();
  for (std::string_view name : names_) w->String(name);
  w->EndArray();
}

void TraceIndex::WriteViewport(const ViewportQuery& q, JsonWriter* w) const {
  const ViewportScale scale(q);
  ViewportNames names;
  std::vector<uint32_t> all;
  const std::vector<uint32_t>* which = &q.lanes;
  if (q.lanes.empty()) {
    all.resize(lanes_.size());
    std::iota(all.begin(), all.end(), 0);
    which = &all;
  }
  // Unknown lane ids are skipped; slice lanes are every lane but counters and memory.
  auto group_of = [&](uint32_t lane_id) {
    return lane_id < lanes_.size() ? std::optional<LaneGroup>(lanes_[lane_id].group) : std::nullopt;
  };
  w->BeginObject();
  w->Field("t0", ToApi(q.t0));
  w->Field("t1", ToApi(q.t1));
  w->Field("ns_per_px", scale.ns_per_px);
  if (q.flat) w->Field("stride", q.compact ? 6 : 9);
  w->Key("lanes");
  w->BeginArray();
  for (uint32_t lane_id : *which) {
    const auto g = group_of(lane_id);
    if (g && *g != LaneGroup::kCounters && *g != LaneGroup::kMemory) {
      WriteSliceItems(lane_id, q, scale, 0, &names, w);
    }
  }
  w->EndArray();
  w->Key("counters");
  w->BeginArray();
  for (uint32_t lane_id : *which) {
    if (group_of(lane_id) == LaneGroup::kCounters) WriteCounterPoints(lane_id, q, scale, w);
  }
  w->EndArray();
  w->Key("memory");
  w->BeginArray();
  for (uint32_t lane_id : *which) {
    if (group_of(lane_id) != LaneGroup::kMemory) continue;
    w->BeginObject();
    w->Field("lane", lane_id);
    w->Key("points");
    memory_.WritePoints(lanes_[lane_id].memory_device, q.t0, q.t1, scale.px_ns, start_ns_, w);
    w->EndObject();
  }
  w->EndArray();
  names.Write(w);
  w->EndObject();
}

void TraceIndex::WriteSliceLanes(const ViewportQuery& q, uint32_t source, ViewportNames* names,
                                 JsonWriter* w) const {
  const ViewportScale scale(q);
  for (uint32_t lane_id : q.lanes) {
    if (lane_id >= lanes_.size()) continue;
    const LaneGroup g = lanes_[lane_id].group;
    if (g != LaneGroup::kCounters && g != LaneGroup::kMemory) {
      WriteSliceItems(lane_id, q, scale, source, names, w);
    }
  }
}

// A slice lane's items: slices at least min_px wide as themselves, runs of narrower ones in a
// pixel merged into one block; times as q.to_output maps them (API time by default).
void TraceIndex::WriteSliceItems(uint32_t lane_id, const ViewportQuery& q,
                                 const ViewportScale& scale, uint32_t source, ViewportNames* names,
                                 JsonWriter* w) const {
  const auto& slices = trace_.slices();
  const Lane& lane = lanes_[lane_id];
  w->BeginObject();
  w->Field("lane", int64_t{lane_id} + q.lane_base);
  w->Key("items");
  w->BeginArray();
  auto out = [&](int64_t ts) { return q.to_output ? q.to_output(ts) : ToApi(ts); };
  auto emit = [&](size_t row_index, int64_t ts, int64_t dur, uint32_t id, size_t count,
                  int64_t busy) {
    const Slice& s = slices[id];
    const int64_t at = out(ts);
    const int64_t item[] = {at,
                            q.to_output ? out(ts + dur) - at : dur,
                            static_cast<int64_t>(row_index),
                            int64_t{names->Index(source, trace_, s.name)},
                            int64_t{id},
                            static_cast<int64_t>(count),
                            s.external_id,
                            busy,
                            static_cast<int64_t>(s.kind)};
    if (!q.flat) w->BeginArray();
    for (size_t k = 0; k < (q.compact ? 6 : std::size(item)); ++k) w->Int(item[k]);
    if (!q.flat) w->EndArray();
  };
  for (size_t r = 0; r < lane.rows.size(); ++r) {
    const LaneRow& row = lane.rows[r];
    const size_t n = row.ids.size();
    size_t i = std::upper_bound(row.end.begin(), row.end.end(), q.t0) - row.end.begin();
    // Zero-length slices exactly at t0 are still shown.
    while (i > 0 && row.end[i - 1] == q.t0 && row.start[i - 1] == q.t0) --i;
    while (i < n && row.start[i] < q.t1) {
      const int64_t dur = row.end[i] - row.start[i];
      if (static_cast<double>(dur) >= scale.min_dur) {
        emit(r, row.start[i], dur, row.ids[i], 1, dur);
        ++i;
        continue;
      }
      const int64_t limit = row.start[i] + scale.px_ns;
      size_t j = std::lower_bound(row.start.begin() + i + 1, row.start.begin() + n, limit) -
                 row.start.begin();
      // Only the block's last slice can be wide (the others end before the next one starts,
      // inside the same pixel); keep it as itself.
      if (j - 1 > i && static_cast<double>(row.end[j - 1] - row.start[j - 1]) >= scale.min_dur) {
        --j;
      }
      if (j == i + 1) {
        emit(r, row.start[i], dur, row.ids[i], 1, dur);
      } else {
        emit(r, row.start[i], row.end[j - 1] - row.start[i], row.ids[i], j - i,
             row.busy[j] - row.busy[i]);
      }
      i = j;
    }
  }
  w->EndArray();
  w->EndObject();
}

// A counter lane's samples in buckets of a pixel: [ts, min, max, last], from the sample in force
// at t0 to the first bucket starting at or after t1.
void TraceIndex::WriteCounterPoints(uint32_t lane_id, const ViewportQuery& q,
                                    const ViewportScale& scale, JsonWriter* w) const {
  const Lane& lane = lanes_[lane_id];
  const auto& ts = lane.counter_ts;
  const auto& v = lane.counter_value;
  w->BeginObject();
  w->Field("lane", lane_id);
  w->Key("points");
  w->BeginArray();
  size_t i = std::upper_bound(ts.begin(), ts.end(), q.t0) - ts.begin();
  if (i > 0) --i;  // the sample in force at t0
  while (i < ts.size()) {
    const int64_t bucket_end = std::max(ts[i] + 1, ts[i] + scale.px_ns);
    double lo = v[i], hi = v[i];
    const int64_t bucket_ts = ts[i];
    size_t j = i + 1;
    for (; j < ts.size() && ts[j] < bucket_end; ++j) {
      lo = std::min(lo, v[j]);
      hi = std::max(hi, v[j]);
    }
    w->BeginArray();
    w->Int(ToApi(bucket_ts));
    w->Double(lo);
    w->Double(hi);
    w->Double(v[j - 1]);
    w->EndArray();
    if (bucket_ts >= q.t1) break;
    i = j;
  }
  w->EndArray();
  w->EndObject();
}

void TraceIndex::WriteSelection(int64_t t0, int64_t t1, const std::vector<uint32_t>& lanes,
                                int limit, JsonWriter* w) const {
  const auto& slices = trace_.slices();
  struct Agg {
    int64_t count = 0;
    int64_t time_ns = 0;
  };
  std::unordered_map<StringId, Agg> by_name;
  int64_t total_events = 0;
  int64_t total_time = 0;
  std::vector<uint32_t> all;
  const std::vector<uint32_t>* which = &lanes;
  if (lanes.empty()) {
    all.resize(lanes_.size());
    std::iota(all.begin(), all.end(), 0);
    which = &all;
  }
  for (uint32_t lane_id : *which) {
    if (lane_id >= lanes_.size()) continue;
    for (const LaneRow& row : lanes_[lane_id].rows) {
      size_t i = std::upper_bound(row.end.begin(), row.end.end(), t0) - row.end.begin();
      for (; i < row.ids.size() && row.start[i] < t1; ++i) {
        const int64_t clipped = std::min(row.end[i], t1) - std::max(row.start[i], t0);
        Agg& a = by_name[slices[row.ids[i]].name];
        ++a.count;
        a.time_ns = internal::SatAdd(a.time_ns, clipped);
        ++total_events;
        total_time = internal::SatAdd(total_time, clipped);
      }
    }
  }
  std::vector<std::pair<StringId, Agg>> rows(by_name.begin(), by_name.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.time_ns != b.second.time_ns ? a.second.time_ns > b.second.time_ns
                                                : a.first < b.first;
  });
  w->BeginObject();
  w->Field("t0", ToApi(t0));
  w->Field("t1", ToApi(t1));
  w->Field("events", total_events);
  w->Field("time_ns", total_time);
  w->Field("names", static_cast<uint64_t>(rows.size()));
  w->Key("rows");
  w->BeginArray();
  for (size_t i = 0; i < rows.size() && static_cast<int>(i) < limit; ++i) {
    w->BeginObject();
    w->Field("name", trace_.Str(rows[i].first));
    w->Field("count", rows[i].second.count);
    w->Field("time_ns", rows[i].second.time_ns);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void TraceIndex::WriteSearch(const SliceFilter& filter, SearchOrder order, int offset, int limit,
                             bool complete, JsonWriter* w) const {
  const auto& slices = trace_.slices();
  const size_t skip = static_cast<size_t>(std::max(0, offset));
  const size_t keep = skip + static_cast<size_t>(std::max(0, limit));
  auto before = [&](uint32_t a, uint32_t b) {
    const Slice& x = slices[a];
    const Slice& y = slices[b];
    if (order == SearchOrder::kDuration && x.dur_ns != y.dur_ns) return x.dur_ns > y.dur_ns;
    return x.ts_ns != y.ts_ns ? x.ts_ns < y.ts_ns : a < b;
  };
  std::vector<uint32_t> first;  // max-heap (by `before`) of the `keep` first hits
  uint64_t total = 0;
  for (uint32_t i = 0; i < slices.size(); ++i) {
    if (!filter.Keeps(slices[i])) continue;
    ++total;
    if (first.size() < keep) {
      first.push_back(i);
      std::push_heap(first.begin(), first.end(), before);
    } else if (keep > 0 && before(i, first.front())) {
      std::pop_heap(first.begin(), first.end(), before);
      first.back() = i;
      std::push_heap(first.begin(), first.end(), before);
    }
  }
  std::sort_heap(first.begin(), first.end(), before);
  w->BeginObject();
  w->Field("total", total);
  w->Field("offset", static_cast<uint64_t>(std::min<size_t>(skip, first.size())));
  w->Field("complete", complete);
  w->Field("order", order == SearchOrder::kDuration ? "duration" : "start");
  w->Key("events");
  w->BeginArray();
  for (size_t i = skip; i < first.size(); ++i) WriteSliceRef(first[i], w);
  w->EndArray();
  w->EndObject();
}

std::vector<uint32_t> TraceIndex::SlicesOverlapping(int64_t t0_ns, int64_t t1_ns) const {
  std::vector<uint32_t> out;
  for (const Lane& lane : lanes_) {
    for (const LaneRow& row : lane.rows) {
      size_t i = std::lower_bound(row.end.begin(), row.end.end(), t0_ns) - row.end.begin();
      for (; i < row.ids.size() && row.start[i] < t1_ns; ++i) out.push_back(row.ids[i]);
    }
  }
  const auto& slices = trace_.slices();
  for (uint32_t id : unrowed_) {
    const Slice& s = slices[id];
    if (s.ts_ns < t1_ns && s.ts_ns + std::max<int64_t>(s.dur_ns, 0) >= t0_ns) out.push_back(id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void TraceIndex::WriteSliceRef(uint32_t slice, JsonWriter* w) const {
  const Slice& s = trace_.slices()[slice];
  w->BeginObject();
  w->Field("id", slice);
  w->Field("name", trace_.Str(s.name));
  w->Field("ts", ToApi(s.ts_ns));
  w->Field("dur", s.dur_ns);
  w->Field("lane", slice_lane_[slice] == kNone ? int64_t{-1} : int64_t{slice_lane_[slice]});
  w->Field("row", static_cast<uint32_t>(slice_depth_[slice]));
  w->Field("kind", ActivityKindName(s.kind));
  w->Field("ext", s.external_id);
  w->EndObject();
}

void TraceIndex::WriteSlice(uint32_t slice, JsonWriter* w) const {
  const Slice& s = trace_.slices()[slice];
  const uint32_t process =
      s.track < trace_.tracks().size() ? trace_.tracks()[s.track].process : kNone;
  w->BeginObject();
  w->Field("id", slice);
  w->Field("name", trace_.Str(s.name));
  w->Field("category", trace_.Str(s.category));
  w->Field("kind", ActivityKindName(s.kind));
  w->Field("ts", ToApi(s.ts_ns));
  w->Field("dur", s.dur_ns);
  w->Field("external_id", s.external_id);
  w->Field("correlation", s.correlation);
  w->Field("input_shapes", trace_.Str(s.input_shapes));
  w->Field("process", ProcessTitle(trace_, process));
  w->Field("thread", s.track < trace_.tracks().size() ? TrackTitle(trace_, s.track) : "?");
  w->Field("lane", slice_lane_[slice] == kNone ? int64_t{-1} : int64_t{slice_lane_[slice]});
  w->Field("row", static_cast<uint32_t>(slice_depth_[slice]));
  w->Field("depth", static_cast<uint32_t>(s.depth));
  // Args as JSON text: the UI parses it, so a malformed arg store cannot break this answer.
  w->Field("args_json", s.args == kNone ? std::string("{}") : trace_.ArgsJson(s.args));
  w->Key("parent");
  if (s.parent != kNone && s.parent < trace_.slices().size()) {
    WriteSliceRef(s.parent, w);
  } else {
    w->Null();
  }
  const DeviceLink& link = trace_.Link(slice);
  w->Key("launched_by");
  if (link.op != kNone)
    WriteSliceRef(link.op, w);
  else
    w->Null();
  w->Key("runtime_call");
  if (link.runtime != kNone)
    WriteSliceRef(link.runtime, w);
  else
    w->Null();
  w->Field("device_activity",
           static_cast<uint64_t>(IsHostOp(slice) ? trace_.DeviceActivityOf(slice).size() : 0));
  w->Key("flows");
  w->BeginArray();
  for (const Flow& f : trace_.flows()) {
    if (f.from != slice && f.to != slice) continue;
    const uint32_t other = f.from == slice ? f.to : f.from;
    if (other == kNone || other >= trace_.slices().size()) continue;
    w->BeginObject();
    w->Field("direction", f.from == slice ? "out" : "in");
    w->Field("category", trace_.Str(f.category));
    w->Key("event");
    WriteSliceRef(other, w);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace opscope::explorer
