// Profiler 2.x's system_profile.json: `trace_events` (framework events, type 99999; Neuron Runtime
// API calls; the NeuronCore's hardware events, already moved to the host clock by the runtime),
// `mem_usage` and `cpu_util` (host counters); then the device_profile_model_<id>.json files beside
// it, each placed on a hardware execution of the system profile. Events land as the Parquet
// reader's SystemProfileEvents rows do (ExplorerProfile::AddSystemEvents), linked by their
// `id` / `parent_id` where they have them, else by time.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <unordered_set>

#include "base/json_writer.h"
#include "base/saturating.h"
#include "import/neuron/legacy_json.h"

namespace opscope::import::neuron {

namespace od = simdjson::ondemand;

// One trace_events entry as written (epoch ns), staged until the profile's start is known.
struct LegacyJsonReader::RawEvent {
  int64_t ts = 0, dur = 0;
  std::string name, group, instance, model_id;
  int64_t id = 0, parent_id = 0, pid = 0, tid = 0, nc = -1, type = -1;
  std::string extra;  // the event-specific members, as JSON members ("size": "4", ...)
};

// One mem_usage or cpu_util entry.
struct LegacyJsonReader::HostSample {
  int64_t ts = 0;
  double value = 0, percent = -1;
  std::string instance, cpu;
  bool cpu_sample = false;
};

namespace {

// Framework events carry this `type` (the documentation's example).
constexpr int64_t kFrameworkType = 99999;

enum class Hardware { kNone, kExecution, kCollective, kOther };

// The NeuronCore's events (the profiler's "hardware" group); the rest are the runtime's.
Hardware HardwareKind(std::string_view name) {
  if (name == "nc_exec_running") return Hardware::kExecution;
  if (name == "cc_running" || name == "cc_exec_barrier") return Hardware::kCollective;
  if (name == "numerical_err" || name == "nc_model_switch" || name == "nrt_model_switch" ||
      name == "timestamp_sync_point" || name == "hw_notify") {
    return Hardware::kOther;
  }
  return Hardware::kNone;
}

// "nrt-nc-003" -> 3; -1 for any other group.
int64_t NcOfGroup(std::string_view group) {
  constexpr std::string_view kPrefix = "nrt-nc-";
  if (group.substr(0, kPrefix.size()) != kPrefix || group.size() == kPrefix.size()) return -1;
  int64_t nc = 0;
  for (char c : group.substr(kPrefix.size())) {
    if (c < '0' || c > '9' || nc > 1000000) return -1;
    nc = nc * 10 + (c - '0');
  }
  return nc;
}

}  // namespace

Status LegacyJsonReader::ParseEvent(JsonDocument* doc, od::object entry, const std::string& path,
                                    std::vector<RawEvent>* out) {
  RawEvent e;
  bool has_ts = false, has_name = false;
  std::string found, text;
  for (auto field : entry) {
    std::string_view key;
    od::value value;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS ||
        field.value().get(value) != simdjson::SUCCESS) {
      return doc->Error(path, "malformed member");
    }
    const auto wrong = [&](std::string_view what) {
      return doc->Error(fmt::format("{}.{}", path, key),
                        fmt::format("expected {}, found {}", what, found));
    };
    int64_t* number = key == "timestamp"   ? &e.ts
                      : key == "duration"  ? &e.dur
                      : key == "id"        ? &e.id
                      : key == "parent_id" ? &e.parent_id
                      : key == "thread_id" ? &e.tid
                      : key == "lnc_idx"   ? &e.nc
                      : key == "type"      ? &e.type
                                           : nullptr;
    std::string* string = key == "name"          ? &e.name
                          : key == "group"       ? &e.group
                          : key == "instance_id" ? &e.instance
                          : key == "process_id"  ? &text
                                                 : nullptr;
    if (number != nullptr) {
      if (!JsonInt(value, number, &found)) return wrong("an integer");
      has_ts |= number == &e.ts;
    } else if (string != nullptr) {
      if (!JsonText(value, string, &found)) return wrong("a string");
      has_name |= string == &e.name;
      if (string == &text) {
        e.pid = 0;
        // A process id is written as a string of digits; another text keeps pid 0.
        for (char c : text) {
          if (c < '0' || c > '9' || e.pid > INT64_MAX / 10 - 10) break;
          e.pid = e.pid * 10 + (c - '0');
        }
      }
    } else {
      std::string raw;
      if (!JsonRaw(value, &raw)) return doc->Error(fmt::format("{}.{}", path, key), "malformed");
      if (key == "model_id" && !JsonText(value, &e.model_id, &found)) e.model_id.clear();
      if (key == "model_id" && e.model_id.empty()) e.model_id = raw;
      JsonWriter k;
      k.String(key);
      e.extra += (e.extra.empty() ? "" : ",") + k.Take() + ":" + raw;
    }
  }
  if (!has_ts) return doc->Error(path, "no 'timestamp' (ns since the epoch)");
  if (!has_name) return doc->Error(path, "no 'name'");
  e.dur = std::max<int64_t>(e.dur, 0);
  out->push_back(std::move(e));
  return Status::Ok();
}

