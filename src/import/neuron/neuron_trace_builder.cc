// The Neuron profile's place in the trace model (neuron_trace_builder.h).
#include "import/neuron/neuron_trace_builder.h"

#include <algorithm>
#include <cctype>

#include "base/json_writer.h"
#include "base/saturating.h"

namespace opscope::import::neuron {
namespace {

// Sort indices: the execution queue first, collectives next, then engines and DMA queues in the
// order the profile first uses them.
constexpr int64_t kEngineSortBase = 100;
constexpr int64_t kDmaSortBase = 100000;
// Past the first instance, process ids are offset so that hosts' pids and devices' indices stay
// distinct (docs/neuron-profiles.md).
constexpr int64_t kHostPidStride = 1000000000;
constexpr int64_t kDevicePidStride = 1000;

std::string PcoreSuffix(int64_t pcore) {
  return pcore > 0 ? " (physical core " + std::to_string(pcore) + ")" : "";
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool Digits(std::string_view s, size_t pos, size_t n, int64_t* out) {
  if (pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

bool ParseTimestamp(std::string_view s, int64_t* epoch_ns) {
  int64_t y, mo, d, h, mi, sec;
  if (!Digits(s, 0, 4, &y) || s.size() < 19 || s[4] != '-' || !Digits(s, 5, 2, &mo) ||
      s[7] != '-' || !Digits(s, 8, 2, &d) || (s[10] != ' ' && s[10] != 'T') ||
      !Digits(s, 11, 2, &h) || s[13] != ':' || !Digits(s, 14, 2, &mi) || s[16] != ':' ||
      !Digits(s, 17, 2, &sec) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
      sec > 60) {
    return false;
  }
  size_t pos = 19;
  int64_t frac_ns = 0;
  if (pos < s.size() && s[pos] == '.') {
    int64_t scale = 100000000;
    for (++pos; pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])); ++pos) {
      frac_ns += (s[pos] - '0') * scale;
      scale /= 10;
    }
  }
  while (pos < s.size() && s[pos] == ' ') ++pos;
  int64_t offset_s = 0;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const int sign = s[pos] == '-' ? -1 : 1;
    int64_t oh, om;
    if (!Digits(s, pos + 1, 2, &oh)) return false;
    size_t mpos = pos + 3;
    if (mpos < s.size() && s[mpos] == ':') ++mpos;
    if (!Digits(s, mpos, 2, &om)) return false;
    offset_s = sign * (oh * 3600 + om * 60);
    pos = mpos + 2;
  } else if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  }
  while (pos < s.size() && s[pos] == ' ') ++pos;
  const std::string_view rest = s.substr(pos);
  if (!rest.empty() && rest != "UTC") return false;
  const int64_t days = DaysFromCivil(y, mo, d);
  if (days < -106751 || days > 106750) return false;  // outside int64 nanoseconds
  const int64_t seconds = days * 86400 + h * 3600 + mi * 60 + sec - offset_s;
  *epoch_ns = seconds * 1000000000 + frac_ns;
  return true;
}

NeuronTraceBuilder::NeuronTraceBuilder(Trace* trace) : trace_(trace) {}

void NeuronTraceBuilder::SetBaseTime(int64_t epoch_ns) {
  if (base_set_) return;
  base_ = epoch_ns;
  base_set_ = true;
  trace_->metadata().base_time_ns = epoch_ns;
}

int64_t NeuronTraceBuilder::ToTrace(int64_t epoch_ns) const {
  return internal::SatSub(epoch_ns, base_);
}

int NeuronTraceBuilder::InstanceIndex(std::string_view instance) {
  for (size_t i = 0; i < instances_.size(); ++i) {
    if (instances_[i] == instance) return static_cast<int>(i);
  }
  instances_.emplace_back(instance);
  return static_cast<int>(instances_.size() - 1);
}

uint32_t NeuronTraceBuilder::HostProcess(std::string_view instance, int64_t pid) {
  auto [it, inserted] = host_processes_.try_emplace({std::string(instance), pid}, 0);
  if (inserted) {
    const int64_t k = InstanceIndex(instance);
    const std::string name = instance.empty()
                                 ? "process " + std::to_string(pid)
                                 : std::string(instance) + "/PID:" + std::to_string(pid);
    it->second = trace_->AddProcess(internal::SatAdd(pid, k * kHostPidStride), name);
    trace_->MutableProcess(it->second).sort_index = pid;
  }
  return it->second;
}

