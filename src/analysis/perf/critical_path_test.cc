// The critical-path graph and path on HTA's own critical_path fixture (simple_add: AlexNet forward
// on an A100), checked against the edges HTA's test suite checks by hand
// (tests/test_critical_path_analysis.py): the nested aten::relu_ -> aten::clamp_min_ ->
// cudaLaunchKernel spans, a launch delay, a kernel-kernel gap, a device -> host sync, and the
// path's size. Times in that trace are whole microseconds, here nanoseconds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "analysis/perf/critical_path_graph.h"
#include "opscope/analysis.h"
#include "opscope/import.h"
#include "opscope/perf_analysis.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;
using analysis::CpEdgeType;
using analysis::CpGraph;

// <source>/../shared/fixtures, else /work/shared/fixtures (as tests/analysis/test_support.h).
fs::path Fixture() {
  fs::path base = "/work/shared/fixtures";
  if (const char* src = std::getenv("OPSCOPE_SOURCE_DIR")) {
    if (fs::is_directory(fs::path(src) / ".." / "shared" / "fixtures")) {
      base = fs::path(src) / ".." / "shared" / "fixtures";
    }
  }
  return base / "traces" / "hta" / "critical_path" / "simple_add" /
         "benchmark_result_493459_1694039959_trace.json.gz";
}

class SimpleAdd : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ImportTrace(Fixture().string(), &trace_).ok()) << Fixture();
    options_.annotation = "[param|pytorch.model.alex_net|0|0|0|measure|forward]";
    options_.instance = 1;
    options_.zero_weight_launch_edges = true;  // as HTA's test runs it
    cp_ = ComputeCriticalPath(trace_, options_);
    ASSERT_TRUE(cp_.ok) << cp_.error;
    graph_ = analysis::BuildCriticalPathGraph(
        trace_, {.start_ns = cp_.start_ns, .end_ns = cp_.end_ns, .zero_weight_launch_edges = true});
  }
  // The slice with this name and External id (host ops) or correlation (runtime, kernels).
  uint32_t Find(std::string_view name, int64_t id, bool by_correlation) const {
    const auto& slices = trace_.slices();
    for (uint32_t i = 0; i < slices.size(); ++i) {
      const int64_t v = by_correlation ? slices[i].correlation : slices[i].external_id;
      if (v == id && trace_.Str(slices[i].name).starts_with(name)) return i;
    }
    ADD_FAILURE() << "no " << name << " with id " << id;
    return kNone;
  }
  uint32_t StartNode(uint32_t slice) const { return graph_.start_node.at(slice); }
  // The edge between two nodes, checked for type and weight (ns) and attributed event.
  void ExpectEdge(uint32_t from, uint32_t to, CpEdgeType type, int64_t weight_ns,
                  uint32_t attributed) const {
    for (const auto& e : graph_.edges) {
      if (e.from != from || e.to != to) continue;
      EXPECT_EQ(e.type, type) << from << "->" << to;
      EXPECT_EQ(e.weight_ns, weight_ns) << from << "->" << to;
      EXPECT_EQ(e.attributed, attributed) << from << "->" << to;
      return;
    }
    ADD_FAILURE() << "no edge " << from << " -> " << to;
  }

  Trace trace_;
  CriticalPathOptions options_;
  CriticalPath cp_;
  CpGraph graph_;
};

TEST_F(SimpleAdd, NestedOpsAreChainedThroughTheirCallStack) {
  // aten::relu_ [ aten::clamp_min_ [ cudaLaunchKernel ] ]: 15 us to the child's start, 14 us to
  // the launch, the launch's 17 us, 15 us back to clamp's end, 32 us to relu's end.
  const uint32_t relu = Find("aten::relu_", 287, false);
  const uint32_t clamp = Find("aten::clamp_min_", 288, false);
  const uint32_t launch = Find("cudaLaunchKernel", 5543, true);
  const uint32_t r = StartNode(relu), c = StartNode(clamp), l = StartNode(launch);
  ExpectEdge(r, c, CpEdgeType::kOperator, 15000, relu);
  ExpectEdge(c, l, CpEdgeType::kOperator, 14000, clamp);
  ExpectEdge(l, l + 1, CpEdgeType::kOperator, 17000, launch);
  ExpectEdge(l + 1, c + 1, CpEdgeType::kOperator, 15000, clamp);
  ExpectEdge(c + 1, r + 1, CpEdgeType::kOperator, 32000, relu);
}