Status LegacyJsonReader::ParseSample(JsonDocument* doc, od::object entry, const std::string& path,
                                     bool cpu, std::vector<HostSample>* out) {
  HostSample s;
  s.cpu_sample = cpu;
  bool has_ts = false, has_value = false;
  std::string found;
  const std::string_view value_key = cpu ? "util" : "usage";
  for (auto field : entry) {
    std::string_view key;
    od::value value;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS ||
        field.value().get(value) != simdjson::SUCCESS) {
      return doc->Error(path, "malformed member");
    }
    bool ok = true;
    if (key == "timestamp") {
      ok = JsonInt(value, &s.ts, &found);
      has_ts = true;
    } else if (key == value_key) {
      ok = JsonDouble(value, &s.value, &found);
      has_value = true;
    } else if (key == "percent_usage" && !cpu) {
      ok = JsonDouble(value, &s.percent, &found);
    } else if (key == "instance_id") {
      ok = JsonText(value, &s.instance, &found);
    } else if (key == "cpu_id" && cpu) {
      ok = JsonText(value, &s.cpu, &found);
    }
    if (!ok) {
      return doc->Error(fmt::format("{}.{}", path, key), "expected a number, found " + found);
    }
  }
  if (!has_ts) return doc->Error(path, "no 'timestamp' (ns since the epoch)");
  if (!has_value) return doc->Error(path, fmt::format("no '{}'", value_key));
  out->push_back(std::move(s));
  return Status::Ok();
}

Status LegacyJsonReader::ParseSystem(JsonDocument* doc, std::vector<RawEvent>* events,
                                     std::vector<HostSample>* samples) {
  od::object root;
  if (Status st = doc->Root(&root); !st.ok()) return st;
  for (auto field : root) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return doc->Error("(top)", "bad key");
    const std::string name(key);
    if (name != "trace_events" && name != "mem_usage" && name != "cpu_util") {
      ignored_.insert(name);
      continue;
    }
    od::value value;
    od::json_type type;
    if (field.value().get(value) != simdjson::SUCCESS ||
        value.type().get(type) != simdjson::SUCCESS) {
      return doc->Error(name, "malformed value");
    }
    // trace_events is an array; an object of named events (the documentation's example) is read
    // the same way, entry by entry.
    const bool by_name = type == od::json_type::object && name == "trace_events";
    if (type != od::json_type::array && !by_name) return doc->Error(name, "expected an array");
    const auto entry = [&](od::value element, const std::string& path) {
      od::object o;
      if (simdjson::error_code e = element.get_object().get(o); e != simdjson::SUCCESS) {
        return e == simdjson::INCORRECT_TYPE ? doc->Error(path, "expected an object")
                                             : doc->Error(path, e);
      }
      ++stats_->events;
      return name == "trace_events" ? ParseEvent(doc, o, path, events)
                                    : ParseSample(doc, o, path, name == "cpu_util", samples);
    };
    if (by_name) {
      od::object o;
      if (value.get_object().get(o) != simdjson::SUCCESS) return doc->Error(name, "malformed");
      for (auto member : o) {
        std::string_view k;
        od::value v;
        if (member.unescaped_key().get(k) || member.value().get(v)) {
          return doc->Error(name, "malformed member");
        }
        if (Status st = entry(v, name + "." + std::string(k)); !st.ok()) return st;
      }
      continue;
    }
    od::array array;
    if (value.get_array().get(array) != simdjson::SUCCESS) return doc->Error(name, "malformed");
    size_t index = 0;
    for (auto element : array) {
      od::value v;
      if (simdjson::error_code e = element.get(v); e != simdjson::SUCCESS) {
        return doc->Error(fmt::format("{}[{}]", name, index), e);
      }
      if (Status st = entry(v, fmt::format("{}[{}]", name, index)); !st.ok()) return st;
      ++index;
    }
  }
  return Status::Ok();
}

