// Perfetto's own TrackEvent parser conformance cases (fixtures/perfetto/track_event/tests.py), each
// encoded by protoc when the tests run (extract_cases.py, the perfetto_encode_cases ctest fixture),
// imported by opscope and compared with Perfetto's expected query results: slices (track, process,
// time, duration, category, name) and their nesting, tracks, processes, threads, counters, flows
// and debug-annotation args. Each case names what of it opscope deliberately does not model, and
// why; a case with no rule here fails, so a new case in the fixtures cannot pass unseen. And the
// binary trace beside them (nested_tracks.perfetto-trace) opens with every track and flow.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "opscope/import.h"
#include "tests/analysis/test_support.h"
#include "tests/import/perfetto/conformance_support.h"

namespace opscope::testing {
namespace {

namespace fs = std::filesystem;

enum class Check {
  kSlices,         // track, process, thread, thread_process, ts, dur, category, name [+ args]
  kArgs,           // flat_key, key, int_value, string_value: the debug.* args
  kFlows,          // slice_out, slice_in
  kCounters,       // counter_name, process, thread, thread_process, unit, ts, value
  kCounterValues,  // ts, value
  kThreads,        // tid, pid, pname, tname
  kProcessNames,   // the named processes
  kTrackNames,     // the tracks' (and processes') names
  kSliceNames,     // the named slices exist
  kTsName,         // ts, name
  kOverflow,       // slice_count, slice_name, slice_ts, errors
  kIds,            // pid / tid and name of a process and a thread
  kImports,        // nothing comparable: the trace imports
};

struct CaseRule {
  const char* name;
  Check check;
  // What of the case opscope deliberately does not model, and why ("" for nothing).
  const char* not_modelled;
  const char* excluded_slice = "";  // a slice of the expected rows that is not a track event
};

constexpr const char* kStateTracks =
    "TYPE_STATE events and state tracks: opscope's model has no state tracks (the events are "
    "skipped and counted)";

const CaseRule kRules[] = {
    {"track_event_same_tids_threads", Check::kThreads,
     "Perfetto lists each process's main thread (tid = pid) even when no event names it"},
    {"track_event_same_tids_slices", Check::kSlices, ""},
    {"track_event_typed_args_slices", Check::kSlices,
     "TrackEvent extensions (Perfetto's test-only protos; dropped when encoding)"},
    {"track_event_typed_args_args", Check::kArgs,
     "typed Chrome protos (chrome_user_event, chrome_legacy_ipc, ...), extensions and source "
     "locations: opscope keeps debug annotations as args"},
    {"track_event_tracks_slices", Check::kSlices, ""},
    {"track_event_tracks_processes", Check::kProcessNames,
     "chrome_process.host_app_package_name; Perfetto's process 0"},
    {"track_event_tracks", Check::kTrackNames,
     "has_first_packet_on_sequence; Perfetto gives legacy process-scoped instants a track of their "
     "own, opscope puts them on the process's track"},
    {"track_event_descriptions", Check::kTrackNames, "track descriptions"},
    {"track_event_instant_slices", Check::kSlices, ""},
    {"legacy_async_event", Check::kSlices,
     "Perfetto's bookkeeping args (legacy_trace_source_id, legacy_event.phase, "
     "legacy_event.passthrough_utid)"},
    {"track_event_with_atrace", Check::kSlices,
     "the 'atrace' slice: an ftrace print event, not a track event (opscope reads track events)",
     "atrace"},
    {"track_event_with_atrace_separate_tracks", Check::kSlices,
     "the 'atrace' slice: an ftrace print event, not a track event", "atrace"},
    {"track_event_merged_debug_annotations_args", Check::kArgs,
     "Perfetto's own args (event.name, event.category, legacy_event.*, scope, source, upid, ...)"},
    {"track_event_counters_slices", Check::kSlices, ""},
    {"track_event_counters_counters", Check::kCounters,
     "counter units; thread-scoped counters: opscope's counter tracks belong to processes, so a "
     "thread's counters belong to its process"},
    {"incremental_counter_sequences", Check::kCounterValues, ""},
    {"track_event_monotonic_trace_clock_slices", Check::kSlices, ""},
    {"track_event_chrome_histogram_sample_args", Check::kArgs,
     "chrome_histogram_sample, a typed Chrome proto, and Perfetto's own args"},
    {"flow_events_track_event", Check::kFlows, ""},
    {"flow_events_proto_v2", Check::kFlows, ""},
    {"flow_events_proto_v1", Check::kFlows, ""},
    {"range_of_interest", Check::kTsName, ""},
    {"track_event_tracks_ordering", Check::kTrackNames,
     "track ordering (child_ordering, sibling_order_rank) and parent links: opscope's tracks are a "
     "flat list per process"},
    {"track_event_name_resolution", Check::kTrackNames, ""},
    {"track_event_callstacks", Check::kSliceNames, "callstacks: opscope's model has no frames"},
    {"track_event_callstack_weights", Check::kSliceNames, "callstack weights"},
    {"track_event_name_resolution_extended", Check::kTrackNames,
     "parent links (is_root): opscope's tracks are a flat list per process"},
    {"track_event_name_resolution_null_override", Check::kTrackNames, ""},
    {"track_descriptor_process_thread_sort_index", Check::kIds,
     "sort index hints (sibling_order_rank under explicit ordering)"},
    {"track_descriptor_process_thread_sort_index_default_ignored", Check::kIds, "sort index hints"},
    {"track_event_simple_state", Check::kImports, kStateTracks},
    {"state_track_legacy_fallback_error", Check::kImports, kStateTracks},
    {"track_event_state_state", Check::kImports, kStateTracks},
    {"track_event_state_on_non_state_track", Check::kImports, kStateTracks},
    {"track_event_out_of_order_state_descriptors", Check::kImports, kStateTracks},
    {"track_event_absolute_timestamp_us_overflow", Check::kOverflow, ""},
    {"streaming_profile_timestamp_delta_overflow", Check::kOverflow,
     "streaming_profile_packet's CPU samples (only their timestamp deltas are read, which move "
     "the sequence's reference time) and Perfetto's count of their errors"},
    {"track_event_delta_timestamp_addition_overflow", Check::kOverflow, ""},
};

fs::path CasesDir() {
  const char* dir = std::getenv("OPSCOPE_BINARY_DIR");
  return fs::path(dir ? dir : "build") / "tests" / "import" / "perfetto" / "cases";
}

struct IndexEntry {
  std::string name, status, note;
};

std::vector<IndexEntry> ReadIndex(const fs::path& dir) {
  std::vector<IndexEntry> out;
  std::ifstream in(dir / "cases.tsv");
  for (std::string line; std::getline(in, line);) {
    std::stringstream ss(line);
    IndexEntry e;
    std::getline(ss, e.name, '\t');
    std::getline(ss, e.status, '\t');
    std::getline(ss, e.note);
    out.push_back(e);
  }
  return out;
}

template <typename T>
std::string Diff(const std::multiset<T>& expected, const std::multiset<T>& actual,
                 const std::function<std::string(const T&)>& show) {
  std::string out;
  for (const T& e : expected) {
    if (actual.count(e) < expected.count(e)) out += "  missing: " + show(e) + "\n";
  }
  for (const T& a : actual) {
    if (expected.count(a) < actual.count(a)) out += "  unexpected: " + show(a) + "\n";
  }
  return out;
}

std::string ShowRow(const SliceRow& r) {
  return "(" + r.track + ", " + r.process + ", " + std::to_string(r.ts) + ", " +
         std::to_string(r.dur) + ", " + r.category + ", " + r.name + ")";
}

// The slices (and instants) with their nesting; with args columns, the debug.* args too.
std::string CheckSlices(const Trace& t, const std::vector<CsvRow>& rows, const CaseRule& rule) {
  std::vector<SliceRow> expected_rows;
  std::map<std::string, std::multiset<std::pair<std::string, std::string>>> expected_args;
  std::set<std::string> seen;
  for (const CsvRow& r : rows) {
    SliceRow s{Coalesce(r, {"track", "thread", "process"}),
               Coalesce(r, {"process", "thread_process"}),
               std::stoll(Cell(r, "ts")),
               std::stoll(Cell(r, "dur")),
               Cell(r, "category"),
               Cell(r, "name")};
    if (s.name == rule.excluded_slice) continue;
    const std::string id = ShowRow(s);
    if (r.count("key") != 0) {
      if (Cell(r, "key").rfind("debug.", 0) == 0) {
        expected_args[id].emplace(Cell(r, "key").substr(6),
                                  Coalesce(r, {"string_value", "int_value"}));
      }
      if (!seen.insert(id).second) continue;  // one row per arg
    }
    expected_rows.push_back(s);
  }
  std::multiset<SliceRow> expected(expected_rows.begin(), expected_rows.end()), actual;
  const auto model = ModelSlices(t);
  for (const auto& [row, depth] : model) actual.insert(row);
  std::string out = Diff<SliceRow>(expected, actual, ShowRow);
  // Nesting: each slice's depth as the expected intervals nest.
  const std::vector<int> depths = ExpectedDepths(expected_rows);
  for (size_t i = 0; i < expected_rows.size(); ++i) {
    if (depths[i] < 0) continue;
    bool found = false;
    for (const auto& [row, depth] : model) found |= row == expected_rows[i] && depth == depths[i];
    if (!found) {
      out +=
          "  depth of " + ShowRow(expected_rows[i]) + " is not " + std::to_string(depths[i]) + "\n";
    }
  }
  // Args of each slice that has some expected.
  for (const auto& [id, args] : expected_args) {
    std::multiset<std::pair<std::string, std::string>> got;
    simdjson::dom::parser parser;
    for (const Slice& s : t.slices()) {
      SliceRow r{TrackName(t, s.track),
                 ProcessName(t, s.track),
                 t.metadata().base_time_ns + s.ts_ns,
                 s.dur_ns,
                 std::string(t.Str(s.category)),
                 std::string(t.Str(s.name))};
      if (ShowRow(r) == id) FlattenArgs(parser.parse(t.ArgsJson(s.args)).value(), "", &got);
    }
    for (const Instant& i : t.instants()) {
      SliceRow r{TrackName(t, i.track),
                 ProcessName(t, i.track),
                 t.metadata().base_time_ns + i.ts_ns,
                 0,
                 std::string(t.Str(i.category)),
                 std::string(t.Str(i.name))};
      if (ShowRow(r) == id) FlattenArgs(parser.parse(t.ArgsJson(i.args)).value(), "", &got);
    }
    if (got != args) out += "  args of " + id + " differ\n";
  }
  return out;
}

using ArgSet = std::multiset<std::pair<std::string, std::string>>;
std::string ShowArg(const std::pair<std::string, std::string>& a) {
  return a.first + " = " + a.second;
}

std::string CheckArgs(const Trace& t, const std::vector<CsvRow>& rows) {
  ArgSet expected, actual;
  for (const CsvRow& r : rows) {
    const std::string key = Cell(r, "key");
    if (key.rfind("debug.", 0) != 0) continue;  // Perfetto's own args: not modelled
    expected.emplace(key.substr(6), Coalesce(r, {"string_value", "int_value"}));
  }
  simdjson::dom::parser parser;
  for (const Slice& s : t.slices())
    FlattenArgs(parser.parse(t.ArgsJson(s.args)).value(), "", &actual);
  for (const Instant& i : t.instants()) {
    FlattenArgs(parser.parse(t.ArgsJson(i.args)).value(), "", &actual);
  }
  return Diff<std::pair<std::string, std::string>>(expected, actual, ShowArg);
}

std::string CheckFlows(const Trace& t, const std::vector<CsvRow>& rows) {
  ArgSet expected, actual;
  for (const CsvRow& r : rows) expected.emplace(Cell(r, "slice_out"), Cell(r, "slice_in"));
  for (const Flow& f : t.flows()) {
    actual.emplace(std::string(t.Str(t.slices()[f.from].name)),
                   std::string(t.Str(t.slices()[f.to].name)));
  }
  return Diff<std::pair<std::string, std::string>>(
      expected, actual, [](const auto& f) { return f.first + " -> " + f.second; });
}

// Counter samples: (counter, process, ts, value rounded to 1e-6).
std::string CheckCounters(const Trace& t, const std::vector<CsvRow>& rows, bool values_only) {
  using Sample = std::tuple<std::string, std::string, int64_t, int64_t>;
  auto micro = [](double v) { return static_cast<int64_t>(std::llround(v * 1e6)); };
  std::multiset<Sample> expected, actual;
  for (const CsvRow& r : rows) {
    expected.emplace(values_only ? "" : Cell(r, "counter_name"),
                     values_only ? "" : Coalesce(r, {"process", "thread_process"}),
                     std::stoll(Cell(r, "ts")), micro(std::stod(Cell(r, "value"))));
  }
  for (const CounterSample& c : t.counters()) {
    actual.emplace(values_only ? "" : TrackName(t, c.track),
                   values_only ? "" : ProcessName(t, c.track), t.metadata().base_time_ns + c.ts_ns,
                   micro(c.value));
  }
  return Diff<Sample>(expected, actual, [](const Sample& s) {
    return std::get<0>(s) + "@" + std::get<1>(s) + " " + std::to_string(std::get<2>(s)) + " = " +
           std::to_string(std::get<3>(s)) + "e-6";
  });
}

std::string CheckThreads(const Trace& t, const std::vector<CsvRow>& rows) {
  using Thread = std::tuple<std::string, std::string, std::string, std::string>;
  std::multiset<Thread> expected, actual;
  for (const CsvRow& r : rows) {
    if (Cell(r, "tname").empty() && Cell(r, "tid") == Cell(r, "pid")) continue;  // implicit main
    expected.emplace(Cell(r, "tid"), Cell(r, "pid"), Cell(r, "pname"), Cell(r, "tname"));
  }
  for (const Track& k : t.tracks()) {
    const Process& p = t.processes()[k.process];
    actual.emplace(std::to_string(k.tid), std::to_string(p.pid), std::string(t.Str(p.name)),
                   std::string(t.Str(k.name)));
  }
  return Diff<Thread>(expected, actual, [](const Thread& x) {
    return std::get<0>(x) + "/" + std::get<1>(x) + " " + std::get<2>(x) + ":" + std::get<3>(x);
  });
}

std::set<std::string> ModelNames(const Trace& t) {
  std::set<std::string> names;
  for (const Track& k : t.tracks()) names.insert(std::string(t.Str(k.name)));
  for (const Process& p : t.processes()) names.insert(std::string(t.Str(p.name)));
  names.erase("");
  return names;
}

std::string CheckNames(const std::set<std::string>& expected, const std::set<std::string>& actual) {
  std::multiset<std::string> e(expected.begin(), expected.end()), a(actual.begin(), actual.end());
  return Diff<std::string>(e, a, [](const std::string& s) { return s; });
}

std::string CheckCase(const Trace& t, const std::vector<CsvRow>& rows, const CaseRule& rule,
                      const ImportStats& stats) {
  switch (rule.check) {
    case Check::kSlices:
      return CheckSlices(t, rows, rule);
    case Check::kArgs:
      return CheckArgs(t, rows);
    case Check::kFlows:
      return CheckFlows(t, rows);
    case Check::kCounters:
      return CheckCounters(t, rows, false);
    case Check::kCounterValues:
      return CheckCounters(t, rows, true);
    case Check::kThreads:
      return CheckThreads(t, rows);
    case Check::kProcessNames: {
      std::set<std::string> expected, actual;
      for (const CsvRow& r : rows) expected.insert(Cell(r, "name"));
      for (const Process& p : t.processes()) actual.insert(std::string(t.Str(p.name)));
      expected.erase("");
      actual.erase("");
      return CheckNames(expected, actual);
    }
    case Check::kTrackNames: {
      std::set<std::string> expected;
      for (const CsvRow& r : rows) {
        std::string name = Cell(r, "name");
        for (const char* prefix : {"thread=", "process="}) {
          if (name.rfind(prefix, 0) == 0) name = name.substr(std::string(prefix).size());
        }
        if (!name.empty()) expected.insert(name);
      }
      return CheckNames(expected, ModelNames(t));
    }
    case Check::kSliceNames: {
      std::string out;
      std::set<std::string> names;
      for (const auto& [row, depth] : ModelSlices(t)) names.insert(row.name);
      for (const CsvRow& r : rows) {
        if (names.count(Cell(r, "name")) == 0) out += "  missing slice " + Cell(r, "name") + "\n";
      }
      return out;
    }
    case Check::kTsName: {
      std::multiset<std::pair<std::string, std::string>> expected, actual;
      for (const CsvRow& r : rows) expected.emplace(Cell(r, "ts"), Cell(r, "name"));
      for (const auto& [row, depth] : ModelSlices(t)) {
        actual.emplace(std::to_string(row.ts), row.name);
      }
      return Diff<std::pair<std::string, std::string>>(expected, actual, ShowArg);
    }
    case Check::kOverflow: {
      const auto model = ModelSlices(t);
      const CsvRow& r = rows.at(0);
      std::string out;
      if (std::to_string(model.size()) != Cell(r, "slice_count")) {
        out += "  " + std::to_string(model.size()) + " slices:";
        for (const auto& [row, depth] : model) out += " " + ShowRow(row);
        out += "\n";
      }
      if (model.size() == 1 && (model[0].first.name != Cell(r, "slice_name") ||
                                std::to_string(model[0].first.ts) != Cell(r, "slice_ts"))) {
        out += "  the slice is " + ShowRow(model[0].first) + "\n";
      }
      const std::string errors = Coalesce(r, {"errors", "track_errors"});
      if (stats.skipped < std::stoull(errors))
        out += "  fewer events skipped than " + errors + "\n";
      return out;
    }
    case Check::kIds: {
      std::string out;
      for (const CsvRow& r : rows) {
        bool found = false;
        for (const Process& p : t.processes()) {
          found |= std::to_string(p.pid) == Cell(r, "pid") && t.Str(p.name) == Cell(r, "name");
        }
        for (const Track& k : t.tracks()) {
          found |= std::to_string(k.tid) == Cell(r, "pid") && t.Str(k.name) == Cell(r, "name");
        }
        if (!found)
          out += "  no process or thread " + Cell(r, "pid") + " " + Cell(r, "name") + "\n";
      }
      return out;
    }
    case Check::kImports:
      return "";
  }
  return "";
}

TEST(PerfettoConformance, EveryTrackEventCase) {
  const fs::path dir = CasesDir();
  if (!fs::exists(dir / "cases.tsv")) {
    GTEST_SKIP() << "no encoded cases in " << dir
                 << ": protoc (Debian protobuf-compiler) was not found when configuring, or the "
                    "perfetto_encode_cases test did not run first (run through ctest)";
  }
  const std::vector<IndexEntry> index = ReadIndex(dir);
  ASSERT_GE(index.size(), 30u) << "tests.py should hold Perfetto's TrackEvent cases";
  size_t compared = 0;
  for (const IndexEntry& e : index) {
    SCOPED_TRACE(e.name);
    if (e.status != "ok") {
      std::printf("%-60s not encoded: %s\n", e.name.c_str(), e.note.c_str());
      continue;
    }
    const CaseRule* rule = nullptr;
    for (const CaseRule& r : kRules) {
      if (e.name == r.name) rule = &r;
    }
    ASSERT_NE(rule, nullptr) << "no rule for case " << e.name << ": add it to kRules";
    Trace trace;
    ImportStats stats;
    const Status st = ImportTrace((dir / (e.name + ".pftrace")).string(), &trace, &stats);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(stats.format, TraceFormat::kPerfetto);
    const std::vector<CsvRow> rows = ReadCsv(dir / (e.name + ".csv"));
    ASSERT_FALSE(rows.empty());
    const std::string diff = CheckCase(trace, rows, *rule, stats);
    EXPECT_EQ(diff, "") << "case " << e.name << " differs from Perfetto's expected output:\n"
                        << diff;
    std::printf("%-60s %s%s%s\n", e.name.c_str(), diff.empty() ? "same" : "DIFFERS",
                *rule->not_modelled ? "; not modelled: " : "", rule->not_modelled);
    ++compared;
  }
  EXPECT_GE(compared, 30u);
}

TEST(PerfettoConformance, NestedTracksOpensWithEveryTrackAndFlow) {
  ASSERT_FALSE(FixturesDir().empty()) << FixturesProblem();
  Trace trace;
  ImportStats stats;
  const Status st = ImportTrace(
      (FixturesDir() / "perfetto" / "nested_tracks.perfetto-trace").string(), &trace, &stats);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(stats.format, TraceFormat::kPerfetto);
  EXPECT_EQ(stats.skipped, 0u);
  // 1364 track descriptors (nested up to 5 deep under parent_uuid), a slice on each, and 1360
  // flows, each from a slice's flow_ids to the terminating_flow_ids of a slice on a child track.
  EXPECT_EQ(trace.tracks().size(), 1364u);
  EXPECT_EQ(trace.slices().size(), 1364u);
  EXPECT_EQ(trace.flows().size(), 1360u);
  for (const Flow& f : trace.flows()) {
    ASSERT_NE(f.from, kNone);
    ASSERT_NE(f.to, kNone);
    const std::string_view from = trace.Str(trace.slices()[f.from].name);
    const std::string_view to = trace.Str(trace.slices()[f.to].name);
    // "Lk Slice i" flows into "L(k+1) Slice j".
    EXPECT_EQ(to[1] - from[1], 1) << from << " -> " << to;
  }
}

}  // namespace
}  // namespace opscope::testing
