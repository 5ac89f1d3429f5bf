// The idle-time breakdown and the critical path against HTA's own answers
// (tests/data/peers/hta/<trace>.json, written by tests/analysis/peers/make_references.sh with HTA
// run from source, timestamps as written) on the shared fixtures and on traces opscope's code was
// not written against (tests/data/traces: generated training steps). HTA works in float
// microseconds, opscope in integer nanoseconds: sums agree to a few nanoseconds per interval or
// edge, counts exactly.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/perf_analysis.h"
#include "tests/analysis/test_support.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

fs::path SourceDir() {
  const char* dir = std::getenv("OPSCOPE_SOURCE_DIR");
  return dir ? fs::path(dir) : fs::current_path();
}

// The trace a reference was made from: tests/data/traces/NAME, else NAME under the fixtures.
fs::path FindTrace(const std::string& name) {
  const fs::path own = SourceDir() / "tests" / "data" / "traces" / name;
  if (fs::exists(own)) return own;
  for (const fs::path& p : testing::TraceFiles(testing::FixturesDir() / "traces")) {
    if (p.filename() == name) return p;
  }
  return {};
}

struct Reference {
  fs::path file;
  fs::path trace;
  simdjson::dom::element doc;
};

class HtaReference : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(testing::FixturesDir().empty()) << testing::FixturesProblem();
    const fs::path dir = SourceDir() / "tests" / "data" / "peers" / "hta";
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".json") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      auto& parser = parsers_.emplace_back(std::make_unique<simdjson::dom::parser>());
      simdjson::dom::element doc;
      ASSERT_EQ(parser->load(f.string()).get(doc), simdjson::SUCCESS) << f;
      const std::string name(doc["trace"].get_string().value());
      const fs::path trace = FindTrace(name);
      ASSERT_FALSE(trace.empty()) << "no trace " << name << " for " << f;
      refs_.push_back({f, trace, doc});
    }
    ASSERT_GE(refs_.size(), 10u);
  }
  Trace Load(const fs::path& path) {
    Trace trace;
    const Status st = ImportTrace(path.string(), &trace);
    EXPECT_TRUE(st.ok()) << st.message();
    return trace;
  }

  std::vector<std::unique_ptr<simdjson::dom::parser>> parsers_;
  std::vector<Reference> refs_;
};

double Double(simdjson::dom::element e) {
  double d = 0;
  if (e.get_double().get(d) == simdjson::SUCCESS) return d;
  int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  ADD_FAILURE() << "not a number: " << e;
  return kNaN;
}

int64_t Int(simdjson::dom::element e) {
  int64_t i = 0;
  EXPECT_EQ(e.get_int64().get(i), simdjson::SUCCESS) << e;
  return i;
}

// HTA's get_idle_time_breakdown per stream, at its default consecutive_kernel_delay (30) and at
// 5, counts exactly and times to HTA's rounding (two decimals of a microsecond).
TEST_F(HtaReference, IdleTimeBreakdownEqualsHtas) {
  int streams = 0, kernel_wait_intervals = 0;
  for (const Reference& ref : refs_) {
    SCOPED_TRACE(ref.trace.filename().string());
    const Trace trace = Load(ref.trace);
    for (auto [key, by_stream] : ref.doc["idle"].get_object()) {
      const double delay = std::stod(std::string(key));
      const IdleBreakdown idle =
          ComputeIdleBreakdown(trace, {.consecutive_kernel_delay_us = delay});
      EXPECT_EQ(idle.consecutive_kernel_delay_us, delay);
      if (by_stream["error"].error() == simdjson::SUCCESS) {  // HTA: no device streams
        EXPECT_TRUE(idle.streams.empty());
        continue;
      }
      EXPECT_EQ(idle.streams.size(), by_stream.get_object().size());
      for (auto [stream_key, categories] : by_stream.get_object()) {
        const int64_t stream = std::stoll(std::string(stream_key));
        const StreamIdle* s = nullptr;
        for (const StreamIdle& x : idle.streams) {
          if (x.stream == stream) s = &x;
        }
        ASSERT_NE(s, nullptr) << "stream " << stream;
        const std::string what = "stream " + std::to_string(stream) + " at " + std::string(key);
        const std::pair<const char*, std::pair<int64_t, int64_t>> parts[] = {
            {"host_wait", {s->host_wait_ns, s->host_wait_intervals}},
            {"kernel_wait", {s->kernel_wait_ns, s->kernel_wait_intervals}},
            {"other", {s->other_ns, s->other_intervals}},
        };
        for (const auto& [cat, ours] : parts) {
          simdjson::dom::element c;
          int64_t n = 0;
          double us = 0;
          if (categories[cat].get(c) == simdjson::SUCCESS) {
            n = Int(c["intervals"]);
            us = Double(c["us"]);
          }
          EXPECT_EQ(ours.second, n) << what << " " << cat << " intervals";
          EXPECT_NEAR(static_cast<double>(ours.first) / 1e3, us, 5.001e-3) << what << " " << cat;
        }
        kernel_wait_intervals += static_cast<int>(s->kernel_wait_intervals);
        ++streams;
      }
    }
  }
  EXPECT_GE(streams, 20);
  EXPECT_GT(kernel_wait_intervals, 100);  // the threshold decides real gaps
}

