// Tests of ClockSync: device clocks mapped to host time through sync points.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "opscope/activity.h"
#include "trace/clock.h"

namespace opscope {
namespace {

TEST(ClockSyncTest, NoPointsIsIdentity) {
  ClockSync sync;
  sync.Fit();
  EXPECT_EQ(sync.ToHost(12345), 12345);
}

TEST(ClockSyncTest, OnePointIsPureOffset) {
  ClockSync sync;
  sync.AddPoint(/*host_ns=*/1'000'500, /*device_ticks=*/500);
  sync.Fit();
  EXPECT_EQ(sync.drift(), 0.0);
  EXPECT_EQ(sync.ToHost(500), 1'000'500);
  EXPECT_EQ(sync.ToHost(1500), 1'001'500);
}

TEST(ClockSyncTest, RecoversInjectedOffsetAndDrift) {
  // The device clock starts 3.2 s behind host time and runs 25 ppm slow; each sync point has
  // up to +-200 ns of read jitter. Points every 10 ms over 2 s.
  const double true_drift = 25e-6;
  const int64_t host0 = 5'000'000'000'000;  // large absolute values, as on a real host
  const int64_t device0 = host0 - 3'200'000'000;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> jitter(-200, 200);
  ClockSync sync;
  for (int i = 0; i <= 200; ++i) {
    int64_t device = device0 + int64_t{i} * 10'000'000;
    int64_t host = host0 +
                   static_cast<int64_t>(std::llround((device - device0) * (1 + true_drift))) +
                   jitter(rng);
    sync.AddPoint(host, device);
  }
  sync.Fit();
  EXPECT_NEAR(sync.drift(), true_drift, 0.5e-6);
  for (int64_t t : {int64_t{0}, int64_t{700'000'000}, int64_t{2'000'000'000}}) {
    int64_t expected = host0 + static_cast<int64_t>(std::llround(t * (1 + true_drift)));
    EXPECT_NEAR(static_cast<double>(sync.ToHost(device0 + t)), static_cast<double>(expected), 150.0)
        << "at device offset " << t;
  }
}

TEST(TickClockTest, InterpolatesBetweenAnchorsAndFollowsSlewing) {
  // Ticks at 2.5 per ns; the ns clock runs 100 ppm fast in the second segment (NTP slewing).
  std::vector<internal::TickPoint> points = {
      {1'000'000'000, 400'000'000}, {1'025'000'000, 410'000'000}, {1'050'000'000, 420'001'000}};
  internal::TickClock clock = internal::TickClock::FromPoints(points);
#if defined(__x86_64__)
  EXPECT_EQ(clock.ToNs(1'000'000'000), 400'000'000);
  EXPECT_EQ(clock.ToNs(1'012'500'000), 405'000'000);
  EXPECT_EQ(clock.ToNs(1'025'000'000), 410'000'000);
  EXPECT_EQ(clock.ToNs(1'037'500'000), 415'000'500);
  EXPECT_EQ(clock.ToNs(1'050'000'000), 420'001'000);
  EXPECT_EQ(clock.ToNs(1'050'002'500), 420'002'000);  // past the end: last segment's slope
  EXPECT_EQ(clock.ToNs(999'997'500), 399'999'000);    // before the start: first segment's
#endif
}

TEST(TickClockTest, TicksMapToMonotonicNanoseconds) {
  internal::TickClock clock = internal::TickClock::Process();
  internal::TickPoint p = internal::ReadTickPoint();
  EXPECT_NEAR(static_cast<double>(clock.ToNs(p.ticks)), static_cast<double>(p.ns), 20'000.0);
}

}  // namespace
}  // namespace opscope
