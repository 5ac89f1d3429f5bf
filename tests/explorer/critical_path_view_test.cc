// The Explorer's critical-path view over HTTP: /api/trace/N/critical_path lists the path of the
// step asked for (HTA's critical path, src/analysis) with what bounds it and HTA's idle-time
// breakdown per stream, and /marks?critical_path=1 marks exactly the path's events on the
// timeline. Runs on HTA's own critical_path fixture (simple_add: AlexNet forward on an A100) and a
// hand-made trace whose path is known by construction.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "opscope/analysis.h"
#include "opscope/explorer.h"
#include "opscope/import.h"
#include "opscope/perf_analysis.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

fs::path SimpleAdd() {
  const char* dir = std::getenv("OPSCOPE_FIXTURES_DIR");
  return fs::path(dir ? dir : "/work/shared/fixtures") / "traces" / "hta" / "critical_path" /
         "simple_add" / "benchmark_result_493459_1694039959_trace.json.gz";
}

// One step on one stream, by construction: aten::mm launches a 40 us kernel that starts 2 us after
// its launch returns, aten::add launches a 10 us kernel queued right behind it, and
// cudaDeviceSynchronize waits for both. The path: mm's start -> its launch (2 us of host op) ->
// (5 us launch delay, launch start to kernel start) -> the mm kernel (40 us) -> the add kernel
// queued behind it (kernel-kernel edge, 0 us) -> its end (10 us). The weight-0 sync edge to
// cudaDeviceSynchronize's end adds nothing, and networkx's dag_longest_path (which HTA uses) ends
// at the first farthest node, so the synchronize is not on it.
constexpr const char* kHandMade = R"({"schemaVersion": 1, "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 10, "args": {"External id": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 3, "args": {"External id": 1, "correlation": 11}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 22, "dur": 8, "args": {"External id": 2}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 24, "dur": 3, "args": {"External id": 2, "correlation": 12}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 1, "tid": 1, "ts": 32, "dur": 40, "args": {"correlation": 13}},
 {"ph": "X", "cat": "kernel", "name": "mm_kernel", "pid": 0, "tid": 7, "ts": 17, "dur": 40, "args": {"External id": 1, "correlation": 11, "stream": 7, "device": 0}},
 {"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 57, "dur": 10, "args": {"External id": 2, "correlation": 12, "stream": 7, "device": 0}}
]})";

class CriticalPathViewTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    explorer_ = new Explorer(ExplorerOptions{});
    Trace hta;
    ASSERT_TRUE(ImportTrace(SimpleAdd().string(), &hta).ok()) << SimpleAdd();
    explorer_->AddTrace("simple_add", std::move(hta), SimpleAdd().string());
    Trace made;
    ASSERT_TRUE(ImportTraceFromMemory(kHandMade, &made).ok());
    explorer_->AddTrace("hand_made", std::move(made), "hand_made.json");
    const Status started = explorer_->Start();
    ASSERT_TRUE(started.ok()) << started.message();
  }
  static void TearDownTestSuite() {
    delete explorer_;
    explorer_ = nullptr;
  }
  static std::string Get(const std::string& path, int status = 200) {
    httplib::Client client("127.0.0.1", explorer_->port());
    auto res = client.Get(path.c_str());
    EXPECT_TRUE(res) << path;
    if (!res) return {};
    EXPECT_EQ(res->status, status) << path << ": " << res->body;
    return res->body;
  }
  // The `matches` of /marks?critical_path=1 over the whole trace (every path event, merged or not).
  static int64_t PathMarks(int trace, const std::string& query) {
    simdjson::dom::parser p;
    const std::string body =
        Get(fmt::format("/api/trace/{}/marks?critical_path=1&width=20000{}", trace, query));
    simdjson::dom::element doc;
    EXPECT_EQ(p.parse(body).get(doc), simdjson::SUCCESS) << body;
    int64_t matches = -1;
    EXPECT_EQ(doc["matches"].get_int64().get(matches), simdjson::SUCCESS) << body;
    return matches;
  }
  static Explorer* explorer_;
};

Explorer* CriticalPathViewTest::explorer_ = nullptr;

int64_t Int(simdjson::dom::element e, const char* key) {
  int64_t v = -1;
  EXPECT_EQ(e[key].get_int64().get(v), simdjson::SUCCESS) << key;
  return v;
}