void LegacyJsonReader::AddSystem(std::vector<RawEvent>* events,
                                 const std::vector<HostSample>& samples) {
  int64_t first = INT64_MAX;
  for (const RawEvent& e : *events) first = std::min(first, e.ts);
  for (const HostSample& s : samples) first = std::min(first, s.ts);
  if (first != INT64_MAX) builder_->SetBaseTime(first);
  // Parent links, scoped to a process: an event names its parent's id.
  const auto scope = [](const RawEvent& e, int64_t id) {
    return fmt::format("{}/{}/{}", e.instance, e.pid, id);
  };
  std::unordered_set<std::string> parents;
  for (const RawEvent& e : *events) {
    if (e.parent_id != 0) parents.insert(scope(e, e.parent_id));
  }
  std::vector<SystemEvent> linked;
  std::vector<const RawEvent*> other_hw;
  for (RawEvent& r : *events) {
    if (!filter_.Keeps(r.instance, r.pid)) continue;
    const Hardware hw = HardwareKind(r.name);
    if (r.nc < 0) r.nc = NcOfGroup(r.group);
    if (hw == Hardware::kCollective || hw == Hardware::kOther) {
      other_hw.push_back(&r);
      continue;
    }
    SystemEvent e;
    e.start = builder_->ToTrace(r.ts);
    e.end = internal::SatAdd(e.start, r.dur);
    e.name = r.name;
    e.source = hw == Hardware::kExecution ? kHardware
               : r.type == kFrameworkType ? kFramework
                                          : kRuntime;
    e.instance = r.instance;
    e.pid = r.pid;
    e.tid = r.tid;
    e.nc = std::max<int64_t>(r.nc, 0);
    if (r.id != 0 && parents.count(scope(r, r.id))) e.flows.push_back(scope(r, r.id));
    if (r.parent_id != 0) e.flows.push_back(scope(r, r.parent_id));
    if (options_.keep_args) {
      JsonWriter w;
      w.BeginObject();
      w.Field("source", e.source == kHardware    ? "neuron_hw"
                        : e.source == kFramework ? "framework"
                                                 : "neuron_rt");
      if (r.id != 0) w.Field("neuron_event_id", r.id);
      if (r.parent_id != 0) w.Field("parent_id", r.parent_id);
      if (r.nc >= 0) w.Field("nc_idx", r.nc);
      if (!r.group.empty()) w.Field("group", r.group);
      if (r.type >= 0) w.Field("type", r.type);
      w.EndObject();
      e.args = w.Take();
      if (!r.extra.empty()) e.args.insert(e.args.size() - 1, "," + r.extra);
    }
    if (hw == Hardware::kExecution) {
      executions_.push_back({r.instance, r.pid, e.nc, e.start, r.model_id, false});
    }
    linked.push_back(std::move(e));
  }
  LinkEvents(&linked, builder_);
  profile_->AddSystemEvents(&linked);
  builder_->SortExecutions();
  Trace* trace = builder_->trace();
  const StringId kernel = trace->Intern(KinetoCategory(ActivityKind::kKernel));
  const StringId hw_category = trace->Intern("neuron_hw");
  for (const RawEvent* r : other_hw) {
    const uint32_t device = builder_->Device(r->instance, std::max<int64_t>(r->nc, 0));
    const int64_t ts = builder_->ToTrace(r->ts);
    const uint32_t args =
        options_.keep_args && !r->extra.empty() ? trace->AddArgs("{" + r->extra + "}") : kNone;
    if (HardwareKind(r->name) == Hardware::kOther) {
      trace->AddInstant(
          {ts, trace->Intern(r->name), hw_category, builder_->ExecutionTrack(device), args, 't'});
      continue;
    }
    Slice s;
    s.ts_ns = ts;
    s.dur_ns = r->dur;
    s.name = trace->Intern(r->name);
    s.category = kernel;
    s.kind = ActivityKind::kKernel;
    s.track = builder_->CollectiveTrack(device);
    s.args = args;
    if (const Execution* e = builder_->FindExecution(device, ts)) {
      s.external_id = e->external_id;
      s.correlation = e->correlation;
    }
    trace->AddSlice(s);
  }
  for (const HostSample& s : samples) {
    if (!filter_.any && s.instance != filter_.instance) continue;
    const uint32_t process = builder_->InstanceProcess(s.instance);
    const int64_t ts = builder_->ToTrace(s.ts);
    const std::string name = s.cpu_sample ? fmt::format("CPU {} utilization (%)", s.cpu)
                                          : std::string("host memory in use (bytes)");
    trace->AddCounter({ts, s.value, builder_->CounterTrack(process, name)});
    if (s.percent >= 0) {
      trace->AddCounter({ts, s.percent, builder_->CounterTrack(process, "host memory in use (%)")});
    }
  }
}

