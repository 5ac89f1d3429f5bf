// KeyAverages::FromTrace: PyTorch's FunctionEvent tree and EventList.key_averages() over the
// trace model (torch/autograd/profiler.py _parse_kineto_results, profiler_util.py).
#include "opscope/key_averages.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <memory_resource>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "base/huge_array.h"
#include "base/parallel_for.h"
#include "base/saturating.h"
#include "profiler/flops.h"
#include "profiler/memory_events.h"
#include "trace/track_ranges.h"

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

// [begin, end) of local event indices.
using SliceRange = std::pair<uint32_t, uint32_t>;

// Rows as GroupRows makes them, in the order it meets their keys: each row's key and its first
// event's place in PyTorch's event list.
struct RowSet {
  std::vector<KeyAverage> rows;
  std::vector<Appearance> first;
  std::vector<RowKey> keys;
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

// PyTorch's event list over the aggregated slices as flat arrays indexed by local index (see
// AllSlices / SliceSubset): no per-event objects, so memory is a few bytes per aggregated slice.
// Filled by the steps below, in order.
template <typename Slices>
struct EventList {
  EventList(const Trace& trace_in, const Slices& ids_in)
      : trace(trace_in),
        ids(ids_in),
        n(ids_in.size()),
        role(n, kSkip, internal::HugePageResource()),
        name_class(trace_in.strings().size(), 0),
        device_ns(n, 0, internal::HugePageResource()),
        parent(n, kNone, internal::HugePageResource()),
        merged_into(n, kNone, internal::HugePageResource()),
        children(n, 0, internal::HugePageResource()),
        row_of(n, kNone, internal::HugePageResource()),
        cpu_mem(internal::HugePageResource()),
        dev_mem(internal::HugePageResource()),
        flops(internal::HugePageResource()) {}

  const Slice& slice(uint32_t i) const { return trace.slices()[ids.Global(i)]; }
  // The row key's name: every ProfilerStep#N groups into one "ProfilerStep*" row.
  StringId KeyOf(uint32_t i) const {
    return name_class[slice(i).name] == 3 ? kStepKey : slice(i).name;
  }
  // The event that took the place of `e` after duplicates were merged.
  uint32_t Resolve(uint32_t e) const {
    while (e != kNone && merged_into[e] != kNone) e = merged_into[e];
    return e;
  }

