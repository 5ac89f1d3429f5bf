#include "profiler/trace_builder.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "opscope/profiler.h"
#include "trace/clock.h"
#include "trace/json_escape.h"

namespace opscope::internal {
namespace {

constexpr int64_t kDeviceSortIndexBase = 16777216;

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string ProcessName() {
  return program_invocation_short_name != nullptr ? program_invocation_short_name : "opscope";
}

}  // namespace

Trace BuildTrace(Recording rec, TraceBuildOptions options) {
  Trace trace;
  TraceMetadata& meta = trace.metadata();
  meta.base_time_ns = MonotonicToEpochNs(rec.start_ns);
  meta.trace_name = options.trace_name;
  const int64_t origin_ns = rec.start_ns;
  const auto rel = [origin_ns](int64_t host_ns) { return host_ns - origin_ns; };

  const int64_t pid = getpid();
  const std::string process_name = ProcessName();
  const uint32_t host = trace.AddProcess(pid, process_name);
  trace.MutableProcess(host).sort_index = pid;
  std::unordered_map<uint64_t, uint32_t> host_track;
  auto thread_track = [&](uint64_t tid) {
    auto it = host_track.find(tid);
    if (it != host_track.end()) return it->second;
    std::string name = "thread " + std::to_string(tid) + " (" + process_name + ")";
    uint32_t t = trace.AddThreadTrack(host, static_cast<int64_t>(tid), name);
    trace.MutableTrack(t).sort_index = static_cast<int64_t>(tid);
    host_track.emplace(tid, t);
    return t;
  };

  // Host records.
  uint64_t dropped_host = 0, dropped_shapes = 0;
  std::unordered_set<uint64_t> op_correlations;
  std::unordered_map<uint32_t, StringId> name_ids;  // InternName id -> trace string id
  auto name_of = [&](uint32_t name) {
    auto it = name_ids.find(name);
    if (it != name_ids.end()) return it->second;
    StringId id = trace.Intern(NameOf(name));
    name_ids.emplace(name, id);
    return id;
  };
  std::map<uint32_t, uint32_t> counter_tracks;  // name -> track
  for (const ThreadRecords& t : rec.threads) {
    dropped_host += t.dropped;
    dropped_shapes += t.shapes_dropped;
    const uint32_t track = thread_track(t.tid);
    for (const Record& r : t.records) {
      const int64_t start = rel(rec.tick_clock.ToNs(r.start_ticks));
      switch (r.type()) {
        case RecordType::kRange: {
          Slice s;
          s.ts_ns = start;
          s.dur_ns = std::max<int64_t>(0, rel(rec.tick_clock.ToNs(r.end_ticks)) - start);
          s.name = name_of(r.name);
          s.kind = r.kind();
          s.category = trace.Intern(KinetoCategory(s.kind));
          s.track = track;
          s.external_id = static_cast<int64_t>(r.correlation());
          if (r.shapes != 0)
            s.input_shapes = trace.Intern(DecodeShapes(t.shape_words, r.shapes - 1));
          std::string args = "{\"External id\": " + std::to_string(s.external_id);
          if (r.shapes != 0) args += ", \"Input Dims\": " + std::string(trace.Str(s.input_shapes));
          args += "}";
          s.args = trace.AddArgs(args);
          op_correlations.insert(r.correlation());
          trace.AddSlice(s);
          break;
        }
        case RecordType::kInstant: {
          Instant i;
          i.ts_ns = start;
          i.name = name_of(r.name);
          i.category = trace.Intern("cpu_instant_event");
          i.track = track;
          trace.AddInstant(i);
          break;
        }
        case RecordType::kCounter: {
          auto it = counter_tracks.find(r.name);
          if (it == counter_tracks.end()) {
            uint32_t ct =
                trace.AddThreadTrack(host, -1 - static_cast<int64_t>(counter_tracks.size()),
                                     NameOf(r.name), TrackKind::kCounter);
            it = counter_tracks.emplace(r.name, ct).first;
          }
          trace.AddCounter({start, std::bit_cast<double>(r.end_ticks), it->second});
          break;
        }
      }
    }
  }
  for (const HostCounterSeries& series : options.counters) {
    if (series.samples.empty()) continue;
    uint32_t ct = trace.AddThreadTrack(host, -1000 - static_cast<int64_t>(trace.tracks().size()),
                                       series.name, TrackKind::kCounter);
    for (const HostCounterSample& s : series.samples) trace.AddCounter({rel(s.ns), s.value, ct});
  }

  // Device clocks.
  std::map<int32_t, ClockSync> syncs;
  for (const ClockSyncPoint& p : rec.syncs) syncs[p.device].AddPoint(p.host_ns, p.device_ticks);
  for (auto& [device, sync] : syncs) sync.Fit();
  auto to_host = [&](int32_t device, int64_t ticks) {
    if (!options.correlate_device_time) return ticks;
    auto it = syncs.find(device);
    return it == syncs.end() ? ticks : it->second.ToHost(ticks);
  };

  // Device processes and tracks.
  const DeviceDescription* desc = rec.devices.empty() ? nullptr : &rec.devices.front();
  const std::string device_type = desc != nullptr ? Upper(desc->name) : std::string("DEVICE");
  std::map<int32_t, uint32_t> device_process;
  std::map<std::pair<int32_t, int32_t>, uint32_t> device_track;
  auto stream_track = [&](const DeviceActivity& a) {
    auto key = std::make_pair(a.device, a.stream);
    auto it = device_track.find(key);
    if (it != device_track.end()) return it->second;
    auto pit = device_process.find(a.device);
    if (pit == device_process.end()) {
      std::string label = device_type + " " + std::to_string(a.device);
      std::string pname = desc != nullptr && !desc->process_name.empty()
                              ? desc->process_name + " " + std::to_string(a.device)
                              : label;
      uint32_t p = trace.AddProcess(a.device, pname, /*is_device=*/true);
      trace.MutableProcess(p).labels = trace.Intern(label);
      trace.MutableProcess(p).sort_index = kDeviceSortIndexBase + a.device;
      pit = device_process.emplace(a.device, p).first;
    }
    std::string lane;
    if (desc != nullptr && a.stream >= 0 &&
        static_cast<size_t>(a.stream) < desc->lane_names.size()) {
      lane = desc->lane_names[a.stream];
    } else {
      lane = "stream " + std::to_string(a.stream);
    }
    TrackKind kind =
        a.kind == ActivityKind::kInstruction ? TrackKind::kDeviceEngine : TrackKind::kDeviceStream;
    uint32_t t = trace.AddThreadTrack(pit->second, a.stream, lane, kind);
    trace.MutableTrack(t).sort_index = a.stream;
    device_track.emplace(key, t);
    return t;
  };

  // Device activity.
  uint64_t unmatched = 0;
  std::unordered_map<uint64_t, uint32_t> runtime_by_correlation;  // correlation -> slice
  std::vector<std::pair<uint64_t, uint32_t>> flow_targets;        // (correlation, slice)
  bool any_device = false;
  for (const DeviceActivity& a : rec.device) {
    Slice s;
    s.kind = a.kind;
    s.name = trace.Intern(a.name != nullptr ? a.name : "");
    s.category = trace.Intern(KinetoCategory(a.kind));
    s.external_id = static_cast<int64_t>(a.external_id);
    s.correlation = static_cast<int64_t>(a.correlation);
    std::string args;
    if (a.clock == ActivityClock::kHost) {
      s.track = thread_track(a.host_tid != 0       ? a.host_tid
                             : rec.threads.empty() ? CurrentThreadId()
                                                   : rec.threads[0].tid);
      s.ts_ns = rel(a.start);
      s.dur_ns = std::max<int64_t>(0, a.end - a.start);
      args = "{\"External id\": " + std::to_string(a.external_id) +
             ", \"correlation\": " + std::to_string(a.correlation) +
             ", \"device\": " + std::to_string(a.device);
    } else {
      any_device = true;
      s.track = stream_track(a);
      int64_t start = to_host(a.device, a.start);
      s.ts_ns = rel(start);
      s.dur_ns = std::max<int64_t>(0, to_host(a.device, a.end) - start);
      args = "{\"External id\": " + std::to_string(a.external_id) +
             ", \"device\": " + std::to_string(a.device) +
             ", \"stream\": " + std::to_string(a.stream) +
             ", \"correlation\": " + std::to_string(a.correlation);
      if (a.kind != ActivityKind::kInstruction && a.kind != ActivityKind::kDeviceAnnotation &&
          (a.external_id == 0 || !op_correlations.contains(a.external_id))) {
        unmatched += 1;
      }
    }
    // Backend-provided extra args: splice the members of its object in.
    std::string_view extra = a.args;
    while (!extra.empty() && (extra.front() == ' ' || extra.front() == '{')) extra.remove_prefix(1);
    while (!extra.empty() && (extra.back() == ' ' || extra.back() == '}')) extra.remove_suffix(1);
    if (!extra.empty()) args += ", " + std::string(extra);
    args += "}";
    s.args = trace.AddArgs(args);
    uint32_t index = trace.AddSlice(s);
    if (a.correlation != 0) {
      if (a.clock == ActivityClock::kHost &&
          (a.kind == ActivityKind::kRuntime || a.kind == ActivityKind::kDriver)) {
        runtime_by_correlation.emplace(a.correlation, index);
      } else if (a.kind == ActivityKind::kKernel || a.kind == ActivityKind::kMemcpy ||
                 a.kind == ActivityKind::kMemset) {
        flow_targets.emplace_back(a.correlation, index);
      }
    }
  }
  const StringId ac2g = trace.Intern("ac2g");
  for (const auto& [correlation, target] : flow_targets) {
    auto it = runtime_by_correlation.find(correlation);
    if (it == runtime_by_correlation.end()) continue;
    Flow f;
    f.id = correlation;
    f.category = ac2g;
    f.name = ac2g;
    f.from = it->second;
    f.to = target;
    trace.AddFlow(f);
  }

  if (any_device || !rec.device.empty()) meta.device_type = device_type;
  if (!device_process.empty()) {
    // Kineto lists its devices here; a NeuronCore has no CUDA-style properties beyond its name.
    std::string props = "[";
    for (const auto& [device, process] : device_process) {
      if (props.size() > 1) props += ", ";
      props += "{\"id\": " + std::to_string(device) +
               ", \"name\": " + JsonString(trace.Str(trace.processes()[process].name)) + "}";
    }
    props += "]";
    meta.extra.emplace_back("deviceProperties", props);
  }
  if (dropped_host > 0) meta.dropped.emplace_back("thread_buffer_full", dropped_host);
  if (rec.device_dropped_capacity > 0) {
    meta.dropped.emplace_back("device_buffer_full", rec.device_dropped_capacity);
  }
  if (rec.device_dropped_per_core > 0) {
    meta.dropped.emplace_back("max_events_per_nc", rec.device_dropped_per_core);
  }
  for (const auto& d : options.extra_dropped) {
    if (d.second > 0) meta.dropped.push_back(d);
  }
  if (dropped_shapes > 0) {
    meta.warnings.push_back(std::to_string(dropped_shapes) +
                            " ops were recorded without input shapes (shape arena full)");
  }
  if (unmatched > 0) {
    meta.extra.emplace_back("unmatchedCorrelations", std::to_string(unmatched));
  }
  if (options.record_shapes) meta.extra.emplace_back("record_shapes", "1");
  trace.Finalize();
  return trace;
}

}  // namespace opscope::internal
