// Reading opscope's metadata entry (opscope_blob.h); the keys are documented in docs/formats.md.
#include "import/perfetto/opscope_blob.h"

#include <simdjson.h>

#include "trace/perfetto_protos.h"

namespace opscope::import::perfetto {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// Optional fields: absent ones keep the default; a present one of the wrong type is an error.
bool GetInt(object o, std::string_view key, int64_t* out) {
  element e;
  if (o[key].get(e) != simdjson::SUCCESS) return true;
  return e.get_int64().get(*out) == simdjson::SUCCESS;
}
bool GetUint(object o, std::string_view key, uint64_t* out) {
  element e;
  if (o[key].get(e) != simdjson::SUCCESS) return true;
  return e.get_uint64().get(*out) == simdjson::SUCCESS;
}
bool GetBool(object o, std::string_view key, bool* out) {
  element e;
  if (o[key].get(e) != simdjson::SUCCESS) return true;
  return e.get_bool().get(*out) == simdjson::SUCCESS;
}
bool GetString(object o, std::string_view key, std::string* out) {
  element e;
  if (o[key].get(e) != simdjson::SUCCESS) return true;
  std::string_view v;
  if (e.get_string().get(v) != simdjson::SUCCESS) return false;
  *out = std::string(v);
  return true;
}
bool GetArray(object o, std::string_view key, array* out) {
  element e;
  if (o[key].get(e) != simdjson::SUCCESS) {
    *out = array();
    return true;
  }
  return e.get_array().get(*out) == simdjson::SUCCESS;
}

bool ReadMetadata(object o, OpscopeBlob* b) {
  if (!GetInt(o, "schema_version", &b->schema_version) ||
      !GetInt(o, "base_time_ns", &b->base_time_ns) ||
      !GetInt(o, "time_shift_ns", &b->time_shift_ns) ||
      !GetString(o, "device_type", &b->device_type) ||
      !GetString(o, "trace_name", &b->trace_name) ||
      !GetUint(o, "skipped_events", &b->skipped_events)) {
    return false;
  }
  array list;
  if (!GetArray(o, "extra", &list)) return false;
  for (element e : list) {
    array pair;
    std::string_view key, raw;
    if (e.get_array().get(pair) || pair.size() != 2 || pair.at(0).get_string().get(key) ||
        pair.at(1).get_string().get(raw)) {
      return false;
    }
    b->extra.emplace_back(std::string(key), std::string(raw));
  }
  if (!GetArray(o, "dropped", &list)) return false;
  for (element e : list) {
    array pair;
    std::string_view key;
    uint64_t n = 0;
    if (e.get_array().get(pair) || pair.size() != 2 || pair.at(0).get_string().get(key) ||
        pair.at(1).get_uint64().get(n)) {
      return false;
    }
    b->dropped.emplace_back(std::string(key), n);
  }
  if (!GetArray(o, "warnings", &list)) return false;
  for (element e : list) {
    std::string_view w;
    if (e.get_string().get(w)) return false;
    b->warnings.emplace_back(w);
  }
  return true;
}

bool ReadProcessesAndTracks(object o, OpscopeBlob* b) {
  array list;
  if (!GetArray(o, "processes", &list)) return false;
  for (element e : list) {
    object p;
    OpscopeBlob::Process out;
    if (e.get_object().get(p) || !GetUint(p, "uuid", &out.uuid) || !GetInt(p, "pid", &out.pid) ||
        !GetString(p, "pid_text", &out.pid_text) || !GetString(p, "name", &out.name) ||
        !GetString(p, "labels", &out.labels) || !GetInt(p, "sort_index", &out.sort_index) ||
        !GetBool(p, "is_device", &out.is_device)) {
      return false;
    }
    b->processes.push_back(std::move(out));
  }
  if (!GetArray(o, "tracks", &list)) return false;
  for (element e : list) {
    object t;
    OpscopeBlob::Track out;
    std::string kind = "thread";
    if (e.get_object().get(t) || !GetUint(t, "uuid", &out.uuid) ||
        !GetUint(t, "process", &out.process_uuid) || !GetInt(t, "tid", &out.tid) ||
        !GetString(t, "tid_text", &out.tid_text) || !GetString(t, "name", &out.name) ||
        !GetInt(t, "sort_index", &out.sort_index) || !GetString(t, "kind", &kind)) {
      return false;
    }
    bool known = false;
    for (size_t k = 0; k < std::size(opscope::perfetto::kTrackKindNames); ++k) {
      if (opscope::perfetto::kTrackKindNames[k] == kind) {
        out.kind = static_cast<TrackKind>(k);
        known = true;
      }
    }
    if (!known) return false;
    b->tracks.push_back(std::move(out));
  }
  if (!GetArray(o, "lanes", &list)) return false;
  for (element e : list) {
    array pair;
    uint64_t lane = 0, track = 0;
    if (e.get_array().get(pair) || pair.size() != 2 || pair.at(0).get_uint64().get(lane) ||
        pair.at(1).get_uint64().get(track)) {
      return false;
    }
    b->lanes.emplace_back(lane, track);
  }
  return true;
}

bool ReadKindsAndFlows(object o, OpscopeBlob* b) {
  array list;
  if (!GetArray(o, "kinds", &list)) return false;
  for (element e : list) {
    array pair;
    std::string_view category, kind;
    if (e.get_array().get(pair) || pair.size() != 2 || pair.at(0).get_string().get(category) ||
        pair.at(1).get_string().get(kind)) {
      return false;
    }
    bool known = false;
    for (int k = 0; k <= static_cast<int>(ActivityKind::kOther); ++k) {
      if (ActivityKindName(static_cast<ActivityKind>(k)) == kind) {
        b->kinds.emplace_back(std::string(category), static_cast<ActivityKind>(k));
        known = true;
      }
    }
    if (!known) return false;
  }
  if (!GetString(o, "flow_category", &b->flow_category) ||
      !GetString(o, "flow_name", &b->flow_name) || !GetArray(o, "flows", &list)) {
    return false;
  }
  for (element e : list) {
    array f;
    OpscopeBlob::Flow out;
    std::string_view category, name;
    if (e.get_array().get(f) || f.size() != 4 || f.at(0).get_uint64().get(out.ordinal) ||
        f.at(1).get_uint64().get(out.id) || f.at(2).get_string().get(category) ||
        f.at(3).get_string().get(name)) {
      return false;
    }
    out.category = std::string(category);
    out.name = std::string(name);
    b->flows.push_back(std::move(out));
  }
  return true;
}

}  // namespace

std::string ParseOpscopeBlob(std::string_view json, OpscopeBlob* out) {
  simdjson::dom::parser parser;
  object o;
  if (parser.parse(json.data(), json.size()).get_object().get(o) != simdjson::SUCCESS) {
    return "the opscope metadata entry is not a JSON object";
  }
  *out = OpscopeBlob();
  if (!GetInt(o, "version", &out->version) || out->version < 1) {
    return "the opscope metadata entry has no valid version";
  }
  if (out->version > opscope::perfetto::kOpscopeMetadataVersion) {
    return "the opscope metadata entry is version " + std::to_string(out->version) +
           ", newer than this reader's " +
           std::to_string(opscope::perfetto::kOpscopeMetadataVersion) + "; it is ignored";
  }
  if (!ReadMetadata(o, out) || !ReadProcessesAndTracks(o, out) || !ReadKindsAndFlows(o, out)) {
    *out = OpscopeBlob();
    return "the opscope metadata entry is malformed; it is ignored";
  }
  return "";
}

}  // namespace opscope::import::perfetto
