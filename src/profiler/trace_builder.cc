// BuildTrace: a recording to the trace model, in named steps (see trace_builder.h).
#include "profiler/trace_builder.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "base/json_escape.h"
#include "opscope/profiler.h"
#include "profiler/memory_events.h"
#include "trace/clock.h"

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

// BuildTrace's steps over one recording; each Add* step fills part of the trace, Finish() writes
// the metadata and finalizes it. Times become ns relative to the recording's start.
class TraceFromRecording {
 public:
  TraceFromRecording(Recording rec, TraceBuildOptions options);

  // Host records: ranges (cpu_op / user_annotation slices with their External id and shapes),
  // instants and counters, one thread track per recording thread.
  void AddHostRecords();
  // Sampled host counters (/proc) as counter tracks of the host process.
  void AddHostCounters();
  // Device activity: host-clock activity on the calling thread's track; device-clock activity on
  // one track per (device, stream), mapped to host time through each device's ClockSync.
  void AddDeviceActivity();
  // ac2g flows from each runtime call to the kernel / memcpy / memset with its correlation.
  void AddLaunchFlows();
  // Metadata (device type, deviceProperties, drop counts, unmatched correlations), Finalize.
  Trace Finish();

 private:
  int64_t Rel(int64_t host_ns) const { return host_ns - rec_.start_ns; }
  uint32_t ThreadTrack(uint64_t tid);
  // The trace string of a recorded name id (InternName), interned once per id.
  StringId Name(uint32_t name);
  void AddRange(const ThreadRecords& t, const Record& r, uint32_t track, int64_t start);
  // A "[memory]" instant from a kMemory record and its kMemoryTotals record.
  void AddMemoryEvent(const Record& r, const Record& totals, uint32_t track, int64_t start);
  void FitDeviceClocks();
  int64_t ToHost(int32_t device, int64_t ticks) const;
  uint32_t StreamTrack(const DeviceActivity& a);
  uint32_t DeviceProcess(int32_t device);
  // The args object text of one device activity (its backend's extra args spliced in).
  std::string DeviceArgs(const DeviceActivity& a) const;

  Recording rec_;
  TraceBuildOptions options_;
  Trace trace_;
  std::string process_name_;
  uint32_t host_ = 0;
  const DeviceDescription* desc_ = nullptr;
  std::string device_type_;
  std::unordered_map<uint64_t, uint32_t> host_track_;  // tid -> track
  std::unordered_map<uint32_t, StringId> name_ids_;    // InternName id -> trace string id
  std::map<uint32_t, uint32_t> counter_tracks_;        // record name -> track
  std::unordered_set<uint64_t> op_correlations_;
  uint64_t dropped_host_ = 0, dropped_shapes_ = 0, unmatched_ = 0;
  std::map<int32_t, ClockSync> syncs_;
  std::map<int32_t, uint32_t> device_process_;
  std::map<std::pair<int32_t, int32_t>, uint32_t> device_track_;
  std::unordered_map<uint64_t, uint32_t> runtime_by_correlation_;  // correlation -> slice
  std::vector<std::pair<uint64_t, uint32_t>> flow_targets_;        // (correlation, slice)
  bool any_device_ = false;
};

TraceFromRecording::TraceFromRecording(Recording rec, TraceBuildOptions options)
    : rec_(std::move(rec)), options_(std::move(options)), process_name_(ProcessName()) {
  TraceMetadata& meta = trace_.metadata();
  meta.base_time_ns = MonotonicToEpochNs(rec_.start_ns);
  meta.trace_name = options_.trace_name;
  const int64_t pid = getpid();
  host_ = trace_.AddProcess(pid, process_name_);
  trace_.MutableProcess(host_).sort_index = pid;
  desc_ = rec_.devices.empty() ? nullptr : &rec_.devices.front();
  device_type_ = desc_ != nullptr ? Upper(desc_->name) : std::string("DEVICE");
  FitDeviceClocks();
}

