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

// Maps ticks to host ns with a line through two points far apart. The first point is taken
// once per process; Refine() adds a later one (the slope improves as the span grows).
class TickClock {
 public:
  // Uses the process-wide calibration (a ~2 ms measurement the first time it is called).
  static TickClock Process();
  void Refine(const TickPoint& later);
  int64_t ToNs(uint64_t ticks) const;
  double ns_per_tick() const { return ns_per_tick_; }

 private:
  TickPoint origin_;
  double ns_per_tick_ = 1.0;
};

// Epoch nanoseconds (CLOCK_REALTIME) matching a NowNs() reading.
int64_t MonotonicToEpochNs(int64_t monotonic_ns);

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_TRACE_CLOCK_H_
