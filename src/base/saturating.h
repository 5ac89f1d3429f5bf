// Saturating int64 arithmetic for nanosecond sums and differences.
//
// Imported traces can carry any timestamps and durations the JSON allows (up to about +-2^63 ns).
// Totals over many events, and differences of two timestamps, must not overflow (undefined
// behaviour); they clamp to the int64 range instead, which no real trace reaches.
#ifndef OPSCOPE_BASE_SATURATING_H_
#define OPSCOPE_BASE_SATURATING_H_

#include <cstdint>
#include <limits>

namespace opscope::internal {

inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}

inline int64_t SatSub(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_sub_overflow(a, b, &out)) {
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return out;
}

}  // namespace opscope::internal

#endif  // OPSCOPE_BASE_SATURATING_H_