uint32_t NeuronTraceBuilder::HostTrack(std::string_view instance, int64_t pid, int64_t tid) {
  auto [it, inserted] = host_tracks_.try_emplace({std::string(instance), pid, tid}, 0);
  if (inserted) {
    const uint32_t process = HostProcess(instance, pid);
    it->second = trace_->AddThreadTrack(process, tid, "thread " + std::to_string(tid));
    trace_->MutableTrack(it->second).sort_index = tid;
  }
  return it->second;
}

uint32_t NeuronTraceBuilder::Device(std::string_view instance, int64_t nc) {
  auto [it, inserted] = device_index_.try_emplace({std::string(instance), nc}, 0);
  if (inserted) {
    const int64_t k = InstanceIndex(instance);
    DeviceState d;
    const std::string name = "NeuronCore " + std::to_string(nc) +
                             (instance.empty() ? "" : " (" + std::string(instance) + ")");
    d.process = trace_->AddProcess(k * kDevicePidStride + nc, name, /*is_device=*/true);
    Process& p = trace_->MutableProcess(d.process);
    p.labels = trace_->Intern("NEURON " + std::to_string(nc));
    p.sort_index = (int64_t{1} << 24) + k * kDevicePidStride + nc;  // after the hosts
    it->second = static_cast<uint32_t>(devices_.size());
    devices_.push_back(std::move(d));
  }
  return it->second;
}

uint32_t NeuronTraceBuilder::DeviceLane(uint32_t device, const std::string& name,
                                        int64_t sort_index) {
  auto [it, inserted] = lanes_.try_emplace({device, name}, 0);
  if (inserted) {
    DeviceState& d = devices_[device];
    const int64_t tid = name == kExecutionLane ? 0 : name == kCollectivesLane ? 1 : d.next_tid++;
    const TrackKind kind = tid <= 1 ? TrackKind::kDeviceStream : TrackKind::kDeviceEngine;
    it->second = trace_->AddThreadTrack(d.process, tid, name, kind);
    trace_->MutableTrack(it->second).sort_index = sort_index >= 0 ? sort_index : tid;
  }
  return it->second;
}

uint32_t NeuronTraceBuilder::ExecutionTrack(uint32_t device) {
  return DeviceLane(device, std::string(kExecutionLane), 0);
}

uint32_t NeuronTraceBuilder::CollectiveTrack(uint32_t device) {
  return DeviceLane(device, std::string(kCollectivesLane), 1);
}

uint32_t NeuronTraceBuilder::EngineTrack(uint32_t device, int64_t pcore, std::string_view lane,
                                         std::string_view engine) {
  std::string name = std::string(lane.empty() ? engine : lane) + PcoreSuffix(pcore);
  const auto key = std::make_pair(device, name);
  if (auto it = lanes_.find(key); it != lanes_.end()) return it->second;
  const int64_t sort = kEngineSortBase + pcore * kDmaSortBase + devices_[device].next_tid;
  if (!engine.empty() && lane != engine && !lane.empty()) {
    engine_of_lane_.try_emplace(name, std::string(engine));
  }
  return DeviceLane(device, name, sort);
}

uint32_t NeuronTraceBuilder::DmaTrack(uint32_t device, int64_t pcore, std::string_view queue) {
  std::string name = std::string(kDmaLanePrefix) + std::string(queue) + PcoreSuffix(pcore);
  const auto key = std::make_pair(device, name);
  if (auto it = lanes_.find(key); it != lanes_.end()) return it->second;
  return DeviceLane(device, name, kDmaSortBase * (2 * pcore + 1) + devices_[device].next_tid);
}

uint32_t NeuronTraceBuilder::CounterTrack(uint32_t process, std::string_view name) {
  auto [it, inserted] = counters_.try_emplace({process, std::string(name)}, 0);
  if (inserted) {
    it->second = trace_->AddThreadTrack(process, next_counter_tid_++, name, TrackKind::kCounter);
  }
  return it->second;
}

void NeuronTraceBuilder::AddExecution(uint32_t device, const Execution& e) {
  devices_[device].executions.push_back(e);
}

void NeuronTraceBuilder::SortExecutions() {
  for (DeviceState& d : devices_) {
    std::stable_sort(d.executions.begin(), d.executions.end(),
                     [](const Execution& a, const Execution& b) { return a.start < b.start; });
  }
}

const Execution* NeuronTraceBuilder::FindExecution(uint32_t device, int64_t ts) const {
  size_t hint = 0;
  return SearchExecution(device, ts, &hint);
}

const Execution* NeuronTraceBuilder::SearchExecution(uint32_t device, int64_t ts,
                                                     size_t* hint) const {
  const DeviceState& d = devices_[device];
  const std::vector<Execution>& e = d.executions;
  if (e.empty()) return nullptr;
  if (d.synthesized) return &e.front();
  const auto it = std::upper_bound(e.begin(), e.end(), ts,
                                   [](int64_t t, const Execution& x) { return t < x.start; });
  if (it == e.begin()) return nullptr;
  const size_t h = static_cast<size_t>(it - e.begin()) - 1;
  *hint = h;
  return ts <= e[h].end ? &e[h] : nullptr;
}