Status LegacyJsonReader::ReadDevicesBeside(const std::vector<std::string>& files) {
  for (const std::string& file : files) {
    std::string text;
    if (Status st = ReadJsonFile(file, &text); !st.ok()) return st;
    stats_->input_bytes += text.size();
    stats_->json_bytes += text.size();
    JsonDocument doc(text, file);
    DeviceProfileJson profile;
    Status st = doc.Finish(ParseDevice(&doc, &profile));
    const std::string name = std::filesystem::path(file).filename().string();
    const std::string model =
        name.substr(kDeviceProfilePrefix.size(), name.size() - kDeviceProfilePrefix.size() - 5);
    // The execution it shows: one naming its model, else the first on its NeuronCore.
    Placement* place = nullptr;
    for (int pass = 0; pass < 2 && place == nullptr; ++pass) {
      for (Placement& p : executions_) {
        const bool match = pass == 0 ? !p.model_id.empty() && p.model_id == model
                                     : p.model_id.empty() && (profile.nc < 0 || p.nc == profile.nc);
        if (!p.used && match) {
          place = &p;
          break;
        }
      }
    }
    const int64_t first = profile.first_ts == INT64_MAX ? 0 : profile.first_ts;
    if (place != nullptr) {
      place->used = true;
      const uint32_t device =
          builder_->Device(place->instance, profile.nc >= 0 ? profile.nc : place->nc);
      AddDevice(profile, device, internal::SatSub(place->start, first));
    } else if (filter_.any) {
      profile_->Warn(fmt::format(
          "{}: the system profile shows no nc_exec_running event of NeuronCore {} to place it "
          "on; its instructions start at the trace's start, on the device's own clock",
          name, std::max<int64_t>(profile.nc, 0)));
      AddDevice(profile, builder_->Device("", std::max<int64_t>(profile.nc, 0)),
                internal::SatSub(0, first));
    }
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

Status LegacyJsonReader::ListInstances(JsonDocument* doc, std::set<std::string>* instances) {
  std::vector<RawEvent> events;
  std::vector<HostSample> samples;
  Status st = doc->Finish(ParseSystem(doc, &events, &samples));
  for (const RawEvent& e : events) instances->insert(e.instance);
  for (const HostSample& s : samples) instances->insert(s.instance);
  instances->erase("");
  return st;
}

Status LegacyJsonReader::ReadSystem(JsonDocument* doc, const std::vector<std::string>& devices) {
  std::vector<RawEvent> events;
  std::vector<HostSample> samples;
  Status st = doc->Finish(ParseSystem(doc, &events, &samples));
  AddSystem(&events, samples);
  if (!st.ok()) return st;
  return ReadDevicesBeside(devices);
}

}  // namespace opscope::import::neuron
