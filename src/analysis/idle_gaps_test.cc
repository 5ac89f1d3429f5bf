// TimelineActivities and ComputeIdleGaps against ComputeDeviceTimeline on small traces built by
// hand: the gaps add up to the timeline's idle time, unlinked activity is left out as the timeline
// leaves it out, touching activities are one busy stretch, overlapping streams merge.
#include <gtest/gtest.h>

#include "opscope/analysis.h"

namespace opscope {
namespace {

// Kernels on two streams, each launched by its own runtime call inside one op, plus one kernel
// with no runtime call (not linked). Times in ns.
Trace Kernels(const std::vector<std::tuple<int, int64_t, int64_t>>& kernels, bool unlinked) {
  Trace t;
  const uint32_t thread = t.AddThreadTrack(t.AddProcess(1, "python"), 1, "main");
  const uint32_t gpu = t.AddProcess(0, "GPU 0", true);
  const uint32_t streams[2] = {t.AddThreadTrack(gpu, 7, "stream 7", TrackKind::kDeviceStream),
                               t.AddThreadTrack(gpu, 8, "stream 8", TrackKind::kDeviceStream)};
  Slice op;
  op.name = t.Intern("aten::op");
  op.kind = ActivityKind::kCpuOp;
  op.track = thread;
  op.ts_ns = 0;
  op.dur_ns = 1000;
  t.AddSlice(op);
  int64_t corr = 1;
  for (const auto& [stream, ts, dur] : kernels) {
    Slice rt;
    rt.name = t.Intern("cudaLaunchKernel");
    rt.kind = ActivityKind::kRuntime;
    rt.track = thread;
    rt.ts_ns = static_cast<int64_t>(corr);
    rt.dur_ns = 1;
    rt.correlation = corr;
    Slice k;
    k.name = t.Intern("kernel");
    k.kind = ActivityKind::kKernel;
    k.track = streams[stream];
    k.ts_ns = ts;
    k.dur_ns = dur;
    k.correlation = corr++;
    t.AddSlice(rt);
    t.AddSlice(k);
  }
  if (unlinked) {
    Slice k;
    k.name = t.Intern("early");
    k.kind = ActivityKind::kKernel;
    k.track = streams[0];
    k.ts_ns = 5000;
    k.dur_ns = 10;
    t.AddSlice(k);
  }
  t.Finalize();
  return t;
}

TEST(IdleGapsTest, GapsAddUpToTheTimelinesIdleTime) {
  // [100,200) [200,250) touch; [300,400) on stream 7 overlaps [350,500) on stream 8; [900,950).
  const Trace t = Kernels({{0, 100, 100}, {0, 200, 50}, {0, 300, 100}, {1, 350, 150}, {0, 900, 50}},
                          /*unlinked=*/true);
  const DeviceTimeline tl = ComputeDeviceTimeline(t);
  const IdleGaps gaps = ComputeIdleGaps(t);
  EXPECT_EQ(tl.activities, 5u);
  EXPECT_EQ(TimelineActivities(t).size(), 5u);  // the unlinked kernel is left out
  EXPECT_EQ(gaps.count, 2);
  EXPECT_EQ(gaps.total_ns, tl.idle_ns);
  EXPECT_EQ(gaps.total_ns, 50 + 400);
  ASSERT_EQ(gaps.largest.size(), 2u);
  EXPECT_EQ(gaps.largest[0].ts_ns, 500);
  EXPECT_EQ(gaps.largest[0].dur_ns, 400);
  EXPECT_EQ(t.Str(t.slices()[gaps.largest[0].before].name), "kernel");
  EXPECT_EQ(t.slices()[gaps.largest[0].before].ts_ns, 350);  // the stream-8 kernel ends last
  EXPECT_EQ(t.slices()[gaps.largest[0].after].ts_ns, 900);
  EXPECT_EQ(gaps.largest[1].dur_ns, 50);
}

TEST(IdleGapsTest, KeepsTheLongestAndCountsAll) {
  std::vector<std::tuple<int, int64_t, int64_t>> kernels;
  for (int i = 0; i < 20; ++i) kernels.emplace_back(0, i * 100 + i * i, 50);
  const Trace t = Kernels(kernels, false);
  const IdleGaps gaps = ComputeIdleGaps(t, 3);
  EXPECT_EQ(gaps.count, 19);
  EXPECT_EQ(gaps.total_ns, ComputeDeviceTimeline(t).idle_ns);
  ASSERT_EQ(gaps.largest.size(), 3u);
  EXPECT_GE(gaps.largest[0].dur_ns, gaps.largest[1].dur_ns);
  EXPECT_EQ(gaps.largest[0].dur_ns, 100 + 37 - 50);  // between kernels 18 and 19
}

TEST(IdleGapsTest, EveryActivityHasTheReportsLauncher) {
  const Trace t = Kernels({{0, 100, 10}, {1, 200, 10}}, false);
  for (const AttributedActivity& a : TimelineActivities(t)) {
    ASSERT_NE(a.launcher, kNone);
    EXPECT_EQ(t.Str(t.slices()[a.launcher].name), "aten::op");
  }
  EXPECT_EQ(ComputeOpSummary(t).rows.at(0).direct_activities, 2);
}

TEST(IdleGapsTest, NoActivityNoGaps) {
  const Trace t = Kernels({}, true);
  EXPECT_EQ(ComputeIdleGaps(t).count, 0);
  EXPECT_TRUE(ComputeIdleGaps(t).largest.empty());
}

}  // namespace
}  // namespace opscope
