// The simulated device's clock domain: its own origin and a small drift against the host clock.
//
//   device_ticks = offset + origin + (host_ns - origin) * (1 + drift_ppm / 1e6)
//
// `origin` is the host time at construction, so the drift term stays small and exact in double.
// Thread-safe (immutable after construction).
#ifndef OPSCOPE_SRC_DEVICE_NEURON_DEVICE_CLOCK_H_
#define OPSCOPE_SRC_DEVICE_NEURON_DEVICE_CLOCK_H_

#include <cmath>
#include <cstdint>

namespace opscope::neuron {

class DeviceClock {
 public:
  DeviceClock(int64_t host_origin_ns, double offset_ns, double drift_ppm)
      : origin_(host_origin_ns), offset_(std::llround(offset_ns)), rate_(1.0 + drift_ppm * 1e-6) {}

  int64_t ToDevice(int64_t host_ns) const {
    return offset_ + origin_ + std::llround(double(host_ns - origin_) * rate_);
  }
  int64_t ToHost(int64_t device_ticks) const {
    return origin_ + std::llround(double(device_ticks - offset_ - origin_) / rate_);
  }
  // Device ticks per host nanosecond.
  double rate() const { return rate_; }

 private:
  int64_t origin_;
  int64_t offset_;
  double rate_;
};

}  // namespace opscope::neuron

#endif  // OPSCOPE_SRC_DEVICE_NEURON_DEVICE_CLOCK_H_
