// KeyAverages::FromTrace: PyTorch's FunctionEvent tree and EventList.key_averages() over the
// trace model (torch/autograd/profiler.py _parse_kineto_results, profiler_util.py).
#include "opscope/key_averages.h"

#include <algorithm>
#include <unordered_map>

#include "trace/saturating.h"

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

// Per-slice role in PyTorch's event list.
enum Role : uint8_t { kSkip = 0, kHost = 1, kDevice = 2 };

// The stored key of a ProfilerStep#N slice: every step groups into one "ProfilerStep*" row.
constexpr StringId kStepKey = kNone - 1;

// Order of first appearance in PyTorch's event list (sorted by start, then longer first).
struct Appearance {
  int64_t start;
  int64_t neg_end;
  uint32_t slice;
  bool operator<(const Appearance& o) const {
    if (start != o.start) return start < o.start;
    if (neg_end != o.neg_end) return neg_end < o.neg_end;
    return slice < o.slice;
  }
};

struct RowKey {
  StringId name;
  StringId shapes;
  uint8_t variant;  // bit 0: device row, bit 1: user annotation
  bool operator==(const RowKey&) const = default;
};
struct RowKeyHash {
  size_t operator()(const RowKey& k) const noexcept {
    uint64_t h = (static_cast<uint64_t>(k.name) << 2) | k.variant;
    h = h * 0x9E3779B97F4A7C15ull ^ k.shapes;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

// Which slices a table aggregates, by local index: every slice of the trace, or a sorted subset.
struct AllSlices {
  uint32_t n;
  uint32_t size() const { return n; }
  uint32_t Global(uint32_t local) const { return local; }
  uint32_t Local(uint32_t global) const { return global; }
};
struct SliceSubset {
  std::span<const uint32_t> ids;  // sorted ascending
  uint32_t size() const { return static_cast<uint32_t>(ids.size()); }
  uint32_t Global(uint32_t local) const { return ids[local]; }
  uint32_t Local(uint32_t global) const {
    auto it = std::lower_bound(ids.begin(), ids.end(), global);
    return it != ids.end() && *it == global ? static_cast<uint32_t>(it - ids.begin()) : kNone;
  }
};

}  // namespace

// Mirrors torch/autograd/profiler.py _parse_kineto_results and profiler_util.EventList
// (_populate_cpu_children, _remove_dup_nodes, key_averages) over flat per-slice arrays: no
// per-event objects, so memory is a few bytes per aggregated slice and the work is linear after
// the trace's own sort. Arrays are indexed by local index (see AllSlices / SliceSubset).
template <typename Slices>
KeyAverages KeyAverages::Aggregate(const Trace& trace, const Slices& ids,
                                   const KeyAveragesOptions& options) {
  KeyAverages out;
  out.options_ = options;
  for (const auto& [reason, count] : trace.metadata().dropped) out.dropped_events_ += count;
  std::string device = trace.metadata().device_type;
  std::transform(device.begin(), device.end(), device.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  out.device_name_ = device;

  const auto& all = trace.slices();
  const uint32_t n = ids.size();
  auto slice = [&](uint32_t i) -> const Slice& { return all[ids.Global(i)]; };

  // 1. Which slices are FunctionEvents, and their keys. Name checks run once per distinct name.
  std::vector<uint8_t> role(n, kSkip);
  std::vector<uint8_t> name_class(trace.strings().size(), 0);  // 0 unseen, 1 keep, 2 drop, 3 step
  for (uint32_t i = 0; i < n; ++i) {
    const Slice& s = slice(i);
    const bool host = IsHostEventKind(s.kind);
    if (!host && !IsDeviceEventKind(s.kind)) continue;
    uint8_t& cls = name_class[s.name];
    if (cls == 0) {
      std::string_view name = trace.Str(s.name);
      cls = FilteredName(name) ? 2 : name.starts_with("ProfilerStep#") ? 3 : 1;
    }
    if (cls != 2) role[i] = host ? kHost : kDevice;
  }
  auto key_of = [&](uint32_t i) {
    return name_class[slice(i).name] == 3 ? kStepKey : slice(i).name;
  };

  // 2. Kernels: device activity linked to a host op adds its duration to that op. `device_ns`
  // holds an event's kernels now and its device total after step 5.
  std::vector<int64_t> device_ns(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    if (role[i] != kDevice) continue;
    device_ns[i] = slice(i).dur_ns;
    if (slice(i).kind == ActivityKind::kDeviceAnnotation) continue;
    const uint32_t linked = trace.Link(ids.Global(i)).op;
    const uint32_t op = linked == kNone ? kNone : ids.Local(linked);
    if (op == kNone || role[op] != kHost) {
      out.unmatched_device_activity_ += 1;
      continue;
    }
    device_ns[op] = internal::SatAdd(device_ns[op], slice(i).dur_ns);
  }

  // 3 + 4. CPU parents per thread (PyTorch's stack walk over events sorted by (start, -end), which
  // is the trace's own order within a track: slices come grouped by track), merging an only child
  // that has its parent's name into the parent as it goes (_remove_dup_nodes): the child's
  // kernels replace the parent's and its children are adopted. `merged_into` redirects a removed
  // event to the event that took its place; `children` saturates at 2 (only "exactly one"
  // matters).
  std::vector<uint32_t> parent(n, kNone);
  std::vector<uint32_t> merged_into(n, kNone);
  std::vector<uint8_t> children(n, 0);
  auto resolve = [&](uint32_t e) {
    while (e != kNone && merged_into[e] != kNone) e = merged_into[e];
    return e;
  };
  std::vector<uint32_t> stack;
  uint32_t track = kNone;
  for (uint32_t i = 0; i < n; ++i) {
    if (role[i] != kHost || slice(i).track >= trace.tracks().size()) continue;
    if (slice(i).track != track) {
      track = slice(i).track;
      stack.clear();
    }
    const int64_t start = slice(i).ts_ns, stop = start + slice(i).dur_ns;
    while (!stack.empty()) {
      const Slice& p = slice(stack.back());
      if (start >= p.ts_ns + p.dur_ns || stop > p.ts_ns + p.dur_ns) {
        stack.pop_back();
      } else {
        break;
      }
    }
    if (!stack.empty()) {
      uint32_t p = resolve(stack.back());
      parent[i] = p;
      if (children[p] < 2) ++children[p];
    }
    stack.push_back(i);
  }
  // Merging walks events in list order; parents precede their children within a track.
  for (uint32_t i = 0; i < n; ++i) {
    if (role[i] != kHost) continue;
    uint32_t p = resolve(parent[i]);
    parent[i] = p;
    if (p == kNone || key_of(p) != key_of(i) || children[p] != 1) continue;
    merged_into[i] = p;
    device_ns[p] = device_ns[i];  // parent.kernels = child.kernels
    children[p] = children[i];
  }

  // 5. Device totals bottom-up: children follow their parents, so walk backwards.
  for (uint32_t i = n; i-- > 0;) {
    if (role[i] != kHost || merged_into[i] != kNone) continue;
    if (uint32_t p = parent[i]; p != kNone)
      device_ns[p] = internal::SatAdd(device_ns[p], device_ns[i]);
  }

  // 6. Group. A row's position is its first event's place in PyTorch's event list.
  std::unordered_map<RowKey, uint32_t, RowKeyHash> row_of_key;
  struct RowCacheEntry {
    RowKey key{};
    uint32_t row = kNone;
  };
  std::vector<RowCacheEntry> row_cache(1024);
  std::vector<Appearance> first;
  std::vector<uint32_t> row_of(n, kNone);
  for (uint32_t i = 0; i < n; ++i) {
    if (role[i] == kSkip || merged_into[i] != kNone) continue;
    const Slice& s = slice(i);
    StringId shapes = 0;
    if (options.group_by_input_shape) {
      shapes = s.input_shapes;
      if (shapes != 0 && trace.Str(shapes) == "[]") shapes = 0;
    }
    const bool annotation =
        s.kind == ActivityKind::kUserAnnotation || s.kind == ActivityKind::kDeviceAnnotation;
    RowKey key{key_of(i), shapes,
               static_cast<uint8_t>((role[i] == kDevice ? 1 : 0) | (annotation ? 2 : 0))};
    Appearance here{s.ts_ns, -(s.ts_ns + s.dur_ns), i};
    // Keys repeat heavily: a small direct-mapped cache answers most before the hash map.
    RowCacheEntry& cached = row_cache[(uint64_t{RowKeyHash{}(key)} * 0x9E3779B97F4A7C15ull) >> 54];
    uint32_t r;
    if (cached.row != kNone && cached.key == key) {
      r = cached.row;
    } else {
      auto [it, inserted] = row_of_key.emplace(key, static_cast<uint32_t>(out.rows_.size()));
      r = it->second;
      cached = {key, r};
      if (inserted) {
        KeyAverage row;
        row.key =
            key.name == kStepKey ? std::string("ProfilerStep*") : std::string(trace.Str(key.name));
        if (options.group_by_input_shape) {
          row.input_shapes = shapes == 0 ? "[]" : std::string(trace.Str(shapes));
        }
        row.is_user_annotation = annotation;
        row.is_device = role[i] == kDevice;
        out.rows_.push_back(std::move(row));
        first.push_back(here);
        row_of[i] = r;
        continue;
      }
    }
    if (here < first[r]) first[r] = here;
    row_of[i] = r;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t r = row_of[i];
    if (r == kNone) continue;
    KeyAverage& row = out.rows_[r];
    row.count += 1;
    row.device_time_total_ns = internal::SatAdd(row.device_time_total_ns, device_ns[i]);
    row.self_device_time_total_ns = internal::SatAdd(row.self_device_time_total_ns, device_ns[i]);
    if (role[i] == kDevice) continue;
    const int64_t dur = slice(i).dur_ns;
    row.cpu_time_total_ns = internal::SatAdd(row.cpu_time_total_ns, dur);
    row.self_cpu_time_total_ns = internal::SatAdd(row.self_cpu_time_total_ns, dur);
    if (uint32_t p = parent[i]; p != kNone) {
      KeyAverage& parent_row = out.rows_[row_of[p]];
      parent_row.self_cpu_time_total_ns = internal::SatSub(parent_row.self_cpu_time_total_ns, dur);
      parent_row.self_device_time_total_ns =
          internal::SatSub(parent_row.self_device_time_total_ns, device_ns[i]);
    }
  }

  // Rows in order of first appearance.
  std::vector<uint32_t> order(out.rows_.size());
  for (uint32_t r = 0; r < order.size(); ++r) order[r] = r;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return first[a] < first[b]; });
  std::vector<KeyAverage> rows;
  rows.reserve(order.size());
  for (uint32_t r : order) rows.push_back(std::move(out.rows_[r]));
  out.rows_ = std::move(rows);
  return out;
}

KeyAverages KeyAverages::FromTrace(const Trace& trace, const KeyAveragesOptions& options) {
  return Aggregate(trace, AllSlices{static_cast<uint32_t>(trace.slices().size())}, options);
}

KeyAverages KeyAverages::FromSlices(const Trace& trace, std::span<const uint32_t> slices,
                                    const KeyAveragesOptions& options) {
  return Aggregate(trace, SliceSubset{slices}, options);
}

bool KeyAverages::has_device_time() const {
  for (const KeyAverage& r : rows_) {
    if (r.self_device_time_total_ns > 0) return true;
  }
  return false;
}

}  // namespace opscope
