// KeyAverages::FromTrace: PyTorch's FunctionEvent tree and EventList.key_averages() over the
// trace model (torch/autograd/profiler.py _parse_kineto_results, profiler_util.py).
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "opscope/key_averages.h"

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
  return k == ActivityKind::kKernel || k == ActivityKind::kMemcpy ||
         k == ActivityKind::kMemset || k == ActivityKind::kDeviceAnnotation;
}

// profiler_util._filter_name: utility ops PyTorch leaves out.
bool FilteredName(std::string_view name) {
  return name == "[memory]" || name == "[OutOfMemory]" ||
         name == "profiler::_record_function_enter" ||
         name == "profiler::_record_function_enter_new" ||
         name == "profiler::_record_function_exit" || name == "aten::is_leaf" ||
         name == "aten::output_nr" || name == "aten::_version";
}

// One FunctionEvent.
struct Event {
  uint32_t slice = kNone;
  std::string key;
  bool is_device = false;
  bool is_user_annotation = false;
  int64_t start = 0;
  int64_t end = 0;
  uint32_t track = kNone;
  int64_t kernels_ns = 0;  // sum of linked device activity durations ("kernels")
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
  std::unordered_map<uint32_t, uint32_t> event_of_slice;
  for (uint32_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    const bool host = IsHostEventKind(s.kind);
    const bool dev = IsDeviceEventKind(s.kind);
    if (!host && !dev) continue;
    std::string_view name = trace.Str(s.name);
    if (FilteredName(name)) continue;
    Event e;
    e.slice = i;
    e.key = std::string(name);
    if (e.key.starts_with("ProfilerStep#")) e.key = "ProfilerStep*";  // _rewrite_name wildcard
    e.is_device = dev;
    e.is_user_annotation =
        s.kind == ActivityKind::kUserAnnotation || s.kind == ActivityKind::kDeviceAnnotation;
    e.start = s.ts_ns;
    e.end = s.ts_ns + s.dur_ns;
    e.track = s.track;
    event_of_slice.emplace(i, static_cast<uint32_t>(events.size()));
    events.push_back(std::move(e));
  }

  // 2. Kernels: device activity linked to a host op adds its duration to that op.
  for (const Event& e : events) {
    if (!e.is_device || slices[e.slice].kind == ActivityKind::kDeviceAnnotation) continue;
    uint32_t op = trace.Link(e.slice).op;
    auto it = op == kNone ? event_of_slice.end() : event_of_slice.find(op);
    if (it == event_of_slice.end() || events[it->second].is_device) {
      out.unmatched_device_activity_ += 1;
      continue;
    }
    events[it->second].kernels_ns += e.end - e.start;
  }

  // 3. CPU parent/child per thread: PyTorch's stack walk over events sorted by (start, -end).
  std::map<uint32_t, std::vector<uint32_t>> by_track;
  for (uint32_t i = 0; i < events.size(); ++i) {
    if (!events[i].is_device) by_track[events[i].track].push_back(i);
  }
  for (auto& [track, ids] : by_track) {
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
  std::map<std::tuple<std::string, bool, bool, std::string>, size_t> row_of_key;
  for (uint32_t id : order) {
    const Event& e = events[id];
    if (e.removed) continue;
    std::string shapes;
    if (options.group_by_input_shape) {
      StringId sid = slices[e.slice].input_shapes;
      shapes = sid == 0 ? "[]" : std::string(trace.Str(sid));
    }
    auto key = std::make_tuple(e.key, e.is_device, e.is_user_annotation, shapes);
    auto [it, inserted] = row_of_key.emplace(key, out.rows_.size());
    if (inserted) {
      KeyAverage row;
      row.key = e.key;
      row.input_shapes = shapes;
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
