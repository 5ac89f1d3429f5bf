// ComputeNeuronDevice: the NeuronCore section's figures from a trace's engine and DMA lanes, and
// the agreement checks against the profile's own Summary / OpcodeSummary rows.
#include "opscope/neuron_device.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/device_activity.h"
#include "base/huge_array.h"

namespace opscope {
namespace {

using analysis::Interval;
using analysis::Length;
using analysis::MergeIntervals;
using analysis::UnionLength;

// The lane and counter names both writers use (src/import/neuron/neuron_trace_builder.h,
// src/device/neuron/device.cc); the analysis layer does not include the importer.
constexpr std::string_view kExecutionLane = "nc_exec (execution queue)";
constexpr std::string_view kPhasesLane = "execution phases";
constexpr std::string_view kDmaLanePrefix = "DMA queue ";
constexpr std::string_view kHbmInUseCounter = "HBM bytes in use";
constexpr std::string_view kProfileInfoKey = "neuronProfile";
constexpr std::string_view kPcoreSuffix = " (physical core ";

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "bytes" of a DMA slice's args ({"bytes": N}); 0 when absent.
int64_t ArgBytes(const Trace& trace, uint32_t args) {
  if (args == kNone) return 0;
  const std::string json = trace.ArgsJson(args);
  const size_t at = json.find("\"bytes\"");
  if (at == std::string::npos) return 0;
  size_t p = json.find(':', at);
  if (p == std::string::npos) return 0;
  ++p;
  while (p < json.size() && json[p] == ' ') ++p;
  int64_t v = 0;
  std::from_chars(json.data() + p, json.data() + json.size(), v);
  return v;
}

// One NeuronCore's figures while the slices are read.
struct DeviceAcc {
  std::vector<Interval> executions, extent, dma;
  int64_t dma_bytes = 0;
  int64_t dma_busy_ns = 0;  // the union of `dma`, once computed
};
using OpcodeKeyOfDevice = std::tuple<std::string, std::string, std::string>;

// What the profile says of itself (the reader's neuronProfile object), parsed once.
struct ProfileInfo {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  bool ok = false;
  explicit ProfileInfo(const Trace& trace) {
    for (const auto& [key, value] : trace.metadata().extra) {
      if (key != kProfileInfoKey) continue;
      ok = parser.parse(value).get(root) == simdjson::SUCCESS && root.is_object();
      return;
    }
  }
  std::map<std::string, std::string> EngineLanes() const {
    std::map<std::string, std::string> lanes;
    simdjson::dom::object o;
    if (!ok || root["engine_lanes"].get(o) != simdjson::SUCCESS) return lanes;
    for (auto field : o) {
      std::string_view v;
      if (field.value.get(v) == simdjson::SUCCESS) lanes[std::string(field.key)] = std::string(v);
    }
    return lanes;
  }
  double MetadataGbps(const char* field) const {
    double bytes_per_s = 0;
    if (!ok || root["metadata"][field].get(bytes_per_s) != simdjson::SUCCESS) return 0;
    return bytes_per_s / 1e9;
  }
};

// The engine a lane belongs to: the profile's mapping, else the lane's own name.
std::string EngineOf(std::string_view lane, const std::map<std::string, std::string>& mapped) {
  auto it = mapped.find(std::string(lane));
  return it != mapped.end() ? it->second : std::string(lane);
}

bool Agree(bool exact, double profile, double computed) {
  if (exact) return profile == computed;
  const double d = std::fabs(profile - computed);
  return d <= 1.0 || d <= 0.01 * std::fabs(profile);
}

void AddCheck(NeuronDeviceReport* r, const std::string& device, std::string figure, bool exact,
              double profile, double computed) {
  r->checks.push_back(
      {device, std::move(figure), profile, computed, Agree(exact, profile, computed)});
}

// Summary rows: per-engine counts and active times, DMA bytes and active time.
void CheckSummaries(
    const ProfileInfo& info, NeuronDeviceReport* r, const std::map<std::string, DeviceAcc>& devices,
    std::map<std::pair<std::string, std::string>, std::vector<Interval>>* family_busy) {
  simdjson::dom::array rows;
  if (!info.ok || info.root["summaries"].get(rows) != simdjson::SUCCESS) return;
  for (simdjson::dom::element row : rows) {
    std::string_view device_view;
    if (row["device"].get(device_view) != simdjson::SUCCESS) continue;
    const std::string device(device_view);
    for (const char* family : {"tensor", "vector", "scalar", "gpsimd", "sync"}) {
      int64_t count = 0, computed_count = 0;
      for (const NeuronEngineStats& e : r->engines) {
        if (e.device == device && EngineKey(e.engine) == family) computed_count += e.instructions;
      }
      const std::string prefix = std::string(family) + "_engine_";
      if (row[prefix + "instruction_count"].get(count) == simdjson::SUCCESS) {
        AddCheck(r, device, "Summary." + prefix + "instruction_count", true,
                 static_cast<double>(count), static_cast<double>(computed_count));
      }
      double active_s = 0;
      if (row[prefix + "active_time"].get(active_s) == simdjson::SUCCESS) {
        auto it = family_busy->find({device, family});
        int64_t busy = 0;
        if (it != family_busy->end()) {
          MergeIntervals(&it->second);  // in place: the lists are not read otherwise
          busy = Length(it->second);
        }
        AddCheck(r, device, "Summary." + prefix + "active_time (ns)", false, active_s * 1e9,
                 static_cast<double>(busy));
      }
    }
    auto dma = devices.find(device);
    int64_t bytes = 0;
    if (row["dma_transfer_total_bytes"].get(bytes) == simdjson::SUCCESS) {
      AddCheck(r, device, "Summary.dma_transfer_total_bytes", true, static_cast<double>(bytes),
               static_cast<double>(dma == devices.end() ? 0 : dma->second.dma_bytes));
    }
    double dma_s = 0;
    if (row["dma_active_time"].get(dma_s) == simdjson::SUCCESS) {
      const int64_t busy = dma == devices.end() ? 0 : dma->second.dma_busy_ns;
      AddCheck(r, device, "Summary.dma_active_time (ns)", false, dma_s * 1e9,
               static_cast<double>(busy));
    }
  }
}

// OpcodeSummary rows: (engine, opcode) counts and instruction time against the slices'.
void CheckOpcodeSummaries(const ProfileInfo& info, NeuronDeviceReport* r,
                          const std::map<OpcodeKeyOfDevice, NeuronOpcodeStats>& by_dev) {
  simdjson::dom::array rows;
  if (!info.ok || info.root["opcode_summaries"].get(rows) != simdjson::SUCCESS) return;
  for (simdjson::dom::element row : rows) {
    std::string_view device, engine, opcode;
    int64_t count = 0, time_ns = 0;
    if (row["device"].get(device) || row["engine"].get(engine) || row["opcode"].get(opcode)) {
      continue;
    }
    auto it = by_dev.find({std::string(device), std::string(engine), std::string(opcode)});
    const NeuronOpcodeStats none;
    const NeuronOpcodeStats& s = it == by_dev.end() ? none : it->second;
    const std::string what = std::string(engine) + "/" + std::string(opcode);
    if (row["instruction_count"].get(count) == simdjson::SUCCESS) {
      AddCheck(r, std::string(device), "OpcodeSummary " + what + " instruction_count", true,
               static_cast<double>(count), static_cast<double>(s.count));
    }
    if (row["instruction_time_ns"].get(time_ns) == simdjson::SUCCESS) {
      AddCheck(r, std::string(device), "OpcodeSummary " + what + " instruction_time_ns", false,
               static_cast<double>(time_ns), static_cast<double>(s.total_ns));
    }
  }
}

}  // namespace

std::string EngineKey(std::string_view engine) {
  std::string_view base = engine, suffix;
  if (const size_t p = engine.find(kPcoreSuffix); p != std::string_view::npos) {
    base = engine.substr(0, p);
    suffix = engine.substr(p);
  }
  const std::string l = Lower(base);
  // Longest first: "tensormatrix" and "tensore" are both the tensor engine.
  static constexpr std::pair<std::string_view, std::string_view> kFamilies[] = {
      {"tensor", "tensor"}, {"pe", "tensor"},  {"vector", "vector"}, {"dve", "vector"},
      {"scalar", "scalar"}, {"act", "scalar"}, {"gpsimd", "gpsimd"}, {"pool", "gpsimd"},
      {"sync", "sync"},     {"sp", "sync"},
  };
  for (const auto& [prefix, family] : kFamilies) {
    const bool whole = l == prefix || l == std::string(prefix) + "e";
    const bool long_prefix = prefix.size() > 3 && StartsWith(l, prefix);
    if (whole || long_prefix) return std::string(family) + std::string(suffix);
  }
  return l + std::string(suffix);
}

std::string OpcodeKey(std::string_view opcode) { return Lower(opcode); }

namespace {

struct EngineAcc {
  int64_t instructions = 0, total_ns = 0;
  std::vector<Interval> busy;
};

// The slices' figures, keyed by names once per track (not per slice).
struct Collected {
  std::map<std::string, DeviceAcc> devices;
  std::map<std::pair<std::string, std::string>, EngineAcc> engines;
  std::map<std::pair<std::string, std::string>, std::vector<Interval>> family_busy;
  std::map<OpcodeKeyOfDevice, NeuronOpcodeStats> opcodes_of_device;
  int64_t dma_lanes = 0;
};

// What a device track is to the section: its NeuronCore, and its engine (or DMA / executions).
struct LaneInfo {
  enum Kind : uint8_t { kSkip, kExecutions, kDma, kEngine } kind = kSkip;
  DeviceAcc* device = nullptr;
  EngineAcc* engine = nullptr;
  std::vector<Interval>* family = nullptr;
  std::string device_name, engine_name;
  std::unordered_map<StringId, NeuronOpcodeStats*> opcodes;
};

std::vector<LaneInfo> ClassifyLanes(const Trace& trace,
                                    const std::map<std::string, std::string>& engine_lanes,
                                    Collected* c) {
  std::vector<LaneInfo> lanes(trace.tracks().size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    const Track& t = trace.tracks()[i];
    if (t.process == kNone || !trace.processes()[t.process].is_device) continue;
    const std::string_view lane = trace.Str(t.name);
    if (lane == kPhasesLane || t.kind == TrackKind::kCounter) continue;
    LaneInfo& l = lanes[i];
    l.device_name = std::string(trace.Str(trace.processes()[t.process].name));
    l.device = &c->devices[l.device_name];
    if (lane == kExecutionLane) {
      l.kind = LaneInfo::kExecutions;
    } else if (StartsWith(lane, kDmaLanePrefix)) {
      l.kind = LaneInfo::kDma;
    } else {
      l.kind = LaneInfo::kEngine;
      l.engine_name = EngineOf(lane, engine_lanes);
      l.engine = &c->engines[{l.device_name, l.engine_name}];
      l.family = &c->family_busy[{l.device_name, EngineKey(l.engine_name)}];
    }
  }
  return lanes;
}

// Sizes every interval list CollectSlices fills, so each is allocated once (on huge pages when
// large) instead of growing by doubling: every doubling copied the list into fresh memory, which
// was 38,000 of the 50,000 page faults of a report on 3.3 million instructions. A lane's share is
// its track's slice count when its first slice is of the kind the lists take (a lane holds one
// kind: a GPU stream's kernels reserve nothing), from the finalized trace's track ranges; a lane
// that mixes kinds only reserves more than it fills.
void ReserveIntervals(const Trace& trace, const std::vector<LaneInfo>& lanes) {
  std::unordered_map<std::vector<Interval>*, size_t> sizes;
  for (uint32_t t = 0; t < lanes.size(); ++t) {
    const LaneInfo& l = lanes[t];
    if (l.kind == LaneInfo::kSkip) continue;
    const auto [begin, end] = trace.TrackSlices(t);
    if (begin == end) continue;
    const ActivityKind kind = trace.slices()[begin].kind;
    const size_t n = end - begin;
    if (l.kind == LaneInfo::kExecutions) {
      if (kind == ActivityKind::kKernel) sizes[&l.device->executions] += n;
      continue;
    }
    if (kind != ActivityKind::kInstruction) continue;
    sizes[&l.device->extent] += n;
    if (l.kind == LaneInfo::kDma) {
      sizes[&l.device->dma] += n;
    } else {
      sizes[&l.engine->busy] += n;
      sizes[l.family] += n;
    }
  }
  for (const auto& [list, n] : sizes) internal::ReserveHuge(list, list->size() + n);
}

void CollectSlices(const Trace& trace, const std::map<std::string, std::string>& engine_lanes,
                   NeuronDeviceReport* r, Collected* c) {
  std::vector<LaneInfo> lanes = ClassifyLanes(trace, engine_lanes, c);
  ReserveIntervals(trace, lanes);
  std::vector<bool> dma_used(lanes.size(), false);
  for (const Slice& s : trace.slices()) {
    if (s.track == kNone || lanes[s.track].kind == LaneInfo::kSkip) continue;
    LaneInfo& l = lanes[s.track];
    const Interval iv{s.ts_ns, s.ts_ns + s.dur_ns};
    if (l.kind == LaneInfo::kExecutions) {
      if (s.kind == ActivityKind::kKernel) l.device->executions.push_back(iv);
      continue;
    }
    if (s.kind != ActivityKind::kInstruction) continue;
    l.device->extent.push_back(iv);
    if (l.kind == LaneInfo::kDma) {
      l.device->dma.push_back(iv);
      const int64_t bytes = ArgBytes(trace, s.args);
      l.device->dma_bytes += bytes;
      r->dma.bytes += bytes;
      ++r->dma.packets;
      c->dma_lanes += dma_used[s.track] ? 0 : 1;
      dma_used[s.track] = true;
      continue;
    }
    ++l.engine->instructions;
    l.engine->total_ns += s.dur_ns;
    l.engine->busy.push_back(iv);
    l.family->push_back(iv);
    NeuronOpcodeStats*& o = l.opcodes[s.name];
    if (o == nullptr) {
      o = &c->opcodes_of_device[{l.device_name, l.engine_name, std::string(trace.Str(s.name))}];
      o->engine = l.engine_name;
      o->opcode = std::string(trace.Str(s.name));
    }
    ++o->count;
    o->total_ns += s.dur_ns;
  }
}

}  // namespace

NeuronDeviceReport ComputeNeuronDevice(const Trace& trace) {
  NeuronDeviceReport r;
  const ProfileInfo info(trace);
  Collected c;
  CollectSlices(trace, info.EngineLanes(), &r, &c);
  std::map<std::string, DeviceAcc>& devices = c.devices;
  // A device with executions only (no engine or DMA lanes) is not Neuron device activity.
  std::map<std::string, int64_t> span_of;
  for (auto& [device, d] : devices) {
    if (d.extent.empty()) continue;
    r.present = true;
    MergeIntervals(&d.executions);
    MergeIntervals(&d.extent);  // in place: the lists are not read otherwise
    int64_t span = Length(d.executions);
    if (span == 0) span = d.extent.back().end - d.extent.front().begin;
    span_of[device] = span;
    r.span_ns += span;
    MergeIntervals(&d.dma);
    d.dma_busy_ns = Length(d.dma);
    r.dma.busy_ns += d.dma_busy_ns;
  }
  r.dma.queues = c.dma_lanes;
  for (auto& [key, e] : c.engines) {
    if (e.instructions == 0) continue;
    NeuronEngineStats s{key.first,      key.second,
                        e.instructions, UnionLength(std::move(e.busy)),
                        e.total_ns,     span_of[key.first]};
    r.engines.push_back(std::move(s));
  }
  std::stable_sort(r.engines.begin(), r.engines.end(), [](const auto& a, const auto& b) {
    return a.device != b.device ? a.device < b.device : a.busy_ns > b.busy_ns;
  });
  std::map<std::pair<std::string, std::string>, NeuronOpcodeStats> opcodes;  // over devices
  for (const auto& [key, o] : c.opcodes_of_device) {
    NeuronOpcodeStats& sum = opcodes[{o.engine, o.opcode}];
    sum.engine = o.engine;
    sum.opcode = o.opcode;
    sum.count += o.count;
    sum.total_ns += o.total_ns;
  }
  for (auto& [key, o] : opcodes) r.opcodes.push_back(std::move(o));
  std::stable_sort(r.opcodes.begin(), r.opcodes.end(),
                   [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  r.dma.bandwidth_gbps = info.MetadataGbps("dma_ddr_bandwidth");
  r.hbm_bandwidth_gbps = info.MetadataGbps("hbm_ddr_bandwidth");
  for (const CounterSample& sample : trace.counters()) {
    if (sample.track == kNone ||
        !StartsWith(trace.Str(trace.tracks()[sample.track].name), kHbmInUseCounter)) {
      continue;
    }
    if (!r.has_hbm || sample.value > r.hbm_peak_bytes) {
      r.has_hbm = true;
      r.hbm_peak_bytes = sample.value;
      r.hbm_peak_ts_ns = sample.ts_ns;
    }
  }
  if (r.present) {
    CheckSummaries(info, &r, devices, &c.family_busy);
    CheckOpcodeSummaries(info, &r, c.opcodes_of_device);
  }
  return r;
}

}  // namespace opscope