  const Trace& trace;
  const Slices& ids;
  uint32_t n;
  // The per-event arrays are written once into fresh memory: on huge pages once they reach
  // 2 MiB (internal::HugePageResource), a fault per 2 MiB instead of per 4 KiB.
  std::pmr::vector<uint8_t> role;
  std::vector<uint8_t> name_class;  // per string id: 0 unseen, 1 keep, 2 drop, 3 step
  // An event's kernels after AddKernels, its device total after SumDeviceTotals.
  std::pmr::vector<int64_t> device_ns;
  std::pmr::vector<uint32_t> parent;       // CPU parent (after merging)
  std::pmr::vector<uint32_t> merged_into;  // a removed duplicate -> the event that took its place
  std::pmr::vector<uint8_t> children;      // CPU children, saturating at 2 ("exactly one" matters)
  std::pmr::vector<uint32_t> row_of;       // the row an event adds to; kNone = none
  // Host and device bytes of the [memory] events inside each host event (empty: none).
  std::pmr::vector<int64_t> cpu_mem, dev_mem;
  std::pmr::vector<int64_t> flops;  // with_flops traces; empty otherwise
};

// 1. Which slices are FunctionEvents. Name checks run once per distinct name.
template <typename Slices>
void ClassifyEvents(EventList<Slices>& events) {
  for (uint32_t i = 0; i < events.n; ++i) {
    const Slice& s = events.slice(i);
    const bool host = IsHostEventKind(s.kind);
    if (!host && !IsDeviceEventKind(s.kind)) continue;
    uint8_t& cls = events.name_class[s.name];
    if (cls == 0) {
      std::string_view name = events.trace.Str(s.name);
      cls = FilteredName(name) ? 2 : name.starts_with("ProfilerStep#") ? 3 : 1;
    }
    if (cls != 2) events.role[i] = host ? kHost : kDevice;
  }
}

// 2. Kernels: device activity linked to a host op adds its duration to that op. Returns the
// number of device activities linked to no host op.
template <typename Slices>
uint64_t AddKernels(EventList<Slices>& events) {
  uint64_t unmatched = 0;
  for (uint32_t i = 0; i < events.n; ++i) {
    if (events.role[i] != kDevice) continue;
    const Slice& s = events.slice(i);
    events.device_ns[i] = s.dur_ns;
    if (s.kind == ActivityKind::kDeviceAnnotation) continue;
    const uint32_t linked = events.trace.Link(events.ids.Global(i)).op;
    const uint32_t op = linked == kNone ? kNone : events.ids.Local(linked);
    if (op == kNone || events.role[op] != kHost) {
      unmatched += 1;
      continue;
    }
    events.device_ns[op] = internal::SatAdd(events.device_ns[op], s.dur_ns);
  }
  return unmatched;
}

// 3. CPU parents per thread: PyTorch's stack walk over events sorted by (start, -end), which is
// the trace's own order within a track (slices come grouped by track).
template <typename Slices>
void FindCpuParents(EventList<Slices>& events, SliceRange range) {
  const size_t tracks = events.trace.tracks().size();
  std::vector<uint32_t> stack;
  uint32_t track = kNone;
  for (uint32_t i = range.first; i < range.second; ++i) {
    const Slice& s = events.slice(i);
    if (events.role[i] != kHost || s.track >= tracks) continue;
    if (s.track != track) {
      track = s.track;
      stack.clear();
    }
    const int64_t start = s.ts_ns, stop = start + s.dur_ns;
    while (!stack.empty()) {
      const Slice& p = events.slice(stack.back());
      if (start < p.ts_ns + p.dur_ns && stop <= p.ts_ns + p.dur_ns) break;
      stack.pop_back();
    }
    if (!stack.empty()) {
      const uint32_t p = events.Resolve(stack.back());
      events.parent[i] = p;
      if (events.children[p] < 2) ++events.children[p];
    }
    stack.push_back(i);
  }
}

// 4. _remove_dup_nodes: an only child that has its parent's name merges into the parent; the
// child's kernels replace the parent's and its children are adopted. Walks events in list order
// (parents precede their children within a track).
template <typename Slices>
void MergeDuplicates(EventList<Slices>& events, SliceRange range) {
  for (uint32_t i = range.first; i < range.second; ++i) {
    if (events.role[i] != kHost) continue;
    const uint32_t p = events.Resolve(events.parent[i]);
    events.parent[i] = p;
    if (p == kNone || events.KeyOf(p) != events.KeyOf(i) || events.children[p] != 1) continue;
    events.merged_into[i] = p;
    events.device_ns[p] = events.device_ns[i];  // parent.kernels = child.kernels
    events.children[p] = events.children[i];
  }
}

// 5. Device totals bottom-up: children follow their parents, so walk backwards.
template <typename Slices>
void SumDeviceTotals(EventList<Slices>& events, SliceRange range) {
  for (uint32_t i = range.second; i-- > range.first;) {
    if (events.role[i] != kHost || events.merged_into[i] != kNone) continue;
    if (const uint32_t p = events.parent[i]; p != kNone) {
      events.device_ns[p] = internal::SatAdd(events.device_ns[p], events.device_ns[i]);
    }
  }
}

// 5b. Memory: each host event is charged with the [memory] events inside its time
// (_parse_kineto_results: MemRecordsAcc.in_interval(start, end), any thread). Returns the range
// of memory events the table sees (a subset sees those within the span of its host events) and
// sets `covered` (> 0 after a prefix sum: the event lies inside some host event).
template <typename Slices>
std::pair<uint32_t, uint32_t> AttributeMemory(EventList<Slices>& events,
                                              const internal::MemoryEvents& memory,
                                              std::vector<int32_t>* covered) {
  if (memory.empty()) return {0, 0};
  events.cpu_mem.assign(events.n, 0);
  events.dev_mem.assign(events.n, 0);
  covered->assign(memory.events().size() + 1, 0);
  int64_t span_lo = INT64_MAX, span_hi = INT64_MIN;
  for (uint32_t i = 0; i < events.n; ++i) {
    if (events.role[i] != kHost) continue;
    const Slice& s = events.slice(i);
    const int64_t start = s.ts_ns, stop = internal::SatAdd(start, s.dur_ns);
    span_lo = std::min(span_lo, start);
    span_hi = std::max(span_hi, stop);
    auto [lo, hi] = memory.InInterval(start, stop);
    if (lo == hi) continue;
    events.cpu_mem[i] = memory.CpuBytes(lo, hi);
    events.dev_mem[i] = memory.DeviceBytes(lo, hi);
    (*covered)[lo] += 1;
    (*covered)[hi] -= 1;
  }
  if constexpr (std::is_same_v<Slices, AllSlices>) {
    return {0, static_cast<uint32_t>(memory.events().size())};
  } else {
    if (span_lo > span_hi) return {0, 0};
    return memory.InInterval(span_lo, span_hi);
  }
}

// with_flops=True: the trace's "with_flops" metadata says so.
bool RecordedWithFlops(const Trace& trace) {
  for (const auto& [key, value] : trace.metadata().extra) {
    if (key == "with_flops") return value == "true" || value == "1";
  }
  return false;
}

// An op's FLOPs: its "flops" arg, else PyTorch's count from its shapes.
int64_t OpFlops(const Trace& trace, const Slice& s) {
  if (s.args != kNone) {
    if (std::optional<std::string> v = trace.FindArg(s.args, "flops")) {
      int64_t f = 0;
      if (std::from_chars(v->data(), v->data() + v->size(), f).ec == std::errc()) return f;
    }
  }
  const std::string_view name = trace.Str(s.name);
  if (!internal::CountsFlops(name) || s.input_shapes == 0) return 0;
  std::string concrete;
  if (name == "aten::conv2d" && s.args != kNone) {
    concrete = trace.FindArg(s.args, "Concrete Inputs").value_or("");
  }
  return internal::FlopsFromShapes(name, trace.Str(s.input_shapes), concrete);
}

// 5c. FLOPs of each cpu op (with_flops traces).
template <typename Slices>
void CountFlops(EventList<Slices>& events, SliceRange range) {
  for (uint32_t i = range.first; i < range.second; ++i) {
    const Slice& s = events.slice(i);
    if (events.role[i] == kHost && s.kind == ActivityKind::kCpuOp) {
      events.flops[i] = OpFlops(events.trace, s);
    }
  }
}

// Rows by key, with a small direct-mapped cache in front of the hash map (keys repeat heavily).
class RowIndex {
 public:
  RowIndex() : cache_(1024) {}
  // The row of `key`; *inserted is true when `key` is new and gets row `next_row`.
  uint32_t Find(const RowKey& key, uint32_t next_row, bool* inserted) {
    Entry& cached = cache_[(uint64_t{RowKeyHash{}(key)} * 0x9E3779B97F4A7C15ull) >> 54];
    *inserted = false;
    if (cached.row != kNone && cached.key == key) return cached.row;
    auto [it, added] = rows_.emplace(key, next_row);
    *inserted = added;
    cached = {key, it->second};
    return it->second;
  }