// The path's coverage of its step: the parts add up to the step (plus the path's time past its
// end) exactly, the gaps are in the step's span and sum to their causes, and the note about
// cuda_sync events is there exactly when the trace has device activity and no cuda_sync event.
void ExpectCoverageAddsUp(const CriticalPath& cp, const std::string& what) {
  const CriticalPathCoverage& c = cp.coverage;
  EXPECT_EQ(c.step_ns, cp.end_ns - cp.start_ns) << what;
  EXPECT_EQ(c.path_ns, cp.length_ns) << what;
  EXPECT_EQ(c.total_ns, c.step_ns + c.outside_step_ns) << what;
  EXPECT_EQ(c.path_ns + c.host_gaps_ns + c.sync_waits_ns + c.runtime_lock_ns + c.before_path_ns +
                c.after_path_ns + c.threads_not_connected_ns + c.out_of_order_ns,
            c.total_ns)
      << what;
  std::map<std::string, int64_t> by_cause;
  for (const CriticalPathCoverage::Gap& g : c.gaps) {
    EXPECT_LT(g.start_ns, g.end_ns) << what;
    by_cause[g.cause] += g.end_ns - g.start_ns;
  }
  EXPECT_EQ(by_cause["host_gap"], c.host_gaps_ns) << what;
  EXPECT_EQ(by_cause["sync_wait"], c.sync_waits_ns) << what;
  EXPECT_EQ(by_cause["runtime_lock"], c.runtime_lock_ns) << what;
  EXPECT_EQ(by_cause["before_path"], c.before_path_ns) << what;
  EXPECT_EQ(by_cause["after_path"], c.after_path_ns) << what;
  EXPECT_EQ(by_cause["thread_not_connected"], c.threads_not_connected_ns) << what;
}

bool HasCudaSync(const Trace& trace) {
  for (const Slice& s : trace.slices()) {
    if (s.kind == ActivityKind::kSync) return true;
  }
  return false;
}

// HTA's critical_path_analysis of each step: the same graph (nodes, distinct edges), the same path
// length and the same time per bound_by, to 5 ns per path edge (HTA's float microseconds).
TEST_F(HtaReference, CriticalPathEqualsHtas) {
  int paths = 0;
  for (const Reference& ref : refs_) {
    SCOPED_TRACE(ref.trace.filename().string());
    const Trace trace = Load(ref.trace);
    const bool has_sync = HasCudaSync(trace);
    for (simdjson::dom::element hta : ref.doc["critical_path"].get_array()) {
      bool ok = false;
      ASSERT_EQ(hta["ok"].get(ok), simdjson::SUCCESS);
      if (!ok) continue;  // HTA found no path (a trace without device activity)
      CriticalPathOptions o;
      o.annotation = std::string(hta["step"].get_string().value());
      o.instance = static_cast<int>(Int(hta["host_instance"]));
      const CriticalPath cp = ComputeCriticalPath(trace, o);
      const std::string what = o.annotation + " #" + std::to_string(o.instance);
      ASSERT_TRUE(cp.ok) << what << ": " << cp.error;
      const int64_t edges = Int(hta["path_edges"]);
      const double tolerance_us = 5e-3 * static_cast<double>(edges) + 1e-6;
      EXPECT_EQ(cp.nodes, Int(hta["nodes"])) << what;
      EXPECT_EQ(cp.distinct_edges, Int(hta["edges"])) << what;
      EXPECT_EQ(static_cast<int64_t>(cp.path.size()), edges) << what;
      EXPECT_NEAR(static_cast<double>(cp.length_ns) / 1e3, Double(hta["length_us"]), tolerance_us)
          << what;
      std::map<std::string, double> bound;
      for (auto [k, v] : hta["bound_by_us"].get_object()) bound[std::string(k)] = Double(v);
      const std::pair<const char*, int64_t> ours[] = {
          {"cpu_bound", cp.host_ops_ns},
          {"gpu_compute_bound", cp.device_compute_ns},
          {"gpu_communication_bound", cp.communication_ns},
          {"gpu_kernel_launch_overhead", cp.launch_overhead_ns},
          {"gpu_kernel_kernel_overhead", cp.idle_ns},
      };
      for (const auto& [name, ns] : ours) {
        EXPECT_NEAR(static_cast<double>(ns) / 1e3, bound[name], tolerance_us)
            << what << " " << name;
      }
      ExpectCoverageAddsUp(cp, what);
      EXPECT_EQ(cp.coverage.notes.size(), has_sync ? 0u : 1u) << what;
      ++paths;
    }
  }
  EXPECT_GE(paths, 12);
}

}  // namespace
}  // namespace opscope
