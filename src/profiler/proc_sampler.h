// CPU_UTIL and HOST_MEMORY: a background thread samples /proc into counter series.
#ifndef OPSCOPE_SRC_PROFILER_PROC_SAMPLER_H_
#define OPSCOPE_SRC_PROFILER_PROC_SAMPLER_H_

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "profiler/trace_builder.h"

namespace opscope::internal {

// Samples every `period_ms` from construction until Stop(). Series: "CPU Utilization (%)"
// (whole machine, from /proc/stat) and "Process RSS (MB)" (from /proc/self/statm).
// Thread safety: construct, Stop and Take from one thread.
class ProcSampler {
 public:
  ProcSampler(bool cpu_util, bool host_memory, int period_ms);
  ~ProcSampler();
  ProcSampler(const ProcSampler&) = delete;
  ProcSampler& operator=(const ProcSampler&) = delete;

  void Stop();
  // The samples so far; call after Stop().
  std::vector<HostCounterSeries> Take();

 private:
  void Run();
  void SampleOnce();

  bool cpu_util_, host_memory_;
  int period_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  HostCounterSeries cpu_, memory_;
  uint64_t last_busy_ = 0, last_total_ = 0;
  bool have_last_ = false;
  std::thread thread_;
};

}  // namespace opscope::internal

#endif  // OPSCOPE_SRC_PROFILER_PROC_SAMPLER_H_