TEST_F(CriticalPathViewTest, HandMadeStepPathIsTheOneBuiltIn) {
  simdjson::dom::parser p;
  const std::string body = Get("/api/trace/1/critical_path");
  simdjson::dom::element cp;
  ASSERT_EQ(p.parse(body).get(cp), simdjson::SUCCESS) << body;
  bool ok = false;
  ASSERT_EQ(cp["ok"].get_bool().get(ok), simdjson::SUCCESS);
  ASSERT_TRUE(ok) << body;
  std::string_view step;
  ASSERT_EQ(cp["step"].get_string().get(step), simdjson::SUCCESS);
  EXPECT_EQ(step, "ProfilerStep#0");
  EXPECT_EQ(Int(cp, "length_ns"), 57000);
  const simdjson::dom::element b = cp["breakdown"];
  EXPECT_EQ(Int(b, "device_compute_ns"), 50000);
  EXPECT_EQ(Int(b, "launch_overhead_ns"), 5000);
  EXPECT_EQ(Int(b, "host_ops_ns"), 2000);
  EXPECT_EQ(Int(b, "idle_ns"), 0);
  EXPECT_EQ(Int(b, "communication_ns"), 0);
  std::set<std::string> names;
  for (simdjson::dom::element e : cp["events"].get_array()) {
    std::string_view name;
    ASSERT_EQ(e["event"]["name"].get_string().get(name), simdjson::SUCCESS);
    names.emplace(name);
    EXPECT_GE(Int(e["event"], "lane"), 0) << name;  // the UI can jump to it
  }
  EXPECT_TRUE(names.count("mm_kernel") && names.count("add_kernel") && names.count("aten::mm"))
      << body;
  EXPECT_EQ(Int(cp, "path_slices"), 4) << body;  // mm, its launch, both kernels
  EXPECT_EQ(PathMarks(1, ""), 4);
  // HTA's idle time on stream 7: one gap, the 0 us between the two kernels (kernel wait).
  const simdjson::dom::array streams = cp["idle_breakdown"]["streams"].get_array();
  ASSERT_EQ(streams.size(), 1u) << body;
  EXPECT_EQ(Int(streams.at(0), "stream"), 7);
  EXPECT_EQ(Int(streams.at(0), "kernel_wait_intervals"), 1);
  EXPECT_EQ(Int(streams.at(0), "host_wait_intervals") + Int(streams.at(0), "other_intervals"), 0);
}

TEST_F(CriticalPathViewTest, HtaFixtureStepMatchesTheAnalysisAndTheMarks) {
  const std::string step = "[param|pytorch.model.alex_net|0|0|0|measure|forward]";
  const std::string query = "&step=" + httplib::detail::encode_query_param(step) + "&instance=1";
  simdjson::dom::parser p;
  const std::string body = Get("/api/trace/0/critical_path?" + query.substr(1));
  simdjson::dom::element cp;
  ASSERT_EQ(p.parse(body).get(cp), simdjson::SUCCESS);
  bool ok = false;
  ASSERT_EQ(cp["ok"].get_bool().get(ok), simdjson::SUCCESS);
  ASSERT_TRUE(ok) << body.substr(0, 300);
  // The same path as the analysis computes for `opscope report --perf --step ... --step-instance
  // 1`.
  Trace trace;
  ASSERT_TRUE(ImportTrace(SimpleAdd().string(), &trace).ok());
  const CriticalPath want = ComputeCriticalPath(trace, {.annotation = step, .instance = 1});
  ASSERT_TRUE(want.ok);
  std::set<uint32_t> slices;
  for (const CriticalPathEdge& e : want.path) {
    slices.insert(e.from_slice);
    slices.insert(e.to_slice);
  }
  EXPECT_EQ(Int(cp, "length_ns"), want.length_ns);
  EXPECT_EQ(Int(cp, "path_slices"), static_cast<int64_t>(slices.size()));
  EXPECT_EQ(PathMarks(0, query), static_cast<int64_t>(slices.size()));
  const simdjson::dom::element b = cp["breakdown"];
  EXPECT_EQ(Int(b, "device_compute_ns") + Int(b, "communication_ns") + Int(b, "host_ops_ns") +
                Int(b, "launch_overhead_ns") + Int(b, "idle_ns"),
            Int(cp, "length_ns"));
  int64_t previous = INT64_MAX, listed = 0;
  for (simdjson::dom::element e : cp["events"].get_array()) {
    const int64_t id = Int(e["event"], "id");
    EXPECT_TRUE(slices.count(static_cast<uint32_t>(id))) << id;
    EXPECT_LE(Int(e, "on_path_ns"), previous);  // most path time first
    previous = Int(e, "on_path_ns");
    ++listed;
  }
  EXPECT_EQ(listed, std::min<int64_t>(200, Int(cp, "events_total")));
}

TEST_F(CriticalPathViewTest, UnknownStepAndBadParameters) {
  simdjson::dom::parser p;
  const std::string body = Get("/api/trace/1/critical_path?step=NoSuchStep");
  simdjson::dom::element cp;
  ASSERT_EQ(p.parse(body).get(cp), simdjson::SUCCESS);
  bool ok = true;
  ASSERT_EQ(cp["ok"].get_bool().get(ok), simdjson::SUCCESS);
  EXPECT_FALSE(ok);
  std::string_view error;
  ASSERT_EQ(cp["error"].get_string().get(error), simdjson::SUCCESS);
  EXPECT_NE(error.find("NoSuchStep"), std::string_view::npos) << error;
  EXPECT_EQ(PathMarks(1, "&step=NoSuchStep"), 0);
  Get("/api/trace/1/critical_path?instance=-1", 400);
  Get("/api/trace/1/critical_path?instance=x", 400);
  Get("/api/trace/1/critical_path?step=" + std::string(300, 'a'), 400);
  Get("/api/trace/9/critical_path", 400);
  Get("/api/trace/1/marks?critical_path=2", 400);
}

}  // namespace
}  // namespace opscope
