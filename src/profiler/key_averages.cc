// KeyAverages::FromTrace: PyTorch's FunctionEvent tree and EventList.key_averages() over the
// trace model (torch/autograd/profiler.py _parse_kineto_results, profiler_util.py).
#include "opscope/key_averages.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

namespace opscope {
namespace {

// Host kinds that become FunctionEvents on the CPU side (python_function and overhead ranges
// are not part of PyTorch's key_averages).
bool IsHostEventKind(ActivityKind k) {
  return k == ActivityKind::kCpuOp || k == ActivityKind::kUserAnnotation ||
         k == ActivityKind::kRuntime || k == ActivityKind::kDriver;
}

// Device kinds that become device FunctionEvents. Engine instructions (opscope's Neuron DEVICE
// mode) run inside a kernel's time and would count it twice, so they stay out of the table.
bool IsDeviceEventKind(ActivityKind k) {
  return k == ActivityKind::kKernel || k == ActivityKind::kMemcpy || k == ActivityKind::kMemset ||
         k == ActivityKind::kDeviceAnnotation;
}

// profiler_util._filter_name: utility ops PyTorch leaves out.
bool FilteredName(std::string_view name) {
  return name == "[memory]" || name == "[OutOfMemory]" ||
         name == "profiler::_record_function_enter" ||
         name == "profiler::_record_function_enter_new" ||
         name == "profiler::_record_function_exit" || name == "aten::is_leaf" ||
         name == "aten::output_nr" || name == "aten::_version";
}

// One FunctionEvent. `key` is the trace's StringId of the name, or kStepKey for ProfilerStep#N.
constexpr StringId kStepKey = kNone - 1;

struct Event {
  uint32_t slice = kNone;
  StringId key = 0;
  bool is_device = false;
  bool is_user_annotation = false;
  int64_t start = 0;
  int64_t end = 0;
  uint32_t track = kNone;
  int64_t kernels_ns = 0;   // sum of linked device activity durations ("kernels")
  uint32_t parent = kNone;  // index into events
  std::vector<uint32_t> children;
  bool removed = false;
  int64_t device_total = 0;
};

}  // namespace

KeyAverages KeyAverages::FromTrace(const Trace& trace, const KeyAveragesOptions& options) {
  KeyAverages out;
  out.options_ = options;
  for (const auto& [reason, count] : trace.metadata().dropped) out.dropped_events_ += count;
  std::string device = trace.metadata().device_type;
  std::transform(device.begin(), device.end(), device.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  out.device_name_ = device;

  // 1. Events, and the slice -> event map.
  const auto& slices = trace.slices();
  std::vector<Event> events;
  std::vector<uint32_t> event_of_slice(slices.size(), kNone);
  // Name checks once per distinct name, not once per event.
  std::vector<uint8_t> name_class(trace.strings().size(), 0);  // 0 unseen, 1 keep, 2 drop, 3 step
  for (uint32_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    const bool host = IsHostEventKind(s.kind);
    const bool dev = IsDeviceEventKind(s.kind);
    if (!host && !dev) continue;
    uint8_t& cls = name_class[s.name];
    if (cls == 0) {
      std::string_view name = trace.Str(s.name);
      cls = FilteredName(name) ? 2 : name.starts_with("ProfilerStep#") ? 3 : 1;
    }
    if (cls == 2) continue;
    Event e;
    e.slice = i;
    e.key = cls == 3 ? kStepKey : s.name;  // _rewrite_name's ProfilerStep* wildcard
    e.is_device = dev;
    e.is_user_annotation =
        s.kind == ActivityKind::kUserAnnotation || s.kind == ActivityKind::kDeviceAnnotation;
    e.start = s.ts_ns;
    e.end = s.ts_ns + s.dur_ns;
    e.track = s.track;
    event_of_slice[i] = static_cast<uint32_t>(events.size());
    events.push_back(std::move(e));
  }

  // 2. Kernels: device activity linked to a host op adds its duration to that op.
  for (const Event& e : events) {
    if (!e.is_device || slices[e.slice].kind == ActivityKind::kDeviceAnnotation) continue;
    uint32_t op = trace.Link(e.slice).op;
    uint32_t op_event = op == kNone ? kNone : event_of_slice[op];
    if (op_event == kNone || events[op_event].is_device) {
      out.unmatched_device_activity_ += 1;
      continue;
    }
    events[op_event].kernels_ns += e.end - e.start;
  }

  // 3. CPU parent/child per thread: PyTorch's stack walk over events sorted by (start, -end).
  std::vector<std::vector<uint32_t>> by_track(trace.tracks().size());
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (!events[i].is_device && events[i].track < by_track.size()) {
      by_track[events[i].track].push_back(i);
    }
  }
  for (auto& ids : by_track) {
    std::stable_sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(events[a].start, -events[a].end) <
             std::make_pair(events[b].start, -events[b].end);
    });
    std::vector<uint32_t> stack;
    for (uint32_t id : ids) {
      Event& e = events[id];
      while (!stack.empty()) {
        Event& parent = events[stack.back()];
        if (e.start >= parent.end || e.end > parent.end) {
          stack.pop_back();
        } else {
          parent.children.push_back(id);
          e.parent = stack.back();
          break;
        }
      }
      stack.push_back(id);
    }
  }

  // 4. _remove_dup_nodes: an only child with its parent's name merges into the parent (its
  // children and kernels move up).
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i = 0; i < events.size(); ++i) {
      Event& e = events[i];
      if (e.removed || e.parent == kNone) continue;
      Event& p = events[e.parent];
      if (p.key != e.key || p.children.size() != 1) continue;
      p.children = e.children;
      p.kernels_ns = e.kernels_ns;
      for (uint32_t c : e.children) events[c].parent = e.parent;
      e.removed = true;
      changed = true;
    }
  }

  // 5. Device totals bottom-up: children sort after their parents, so walk backwards by start.
  std::vector<uint32_t> order(events.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::make_pair(events[a].start, -events[a].end) <
           std::make_pair(events[b].start, -events[b].end);
  });
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Event& e = events[*it];
    if (e.removed) continue;
    if (e.is_device) {
      e.device_total = e.end - e.start;
      continue;
    }
    e.device_total = e.kernels_ns;
    for (uint32_t c : e.children) e.device_total += events[c].device_total;
  }

  // 6. Group in order of first appearance (events sorted by start, longer first).
  // Key: (name, device?, user annotation?, shapes id); shapes id 0 prints as "[]".
  struct RowKeyHash {
    size_t operator()(const std::tuple<StringId, bool, bool, StringId>& k) const noexcept {
      uint64_t h = std::get<0>(k);
      h = h * 0x9E3779B97F4A7C15ull ^ (std::get<1>(k) ? 1 : 0) ^ (std::get<2>(k) ? 2 : 0);
      h = h * 0x9E3779B97F4A7C15ull ^ std::get<3>(k);
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  std::unordered_map<std::tuple<StringId, bool, bool, StringId>, size_t, RowKeyHash> row_of_key;
  for (uint32_t id : order) {
    const Event& e = events[id];
    if (e.removed) continue;
    StringId shapes_id = 0;
    if (options.group_by_input_shape) {
      shapes_id = slices[e.slice].input_shapes;
      if (shapes_id != 0 && trace.Str(shapes_id) == "[]") shapes_id = 0;
    }
    auto key = std::make_tuple(e.key, e.is_device, e.is_user_annotation, shapes_id);
    auto [it, inserted] = row_of_key.emplace(key, out.rows_.size());
    if (inserted) {
      KeyAverage row;
      row.key = e.key == kStepKey ? std::string("ProfilerStep*") : std::string(trace.Str(e.key));
      if (options.group_by_input_shape) {
        row.input_shapes = shapes_id == 0 ? "[]" : std::string(trace.Str(shapes_id));
      }
      row.is_user_annotation = e.is_user_annotation;
      row.is_device = e.is_device;
      out.rows_.push_back(std::move(row));
    }
    KeyAverage& row = out.rows_[it->second];
    row.count += 1;
    if (e.is_device) {
      row.device_time_total_ns += e.device_total;
      row.self_device_time_total_ns += e.device_total;
      continue;
    }
    int64_t cpu_total = e.end - e.start;
    int64_t children_cpu = 0, children_device = 0;
    for (uint32_t c : e.children) {
      children_cpu += events[c].end - events[c].start;
      children_device += events[c].device_total;
    }
    row.cpu_time_total_ns += cpu_total;
    row.self_cpu_time_total_ns += cpu_total - children_cpu;
    row.device_time_total_ns += e.device_total;
    row.self_device_time_total_ns += e.device_total - children_device;
  }
  return out;
}

bool KeyAverages::has_device_time() const {
  for (const KeyAverage& r : rows_) {
    if (r.self_device_time_total_ns > 0) return true;
  }
  return false;
}

}  // namespace opscope
