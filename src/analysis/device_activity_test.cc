// The communication classifier and launch statistics' percentiles, on small traces whose expected
// figures are worked out by hand in the comments.
#include "analysis/device_activity.h"

#include <gtest/gtest.h>

#include <string>

#include "opscope/analysis.h"
#include "opscope/import.h"

namespace opscope {
namespace {

// A host op on thread 1 launching one kernel through a runtime call (correlation `id`).
std::string Launch(int id, const std::string& kernel, int64_t kernel_ts_us, int64_t kernel_dur_us,
                   int64_t call_dur_us = 1) {
  const std::string c = std::to_string(id);
  const std::string call_ts = std::to_string(kernel_ts_us - 2);
  return R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )" +
         call_ts + R"(, "dur": )" + std::to_string(call_dur_us) + R"(, "args": {"correlation": )" +
         c + R"(}}, {"ph": "X", "cat": "kernel", "name": ")" + kernel +
         R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(kernel_ts_us) + R"(, "dur": )" +
         std::to_string(kernel_dur_us) + R"(, "args": {"correlation": )" + c + "}}";
}

Trace Import(const std::string& events) {
  Trace t;
  Status st = ImportTraceFromMemory("{\"traceEvents\": [" + events + "]}", &t);
  EXPECT_TRUE(st.ok()) << st.message();
  return t;
}

TEST(CommunicationTest, MatchesCollectiveLibrariesInAnyCase) {
  for (const char* name :
       {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        "ncclKernel_AllReduce_RING_LL_Sum_float", "NCCL_allgather", "rcclGenericKernel",
        "RCCL_broadcast", "void vllm::cross_device_reduce_1stage<__half, 8>(vllm::RankData*)",
        "void sglang::Cross_Device_Reduce_2stage<float, 4>()", "mscclKernel_Sum_float",
        "nccom_all_reduce_ring"}) {
    EXPECT_TRUE(analysis::IsCommunication(name)) << name;
  }
  for (const char* name : {"", "ncc", "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32", "at::native::reduce",
                           "cross_device", "void at::native::vectorized_elementwise_kernel"}) {
    EXPECT_FALSE(analysis::IsCommunication(name)) << name;
  }
}

// Compute 10-110 us; communication kernels of every spelling at 60-70 (overlapped), 130-140,
// 150-160 and 170-180 (exposed): total communication 40 us, exposed 30 us.
TEST(CommunicationTest, TimelineCountsEverySpellingOfACollective) {
  const Trace t = Import(Launch(1, "Cijk_gemm", 10, 100) + ", " +
                         Launch(2, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 60, 10) + ", " +
                         Launch(3, "void vllm::cross_device_reduce_1stage<__half, 8>", 130, 10) +
                         ", " + Launch(4, "rcclGenericKernel", 150, 10) + ", " +
                         Launch(5, "NCCLCustomAllGather", 170, 10));
  const DeviceTimeline tl = ComputeDeviceTimeline(t);
  EXPECT_EQ(tl.activities, 5u);
  EXPECT_EQ(tl.computation_ns, 100'000);
  EXPECT_EQ(tl.total_comm_ns, 40'000);
  EXPECT_EQ(tl.exposed_comm_ns, 30'000);
}

// Two runtime calls of 3.6 ms and 125.9 ms (a timesformer cudaMemcpyAsync): numpy.percentile
// gives p50 = 3.6 + 0.5 * 122.3 = 64.75 ms and p99 = 3.6 + 0.99 * 122.3 = 124.677 ms.
TEST(LaunchStatisticsTest, PercentilesInterpolateLinearlyAsNumpyDoes) {
  const Trace t = Import(Launch(1, "k", 10, 1, 3600) + ", " + Launch(2, "k", 200'000, 1, 125'900));
  const LaunchStatistics ls = ComputeLaunchStatistics(t);
  ASSERT_EQ(ls.by_name.size(), 1u);
  const DurationStats& d = ls.by_name[0].duration;
  EXPECT_EQ(d.count, 2);
  EXPECT_DOUBLE_EQ(d.p50_ns, 64'750'000.0);
  EXPECT_DOUBLE_EQ(d.p99_ns, 124'677'000.0);
  EXPECT_NE(ls.ToJson().find("\"percentile_method\""), std::string::npos);
}

// Five values 1..5 us: p50 is the middle one, p99 = 4 + 0.96 * (5 - 4) = 4.96 us; one value is
// every percentile.
TEST(LaunchStatisticsTest, PercentilesOfOddAndSingleCounts) {
  std::string events;
  for (int i = 1; i <= 5; ++i) {
    if (i > 1) events += ", ";
    events += Launch(i, "k", i * 100, 1, i);
  }
  DurationStats d = ComputeLaunchStatistics(Import(events)).duration;
  EXPECT_DOUBLE_EQ(d.p50_ns, 3'000.0);
  EXPECT_DOUBLE_EQ(d.p99_ns, 4'960.0);
  d = ComputeLaunchStatistics(Import(Launch(1, "k", 10, 1, 7))).duration;
  EXPECT_DOUBLE_EQ(d.p50_ns, 7'000.0);
  EXPECT_DOUBLE_EQ(d.p99_ns, 7'000.0);
}

}  // namespace
}  // namespace opscope
