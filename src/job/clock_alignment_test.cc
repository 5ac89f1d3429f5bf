// ClockFit: offsets and drift recovered from collective end times, outliers dropped.
#include "job/clock_alignment.h"

#include <gtest/gtest.h>

#include <cmath>

namespace opscope::job {
namespace {

constexpr int64_t kEpoch = 1'700'000'000'000'000'000;  // epoch ns: beyond a double's mantissa

TEST(ClockFit, IdentityWithoutPairsKeepsEpochNanoseconds) {
  const ClockFit fit = FitClock({});
  EXPECT_EQ(fit.points, 0);
  EXPECT_EQ(fit.ToReference(kEpoch + 123), kEpoch + 123);
}

TEST(ClockFit, OffsetOnly) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int i = 0; i < 10; ++i) {
    const int64_t ref = kEpoch + i * 1'000'000;
    pairs.emplace_back(ref, ref + 2'500'000);  // rank runs 2.5 ms ahead
  }
  const ClockFit fit = FitClock(pairs);
  EXPECT_EQ(fit.points, 10);
  EXPECT_DOUBLE_EQ(fit.offset_ns, 2'500'000);
  EXPECT_NEAR(fit.drift, 0, 1e-12);
  EXPECT_EQ(fit.ToReference(kEpoch + 7'000'000), kEpoch + 4'500'000);
}

TEST(ClockFit, OffsetAndDrift) {
  const double drift = 40e-6;  // 40 ppm
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int i = 0; i < 50; ++i) {
    const int64_t ref = kEpoch + i * 20'000'000;  // over one second
    const auto rank = ref + 1'000'000 + static_cast<int64_t>(std::llround(drift * (ref - kEpoch)));
    pairs.emplace_back(ref, rank);
  }
  const ClockFit fit = FitClock(pairs);
  EXPECT_NEAR(fit.offset_ns, 1'000'000, 1);
  EXPECT_NEAR(fit.drift, drift, 1e-9);
  const int64_t ref = kEpoch + 777'000'000;
  const int64_t rank = ref + 1'000'000 + static_cast<int64_t>(std::llround(drift * 777'000'000));
  EXPECT_NEAR(static_cast<double>(fit.ToReference(rank) - ref), 0, 2);
}

TEST(ClockFit, OneDelayedEndIsAnOutlier) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int i = 0; i < 20; ++i) {
    const int64_t ref = kEpoch + i * 1'000'000;
    pairs.emplace_back(ref, ref - 300'000 + (i == 7 ? 900'000 : 0));
  }
  const ClockFit fit = FitClock(pairs);
  EXPECT_EQ(fit.points, 19);
  EXPECT_NEAR(fit.offset_ns, -300'000, 1);
  EXPECT_NEAR(fit.drift, 0, 1e-9);
}

TEST(ClockFit, ShortSpanFitsNoDrift) {
  // Two collectives 10 us apart: too short to tell drift from jitter.
  const ClockFit fit = FitClock({{kEpoch, kEpoch + 500}, {kEpoch + 10'000, kEpoch + 10'700}});
  EXPECT_EQ(fit.drift, 0);
  EXPECT_DOUBLE_EQ(fit.offset_ns, 600);
}

}  // namespace
}  // namespace opscope::job