TEST_F(SimpleAdd, LaunchDelayKernelGapAndDeviceSync) {
  // The fft kernel (correlation 5597) waited 27 us for its launch; the gemm after it (5604)
  // started 7 us after it ended, with a weight-0 launch edge kept for causality.
  const uint32_t fft = Find("void fft2d_r2c_32x32", 5597, true);
  const uint32_t fft_launch = trace_.Link(fft).runtime;
  const uint32_t gemm = Find("ampere_gcgemm_64x64_nt", 5604, true);
  const uint32_t gemm_launch = trace_.Link(gemm).runtime;
  ExpectEdge(StartNode(fft_launch), StartNode(fft), CpEdgeType::kLaunchDelay, 27000, kNone);
  ExpectEdge(StartNode(fft) + 1, StartNode(gemm), CpEdgeType::kKernelKernelDelay, 7000, fft);
  ExpectEdge(StartNode(gemm_launch), StartNode(gemm), CpEdgeType::kLaunchDelay, 0, kNone);
  // cudaDeviceSynchronize (5894) waits for the last kernel on stream 7 (5889).
  const uint32_t last = Find("void epilogue::impl::globalKernel", 5889, true);
  const uint32_t sync = Find("cudaDeviceSynchronize", 5894, true);
  ExpectEdge(StartNode(last) + 1, StartNode(sync) + 1, CpEdgeType::kSync, 0, kNone);
  EXPECT_EQ(graph_.negative_weights, 0);
}

TEST_F(SimpleAdd, PathSizeAndBreakdown) {
  // HTA: 315 nodes on the path, over 159 events.
  EXPECT_EQ(cp_.path.size(), 314u);
  std::set<uint32_t> events;
  for (const auto& e : cp_.path) {
    events.insert(e.from_slice);
    events.insert(e.to_slice);
  }
  EXPECT_EQ(events.size(), 159u);
  int64_t sum = 0;
  for (const auto& e : cp_.path) sum += e.weight_ns;
  EXPECT_EQ(sum, cp_.length_ns);
  EXPECT_EQ(cp_.device_compute_ns + cp_.communication_ns + cp_.host_ops_ns +
                cp_.launch_overhead_ns + cp_.idle_ns,
            cp_.length_ns);
  EXPECT_LE(cp_.length_ns, cp_.end_ns - cp_.start_ns + 1000000);
}

// The coverage of a hand-made step of 100 us: ops a [10, 20] and b [30, 40], a blocking
// cudaDeviceSynchronize [45, 70] and op d [72, 74] on the main thread, aten::c [75, 90] on a
// thread no edge joins. The path a -> b -> sync -> d weighs 22 us; the rest is 17 us of host gaps
// (20-30, 40-45, 70-72), 25 us of sync wait, 10 us before the path, and after it 15 us while the
// other thread works and 11 us more. No device activity, so no note about cuda_sync.
TEST(CriticalPathCoverage, HandMadeStepAddsUpByCause) {
  const std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0,
     "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::a", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "aten::b", "pid": 1, "tid": 1, "ts": 30, "dur": 10},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 1, "tid": 1,
     "ts": 45, "dur": 25, "args": {"correlation": 9}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::d", "pid": 1, "tid": 1, "ts": 72, "dur": 2},
    {"ph": "X", "cat": "cpu_op", "name": "aten::c", "pid": 1, "tid": 2, "ts": 75, "dur": 15}]})";
  Trace trace;
  ASSERT_TRUE(ImportTraceFromMemory(json, &trace).ok());
  const CriticalPath cp = ComputeCriticalPath(trace);
  ASSERT_TRUE(cp.ok) << cp.error;
  const CriticalPathCoverage& c = cp.coverage;
  EXPECT_EQ(c.step_ns, 100000);
  EXPECT_EQ(c.total_ns, 100000);
  EXPECT_EQ(c.path_ns, 22000);
  EXPECT_EQ(c.host_gaps_ns, 17000);
  EXPECT_EQ(c.sync_waits_ns, 25000);
  EXPECT_EQ(c.runtime_lock_ns, 0);
  EXPECT_EQ(c.before_path_ns, 10000);
  EXPECT_EQ(c.threads_not_connected_ns, 15000);
  EXPECT_EQ(c.threads_not_connected, 1);
  EXPECT_EQ(c.after_path_ns, 11000);
  EXPECT_EQ(c.out_of_order_ns, 0);
  EXPECT_TRUE(c.notes.empty());
  ASSERT_EQ(c.gaps.size(), 8u);
  EXPECT_EQ(c.gaps[0].cause, "before_path");
  EXPECT_EQ(c.gaps[3].cause, "sync_wait");
  EXPECT_EQ(c.gaps[3].start_ns, 45000);
  EXPECT_EQ(c.gaps[3].end_ns, 70000);
  EXPECT_EQ(c.gaps[5].cause, "after_path");
  EXPECT_EQ(c.gaps[6].cause, "thread_not_connected");
  EXPECT_EQ(c.gaps[6].start_ns, 75000);
  EXPECT_EQ(c.gaps[7].cause, "after_path");
}

// A kernel but no cuda_sync event: the coverage says what the trace lacks.
TEST(CriticalPathCoverage, NotesATraceWithoutSyncEvents) {
  const std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::a", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12,
     "dur": 5, "args": {"correlation": 3}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20, "dur": 30,
     "args": {"correlation": 3, "stream": 7}}]})";
  Trace trace;
  ASSERT_TRUE(ImportTraceFromMemory(json, &trace).ok());
  const CriticalPath cp = ComputeCriticalPath(trace);
  ASSERT_TRUE(cp.ok) << cp.error;
  ASSERT_EQ(cp.coverage.notes.size(), 1u);
  EXPECT_NE(cp.coverage.notes[0].find("cuda_sync"), std::string::npos);
}

}  // namespace
}  // namespace opscope
