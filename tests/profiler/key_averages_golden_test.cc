// Golden tests: fixed synthetic traces -> key_averages tables identical to PyTorch's layout.
// The expected files are written by golden/make_golden.py from rows computed by hand below.
#include <gtest/gtest.h>

#include "golden_util.h"
#include "opscope/key_averages.h"
#include "opscope/trace.h"

namespace opscope {
namespace {

using opscope::testing::ReadGolden;

constexpr const char* kLongName = "aten::_scaled_dot_product_flash_attention_for_cpu_backward_x";

void Add(Trace& t, uint32_t track, ActivityKind kind, const char* name, int64_t ts, int64_t dur,
         int64_t ext, int64_t corr = 0, const char* shapes = nullptr) {
  Slice s;
  s.kind = kind;
  s.name = t.Intern(name);
  s.category = t.Intern(KinetoCategory(kind));
  s.track = track;
  s.ts_ns = ts;
  s.dur_ns = dur;
  s.external_id = ext;
  s.correlation = corr;
  if (shapes != nullptr) s.input_shapes = t.Intern(shapes);
  t.AddSlice(s);
}

// Host thread 100:
//   A ProfilerStep#1 [0, 2.5ms)              user annotation
//     B aten::linear [10us, 1.21ms)           ext 2
//       C aten::matmul [20us, 1.02ms)         ext 3
//         D nrta_execute_schedule [30us, 430us)  runtime, ext 3, corr 101
//     E aten::mul [1.3ms, 1.45ms)             ext 4
//       F nrta_execute_schedule [1.31ms, 1.41ms) runtime, ext 4, corr 102
//     G aten::mul [1.5ms, 1.7505ms)           ext 5
//     H <60-char name> [1.8ms, 2.4ms)         ext 6
// NeuronCore 0, stream 7:
//   K1 nc_exec_running [450us, 1.25ms)  ext 3 corr 101  -> C's self device time
//   K2 nc_exec_running [1.42ms, 1.72ms) ext 4 corr 102  -> E's self device time
// Self CPU: A 299.5us (2500 - 1200 - 150 - 250.5 - 600), B 200, C 600, D 400, E 50, F 100,
// G 250.5, H 600; device totals: C 800 -> B 800, E 300, A 1100.
Trace MakeDeviceTrace() {
  Trace t;
  uint32_t host = t.AddProcess(100, "python");
  uint32_t thread = t.AddThreadTrack(host, 100, "thread 100 (python)");
  uint32_t dev = t.AddProcess(0, "NEURON 0", /*is_device=*/true);
  uint32_t stream = t.AddThreadTrack(dev, 7, "stream 7", TrackKind::kDeviceStream);
  // Added out of order on purpose: Finalize sorts.
  Add(t, stream, ActivityKind::kKernel, "nc_exec_running", 1'420'000, 300'000, 4, 102);
  Add(t, thread, ActivityKind::kCpuOp, "aten::mul", 1'300'000, 150'000, 4, 0, "[[8, 32], []]");
  Add(t, thread, ActivityKind::kUserAnnotation, "ProfilerStep#1", 0, 2'500'000, 1);
  Add(t, thread, ActivityKind::kCpuOp, "aten::linear", 10'000, 1'200'000, 2, 0,
      "[[8, 16], [32, 16], [32]]");
  Add(t, thread, ActivityKind::kCpuOp, "aten::matmul", 20'000, 1'000'000, 3, 0,
      "[[8, 16], [16, 32]]");
  Add(t, thread, ActivityKind::kRuntime, "nrta_execute_schedule", 30'000, 400'000, 3, 101);
  Add(t, stream, ActivityKind::kKernel, "nc_exec_running", 450'000, 800'000, 3, 101);
  Add(t, thread, ActivityKind::kRuntime, "nrta_execute_schedule", 1'310'000, 100'000, 4, 102);
  Add(t, thread, ActivityKind::kCpuOp, "aten::mul", 1'500'000, 250'500, 5, 0, "[[8, 32], [8, 32]]");
  Add(t, thread, ActivityKind::kCpuOp, kLongName, 1'800'000, 600'000, 6);
  t.metadata().device_type = "NEURON";
  t.Finalize();
  return t;
}

// Two host threads, no device:
//   thread 1: aten::conv2d [0, 1.5s) > aten::convolution [1us, 1.499s) > aten::convolution
//             [2us, 1.4s) (only child with its parent's name: merged, as PyTorch's
//             _remove_dup_nodes does) > aten::_convolution [3us, 1.003s)
//   thread 2: "μ-op" [5ns, 1004ns) and aten::is_leaf (filtered out like PyTorch)
// 3 records dropped.
Trace MakeCpuTrace() {
  Trace t;
  uint32_t host = t.AddProcess(1, "python");
  uint32_t t1 = t.AddThreadTrack(host, 1, "thread 1");
  uint32_t t2 = t.AddThreadTrack(host, 2, "thread 2");
  Add(t, t1, ActivityKind::kCpuOp, "aten::conv2d", 0, 1'500'000'000, 1);
  Add(t, t1, ActivityKind::kCpuOp, "aten::convolution", 1000, 1'499'000'000, 2);
  Add(t, t1, ActivityKind::kCpuOp, "aten::convolution", 2000, 1'400'000'000, 3);
  Add(t, t1, ActivityKind::kCpuOp, "aten::_convolution", 3000, 1'000'000'000, 4);
  Add(t, t2, ActivityKind::kCpuOp, "\xce\xbc-op", 5, 999, 5);
  Add(t, t2, ActivityKind::kCpuOp, "aten::is_leaf", 10, 5, 6);
  t.metadata().dropped.emplace_back("thread_buffer_full", 3);
  t.Finalize();
  return t;
}

TEST(KeyAveragesGoldenTest, DeviceTableInInsertionOrder) {
  KeyAverages avg = KeyAverages::FromTrace(MakeDeviceTrace());
  EXPECT_EQ(avg.Table(), ReadGolden("device_table.txt"));
  EXPECT_EQ(avg.device_name(), "NEURON");
  EXPECT_TRUE(avg.has_device_time());
  EXPECT_EQ(avg.unmatched_device_activity(), 0u);
}

class SortKeyGoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SortKeyGoldenTest, MatchesGolden) {
  KeyAverages avg = KeyAverages::FromTrace(MakeDeviceTrace());
  EXPECT_EQ(avg.Table(GetParam()),
            ReadGolden(std::string("device_table_sort_") + GetParam() + ".txt"));
}

INSTANTIATE_TEST_SUITE_P(AllKeys, SortKeyGoldenTest,
                         ::testing::Values("self_cpu_time_total", "cpu_time_total", "cpu_time",
                                           "self_privateuse1_time_total", "privateuse1_time_total",
                                           "self_cuda_time_total", "cuda_time_total",
                                           "self_device_time_total", "device_time_total",
                                           "device_time", "cuda_time", "self_xpu_time_total",
                                           "count", "key", "cpu_memory_usage"));

TEST(KeyAveragesGoldenTest, RowLimit) {
  KeyAverages avg = KeyAverages::FromTrace(MakeDeviceTrace());
  EXPECT_EQ(avg.Table("self_cpu_time_total", 3), ReadGolden("device_table_top3_self_cpu.txt"));
}

TEST(KeyAveragesGoldenTest, GroupByInputShape) {
  KeyAverages avg = KeyAverages::FromTrace(MakeDeviceTrace(), {.group_by_input_shape = true});
  EXPECT_EQ(avg.Table(), ReadGolden("device_table_by_shape.txt"));
  EXPECT_EQ(avg.Table("cpu_time_total"),
            ReadGolden("device_table_by_shape_sort_cpu_time_total.txt"));
}

TEST(KeyAveragesGoldenTest, CpuOnlyTableHasNoDeviceColumns) {
  KeyAverages avg = KeyAverages::FromTrace(MakeCpuTrace());
  EXPECT_EQ(avg.Table(), ReadGolden("cpu_table.txt"));
  EXPECT_FALSE(avg.has_device_time());
  EXPECT_EQ(avg.dropped_events(), 3u);
}

TEST(KeyAveragesTest, UnknownSortKeyListsAcceptedKeys) {
  KeyAverages avg = KeyAverages::FromTrace(MakeDeviceTrace());
  try {
    avg.Table("self_gpu_time");
    FAIL() << "accepted an unknown key";
  } catch (const BadSortKey& e) {
    EXPECT_NE(std::string(e.what()).find("self_gpu_time"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("self_privateuse1_time_total"), std::string::npos);
  }
}

TEST(KeyAveragesTest, EmptyTraceGivesEmptyTable) {
  Trace t;
  t.Finalize();
  EXPECT_EQ(KeyAverages::FromTrace(t).Table(), "");
}

TEST(KeyAveragesTest, UnlinkedDeviceActivityIsCountedUnderTheTable) {
  Trace t;
  uint32_t host = t.AddProcess(1, "python");
  uint32_t thread = t.AddThreadTrack(host, 1, "thread 1");
  uint32_t dev = t.AddProcess(0, "NEURON 0", true);
  uint32_t stream = t.AddThreadTrack(dev, 0, "stream 0", TrackKind::kDeviceStream);
  Add(t, thread, ActivityKind::kCpuOp, "aten::add", 0, 1000, 1);
  Add(t, stream, ActivityKind::kKernel, "orphan", 100, 500, 0, 0);
  Add(t, stream, ActivityKind::kKernel, "stale", 700, 100, 99, 0);
  t.metadata().device_type = "neuron";
  t.Finalize();
  KeyAverages avg = KeyAverages::FromTrace(t);
  EXPECT_EQ(avg.unmatched_device_activity(), 2u);
  std::string table = avg.Table();
  EXPECT_NE(table.find("Self NEURON time total: 0.600us\n"), std::string::npos) << table;
  EXPECT_NE(table.find("Device activity not linked to any op: 2\n"), std::string::npos) << table;
}

TEST(KeyAveragesTest, JsonHasTheSameRowsInTheSameOrder) {
  KeyAverages avg = KeyAverages::FromTrace(MakeDeviceTrace());
  std::string json = avg.ToJson("self_cpu_time_total", 2);
  // The two largest self CPU rows: aten::matmul (600us, first among equals) then the long name.
  size_t matmul = json.find("\"name\": \"aten::matmul\"");
  size_t long_name = json.find(kLongName);
  ASSERT_NE(matmul, std::string::npos) << json;
  ASSERT_NE(long_name, std::string::npos) << json;
  EXPECT_LT(matmul, long_name);
  EXPECT_EQ(json.find("aten::linear"), std::string::npos) << "row_limit=2 must cut";
  EXPECT_NE(json.find("\"self_device_time_total_us\": 800.000"), std::string::npos) << json;
}

}  // namespace
}  // namespace opscope
