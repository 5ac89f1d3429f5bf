// Reads an exported chrome trace back with simdjson (plain or gzip) for the profiler's tests.
#ifndef OPSCOPE_TESTS_PROFILER_TRACE_READER_H_
#define OPSCOPE_TESTS_PROFILER_TRACE_READER_H_

#include <simdjson.h>

#include <map>
#include <string>
#include <vector>

#include "tests/common/read_file.h"

namespace opscope::testing {

struct JsonEvent {
  std::string ph, cat, name;
  std::string pid, tid;  // as JSON text: 1234 or "GPU 0"
  double ts = 0, dur = 0;
  int64_t id = -1;
  bool bp_e = false;
  std::map<std::string, std::string> args;  // key -> raw JSON text of the value
};

struct JsonTrace {
  std::vector<std::string> top_keys;  // in document order
  int64_t schema_version = 0;
  int64_t base_time_ns = 0;
  std::string trace_name;
  std::string dropped_json;  // raw "droppedEvents" object, "" if absent
  std::vector<JsonEvent> events;
  std::string error;  // non-empty when parsing failed
};

inline std::string Text(simdjson::dom::element e) {
  if (e.is_string()) return std::string(std::string_view(e.get_string()));
  return simdjson::minify(e);
}

inline JsonTrace ReadChromeTrace(const std::string& path) {
  JsonTrace out;
  std::string data = ReadMaybeGzip(path);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  auto err = parser.parse(data).get(doc);
  if (err) {
    out.error = simdjson::error_message(err);
    return out;
  }
  simdjson::dom::object root;
  if (doc.get_object().get(root)) {
    out.error = "top level is not an object";
    return out;
  }
  for (auto field : root) {
    std::string key(field.key);
    out.top_keys.push_back(key);
    if (key == "schemaVersion") out.schema_version = int64_t(field.value);
    if (key == "baseTimeNanoseconds") out.base_time_ns = int64_t(field.value);
    if (key == "traceName") out.trace_name = std::string(std::string_view(field.value));
    if (key == "droppedEvents") out.dropped_json = simdjson::minify(field.value);
  }
  for (simdjson::dom::element ev : root["traceEvents"].get_array()) {
    JsonEvent e;
    for (auto field : ev.get_object()) {
      std::string_view k = field.key;
      if (k == "ph")
        e.ph = Text(field.value);
      else if (k == "cat")
        e.cat = Text(field.value);
      else if (k == "name")
        e.name = Text(field.value);
      else if (k == "pid")
        e.pid = simdjson::minify(field.value);
      else if (k == "tid")
        e.tid = simdjson::minify(field.value);
      else if (k == "ts")
        e.ts = double(field.value);
      else if (k == "dur")
        e.dur = double(field.value);
      else if (k == "id")
        e.id = int64_t(field.value);
      else if (k == "bp")
        e.bp_e = Text(field.value) == "e";
      else if (k == "args") {
        for (auto arg : field.value.get_object()) e.args[std::string(arg.key)] = Text(arg.value);
      }
    }
    out.events.push_back(std::move(e));
  }
  return out;
}

}  // namespace opscope::testing

#endif  // OPSCOPE_TESTS_PROFILER_TRACE_READER_H_
