// Idle time per device stream by cause, as HTA's get_idle_time_breakdown defines it
// (hta/analyzers/breakdown_analysis.py, _analyze_idle_time_for_stream):
//   - a stream's events are its kernels, memcpys and memsets (HTA leaves out the cuda_sync events
//     Kineto puts on a stream, and device annotations);
//   - sorted by start, each event's idle interval is its start minus the previous event's end
//     (the first event has none);
//   - host wait: the event's runtime call started after the previous event ended (the device ran
//     dry waiting for the host to enqueue);
//   - kernel wait: otherwise, when the interval is under consecutive_kernel_delay, which HTA
//     compares with the trace's microseconds (default 30 us: the overhead of back-to-back
//     launches);
//   - other: the rest (e.g. waiting on an event from another stream).
// As in HTA, an interval is signed: an event that starts before the previous one ended gives a
// negative interval, counted as kernel wait.
// Times stay integer nanoseconds; the threshold is compared in nanoseconds (exact for whole us).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "analysis/device_activity.h"
#include "opscope/perf_analysis.h"

namespace opscope {
namespace {

// HTA's kernel categories: kernels (MTIA's ccp events too), memcpys and memsets.
bool OnStream(const Trace& trace, const Slice& s) {
  return analysis::IsTimelineActivity(s.kind) && s.track < trace.tracks().size();
}

// Start of the runtime call that launched a device event, or nullopt. HTA joins each device
// event with the host event its correlation id names; an id that names none (the launch came
// before profiling started) joins with the trace's first event in file order. Kineto writes the
// profiler's host activities (ops, annotations, runtime calls) first, in start order, and Python
// functions after them: the earliest such host slice stands for that first event here.
class RuntimeStart {
 public:
  explicit RuntimeStart(const Trace& trace) : trace_(trace) {}
  std::optional<int64_t> Of(uint32_t event) {
    const auto& slices = trace_.slices();
    const uint32_t rt = trace_.Link(event).runtime;
    if (rt != kNone) return slices[rt].ts_ns;
    const int64_t corr = slices[event].correlation;
    if (corr == 0) return std::nullopt;  // no correlation recorded: no host wait
    if (!indexed_) Index();
    auto it = by_correlation_.find(corr);
    if (it != by_correlation_.end()) return it->second;
    return first_host_;
  }

 private:
  void Index() {
    indexed_ = true;
    for (const Slice& s : trace_.slices()) {
      if ((s.kind == ActivityKind::kRuntime || s.kind == ActivityKind::kDriver) &&
          s.correlation != 0) {
        by_correlation_.emplace(s.correlation, s.ts_ns);
      }
      const bool activity = s.kind == ActivityKind::kCpuOp ||
                            s.kind == ActivityKind::kUserAnnotation ||
                            s.kind == ActivityKind::kRuntime || s.kind == ActivityKind::kDriver;
      if (activity && s.track < trace_.tracks().size() && !IsDeviceTrack(s.track)) {
        first_host_ = first_host_ ? std::min(*first_host_, s.ts_ns) : s.ts_ns;
      }
    }
  }
  bool IsDeviceTrack(uint32_t track) const {
    const Track& t = trace_.tracks()[track];
    return t.kind != TrackKind::kThread ||
           (t.process < trace_.processes().size() && trace_.processes()[t.process].is_device);
  }
  const Trace& trace_;
  bool indexed_ = false;
  std::unordered_map<int64_t, int64_t> by_correlation_;
  std::optional<int64_t> first_host_;
};

}  // namespace

IdleBreakdown ComputeIdleBreakdown(const Trace& trace, const IdleBreakdownOptions& options) {
  IdleBreakdown out;
  out.consecutive_kernel_delay_us = options.consecutive_kernel_delay_us;
  const double delay_ns = options.consecutive_kernel_delay_us * 1e3;
  const auto& slices = trace.slices();
  // Events per (device pid, HTA's stream), each stream's id read once per track.
  std::map<std::pair<int64_t, int64_t>, std::vector<uint32_t>> streams;
  std::map<std::pair<int64_t, int64_t>, uint32_t> track_of;
  std::unordered_map<uint32_t, std::pair<int64_t, int64_t>> key_of_track;
  for (uint32_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    if (!OnStream(trace, s)) continue;
    auto it = key_of_track.find(s.track);
    if (it == key_of_track.end()) {
      const Track& t = trace.tracks()[s.track];
      const int64_t pid =
          t.process < trace.processes().size() ? trace.processes()[t.process].pid : 0;
      int64_t stream = t.tid;
      if (const auto arg = trace.FindArg(s.args, "stream")) {
        char* end = nullptr;
        const long long v = std::strtoll(arg->c_str(), &end, 10);
        if (end != arg->c_str()) stream = v;
      }
      it = key_of_track.emplace(s.track, std::pair{pid, stream}).first;
      track_of.try_emplace(it->second, s.track);
    }
    streams[it->second].push_back(i);
  }
  RuntimeStart runtime(trace);
  for (auto& [key, events] : streams) {
    std::stable_sort(events.begin(), events.end(),
                     [&](uint32_t a, uint32_t b) { return slices[a].ts_ns < slices[b].ts_ns; });
    StreamIdle idle;
    idle.device = key.first;
    idle.stream = key.second;
    idle.track = track_of[key];
    for (size_t k = 1; k < events.size(); ++k) {
      const Slice& prev = slices[events[k - 1]];
      const Slice& cur = slices[events[k]];
      const int64_t prev_end = prev.ts_ns + prev.dur_ns;
      const int64_t interval = cur.ts_ns - prev_end;
      const auto launched = runtime.Of(events[k]);
      if (launched && *launched > prev_end) {
        idle.host_wait_ns += interval;
        ++idle.host_wait_intervals;
      } else if (static_cast<double>(interval) < delay_ns) {
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
