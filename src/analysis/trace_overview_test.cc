// ComputeTraceOverview on hand-built traces: busy shares per column, the short slice that must
// still show, the name covering most of a column, device tracks first, the track limit.
#include <gtest/gtest.h>

#include "opscope/overview.h"

namespace opscope {
namespace {

void Add(Trace& t, uint32_t track, ActivityKind kind, const char* name, int64_t ts, int64_t dur) {
  Slice s;
  s.kind = kind;
  s.name = t.Intern(name);
  s.track = track;
  s.ts_ns = ts;
  s.dur_ns = dur;
  t.AddSlice(s);
}

// Host thread: op_a [0, 1000) and op_b [1000, 1500) with a nested child (not double counted).
// Device stream: a 1 ns kernel at 2500 and a long one [3000, 4000). Span [0, 4000), 4 columns of
// 1000 ns.
TEST(TraceOverviewTest, ColumnsHoldBusySharesAndTheLongestName) {
  Trace t;
  const uint32_t host = t.AddProcess(1, "python");
  const uint32_t th = t.AddThreadTrack(host, 10, "thread 10");
  const uint32_t dev = t.AddProcess(0, "GPU 0", /*is_device=*/true);
  const uint32_t stream = t.AddThreadTrack(dev, 7, "stream 7", TrackKind::kDeviceStream);
  Add(t, th, ActivityKind::kCpuOp, "op_a", 0, 1000);
  Add(t, th, ActivityKind::kCpuOp, "op_b", 1000, 500);
  Add(t, th, ActivityKind::kCpuOp, "child", 1100, 100);
  Add(t, stream, ActivityKind::kKernel, "tiny", 2500, 1);
  Add(t, stream, ActivityKind::kKernel, "gemm", 3000, 1000);
  t.Finalize();

  const TraceOverview ov = ComputeTraceOverview(t, {.columns = 4, .max_tracks = 8});
  EXPECT_EQ(ov.start_ns, 0);
  EXPECT_EQ(ov.end_ns, 4000);
  ASSERT_EQ(ov.tracks.size(), 2u);
  const TrackOverview& d = ov.tracks[0];  // the device stream comes first
  EXPECT_TRUE(d.is_device);
  EXPECT_EQ(d.busy_ns, 1001);
  EXPECT_EQ(d.busy_permille[0], 0);
  EXPECT_EQ(d.busy_permille[2], 1);  // 1 ns of 1000 rounds up: it shows
  EXPECT_EQ(d.busy_permille[3], 1000);
  EXPECT_EQ(ov.names[d.top_name[3]], "gemm");
  EXPECT_EQ(d.top_name[0], -1);
  const TrackOverview& h = ov.tracks[1];
  EXPECT_FALSE(h.is_device);
  EXPECT_EQ(h.busy_ns, 1500);  // top-level slices only
  EXPECT_EQ(h.busy_permille[0], 1000);
  EXPECT_EQ(h.busy_permille[1], 500);
  EXPECT_EQ(ov.names[h.top_name[1]], "op_b");

  const TraceOverview one = ComputeTraceOverview(t, {.columns = 4, .max_tracks = 1});
  ASSERT_EQ(one.tracks.size(), 1u);
  EXPECT_EQ(one.omitted_tracks, 1);
}

TEST(TraceOverviewTest, EmptyTraceHasNoTracks) {
  Trace t;
  t.Finalize();
  const TraceOverview ov = ComputeTraceOverview(t);
  EXPECT_TRUE(ov.tracks.empty());
  EXPECT_NE(ov.ToJson().find("\"tracks\":[]"), std::string::npos);
}

}  // namespace
}  // namespace opscope