 private:
  struct Entry {
    RowKey key{};
    uint32_t row = kNone;
  };
  std::unordered_map<RowKey, uint32_t, RowKeyHash> rows_;
  std::vector<Entry> cache_;
};

// A new row for the event `i` with key `key`.
template <typename Slices>
KeyAverage NewRow(const EventList<Slices>& events, uint32_t i, const RowKey& key,
                  const KeyAveragesOptions& options) {
  KeyAverage row;
  row.key =
      key.name == kStepKey ? std::string("ProfilerStep*") : std::string(events.trace.Str(key.name));
  if (options.group_by_input_shape) {
    row.input_shapes = key.shapes == 0 ? "[]" : std::string(events.trace.Str(key.shapes));
  }
  row.is_user_annotation = (key.variant & 2) != 0;
  row.is_device = events.role[i] == kDevice;
  return row;
}

// 6. Group: sets row_of and appends a row per new key. A row's position is its first event's
// place in PyTorch's event list; `first` holds it per row.
template <typename Slices>
void GroupRows(EventList<Slices>& events, const KeyAveragesOptions& options, SliceRange range,
               RowSet* set) {
  std::vector<KeyAverage>* rows = &set->rows;
  std::vector<Appearance>* first = &set->first;
  RowIndex index;
  for (uint32_t i = range.first; i < range.second; ++i) {
    if (events.role[i] == kSkip || events.merged_into[i] != kNone) continue;
    const Slice& s = events.slice(i);
    StringId shapes = 0;
    if (options.group_by_input_shape) {
      shapes = s.input_shapes;
      if (shapes != 0 && events.trace.Str(shapes) == "[]") shapes = 0;
    }
    const bool annotation =
        s.kind == ActivityKind::kUserAnnotation || s.kind == ActivityKind::kDeviceAnnotation;
    const RowKey key{
        events.KeyOf(i), shapes,
        static_cast<uint8_t>((events.role[i] == kDevice ? 1 : 0) | (annotation ? 2 : 0))};
    const Appearance here{s.ts_ns, -(s.ts_ns + s.dur_ns), i};
    bool inserted = false;
    const uint32_t r = index.Find(key, static_cast<uint32_t>(rows->size()), &inserted);
    if (inserted) {
      rows->push_back(NewRow(events, i, key, options));
      first->push_back(here);
      set->keys.push_back(key);
    } else if (here < (*first)[r]) {
      (*first)[r] = here;
    }
    events.row_of[i] = r;
  }
}

// 7. Totals per row: an event's times add to its row and leave its parent's self times.
template <typename Slices>
void SumRows(const EventList<Slices>& events, SliceRange range, std::vector<KeyAverage>* rows) {
  for (uint32_t i = range.first; i < range.second; ++i) {
    const uint32_t r = events.row_of[i];
    if (r == kNone) continue;
    KeyAverage& row = (*rows)[r];
    const int64_t device_ns = events.device_ns[i];
    row.count += 1;
    row.device_time_total_ns = internal::SatAdd(row.device_time_total_ns, device_ns);
    row.self_device_time_total_ns = internal::SatAdd(row.self_device_time_total_ns, device_ns);
    if (events.role[i] == kDevice) continue;
    const int64_t dur = events.slice(i).dur_ns;
    row.cpu_time_total_ns = internal::SatAdd(row.cpu_time_total_ns, dur);
    row.self_cpu_time_total_ns = internal::SatAdd(row.self_cpu_time_total_ns, dur);
    if (!events.flops.empty()) row.flops = internal::SatAdd(row.flops, events.flops[i]);
    const bool memory = !events.cpu_mem.empty();
    if (memory) {
      const int64_t cpu = events.cpu_mem[i], dev = events.dev_mem[i];
      row.cpu_memory_usage = internal::SatAdd(row.cpu_memory_usage, cpu);
      row.self_cpu_memory_usage = internal::SatAdd(row.self_cpu_memory_usage, cpu);
      row.device_memory_usage = internal::SatAdd(row.device_memory_usage, dev);
      row.self_device_memory_usage = internal::SatAdd(row.self_device_memory_usage, dev);
    }
    if (const uint32_t p = events.parent[i]; p != kNone) {
      KeyAverage& parent_row = (*rows)[events.row_of[p]];
      parent_row.self_cpu_time_total_ns = internal::SatSub(parent_row.self_cpu_time_total_ns, dur);
      parent_row.self_device_time_total_ns =
          internal::SatSub(parent_row.self_device_time_total_ns, device_ns);
      if (memory) {
        parent_row.self_cpu_memory_usage =
            internal::SatSub(parent_row.self_cpu_memory_usage, events.cpu_mem[i]);
        parent_row.self_device_memory_usage =
            internal::SatSub(parent_row.self_device_memory_usage, events.dev_mem[i]);
      }
    }
  }
}

// 7b. Memory events inside no host op: one "[memory]" event each, appended after the trace's
// events as PyTorch does (no duration, no children), grouped into the "[memory]" row.
void AddUnattributedMemory(const internal::MemoryEvents& memory,
                           std::pair<uint32_t, uint32_t> range, const std::vector<int32_t>& covered,
                           uint32_t n, const KeyAveragesOptions& options,
                           std::vector<KeyAverage>* rows, std::vector<Appearance>* first) {
  uint32_t row = kNone;
  int32_t depth = 0;
  for (uint32_t k = 0; k < range.second; ++k) {
    depth += covered[k];
    if (k < range.first || depth > 0) continue;
    const internal::MemoryEvent& e = memory.events()[k];
    const Appearance here{e.ts_ns, -e.ts_ns, n + k};
    if (row == kNone) {
      row = static_cast<uint32_t>(rows->size());
      KeyAverage r;
      r.key = "[memory]";
      if (options.group_by_input_shape) r.input_shapes = "[]";
      rows->push_back(std::move(r));
      first->push_back(here);
    }
    KeyAverage& r = (*rows)[row];
    r.count += 1;
    const int64_t cpu = internal::IsCpuMemoryDevice(e.device_type) ? e.bytes : 0;
    const int64_t dev = internal::IsDeviceMemoryDevice(e.device_type) ? e.bytes : 0;
    r.cpu_memory_usage = internal::SatAdd(r.cpu_memory_usage, cpu);
    r.self_cpu_memory_usage = internal::SatAdd(r.self_cpu_memory_usage, cpu);
    r.device_memory_usage = internal::SatAdd(r.device_memory_usage, dev);
    r.self_device_memory_usage = internal::SatAdd(r.self_device_memory_usage, dev);
  }
}

// 8. Rows in order of first appearance.
std::vector<KeyAverage> InAppearanceOrder(std::vector<KeyAverage> rows,
                                          const std::vector<Appearance>& first) {
  std::vector<uint32_t> order(rows.size());
  for (uint32_t r = 0; r < order.size(); ++r) order[r] = r;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return first[a] < first[b]; });
  std::vector<KeyAverage> out;
  out.reserve(order.size());
  for (uint32_t r : order) out.push_back(std::move(rows[r]));
  return out;
}

