// Host clocks for the record path.
//
// RawTicks() is what the hot path stores: the TSC on x86-64 (invariant on the machines opscope
// targets; a few ns to read), CLOCK_MONOTONIC elsewhere. TickClock converts ticks to NowNs()
// nanoseconds once recording is over, from (ticks, ns) pairs read side by side.
//
// Thread safety: RawTicks is free-threaded; a TickClock is used by one thread at a time.
#ifndef OPSCOPE_SRC_TRACE_CLOCK_H_
#define OPSCOPE_SRC_TRACE_CLOCK_H_

#include <cstdint>
#include <vector>

#include "opscope/activity.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace opscope::internal {

inline uint64_t RawTicks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(NowNs());
#endif
}

// One reading of both clocks, taken as close together as possible.
struct TickPoint {
  uint64_t ticks = 0;
  int64_t ns = 0;
};
TickPoint ReadTickPoint();

// Maps ticks to host ns. Within a recording it interpolates piecewise-linearly between
// (ticks, ns) points read during that recording (at start, at stop, at each profiler step), so
// the result tracks CLOCK_MONOTONIC even while NTP slews it; outside them, or when the points are
// too close together to give a slope, it uses the process-wide slope (a ~2 ms calibration the
// first time, refined as the process runs).
class TickClock {
 public:
  // The process-wide line alone.
  static TickClock Process();
  // Anchored on `points` (any order); points closer than 1 ms to a kept one are skipped.
  static TickClock FromPoints(std::vector<TickPoint> points);
  int64_t ToNs(uint64_t ticks) const;
  double ns_per_tick() const { return ns_per_tick_; }

 private:
  std::vector<TickPoint> anchors_;  // sorted by ticks; at least one
  std::vector<double> slopes_;      // ns per tick of segment i (anchors_[i] -> anchors_[i + 1])
  double ns_per_tick_ = 1.0;        // process-wide slope, used outside the anchors
};

// Epoch nanoseconds (CLOCK_REALTIME) matching a NowNs() reading.
int64_t MonotonicToEpochNs(int64_t monotonic_ns);

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_TRACE_CLOCK_H_
