#include "trace/clock.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <mutex>

namespace opscope {

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

uint64_t CurrentThreadId() {
  thread_local uint64_t tid = static_cast<uint64_t>(syscall(SYS_gettid));
  return tid;
}

namespace internal {

TickPoint ReadTickPoint() {
  // Bracket the ns read with two tick reads and keep the tightest of a few tries.
  TickPoint best;
  uint64_t best_width = ~0ull;
  for (int i = 0; i < 5; ++i) {
    uint64_t t0 = RawTicks();
    int64_t ns = NowNs();
    uint64_t t1 = RawTicks();
    if (t1 - t0 < best_width) {
      best_width = t1 - t0;
      best = {t0 + (t1 - t0) / 2, ns};
    }
  }
  return best;
}

namespace {

struct ProcessCalibration {
  std::mutex mu;
  bool ready = false;
  TickPoint first;
  TickPoint last;
};

ProcessCalibration& Calibration() {
  static ProcessCalibration c;
  return c;
}

}  // namespace

TickClock TickClock::Process() {
  ProcessCalibration& c = Calibration();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.ready) {
    c.first = ReadTickPoint();
#if defined(__x86_64__)
    // Spin ~2 ms so the first slope is already good to a few ppm of the read jitter.
    do {
      c.last = ReadTickPoint();
    } while (c.last.ns - c.first.ns < 2'000'000);
#else
    c.last = c.first;
#endif
    c.ready = true;
  }
  TickPoint now = ReadTickPoint();
  if (now.ns - c.first.ns > c.last.ns - c.first.ns) c.last = now;
  TickClock clock;
  clock.origin_ = c.first;
#if defined(__x86_64__)
  clock.ns_per_tick_ = static_cast<double>(c.last.ns - c.first.ns) /
                       static_cast<double>(c.last.ticks - c.first.ticks);
#endif
  return clock;
}

void TickClock::Refine(const TickPoint& later) {
#if defined(__x86_64__)
  if (later.ns - origin_.ns > 1'000'000 && later.ticks > origin_.ticks) {
    ns_per_tick_ = static_cast<double>(later.ns - origin_.ns) /
                   static_cast<double>(later.ticks - origin_.ticks);
  }
#else
  (void)later;
#endif
}

int64_t TickClock::ToNs(uint64_t ticks) const {
#if defined(__x86_64__)
  int64_t delta = static_cast<int64_t>(ticks - origin_.ticks);
  return origin_.ns + static_cast<int64_t>(static_cast<double>(delta) * ns_per_tick_);
#else
  return static_cast<int64_t>(ticks);
#endif
}

int64_t MonotonicToEpochNs(int64_t monotonic_ns) {
  timespec real, mono;
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  int64_t offset = (static_cast<int64_t>(real.tv_sec) - mono.tv_sec) * 1'000'000'000 +
                   (real.tv_nsec - mono.tv_nsec);
  return monotonic_ns + offset;
}

}  // namespace internal
}  // namespace opscope