uint32_t TraceFromRecording::ThreadTrack(uint64_t tid) {
  auto it = host_track_.find(tid);
  if (it != host_track_.end()) return it->second;
  std::string name = "thread " + std::to_string(tid) + " (" + process_name_ + ")";
  uint32_t t = trace_.AddThreadTrack(host_, static_cast<int64_t>(tid), name);
  trace_.MutableTrack(t).sort_index = static_cast<int64_t>(tid);
  host_track_.emplace(tid, t);
  return t;
}

StringId TraceFromRecording::Name(uint32_t name) {
  auto it = name_ids_.find(name);
  if (it != name_ids_.end()) return it->second;
  StringId id = trace_.Intern(NameOf(name));
  name_ids_.emplace(name, id);
  return id;
}

void TraceFromRecording::AddHostRecords() {
  for (const ThreadRecords& t : rec_.threads) {
    dropped_host_ += t.dropped;
    dropped_shapes_ += t.shapes_dropped;
    const uint32_t track = ThreadTrack(t.tid);
    for (size_t k = 0; k < t.records.size(); ++k) {
      const Record& r = t.records[k];
      const int64_t start = Rel(rec_.tick_clock.ToNs(r.start_ticks));
      switch (r.type()) {
        case RecordType::kMemory:
          // Pushed with its totals record (PushPair), so the next record is that one.
          if (k + 1 < t.records.size() && t.records[k + 1].type() == RecordType::kMemoryTotals) {
            AddMemoryEvent(r, t.records[k + 1], track, start);
            ++k;
          }
          break;
        case RecordType::kMemoryTotals:  // consumed with its kMemory record
          break;
        case RecordType::kRange:
          AddRange(t, r, track, start);
          break;
        case RecordType::kInstant: {
          Instant i;
          i.ts_ns = start;
          i.name = Name(r.name);
          i.category = trace_.Intern("cpu_instant_event");
          i.track = track;
          trace_.AddInstant(i);
          break;
        }
        case RecordType::kCounter: {
          auto it = counter_tracks_.find(r.name);
          if (it == counter_tracks_.end()) {
            uint32_t ct =
                trace_.AddThreadTrack(host_, -1 - static_cast<int64_t>(counter_tracks_.size()),
                                      NameOf(r.name), TrackKind::kCounter);
            it = counter_tracks_.emplace(r.name, ct).first;
          }
          trace_.AddCounter({start, std::bit_cast<double>(r.end_ticks), it->second});
          break;
        }
      }
    }
  }
}

void TraceFromRecording::AddRange(const ThreadRecords& t, const Record& r, uint32_t track,
                                  int64_t start) {
  Slice s;
  s.ts_ns = start;
  s.dur_ns = std::max<int64_t>(0, Rel(rec_.tick_clock.ToNs(r.end_ticks)) - start);
  s.name = Name(r.name);
  s.kind = r.kind();
  s.category = trace_.Intern(KinetoCategory(s.kind));
  s.track = track;
  s.external_id = static_cast<int64_t>(r.correlation());
  if (r.shapes != 0) s.input_shapes = trace_.Intern(DecodeShapes(t.shape_words, r.shapes - 1));
  std::string args = "{\"External id\": " + std::to_string(s.external_id);
  if (r.shapes != 0) args += ", \"Input Dims\": " + std::string(trace_.Str(s.input_shapes));
  args += "}";
  s.args = trace_.AddArgs(args);
  op_correlations_.insert(r.correlation());
  trace_.AddSlice(s);
}

void TraceFromRecording::AddMemoryEvent(const Record& r, const Record& totals, uint32_t track,
                                        int64_t start) {
  MemoryEvent e;
  e.ts_ns = start;
  e.track = track;
  e.total_reserved = static_cast<int64_t>(uint64_t{totals.name} | (uint64_t{totals.shapes} << 32));
  e.total_allocated = static_cast<int64_t>(totals.end_ticks);
  e.bytes = static_cast<int64_t>(totals.start_ticks);
  e.device_id = static_cast<int32_t>(r.shapes);
  e.device_type = static_cast<int32_t>(r.name);
  e.addr = r.end_ticks;
  internal::AddMemoryEvent(trace_, e);
}