const Execution& NeuronTraceBuilder::SynthesizedExecution(uint32_t device) {
  return SynthesizedExecution(device, 0, 0);
}

const Execution& NeuronTraceBuilder::SynthesizedExecution(uint32_t device, int64_t external_id,
                                                          int64_t correlation) {
  DeviceState& d = devices_[device];
  if (d.executions.empty()) {
    d.synthesized = true;
    d.executions.push_back({0, 0, external_id != 0 ? external_id : NewExternalId(), correlation});
  }
  return d.executions.front();
}

void NeuronTraceBuilder::CoverActivity(uint32_t device, int64_t start, int64_t end) {
  DeviceState& d = devices_[device];
  if (!d.synthesized) return;
  Execution& e = d.executions.front();
  if (!d.covered) {
    e.start = start;
    e.end = end;
    d.covered = true;
  } else {
    e.start = std::min(e.start, start);
    e.end = std::max(e.end, end);
  }
}

void NeuronTraceBuilder::SetInfo(std::string key, std::string json_value) {
  info_[std::move(key)] = std::move(json_value);
}

void NeuronTraceBuilder::AppendInfo(const std::string& key, const std::string& json_items) {
  if (json_items.empty()) return;
  std::string& items = info_arrays_[key];
  items += (items.empty() ? "" : ", ") + json_items;
}

uint32_t NeuronTraceBuilder::ChipProcess(std::string_view instance, int64_t device_idx) {
  auto [it, inserted] = chips_.try_emplace({std::string(instance), device_idx}, 0);
  if (inserted) {
    const int64_t k = InstanceIndex(instance);
    const std::string name = "Neuron device " + std::to_string(device_idx) +
                             (instance.empty() ? "" : " (" + std::string(instance) + ")");
    it->second = trace_->AddProcess(k * kDevicePidStride + kDevicePidStride / 2 + device_idx, name,
                                    /*is_device=*/true);
    trace_->MutableProcess(it->second).sort_index =
        (int64_t{1} << 25) + k * kDevicePidStride + device_idx;
  }
  return it->second;
}

uint32_t NeuronTraceBuilder::InstanceProcess(std::string_view instance) {
  auto it = instance_processes_.find(instance);
  if (it != instance_processes_.end()) return it->second;
  const int64_t k = InstanceIndex(instance);
  const uint32_t process =
      trace_->AddProcess(internal::SatAdd(kHostPidStride - 1, k * kHostPidStride),
                         instance.empty() ? std::string("host") : std::string(instance));
  trace_->MutableProcess(process).sort_index = -1;  // above the host's processes
  instance_processes_.emplace(std::string(instance), process);
  return process;
}

void NeuronTraceBuilder::AddWarning(std::string message) {
  trace_->metadata().warnings.push_back(std::move(message));
}

void NeuronTraceBuilder::Finish() {
  const StringId exec_name = trace_->Intern("nc_exec_running");
  const StringId kernel = trace_->Intern(KinetoCategory(ActivityKind::kKernel));
  for (uint32_t i = 0; i < devices_.size(); ++i) {
    DeviceState& d = devices_[i];
    if (!d.synthesized || !d.covered) continue;
    const Execution& e = d.executions.front();
    Slice s;
    s.ts_ns = e.start;
    s.dur_ns = e.end - e.start;
    s.name = exec_name;
    s.category = kernel;
    s.kind = ActivityKind::kKernel;
    s.track = ExecutionTrack(i);
    s.external_id = e.external_id;
    s.correlation = e.correlation;
    s.args = trace_->AddArgs("{\"synthesized\": true}");
    trace_->AddSlice(s);
  }
  if (!engine_of_lane_.empty()) {
    JsonWriter w;
    w.BeginObject();
    for (const auto& [lane, engine] : engine_of_lane_) w.Field(lane, engine);
    w.EndObject();
    info_["engine_lanes"] = w.Take();
  }
  for (const auto& [key, items] : info_arrays_) info_[key] = "[" + items + "]";
  JsonWriter w;
  w.BeginObject();
  for (const auto& [key, value] : info_) {
    w.Key(key);
    w.Raw(value);
  }
  w.EndObject();
  trace_->metadata().extra.emplace_back(std::string(kProfileInfoKey), w.Take());
  trace_->metadata().device_type = "NEURON";
}

}  // namespace opscope::import::neuron
