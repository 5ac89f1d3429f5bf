// MemoryLanes (memory_lanes.h): memory counter lanes per device, sampled for the viewport.
#include "explorer/memory_lanes.h"

#include <algorithm>

#include "base/saturating.h"

namespace opscope::explorer {

MemoryLanes::MemoryLanes(const Trace& trace)
    : timeline_(ComputeMemoryTimeline(trace, static_cast<size_t>(ReportOptions{}.rows))) {}

bool MemoryLanes::Extent(int64_t* first_ns, int64_t* last_ns) const {
  bool any = false;
  for (const DeviceMemory& d : timeline_.devices) {
    if (d.samples.empty()) continue;
    *first_ns = any ? std::min(*first_ns, d.samples.front().ts_ns) : d.samples.front().ts_ns;
    *last_ns = any ? std::max(*last_ns, d.samples.back().ts_ns) : d.samples.back().ts_ns;
    any = true;
  }
  return any;
}

void MemoryLanes::WriteDevice(size_t d, int64_t origin_ns, JsonWriter* w) const {
  const DeviceMemory& m = timeline_.devices[d];
  w->BeginObject();
  w->Field("device", m.device);
  w->Field("device_type", m.device_type);
  w->Field("device_id", m.device_id);
  w->Field("allocations", m.allocations);
  w->Field("frees", m.frees);
  w->Field("peak_allocated", m.peak_allocated);
  w->Field("peak_ts_ns", internal::SatSub(m.peak_ts_ns, origin_ns));
  w->Field("peak_reserved", m.peak_reserved);
  w->Field("samples", static_cast<uint64_t>(m.samples.size()));
  w->Key("holders_at_peak");
  w->BeginArray();
  for (const MemoryHolder& h : m.holders_at_peak) {
    w->BeginObject();
    w->Field("op", h.op);
    w->Field("bytes", h.bytes);
    w->Field("allocations", h.allocations);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void MemoryLanes::WritePoints(size_t d, int64_t t0_ns, int64_t t1_ns, int64_t bucket_ns,
                              int64_t origin_ns, JsonWriter* w) const {
  const std::vector<DeviceMemory::Sample>& s = timeline_.devices[d].samples;
  bucket_ns = std::max<int64_t>(1, bucket_ns);
  size_t i =
      std::upper_bound(s.begin(), s.end(), t0_ns,
                       [](int64_t t, const DeviceMemory::Sample& x) { return t < x.ts_ns; }) -
      s.begin();
  if (i > 0) --i;  // the sample in force at t0
  w->BeginArray();
  while (i < s.size() && s[i].ts_ns <= t1_ns) {
    const int64_t bucket_ts = s[i].ts_ns;
    const int64_t bucket_end = internal::SatAdd(bucket_ts, bucket_ns);
    int64_t lo = s[i].allocated, hi = s[i].allocated, reserved = s[i].reserved;
    size_t j = i + 1;
    for (; j < s.size() && s[j].ts_ns < bucket_end; ++j) {
      lo = std::min(lo, s[j].allocated);
      hi = std::max(hi, s[j].allocated);
      reserved = std::max(reserved, s[j].reserved);
    }
    w->BeginArray();
    for (int64_t v : {internal::SatSub(bucket_ts, origin_ns), lo, hi, s[j - 1].allocated, reserved,
                      s[j - 1].reserved})
      w->Int(v);
    w->EndArray();
    i = j;
  }
  w->EndArray();
}

}  // namespace opscope::explorer
