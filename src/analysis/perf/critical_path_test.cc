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

}  // namespace
}  // namespace opscope
