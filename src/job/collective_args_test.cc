// NCCL's bus-bandwidth factors, dtype sizes, collective kinds and rank names in paths.
#include "job/collective_args.h"

#include <gtest/gtest.h>

namespace opscope::job {
namespace {

TEST(CollectiveArgs, BusBandwidthFactorsAreNccls) {
  // nccl-tests doc/PERFORMANCE.md.
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("allreduce", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("allgather", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("reducescatter", 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("alltoall", 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("broadcast", 16), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor("reduce", 16), 1.0);
  EXPECT_LT(BusBandwidthFactor("alltoallv", 4), 0);
  EXPECT_LT(BusBandwidthFactor("", 4), 0);
}

TEST(CollectiveArgs, KindsFromArgsAndKernelNames) {
  EXPECT_EQ(CollectiveKind("allreduce"), "allreduce");
  EXPECT_EQ(CollectiveKind("allreduce_coalesced"), "allreduce");
  EXPECT_EQ(CollectiveKind("_reduce_scatter_base"), "reducescatter");
  EXPECT_EQ(CollectiveKind("all_gather_into_tensor_coalesced"), "allgather");
  EXPECT_EQ(CollectiveKind("all_to_allv"), "alltoallv");
  EXPECT_EQ(CollectiveKind("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long)"),
            "allreduce");
  EXPECT_EQ(CollectiveKind("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"), "reducescatter");
  EXPECT_EQ(CollectiveKind("ncclKernel_Broadcast_RING_LL_Sum_int8_t"), "broadcast");
  EXPECT_EQ(CollectiveKind("ncclDevKernel_SendRecv"), "sendrecv");
  EXPECT_EQ(CollectiveKind("ncclDevKernel_Reduce_Sum_f32"), "reduce");
  EXPECT_EQ(CollectiveKind("vectorized_elementwise_kernel"), "");
}

TEST(CollectiveArgs, DtypeSizes) {
  EXPECT_EQ(DtypeBytes("Float"), 4);
  EXPECT_EQ(DtypeBytes("BFloat16"), 2);
  EXPECT_EQ(DtypeBytes("Long"), 8);
  EXPECT_EQ(DtypeBytes("Byte"), 1);
  EXPECT_EQ(DtypeBytes("float32"), 0);  // not PyTorch's spelling: unknown, no bandwidth
}

TEST(RankFiles, RankFromPath) {
  EXPECT_EQ(RankFromPath("rank-34.1709.pt.trace.json.gz"), 34);
  EXPECT_EQ(RankFromPath("/x/worker_rank_3.json"), 3);
  EXPECT_EQ(RankFromPath("/x/RANK7.json"), 7);
  EXPECT_EQ(RankFromPath("job/rank_12/trace.json"), 12);
  EXPECT_EQ(RankFromPath("job/ranking/trace.json"), -1);
  EXPECT_EQ(RankFromPath("trace.json"), -1);
}

}  // namespace
}  // namespace opscope::job
