// Aligning ranks' clocks from collective end times.
//
// A collective ends at nearly the same moment on every rank of its group (no rank can finish
// before the last one has sent its data), so the difference of two ranks' end times at the same
// collective is the difference of their clocks. Fitted over many collectives as an offset plus a
// drift, it maps a rank's timestamps onto the reference rank's clock.
#ifndef OPSCOPE_SRC_JOB_CLOCK_ALIGNMENT_H_
#define OPSCOPE_SRC_JOB_CLOCK_ALIGNMENT_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace opscope::job {

// rank_time = ref_time + offset_ns + drift * (ref_time - origin_ns).
struct ClockFit {
  int64_t origin_ns = 0;  // the reference clock's first collective end
  double offset_ns = 0;
  double drift = 0;  // dimensionless (1e-6 = 1 ppm)
  int points = 0;    // collectives used (after dropping outliers)
  // A time on the rank's clock, on the reference clock.
  int64_t ToReference(int64_t rank_ns) const;
};

// Least squares over (reference end, rank end) pairs, refitted once without the pairs whose
// residual exceeds both 5 median absolute deviations and 1 us (a collective where one rank's end
// was delayed).
// Drift is fitted only when the pairs span at least kMinDriftSpanNs; before that the offset is the
// median difference. No pairs: the identity.
ClockFit FitClock(std::vector<std::pair<int64_t, int64_t>> pairs);
inline constexpr int64_t kMinDriftSpanNs = 1'000'000;  // 1 ms

}  // namespace opscope::job

#endif  // OPSCOPE_SRC_JOB_CLOCK_ALIGNMENT_H_
