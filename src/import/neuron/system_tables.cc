// A system profile's tables: SystemProfileMetadata (the clock), DeviceProfileList (which device
// profile ran where), SystemProfileEvents (framework, runtime and hardware events, linked by their
// flow ids, else by time) and SystemProfileHbmUsage (device memory in use).
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "import/kineto/event_category.h"
#include "import/neuron/explorer_profile.h"

namespace opscope::import::neuron {

constexpr int64_t kEpochNsFloor = int64_t{100000000} * 1000000000;

namespace {

// Union-find over events that share a flow id.
struct Groups {
  std::vector<size_t> parent;
  explicit Groups(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t Find(size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  void Join(size_t a, size_t b) { parent[Find(a)] = Find(b); }
};

// The value of "cat" or "category" in a JSON object's text, or "" (framework events carry
// torch.profiler's category among their extra attributes).
std::string CategoryOf(std::string_view json) {
  for (std::string_view key : {"\"cat\"", "\"category\""}) {
    size_t at = json.find(key);
    if (at == std::string_view::npos) continue;
    at = json.find(':', at + key.size());
    if (at == std::string_view::npos) continue;
    const size_t open = json.find('"', at);
    const size_t close = open == std::string_view::npos ? open : json.find('"', open + 1);
    if (close == std::string_view::npos) continue;
    return std::string(json.substr(open + 1, close - open - 1));
  }
  return "";
}

// Whether `s` is one valid JSON object (extra_attributes_json is a JSON string by the schema, but
// only valid JSON may go into an args object as it is).
bool IsJsonObject(simdjson::dom::parser& parser, std::string_view s) {
  simdjson::dom::object object;
  return s.size() < (size_t{1} << 20) &&
         parser.parse(s.data(), s.size()).get(object) == simdjson::SUCCESS;
}

}  // namespace

Status ExplorerProfile::ReadSystemMetadata(const ProfileDir& dir) {
  const std::vector<FieldRequest> fields = {{"first_ts_ns", FieldType::kString, true},
                                            {"hbm_capacity_bytes", FieldType::kInt}};
  std::unique_ptr<ProfileTable> t;
  if (Status st = OpenTable(dir, "SystemProfileMetadata", fields, &t); !st.ok() || !t) return st;
  TableRead read;
  read.fields = fields;
  read.merge = [&](const RowGroupView& rg, int) {
    if (rg.rows == 0) return Status::Ok();
    const std::string text(rg.field(0).Str(0));
    char* end = nullptr;
    const long long ns = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || end == nullptr || *end != '\0') {
      return TableError(rg, "first_ts_ns", "'" + text + "' is not Unix nanoseconds");
    }
    builder_->SetBaseTime(ns);
    if (!rg.field(1).IsNull(0)) {
      builder_->SetInfo("hbm_capacity_bytes", std::to_string(rg.field(1).Int(0)));
    }
    return Status::Ok();
  };
  ++stats_->metadata;
  return t->Read(read);
}

Status ExplorerProfile::ReadDeviceProfileList(const ProfileDir& dir) {
  const std::vector<FieldRequest> fields = {{"device_profile_name", FieldType::kString, true},
                                            {"instance_id", FieldType::kString, true},
                                            {"process_id", FieldType::kInt, true},
                                            {"nc_id", FieldType::kInt, true}};
  std::unique_ptr<ProfileTable> t;
  if (Status st = OpenTable(dir, "DeviceProfileList", fields, &t); !st.ok() || !t) return st;
  TableRead read;
  read.fields = fields;
  read.merge = [&](const RowGroupView& rg, int) {
    for (int64_t r = 0; r < rg.rows; ++r) {
      device_profiles[std::string(rg.field(0).Str(r))] = {std::string(rg.field(1).Str(r)),
                                                          rg.field(2).Int(r), rg.field(3).Int(r)};
    }
    return Status::Ok();
  };
  return t->Read(read);
}

// Links each hardware execution to its runtime call: by shared flow ids where the events have
// them; else the latest runtime event on the same instance and NeuronCore that began at or before
// it, preferring execution calls (a name containing "exec"). Framework events sharing a flow id
// with a runtime event take its External id.
void LinkEvents(std::vector<SystemEvent>* events, NeuronTraceBuilder* builder) {
  std::vector<SystemEvent>& ev = *events;
  Groups groups(ev.size());
  std::unordered_map<std::string, size_t> first_with_flow;
  for (size_t i = 0; i < ev.size(); ++i) {
    for (const std::string& f : ev[i].flows) {
      auto [it, inserted] = first_with_flow.try_emplace(f, i);
      if (!inserted) groups.Join(i, it->second);
    }
  }
  std::unordered_map<size_t, std::pair<int64_t, int64_t>> ids;  // group -> (external, corr)
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev[i].flows.empty()) continue;
    auto [it, inserted] = ids.try_emplace(groups.Find(i), 0, 0);
    if (inserted) it->second = {builder->NewExternalId(), builder->NewCorrelation()};
    ev[i].external_id = it->second.first;
    if (ev[i].source != kFramework) ev[i].correlation = it->second.second;
  }
  // The by-time rule, per (instance, NeuronCore), over runtime events in start order.
  std::map<std::pair<std::string, int64_t>, std::vector<size_t>> runtime;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev[i].source == kRuntime) runtime[{ev[i].instance, ev[i].nc}].push_back(i);
  }
  for (auto& [key, list] : runtime) {
    std::stable_sort(list.begin(), list.end(),
                     [&](size_t a, size_t b) { return ev[a].start < ev[b].start; });
  }
  for (SystemEvent& hw : ev) {
    if (hw.source != kHardware || hw.correlation != 0) continue;
    const auto it = runtime.find({hw.instance, hw.nc});
    size_t best = SIZE_MAX;
    if (it != runtime.end()) {
      for (auto j = it->second.rbegin(); j != it->second.rend(); ++j) {
        if (ev[*j].start > hw.start) continue;
        if (best == SIZE_MAX) best = *j;
        if (ev[*j].name.find("exec") != std::string::npos) {
          best = *j;
          break;
        }
        if (ev[best].start - ev[*j].start > hw.start - ev[best].start) break;
      }
    }
    if (best == SIZE_MAX) {
      hw.external_id = builder->NewExternalId();
      continue;
    }
    SystemEvent& rt = ev[best];
    if (rt.correlation == 0) {
      rt.correlation = builder->NewCorrelation();
      if (rt.external_id == 0) rt.external_id = builder->NewExternalId();
    }
    hw.external_id = rt.external_id;
    hw.correlation = rt.correlation;
  }
}