// ---- The same steps on several threads (FromTrace with options.threads > 1) ----
// Steps 3-7 work within one track (a host event's CPU parent is on its own track), so they run
// per range of whole tracks; the kernels of step 2 cross tracks and are summed per op from the
// trace's per-op activity lists, in slice order as the serial pass adds them.

// Step 1 on threads: every string's class (only those of events are read), then the roles.
void ClassifyEventsParallel(EventList<AllSlices>& events, int threads,
                            const std::vector<SliceRange>& ranges) {
  const auto strings =
      internal::SplitRange(static_cast<uint32_t>(events.name_class.size()), ranges.size());
  internal::ParallelFor(threads, strings.size(), [&](size_t p) {
    for (uint32_t id = strings[p].first; id < strings[p].second; ++id) {
      const std::string_view name = events.trace.Str(id);
      events.name_class[id] = FilteredName(name) ? 2 : name.starts_with("ProfilerStep#") ? 3 : 1;
    }
  });
  internal::ParallelFor(threads, ranges.size(), [&](size_t p) {
    for (uint32_t i = ranges[p].first; i < ranges[p].second; ++i) {
      const Slice& s = events.slice(i);
      const bool host = IsHostEventKind(s.kind);
      if (!host && !IsDeviceEventKind(s.kind)) continue;
      if (events.name_class[s.name] != 2) events.role[i] = host ? kHost : kDevice;
    }
  });
}

