// Host clocks for the record path (clock.h): the TSC, its calibration and the monotonic clock.
#include "trace/clock.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
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
  clock.anchors_ = {c.last};
#if defined(__x86_64__)
  clock.ns_per_tick_ = static_cast<double>(c.last.ns - c.first.ns) /
                       static_cast<double>(c.last.ticks - c.first.ticks);
#endif
  return clock;
}

TickClock TickClock::FromPoints(std::vector<TickPoint> points) {
  TickClock clock = Process();
  if (points.empty()) return clock;
  std::sort(points.begin(), points.end(),
            [](const TickPoint& a, const TickPoint& b) { return a.ticks < b.ticks; });
  std::vector<TickPoint> kept = {points.front()};
  for (size_t i = 1; i < points.size(); ++i) {
    const bool last = i + 1 == points.size();
    if (points[i].ns - kept.back().ns >= 1'000'000) {
      kept.push_back(points[i]);
    } else if (last && kept.size() > 1) {
      kept.back() = points[i];  // end exactly at the final reading
    }
  }
  clock.anchors_ = std::move(kept);
  clock.slopes_.clear();
  for (size_t i = 0; i + 1 < clock.anchors_.size(); ++i) {
    const TickPoint& a = clock.anchors_[i];
    const TickPoint& b = clock.anchors_[i + 1];
    clock.slopes_.push_back(static_cast<double>(b.ns - a.ns) /
                            static_cast<double>(b.ticks - a.ticks));
  }
  return clock;
}

int64_t TickClock::ToNs(uint64_t ticks) const {
#if defined(__x86_64__)
  // Segment i covers [anchors_[i], anchors_[i + 1]); before the first and after the last anchor
  // the nearest segment (or the process slope) extends.
  size_t i = static_cast<size_t>(
      std::upper_bound(anchors_.begin(), anchors_.end(), ticks,
                       [](uint64_t t, const TickPoint& p) { return t < p.ticks; }) -
      anchors_.begin());
  i = i == 0 ? 0 : i - 1;
  double slope = ns_per_tick_;
  if (!slopes_.empty()) slope = slopes_[std::min(i, slopes_.size() - 1)];
  if (i >= anchors_.size()) i = anchors_.size() - 1;
  const TickPoint& a = anchors_[i];
  const double delta = ticks >= a.ticks ? static_cast<double>(ticks - a.ticks)
                                        : -static_cast<double>(a.ticks - ticks);
  return a.ns + std::llround(delta * slope);
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