Status ExplorerProfile::ReadSystemEvents(const ProfileDir& dir) {
  const std::vector<FieldRequest> fields = {
      {"id", FieldType::kInt},
      {"name", FieldType::kString, true},
      {"start_ts", FieldType::kInt, true},
      {"end_ts", FieldType::kInt, true},
      {"trace_event_source", FieldType::kString, true},
      {"instance_id", FieldType::kString, true},
      {"process_id", FieldType::kInt, true},
      {"thread_id", FieldType::kInt, true},
      {"nc_idx", FieldType::kInt},
      {"worker_gid", FieldType::kInt},
      {"flow_id", FieldType::kStringList},
      {"extra_attributes_json", FieldType::kString},
  };
  std::unique_ptr<ProfileTable> t;
  if (Status st = OpenTable(dir, "SystemProfileEvents", fields, &t); !st.ok() || !t) return st;
  std::vector<SystemEvent> events;
  const int64_t base = builder_->base_time();
  simdjson::dom::parser parser;
  TableRead read;
  read.fields = fields;
  read.threads = 1;
  read.merge = [&](const RowGroupView& rg, int) {
    for (int64_t r = 0; r < rg.rows; ++r) {
      ++stats_->events;
      SystemEvent e;
      e.instance = std::string(rg.field(5).Str(r));
      e.pid = rg.field(6).Int(r);
      if (!filter_.Keeps(e.instance, e.pid)) continue;
      const std::string_view source = rg.field(4).Str(r);
      e.source = source == "neuron_hw" ? kHardware : source == "neuron_rt" ? kRuntime : kFramework;
      int64_t start = rg.field(2).Int(r), end = rg.field(3).Int(r, start);
      if (start < kEpochNsFloor && base >= kEpochNsFloor) {  // times relative to the profile
        start = internal::SatAdd(start, base);
        end = internal::SatAdd(end, base);
      }
      e.start = builder_->ToTrace(start);
      e.end = std::max(builder_->ToTrace(end), e.start);
      e.name = std::string(rg.field(1).Str(r));
      e.tid = rg.field(7).Int(r);
      e.nc = rg.field(8).Int(r, 0);
      e.flows.clear();
      for (std::string_view f : rg.field(10).StrList(r)) e.flows.emplace_back(f);
      const std::string_view extra = rg.field(11).Str(r);
      if (e.source == kFramework) e.category = CategoryOf(extra);
      if (options_.keep_args) {
        JsonWriter w;
        w.BeginObject();
        w.Field("source", source);
        if (!rg.field(0).IsNull(r)) w.Field("neuron_event_id", rg.field(0).Int(r));
        if (!rg.field(8).IsNull(r)) w.Field("nc_idx", rg.field(8).Int(r));
        if (!rg.field(9).IsNull(r)) w.Field("worker_gid", rg.field(9).Int(r));
        if (!e.flows.empty()) {
          w.Key("flow_id");
          w.BeginArray();
          for (const std::string& f : e.flows) w.String(f);
          w.EndArray();
        }
        if (!extra.empty()) {
          w.Key("extra_attributes");
          if (IsJsonObject(parser, extra)) {
            w.Raw(extra);
          } else {
            w.String(extra);
          }
        }
        w.EndObject();
        e.args = w.Take();
      }
      events.push_back(std::move(e));
    }
    return Status::Ok();
  };
  if (Status st = t->Read(read); !st.ok()) return st;
  LinkEvents(&events, builder_);
  AddSystemEvents(&events);
  return Status::Ok();
}