// Step 2 on threads: each device event's own time, the unmatched count, then each host op's
// kernels in slice order (Trace::DeviceActivityOf), as AddKernels adds them.
uint64_t AddKernelsParallel(EventList<AllSlices>& events, int threads,
                            const std::vector<SliceRange>& ranges) {
  std::vector<uint64_t> unmatched(ranges.size(), 0);
  // A device event whose time an op's kernels count (device annotations are not kernels).
  auto counts = [&](uint32_t a) {
    return events.role[a] == kDevice && events.slice(a).kind != ActivityKind::kDeviceAnnotation;
  };

  internal::ParallelFor(threads, ranges.size(), [&](size_t p) {
    for (uint32_t i = ranges[p].first; i < ranges[p].second; ++i) {
      if (events.role[i] != kDevice) continue;
      const Slice& s = events.slice(i);
      events.device_ns[i] = s.dur_ns;
      if (!counts(i)) continue;
      const uint32_t op = events.trace.Link(i).op;
      if (op == kNone || events.role[op] != kHost) unmatched[p] += 1;
    }
  });
  internal::ParallelFor(threads, ranges.size(), [&](size_t p) {
    for (uint32_t i = ranges[p].first; i < ranges[p].second; ++i) {
      if (events.role[i] != kHost) continue;
      for (uint32_t a : events.trace.DeviceActivityOf(i)) {
        if (counts(a))
          events.device_ns[i] = internal::SatAdd(events.device_ns[i], events.slice(a).dur_ns);
      }
    }
  });
  uint64_t total = 0;
  for (uint64_t u : unmatched) total += u;
  return total;
}

// Adds `from`'s figures (a row's share from one range of events) to `into`.
void AddRow(const KeyAverage& from, KeyAverage* into) {
  into->count += from.count;
  into->self_cpu_time_total_ns =
      internal::SatAdd(into->self_cpu_time_total_ns, from.self_cpu_time_total_ns);
  into->cpu_time_total_ns = internal::SatAdd(into->cpu_time_total_ns, from.cpu_time_total_ns);
  into->self_device_time_total_ns =
      internal::SatAdd(into->self_device_time_total_ns, from.self_device_time_total_ns);
  into->device_time_total_ns =
      internal::SatAdd(into->device_time_total_ns, from.device_time_total_ns);
  into->cpu_memory_usage = internal::SatAdd(into->cpu_memory_usage, from.cpu_memory_usage);
  into->self_cpu_memory_usage =
      internal::SatAdd(into->self_cpu_memory_usage, from.self_cpu_memory_usage);
  into->device_memory_usage = internal::SatAdd(into->device_memory_usage, from.device_memory_usage);
  into->self_device_memory_usage =
      internal::SatAdd(into->self_device_memory_usage, from.self_device_memory_usage);
  into->flops = internal::SatAdd(into->flops, from.flops);
}

