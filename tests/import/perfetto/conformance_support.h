// The model as Perfetto's trace processor tables show it, for comparing opscope's import of
// Perfetto's TrackEvent conformance cases with their expected query results (tests.py).
//
// Perfetto's queries name a slice's track by up to four columns (track, process, thread,
// thread_process); opscope keeps one track per slice, named after the thread for a thread track,
// after the process for a process's own track, and by its own name otherwise, in the process it
// belongs to (or a process with pid 0 and no name for global tracks). So a row compares as
// (COALESCE(track, thread, process), COALESCE(process, thread_process)); "[NULL]" is "".
#ifndef OPSCOPE_TESTS_IMPORT_PERFETTO_CONFORMANCE_SUPPORT_H_
#define OPSCOPE_TESTS_IMPORT_PERFETTO_CONFORMANCE_SUPPORT_H_

#include <simdjson.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "opscope/trace.h"

namespace opscope::testing {

using CsvRow = std::map<std::string, std::string>;

// A cell, "" for Perfetto's NULL or a column the row lacks.
inline std::string Cell(const CsvRow& row, const std::string& column) {
  auto it = row.find(column);
  if (it == row.end() || it->second == "[NULL]") return "";
  return it->second;
}
inline std::string Coalesce(const CsvRow& row, std::initializer_list<const char*> columns) {
  for (const char* c : columns) {
    if (std::string v = Cell(row, c); !v.empty()) return v;
  }
  return "";
}

// One slice (or instant: dur 0, depth -1) as the slice queries select it.
struct SliceRow {
  std::string track, process;
  int64_t ts = 0, dur = 0;
  std::string category, name;
  auto Key() const { return std::tie(track, process, ts, dur, category, name); }
  bool operator<(const SliceRow& o) const { return Key() < o.Key(); }
  bool operator==(const SliceRow& o) const { return Key() == o.Key(); }
};

inline std::string TrackName(const Trace& t, uint32_t track) {
  return std::string(t.Str(t.tracks()[track].name));
}
inline std::string ProcessName(const Trace& t, uint32_t track) {
  return std::string(t.Str(t.processes()[t.tracks()[track].process].name));
}

// The model's slices and instants, times absolute (base_time_ns + ts_ns), with each slice's depth.
inline std::vector<std::pair<SliceRow, int>> ModelSlices(const Trace& t) {
  std::vector<std::pair<SliceRow, int>> out;
  const int64_t base = t.metadata().base_time_ns;
  for (const Slice& s : t.slices()) {
    out.push_back({{TrackName(t, s.track), ProcessName(t, s.track), base + s.ts_ns, s.dur_ns,
                    std::string(t.Str(s.category)), std::string(t.Str(s.name))},
                   s.depth});
  }
  for (const Instant& i : t.instants()) {
    out.push_back({{TrackName(t, i.track), ProcessName(t, i.track), base + i.ts_ns, 0,
                    std::string(t.Str(i.category)), std::string(t.Str(i.name))},
                   -1});
  }
  return out;
}

// Expected nesting depth of each row among the rows of positive duration on its track (Perfetto's
// depth); -1 for zero-length rows, which the check leaves out.
inline std::vector<int> ExpectedDepths(const std::vector<SliceRow>& rows) {
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(rows[a].track, rows[a].process, rows[a].ts) <
               std::tie(rows[b].track, rows[b].process, rows[b].ts) ||
           (std::tie(rows[a].track, rows[a].process, rows[a].ts) ==
                std::tie(rows[b].track, rows[b].process, rows[b].ts) &&
            rows[a].dur > rows[b].dur);
  });
  std::vector<int> depth(rows.size(), -1);
  std::vector<size_t> stack;
  for (size_t i : order) {
    if (rows[i].dur <= 0) continue;
    while (!stack.empty() && (rows[stack.back()].track != rows[i].track ||
                              rows[stack.back()].process != rows[i].process ||
                              rows[stack.back()].ts + rows[stack.back()].dur <= rows[i].ts)) {
      stack.pop_back();
    }
    depth[i] = static_cast<int>(stack.size());
    stack.push_back(i);
  }
  return depth;
}

// An args object as Perfetto's args table flattens it: "a.b" for objects, "a[0]" for arrays;
// integers and bools as their number, strings as their text.
inline void FlattenArgs(simdjson::dom::element e, const std::string& key,
                        std::multiset<std::pair<std::string, std::string>>* out) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::OBJECT: {
      simdjson::dom::object object;
      if (e.get_object().get(object) != simdjson::SUCCESS) break;
      for (auto [k, v] : object) {
        FlattenArgs(v, key.empty() ? std::string(k) : key + "." + std::string(k), out);
      }
      break;
    }
    case element_type::ARRAY: {
      simdjson::dom::array array;
      if (e.get_array().get(array) != simdjson::SUCCESS) break;
      size_t i = 0;
      for (simdjson::dom::element v : array) {
        FlattenArgs(v, key + "[" + std::to_string(i++) + "]", out);
      }
      break;
    }
    case element_type::STRING:
      out->emplace(key, std::string(e.get_string().value_unsafe()));
      break;
    case element_type::BOOL:
      out->emplace(key, e.get_bool().value_unsafe() ? "1" : "0");
      break;
    case element_type::NULL_VALUE:
      break;
    default:
      out->emplace(key, simdjson::to_string(e));
  }
}

}  // namespace opscope::testing

#endif  // OPSCOPE_TESTS_IMPORT_PERFETTO_CONFORMANCE_SUPPORT_H_
