// ComputeMemoryTimeline: allocated / reserved bytes over time per device from a profile_memory
// trace's "[memory]" events, the peak, and the ops holding the most at the peak.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "opscope/analysis.h"
#include "profiler/memory_events.h"

namespace opscope {
namespace {

// c10::DeviceType names, as torch prints devices ("cpu", "cuda:0"), upper-cased.
std::string DeviceLabel(const Trace& trace, int64_t type, int64_t id) {
  std::string name;
  switch (type) {
    case 0:
      return "CPU";
    case 1:
      name = "CUDA";
      break;
    case 2:
      return "MKLDNN";
    case 5:
      return "IDEEP";
    case 6:
      name = "HIP";
      break;
    case 12:
      name = "XPU";
      break;
    case 19:
      name = "MTIA";
      break;
    case 20:
      name = trace.metadata().device_type.empty() ? "PRIVATEUSE1" : trace.metadata().device_type;
      break;
    default:
      name = "DEVICE" + std::to_string(type);
      break;
  }
  return id >= 0 ? name + ":" + std::to_string(id) : name;
}

// The innermost cpu_op or user annotation on `track` whose [start, end] holds `ts`; kNone if
// none.
uint32_t EnclosingOp(const Trace& trace, uint32_t track, int64_t ts) {
  if (track >= trace.tracks().size()) return kNone;
  auto [begin, end] = trace.TrackSlices(track);
  const auto& slices = trace.slices();
  // The last slice starting at or before ts, then up its parents.
  uint32_t lo = begin, hi = end;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (slices[mid].ts_ns <= ts) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == begin) return kNone;
  // The nearest slice's parent chain holds every slice enclosing ts.
  for (uint32_t s = lo - 1; s != kNone; s = slices[s].parent) {
    const Slice& sl = slices[s];
    const bool host = sl.kind == ActivityKind::kCpuOp || sl.kind == ActivityKind::kUserAnnotation;
    if (host && internal::SatAdd(sl.ts_ns, sl.dur_ns) >= ts) return s;
  }
  return kNone;
}

void FindHolders(const Trace& trace, const std::vector<const internal::MemoryEvent*>& events,
                 size_t peak, size_t top, DeviceMemory* out) {
  struct Live {
    int64_t bytes;
    uint32_t op;
  };
  std::unordered_map<uint64_t, Live> live;
  for (size_t k = 0; k <= peak; ++k) {
    const internal::MemoryEvent& e = *events[k];
    if (e.bytes > 0) {
      live[e.addr] = {e.bytes, EnclosingOp(trace, e.track, e.ts_ns)};
    } else if (e.bytes < 0) {
      live.erase(e.addr);
    }
  }
  std::map<std::string, MemoryHolder> by_op;
  for (const auto& [addr, l] : live) {
    std::string op = l.op == kNone ? "(no op)" : std::string(trace.Str(trace.slices()[l.op].name));
    MemoryHolder& h = by_op[op];
    h.op = op;
    h.bytes = internal::SatAdd(h.bytes, l.bytes);
    h.allocations += 1;
  }
  for (auto& [op, h] : by_op) out->holders_at_peak.push_back(std::move(h));
  std::stable_sort(out->holders_at_peak.begin(), out->holders_at_peak.end(),
                   [](const MemoryHolder& a, const MemoryHolder& b) { return a.bytes > b.bytes; });
  if (out->holders_at_peak.size() > top) out->holders_at_peak.resize(top);
}

}  // namespace

MemoryTimeline ComputeMemoryTimeline(const Trace& trace, size_t top) {
  const internal::MemoryEvents memory(trace);
  MemoryTimeline out;
  out.events = memory.events().size();
  std::map<std::pair<int64_t, int64_t>, std::vector<const internal::MemoryEvent*>> by_device;
  for (const internal::MemoryEvent& e : memory.events()) {
    by_device[{e.device_type, e.device_id}].push_back(&e);
  }
  for (const auto& [key, events] : by_device) {
    DeviceMemory d;
    d.device_type = key.first;
    d.device_id = key.second;
    d.device = DeviceLabel(trace, key.first, key.second);
    int64_t running = 0;
    size_t peak = 0;
    for (size_t k = 0; k < events.size(); ++k) {
      const internal::MemoryEvent& e = *events[k];
      (e.bytes >= 0 ? d.allocations : d.frees) += 1;
      if (e.bytes >= 0) {
        d.allocated_bytes = internal::SatAdd(d.allocated_bytes, e.bytes);
      } else {
        d.freed_bytes = internal::SatSub(d.freed_bytes, e.bytes);
      }
      if (k == 0 && e.total_allocated >= 0) {
        d.allocated_at_start = internal::SatSub(e.total_allocated, e.bytes);
      }
      running = internal::SatAdd(running, e.bytes);
      const int64_t allocated = e.total_allocated >= 0 ? e.total_allocated : running;
      d.samples.push_back({e.ts_ns, allocated, e.total_reserved});
      if (k == 0 || allocated > d.peak_allocated) {
        d.peak_allocated = allocated;
        d.peak_ts_ns = e.ts_ns;
        peak = k;
      }
      d.peak_reserved = std::max(d.peak_reserved, e.total_reserved);
    }
    FindHolders(trace, events, peak, top, &d);
    out.devices.push_back(std::move(d));
  }
  return out;
}

std::string MemoryTimeline::ToJson(bool samples) const {
  JsonWriter w;
  w.BeginObject();
  w.Key("events");
  w.Uint(events);
  w.Key("devices");
  w.BeginArray();
  for (const DeviceMemory& d : devices) {
    w.BeginObject();
    w.Field("device", d.device);
    const std::pair<const char*, int64_t> fields[] = {
        {"device_type", d.device_type},
        {"device_id", d.device_id},
        {"allocations", d.allocations},
        {"frees", d.frees},
        {"allocated_bytes", d.allocated_bytes},
        {"freed_bytes", d.freed_bytes},
        {"allocated_at_start", d.allocated_at_start},
        {"peak_allocated", d.peak_allocated},
        {"peak_ts_ns", d.peak_ts_ns},
        {"peak_reserved", d.peak_reserved},
    };
    for (const auto& [k, v] : fields) {
      w.Key(k);
      w.Int(v);
    }
    w.Key("holders_at_peak");
    w.BeginArray();
    for (const MemoryHolder& h : d.holders_at_peak) {
      w.BeginObject();
      w.Field("op", h.op);
      w.Key("bytes");
      w.Int(h.bytes);
      w.Key("allocations");
      w.Int(h.allocations);
      w.EndObject();
    }
    w.EndArray();
    if (samples) {
      // [ts_ns, allocated, reserved] triples: compact for traces with many events.
      w.Key("samples");
      w.BeginArray();
      for (const DeviceMemory::Sample& s : d.samples) {
        w.BeginArray();
        w.Int(s.ts_ns);
        w.Int(s.allocated);
        w.Int(s.reserved);
        w.EndArray();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace opscope