// The rows of every range merged in range order: a key's row is the one its first range made,
// with the others' figures added (integer sums, the same for any split) and the earliest first
// appearance.
RowSet MergeRowSets(std::vector<RowSet> parts) {
  RowSet out = std::move(parts.front());
  RowIndex index;
  for (uint32_t r = 0; r < out.keys.size(); ++r) {
    bool inserted = false;
    index.Find(out.keys[r], r, &inserted);
  }
  for (size_t p = 1; p < parts.size(); ++p) {
    RowSet& part = parts[p];
    for (size_t r = 0; r < part.rows.size(); ++r) {
      bool inserted = false;
      const uint32_t g =
          index.Find(part.keys[r], static_cast<uint32_t>(out.rows.size()), &inserted);
      if (inserted) {
        out.rows.push_back(std::move(part.rows[r]));
        out.first.push_back(part.first[r]);
        out.keys.push_back(part.keys[r]);
        continue;
      }
      AddRow(part.rows[r], &out.rows[g]);
      if (part.first[r] < out.first[g]) out.first[g] = part.first[r];
    }
  }
  return out;
}

std::string UpperCase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

}  // namespace

// Mirrors torch/autograd/profiler.py _parse_kineto_results and profiler_util.EventList
// (_populate_cpu_children, _remove_dup_nodes, key_averages), one step per function above; the
// work is linear after the trace's own sort.
template <typename Slices>
KeyAverages KeyAverages::Aggregate(const Trace& trace, const Slices& ids,
                                   const KeyAveragesOptions& options) {
  KeyAverages out;
  out.options_ = options;
  for (const auto& [reason, count] : trace.metadata().dropped) out.dropped_events_ += count;
  out.device_name_ = UpperCase(trace.metadata().device_type);

  EventList<Slices> events(trace, ids);
  // Ranges of whole tracks, run on `threads` threads; one range (the whole list) otherwise.
  int threads = 1;
  std::vector<SliceRange> ranges = {{0, events.n}};
  if constexpr (std::is_same_v<Slices, AllSlices>) {
    if (options.threads > 1 && events.n > 0) {
      threads = options.threads;
      ranges = internal::TrackRanges(trace, 4 * static_cast<size_t>(threads));
    }
  }
  auto each_range = [&](auto&& step) {
    internal::ParallelFor(threads, ranges.size(), [&](size_t p) { step(ranges[p]); });
  };
  if constexpr (std::is_same_v<Slices, AllSlices>) {
    if (threads > 1) {
      ClassifyEventsParallel(events, threads, ranges);
      out.unmatched_device_activity_ = AddKernelsParallel(events, threads, ranges);
    }
  }
  if (threads == 1) {
    ClassifyEvents(events);
    out.unmatched_device_activity_ = AddKernels(events);
  }
  each_range([&](SliceRange r) {
    FindCpuParents(events, r);
    MergeDuplicates(events, r);
    SumDeviceTotals(events, r);
  });
  const internal::MemoryEvents memory(trace);
  std::vector<int32_t> covered;
  const std::pair<uint32_t, uint32_t> memory_range = AttributeMemory(events, memory, &covered);
  out.has_memory_ = memory_range.first < memory_range.second;
  out.has_flops_ = RecordedWithFlops(trace);
  if (out.has_flops_) {
    events.flops.assign(events.n, 0);
    each_range([&](SliceRange r) { CountFlops(events, r); });
  }
  std::vector<RowSet> sets(ranges.size());
  internal::ParallelFor(threads, ranges.size(), [&](size_t p) {
    GroupRows(events, options, ranges[p], &sets[p]);
    SumRows(events, ranges[p], &sets[p].rows);
  });
  RowSet rows = MergeRowSets(std::move(sets));
  AddUnattributedMemory(memory, memory_range, covered, events.n, options, &rows.rows, &rows.first);
  out.rows_ = InAppearanceOrder(std::move(rows.rows), rows.first);
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
