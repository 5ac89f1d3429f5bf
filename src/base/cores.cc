// The cores a process may use and the machine's runnable threads (see cores.h).
#include "base/cores.h"

#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

namespace opscope::internal {

int ResolveDefaultThreads(int requested, int cores, double runnable) {
  if (requested > 0) return CapThreads(requested);
  cores = std::clamp(cores, 1, kMaxThreads);
  // The caller's own thread is one of the runnable ones: a core it occupies is still ours.
  const double busy = std::max(0.0, runnable - 1.0);
  const int free_cores =
      std::clamp(static_cast<int>(std::floor(static_cast<double>(cores) - busy + 0.5)), 1, cores);
  return free_cores >= kMinDefaultThreads ? free_cores : 1;
}

int AffinityCores() {
  int cores = 0;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cores = CPU_COUNT(&set);
#endif
  if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(cores, 1);
}

double RunnableNow() {
#if defined(__linux__)
  // /proc/loadavg: "1.00 0.90 0.80 RUNNABLE/TOTAL LASTPID"; RUNNABLE is the machine's threads
  // running or ready to run at this instant, the caller included.
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return -1;
  double a = 0, b = 0, c = 0;
  int runnable = 0, total = 0;
  const int got = std::fscanf(f, "%lf %lf %lf %d/%d", &a, &b, &c, &runnable, &total);
  std::fclose(f);
  return got == 5 ? runnable : -1;
#else
  return -1;
#endif
}

int DefaultThreadsNow(int requested) {
  if (requested > 0) return CapThreads(requested);
  const int cores = AffinityCores();
  if (cores < kMinDefaultThreads) return 1;
  // Samples a quarter of a millisecond apart, and their median: one instant may catch a busy
  // process between two of its time slices, or an idle one waking up, and a burst of a
  // millisecond (a request and its answer, a page polling the Explorer while it loads) would move
  // a mean of a few samples by a whole core.
  std::array<double, 12> samples{};
  size_t n = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::microseconds(250));
    if (const double r = RunnableNow(); r >= 0) samples[n++] = r;
  }
  if (n == 0) return ResolveDefaultThreads(requested, cores, 1.0);
  return ResolveDefaultThreads(requested, cores, MedianRunnable({samples.data(), n}));
}

double MedianRunnable(std::span<double> samples) {
  const size_t n = samples.size();
  if (n == 0) return -1;
  std::sort(samples.begin(), samples.end());
  return n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

}  // namespace opscope::internal
