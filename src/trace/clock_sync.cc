// ClockSync: least-squares fit of host ns against device ticks.
#include <algorithm>
#include <cmath>

#include "opscope/activity.h"

namespace opscope {

void ClockSync::AddPoint(int64_t host_ns, int64_t device_ticks) {
  if (points_.empty()) device_origin_ = device_ticks;
  points_.emplace_back(device_ticks, host_ns);
}

void ClockSync::Fit() {
  offset_ns_ = 0;
  drift_ = 0;
  if (points_.empty()) return;
  // Work relative to the first device reading so the sums stay well inside double precision.
  const double n = static_cast<double>(points_.size());
  double mean_x = 0, mean_y = 0;
  for (const auto& [device, host] : points_) {
    mean_x += static_cast<double>(device - device_origin_);
    mean_y += static_cast<double>(host - device);
  }
  mean_x /= n;
  mean_y /= n;
  // Fit (host - device) = a + drift * (device - origin): the residual after identity is small,
  // which keeps the fit well conditioned even with large absolute timestamps.
  double sxx = 0, sxy = 0;
  for (const auto& [device, host] : points_) {
    double dx = static_cast<double>(device - device_origin_) - mean_x;
    double dy = static_cast<double>(host - device) - mean_y;
    sxx += dx * dx;
    sxy += dx * dy;
  }
  drift_ = sxx > 0 ? sxy / sxx : 0.0;
  // Over a short span, read jitter dominates any real drift (100 ns over 10 us would be 1%):
  // fit the offset only until the points span kMinDriftSpanTicks.
  int64_t lo = points_.front().first, hi = lo;
  for (const auto& p : points_) {
    lo = std::min(lo, p.first);
    hi = std::max(hi, p.first);
  }
  if (hi - lo < kMinDriftSpanTicks) drift_ = 0.0;
  // offset_ns_ is expressed at device_origin_: host = device + offset + drift * (device - origin).
  offset_ns_ = mean_y - drift_ * mean_x;
}

int64_t ClockSync::ToHost(int64_t device_ticks) const {
  double rel = static_cast<double>(device_ticks - device_origin_);
  return device_ticks + static_cast<int64_t>(std::llround(offset_ns_ + drift_ * rel));
}

}  // namespace opscope