void ExplorerProfile::AddSystemEvents(std::vector<SystemEvent>* events) {
  Trace* trace = builder_->trace();
  const StringId runtime_cat = trace->Intern(KinetoCategory(ActivityKind::kRuntime));
  const StringId kernel_cat = trace->Intern(KinetoCategory(ActivityKind::kKernel));
  for (SystemEvent& e : *events) {
    Slice s;
    s.ts_ns = e.start;
    s.dur_ns = e.end - e.start;
    s.name = trace->Intern(e.name);
    s.external_id = e.external_id;
    s.correlation = e.correlation;
    if (e.source == kHardware) {
      const uint32_t device = builder_->Device(e.instance, e.nc);
      s.kind = ActivityKind::kKernel;
      s.category = kernel_cat;
      s.track = builder_->ExecutionTrack(device);
      builder_->AddExecution(device, {e.start, e.end, e.external_id, e.correlation});
    } else if (e.source == kRuntime) {
      s.kind = ActivityKind::kRuntime;
      s.category = runtime_cat;
      s.track = builder_->HostTrack(e.instance, e.pid, e.tid);
    } else {
      s.kind = e.category.empty() ? ActivityKind::kCpuOp : KindFromCategory(e.category);
      s.category = trace->Intern(e.category.empty() ? KinetoCategory(s.kind) : e.category);
      s.track = builder_->HostTrack(e.instance, e.pid, e.tid);
    }
    if (!e.args.empty() && (!options_.keep_args_of || options_.keep_args_of(s.kind, e.name))) {
      s.args = trace->AddArgs(e.args);
    }
    e.slice = trace->AddSlice(s);
  }
  // An arrow along each flow id: framework event -> runtime call -> hardware execution.
  std::map<std::string, std::vector<size_t>> by_flow;
  for (size_t i = 0; i < events->size(); ++i) {
    for (const std::string& f : (*events)[i].flows) by_flow[f].push_back(i);
  }
  const StringId category = trace->Intern("neuron_flow");
  const StringId name = trace->Intern("flow_id");
  std::set<std::pair<uint32_t, uint32_t>> added;
  for (auto& [flow, members] : by_flow) {
    std::stable_sort(members.begin(), members.end(), [&](size_t a, size_t b) {
      const SystemEvent &x = (*events)[a], &y = (*events)[b];
      return x.source != y.source ? x.source < y.source : x.start < y.start;
    });
    for (size_t k = 1; k < members.size(); ++k) {
      const uint32_t from = (*events)[members[k - 1]].slice, to = (*events)[members[k]].slice;
      if (!added.insert({from, to}).second) continue;
      trace->AddFlow({added.size(), category, name, from, to});
      ++stats_->flow_endpoints;
    }
  }
}