void TraceFromRecording::AddHostCounters() {
  for (const HostCounterSeries& series : options_.counters) {
    if (series.samples.empty()) continue;
    uint32_t ct = trace_.AddThreadTrack(host_, -1000 - static_cast<int64_t>(trace_.tracks().size()),
                                        series.name, TrackKind::kCounter);
    for (const HostCounterSample& s : series.samples) trace_.AddCounter({Rel(s.ns), s.value, ct});
  }
}

void TraceFromRecording::FitDeviceClocks() {
  for (const ClockSyncPoint& p : rec_.syncs) syncs_[p.device].AddPoint(p.host_ns, p.device_ticks);
  for (auto& [device, sync] : syncs_) sync.Fit();
}

int64_t TraceFromRecording::ToHost(int32_t device, int64_t ticks) const {
  if (!options_.correlate_device_time) return ticks;
  auto it = syncs_.find(device);
  return it == syncs_.end() ? ticks : it->second.ToHost(ticks);
}

uint32_t TraceFromRecording::DeviceProcess(int32_t device) {
  auto it = device_process_.find(device);
  if (it != device_process_.end()) return it->second;
  std::string label = device_type_ + " " + std::to_string(device);
  std::string name = desc_ != nullptr && !desc_->process_name.empty()
                         ? desc_->process_name + " " + std::to_string(device)
                         : label;
  uint32_t p = trace_.AddProcess(device, name, /*is_device=*/true);
  trace_.MutableProcess(p).labels = trace_.Intern(label);
  trace_.MutableProcess(p).sort_index = kDeviceSortIndexBase + device;
  device_process_.emplace(device, p);
  return p;
}

uint32_t TraceFromRecording::StreamTrack(const DeviceActivity& a) {
  auto key = std::make_pair(a.device, a.stream);
  auto it = device_track_.find(key);
  if (it != device_track_.end()) return it->second;
  const uint32_t process = DeviceProcess(a.device);
  std::string lane;
  if (desc_ != nullptr && a.stream >= 0 &&
      static_cast<size_t>(a.stream) < desc_->lane_names.size()) {
    lane = desc_->lane_names[a.stream];
  } else if (a.kind == ActivityKind::kSync && a.stream < 0) {
    lane = "synchronization";  // a device-wide sync (Kineto's Context Sync, tid -1)
  } else {
    lane = "stream " + std::to_string(a.stream);
  }
  TrackKind kind =
      a.kind == ActivityKind::kInstruction ? TrackKind::kDeviceEngine : TrackKind::kDeviceStream;
  uint32_t t = trace_.AddThreadTrack(process, a.stream, lane, kind);
  trace_.MutableTrack(t).sort_index = a.stream;
  device_track_.emplace(key, t);
  return t;
}

std::string TraceFromRecording::DeviceArgs(const DeviceActivity& a) const {
  std::string args;
  if (a.clock == ActivityClock::kHost) {
    args = "{\"External id\": " + std::to_string(a.external_id) +
           ", \"correlation\": " + std::to_string(a.correlation) +
           ", \"device\": " + std::to_string(a.device);
  } else {
    args = "{\"External id\": " + std::to_string(a.external_id) +
           ", \"device\": " + std::to_string(a.device) +
           ", \"stream\": " + std::to_string(a.stream) +
           ", \"correlation\": " + std::to_string(a.correlation);
  }
  // Backend-provided extra args: splice the members of its object in.
  std::string_view extra = a.args;
  while (!extra.empty() && (extra.front() == ' ' || extra.front() == '{')) extra.remove_prefix(1);
  while (!extra.empty() && (extra.back() == ' ' || extra.back() == '}')) extra.remove_suffix(1);
  if (!extra.empty()) args += ", " + std::string(extra);
  args += "}";
  return args;
}

