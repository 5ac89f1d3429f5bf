// The "[memory]" events of a trace (memory_events.h): read once, and their one writer.
#include "profiler/memory_events.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>

#include "base/saturating.h"

namespace opscope::internal {
namespace {

// An integer arg ("1204224", "-6144", "6"); nullopt when absent or not an integer.
std::optional<int64_t> IntArg(const Trace& trace, uint32_t args, std::string_view key) {
  std::optional<std::string> text = trace.FindArg(args, key);
  if (!text) return std::nullopt;
  int64_t v = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, v);
  if (ec != std::errc() || ptr != end) {
    // Some writers print integers as doubles ("1.2e+06").
    double d = 0;
    auto [dptr, dec] = std::from_chars(text->data(), end, d);
    if (dec != std::errc() || dptr != end || !(d >= -9.2e18 && d <= 9.2e18)) return std::nullopt;
    v = static_cast<int64_t>(d);
  }
  return v;
}

}  // namespace

void AddMemoryEvent(Trace& trace, const MemoryEvent& e) {
  Instant i;
  i.ts_ns = e.ts_ns;
  i.name = trace.Intern("[memory]");
  i.category = trace.Intern("cpu_instant_event");
  i.track = e.track;
  i.args = trace.AddArgs("{\"Total Reserved\": " + std::to_string(e.total_reserved) +
                         ", \"Total Allocated\": " + std::to_string(e.total_allocated) +
                         ", \"Bytes\": " + std::to_string(e.bytes) +
                         ", \"Device Id\": " + std::to_string(e.device_id) +
                         ", \"Device Type\": " + std::to_string(e.device_type) +
                         ", \"Addr\": " + std::to_string(e.addr) + "}");
  trace.AddInstant(i);
}

MemoryEvents::MemoryEvents(const Trace& trace) {
  const StringId name = trace.strings().Find("[memory]");
  if (name != kNone) {
    for (const Instant& i : trace.instants()) {
      if (i.name != name) continue;
      std::optional<int64_t> bytes = IntArg(trace, i.args, "Bytes");
      if (!bytes) continue;
      MemoryEvent e;
      e.ts_ns = i.ts_ns;
      e.bytes = *bytes;
      e.total_allocated = IntArg(trace, i.args, "Total Allocated").value_or(-1);
      e.total_reserved = IntArg(trace, i.args, "Total Reserved").value_or(-1);
      e.device_type = IntArg(trace, i.args, "Device Type").value_or(0);
      e.device_id = IntArg(trace, i.args, "Device Id").value_or(-1);
      e.addr = static_cast<uint64_t>(IntArg(trace, i.args, "Addr").value_or(0));
      e.track = i.track;
      events_.push_back(e);
    }
  }
  std::stable_sort(events_.begin(), events_.end(),
                   [](const MemoryEvent& a, const MemoryEvent& b) { return a.ts_ns < b.ts_ns; });
  ts_.reserve(events_.size());
  cpu_.assign(events_.size() + 1, 0);
  dev_.assign(events_.size() + 1, 0);
  for (size_t k = 0; k < events_.size(); ++k) {
    const MemoryEvent& e = events_[k];
    ts_.push_back(e.ts_ns);
    cpu_[k + 1] = SatAdd(cpu_[k], IsCpuMemoryDevice(e.device_type) ? e.bytes : 0);
    dev_[k + 1] = SatAdd(dev_[k], IsDeviceMemoryDevice(e.device_type) ? e.bytes : 0);
  }
}

std::pair<uint32_t, uint32_t> MemoryEvents::InInterval(int64_t lo_ts_ns, int64_t hi_ts_ns) const {
  auto lo = std::lower_bound(ts_.begin(), ts_.end(), lo_ts_ns);
  auto hi = std::upper_bound(lo, ts_.end(), hi_ts_ns);
  return {static_cast<uint32_t>(lo - ts_.begin()), static_cast<uint32_t>(hi - ts_.begin())};
}

}  // namespace opscope::internal