Status ExplorerProfile::ListInstances(const std::string& path, std::set<std::string>* instances) {
  ProfileDir root;
  if (Status st = ListDir(path, &root); !st.ok()) return st;
  for (const char* table : {"SystemProfileEvents", "DeviceProfileList"}) {
    const std::vector<FieldRequest> fields = {{"instance_id", FieldType::kString, true}};
    std::unique_ptr<ProfileTable> t;
    if (Status st = OpenTable(root, table, fields, &t); !st.ok() || !t) {
      if (!st.ok()) return st;
      continue;
    }
    TableRead read;
    read.fields = fields;
    read.merge = [&](const RowGroupView& rg, int) {
      std::string_view last;  // rows of one instance come in runs: a set insert per run
      for (int64_t r = 0; r < rg.rows; ++r) {
        const std::string_view instance = rg.field(0).Str(r);
        if (r > 0 && instance == last) continue;
        last = instance;
        instances->emplace(instance);
      }
      return Status::Ok();
    };
    if (Status st = t->Read(read); !st.ok()) return st;
  }
  return Status::Ok();
}

Status ExplorerProfile::ReadSystemHbmUsage(const ProfileDir& dir) {
  const std::vector<FieldRequest> fields = {
      {"timestamp", FieldType::kInt, true},      {"total_bytes", FieldType::kInt, true},
      {"device_idx", FieldType::kInt, true},     {"hbm_idx", FieldType::kInt, true},
      {"instance_id", FieldType::kString, true},
  };
  std::unique_ptr<ProfileTable> t;
  if (Status st = OpenTable(dir, "SystemProfileHbmUsage", fields, &t); !st.ok() || !t) return st;
  Trace* trace = builder_->trace();
  const int64_t base = builder_->base_time();
  TableRead read;
  read.fields = fields;
  read.merge = [&](const RowGroupView& rg, int) {
    for (int64_t r = 0; r < rg.rows; ++r) {
      ++stats_->events;
      const std::string_view instance = rg.field(4).Str(r);
      if (!filter_.any && instance != filter_.instance) continue;
      int64_t ts = rg.field(0).Int(r);
      if (ts < kEpochNsFloor && base >= kEpochNsFloor) ts = internal::SatAdd(ts, base);
      const int64_t hbm = rg.field(3).Int(r);
      const std::string counter = hbm > 0 ? fmt::format("{} (HBM {})", kHbmInUseCounter, hbm)
                                          : std::string(kHbmInUseCounter);
      CounterSample c;
      c.ts_ns = builder_->ToTrace(ts);
      c.value = static_cast<double>(rg.field(1).Int(r));
      c.track =
          builder_->CounterTrack(builder_->ChipProcess(instance, rg.field(2).Int(r)), counter);
      trace->AddCounter(c);
    }
    return Status::Ok();
  };
  return t->Read(read);
}

}  // namespace opscope::import::neuron
