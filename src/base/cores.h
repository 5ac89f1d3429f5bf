// How many threads a job may use: the cores this process may run on, and the share of them the
// machine's other work leaves free. The import and the analyses choose their default thread
// counts here.
#ifndef OPSCOPE_BASE_CORES_H_
#define OPSCOPE_BASE_CORES_H_

#include <span>

namespace opscope::internal {

// A default thread count (ImportOptions::threads and the analyses' `threads`) resolved. `requested`
// > 0 is honoured as given, up to kMaxThreads. 0 (the default) is the cores this process may run on
// (`cores`) that the machine's other work leaves free: `runnable` is the average number of threads
// running or ready to run machine-wide, counting the caller's own (RunnableNow, sampled while the
// import runs); fewer than kMinDefaultThreads free cores is 1 thread, which is never slower than
// itself: with other work running, 2 threads were slower than 1 in some runs (268 MB generated
// trace at load 4.5: 0.89-0.95 s against 0.79-0.82 s) and faster in others. The 1-minute load
// average, used before, lags by a minute: a benchmark's own previous runs raised it enough to pick
// 1 thread on an idle machine (docs/import.md, Threads).
inline constexpr int kMinDefaultThreads = 2;
// The most threads one import, analysis or ParallelFor runs: a count asked for above it runs on
// kMaxThreads. CPU-bound work gains nothing from more threads than cores, and every thread costs
// a stack, its start and a share of per-thread state (`report --threads 3000` of a 0.4 MB trace
// took 24 s and 6.8 GB before the cap). Public as opscope::kMaxThreads (opscope/import.h).
inline constexpr int kMaxThreads = 256;
// `requested` bounded to [1, kMaxThreads]: what an explicit count becomes.
inline int CapThreads(int requested) {
  return requested < 1 ? 1 : requested > kMaxThreads ? kMaxThreads : requested;
}
int ResolveDefaultThreads(int requested, int cores, double runnable);
// The cores this process may run on (sched_getaffinity), at least 1.
int AffinityCores();
// Threads running or ready to run on the machine at this instant (the RUNNABLE of /proc/loadavg's
// RUNNABLE/TOTAL), or -1 where that is not known.
double RunnableNow();
// The median of `samples` (reordered), or -1 for none.
double MedianRunnable(std::span<double> samples);
// ResolveDefaultThreads with AffinityCores and the median of 12 RunnableNow samples taken 0.25 ms
// apart (about 3 ms in all; the imports' and the analyses' default). The median, not the mean: at
// the start of `opscope explore` the page's (or a benchmark's) polling and its answers made the
// first millisecond's samples read 2-4 runnable threads on an idle 2-core machine, and the mean
// of four chose one thread for a 50 M-row import that two finish in two thirds of the time.
int DefaultThreadsNow(int requested);

}  // namespace opscope::internal

#endif  // OPSCOPE_BASE_CORES_H_