void TraceFromRecording::AddDeviceActivity() {
  for (const DeviceActivity& a : rec_.device) {
    Slice s;
    s.kind = a.kind;
    s.name = trace_.Intern(a.name != nullptr ? a.name : "");
    s.category = trace_.Intern(KinetoCategory(a.kind));
    s.external_id = static_cast<int64_t>(a.external_id);
    s.correlation = static_cast<int64_t>(a.correlation);
    if (a.clock == ActivityClock::kHost) {
      s.track = ThreadTrack(a.host_tid != 0        ? a.host_tid
                            : rec_.threads.empty() ? CurrentThreadId()
                                                   : rec_.threads[0].tid);
      s.ts_ns = Rel(a.start);
      s.dur_ns = std::max<int64_t>(0, a.end - a.start);
    } else {
      any_device_ = true;
      s.track = StreamTrack(a);
      int64_t start = ToHost(a.device, a.start);
      s.ts_ns = Rel(start);
      s.dur_ns = std::max<int64_t>(0, ToHost(a.device, a.end) - start);
      if (a.kind != ActivityKind::kInstruction && a.kind != ActivityKind::kDeviceAnnotation &&
          a.kind != ActivityKind::kSync &&
          (a.external_id == 0 || !op_correlations_.contains(a.external_id))) {
        unmatched_ += 1;
      }
    }
    s.args = trace_.AddArgs(DeviceArgs(a));
    uint32_t index = trace_.AddSlice(s);
    if (a.correlation != 0) {
      if (a.clock == ActivityClock::kHost &&
          (a.kind == ActivityKind::kRuntime || a.kind == ActivityKind::kDriver)) {
        runtime_by_correlation_.emplace(a.correlation, index);
      } else if (a.kind == ActivityKind::kKernel || a.kind == ActivityKind::kMemcpy ||
                 a.kind == ActivityKind::kMemset) {
        flow_targets_.emplace_back(a.correlation, index);
      }
    }
  }
}

void TraceFromRecording::AddLaunchFlows() {
  const StringId ac2g = trace_.Intern("ac2g");
  for (const auto& [correlation, target] : flow_targets_) {
    auto it = runtime_by_correlation_.find(correlation);
    if (it == runtime_by_correlation_.end()) continue;
    Flow f;
    f.id = correlation;
    f.category = ac2g;
    f.name = ac2g;
    f.from = it->second;
    f.to = target;
    trace_.AddFlow(f);
  }
}

Trace TraceFromRecording::Finish() {
  TraceMetadata& meta = trace_.metadata();
  if (any_device_ || !rec_.device.empty()) meta.device_type = device_type_;
  if (!device_process_.empty()) {
    // Kineto lists its devices here; a NeuronCore has no CUDA-style properties beyond its name.
    std::string props = "[";
    for (const auto& [device, process] : device_process_) {
      if (props.size() > 1) props += ", ";
      props += "{\"id\": " + std::to_string(device) +
               ", \"name\": " + JsonString(trace_.Str(trace_.processes()[process].name)) + "}";
    }
    props += "]";
    meta.extra.emplace_back("deviceProperties", props);
  }
  if (dropped_host_ > 0) meta.dropped.emplace_back("thread_buffer_full", dropped_host_);
  if (rec_.device_dropped_capacity > 0) {
    meta.dropped.emplace_back("device_buffer_full", rec_.device_dropped_capacity);
  }
  if (rec_.device_dropped_per_core > 0) {
    meta.dropped.emplace_back("max_events_per_nc", rec_.device_dropped_per_core);
  }
  for (const auto& d : options_.extra_dropped) {
    if (d.second > 0) meta.dropped.push_back(d);
  }
  if (dropped_shapes_ > 0) {
    meta.warnings.push_back(std::to_string(dropped_shapes_) +
                            " ops were recorded without input shapes (shape arena full)");
  }
  if (unmatched_ > 0) meta.extra.emplace_back("unmatchedCorrelations", std::to_string(unmatched_));
  if (options_.record_shapes) meta.extra.emplace_back("record_shapes", "1");
  if (options_.with_flops) meta.extra.emplace_back("with_flops", "true");
  trace_.Finalize();
  return std::move(trace_);
}

}  // namespace

Trace BuildTrace(Recording rec, TraceBuildOptions options) {
  TraceFromRecording build(std::move(rec), std::move(options));
  build.AddHostRecords();
  build.AddHostCounters();
  build.AddDeviceActivity();
  build.AddLaunchFlows();
  return build.Finish();
}

}  // namespace opscope::internal
