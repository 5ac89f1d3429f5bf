// Idle time per device stream by cause, as HTA's get_idle_time_breakdown defines it
// (hta/analyzers/breakdown_analysis.py, _analyze_idle_time_for_stream):
//   - a stream's events are every device event with a stream: kernels, memcpys, memsets and the
//     CUDA synchronization events Kineto puts on the stream (not device annotations);
//   - sorted by start, each event's idle interval is its start minus the previous event's end
//     (the first event has none);
//   - host wait: the event's runtime call started after the previous event ended (the device ran
//     dry waiting for the host to enqueue);
//   - kernel wait: otherwise, when the interval is under consecutive_kernel_delay (HTA's default
//     30 ns: the overhead of back-to-back launches);
//   - other: the rest (e.g. waiting on an event from another stream).
// As in HTA, an interval is signed: an event that starts before the previous one ended gives a
// negative interval, counted as kernel wait.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/device_activity.h"
#include "opscope/perf_analysis.h"

namespace opscope {
namespace {

bool OnStream(const Trace& trace, const Slice& s) {
  if (IsDeviceActivity(s.kind))
    return s.kind != ActivityKind::kDeviceAnnotation && s.kind != ActivityKind::kInstruction;
  // Synchronization events ride on the device's tracks in Kineto traces (Context Sync on tid -1).
  if (s.kind != ActivityKind::kSync || s.track >= trace.tracks().size()) return false;
  const Track& t = trace.tracks()[s.track];
  return t.kind == TrackKind::kDeviceStream ||
         (t.process < trace.processes().size() && trace.processes()[t.process].is_device);
}

// Start of the runtime call that launched (or waited for) a device event, or nullopt.
class RuntimeStart {
 public:
  explicit RuntimeStart(const Trace& trace) : trace_(trace) {}
  std::optional<int64_t> Of(uint32_t event) {
    const auto& slices = trace_.slices();
    const uint32_t rt = trace_.Link(event).runtime;
    if (rt != kNone) return slices[rt].ts_ns;
    const int64_t corr = slices[event].correlation;
    if (corr == 0) return std::nullopt;
    if (by_correlation_.empty()) Index();
    auto it = by_correlation_.find(corr);
    if (it == by_correlation_.end()) return std::nullopt;
    return it->second;
  }

 private:
  void Index() {
    for (const Slice& s : trace_.slices()) {
      if ((s.kind == ActivityKind::kRuntime || s.kind == ActivityKind::kDriver) &&
          s.correlation != 0) {
        by_correlation_.emplace(s.correlation, s.ts_ns);
      }
    }
    by_correlation_.emplace(0, 0);  // indexed, even if empty
  }
  const Trace& trace_;
  std::unordered_map<int64_t, int64_t> by_correlation_;
};

}  // namespace

IdleBreakdown ComputeIdleBreakdown(const Trace& trace, int64_t consecutive_kernel_delay_ns) {
  IdleBreakdown out;
  out.consecutive_kernel_delay_ns = consecutive_kernel_delay_ns;
  const auto& slices = trace.slices();
  // Events per (device pid, stream tid); a stream is one device track.
  std::map<std::pair<int64_t, int64_t>, std::vector<uint32_t>> streams;
  for (uint32_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    if (!OnStream(trace, s) || s.track >= trace.tracks().size()) continue;
    const Track& t = trace.tracks()[s.track];
    const int64_t pid = t.process < trace.processes().size() ? trace.processes()[t.process].pid : 0;
    streams[{pid, t.tid}].push_back(i);
  }
  RuntimeStart runtime(trace);
  for (auto& [key, events] : streams) {
    std::stable_sort(events.begin(), events.end(),
                     [&](uint32_t a, uint32_t b) { return slices[a].ts_ns < slices[b].ts_ns; });
    StreamIdle idle;
    idle.device = key.first;
    idle.stream = key.second;
    for (size_t k = 1; k < events.size(); ++k) {
      const Slice& prev = slices[events[k - 1]];
      const Slice& cur = slices[events[k]];
      const int64_t prev_end = prev.ts_ns + prev.dur_ns;
      const int64_t interval = cur.ts_ns - prev_end;
      const auto launched = runtime.Of(events[k]);
      if (launched && *launched > prev_end) {
        idle.host_wait_ns += interval;
        ++idle.host_wait_intervals;
      } else if (interval < consecutive_kernel_delay_ns) {
        idle.kernel_wait_ns += interval;
        ++idle.kernel_wait_intervals;
      } else {
        idle.other_ns += interval;
        ++idle.other_intervals;
      }
    }
    out.streams.push_back(idle);
  }
  return out;
}

}  // namespace opscope
