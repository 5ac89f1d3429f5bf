// CPU_UTIL and HOST_MEMORY samplers (proc_sampler.h): /proc read on a background thread.
#include "profiler/proc_sampler.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "opscope/activity.h"
#include "trace/recorder.h"

namespace opscope::internal {
namespace {

// Sums of the first /proc/stat "cpu" line: (busy, total) jiffies.
bool ReadCpuJiffies(uint64_t* busy, uint64_t* total) {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return false;
  unsigned long long v[10] = {};
  int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
                      &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
  std::fclose(f);
  if (n < 4) return false;
  uint64_t sum = 0;
  for (int i = 0; i < n && i < 8; ++i) sum += v[i];  // guest time is already in user
  uint64_t idle = v[3] + (n > 4 ? v[4] : 0);         // idle + iowait
  *total = sum;
  *busy = sum - idle;
  return true;
}

bool ReadRssBytes(double* bytes) {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return false;
  unsigned long long size = 0, resident = 0;
  int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (n != 2) return false;
  *bytes = static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
  return true;
}

}  // namespace

ProcSampler::ProcSampler(bool cpu_util, bool host_memory, int period_ms)
    : cpu_util_(cpu_util), host_memory_(host_memory), period_ms_(period_ms < 1 ? 1 : period_ms) {
  cpu_.name = "CPU Utilization (%)";
  memory_.name = "Process RSS (MB)";
  if (cpu_util_ || host_memory_) {
    SampleOnce();
    thread_ = std::thread([this] { Run(); });
  }
}

ProcSampler::~ProcSampler() { Stop(); }

void ProcSampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
    SampleOnce();  // a closing sample so the series spans the window
  }
}

std::vector<HostCounterSeries> ProcSampler::Take() {
  std::vector<HostCounterSeries> out;
  if (cpu_util_) out.push_back(std::move(cpu_));
  if (host_memory_) out.push_back(std::move(memory_));
  return out;
}

void ProcSampler::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::milliseconds(period_ms_), [this] { return stop_; })) {
    lock.unlock();
    SampleOnce();
    lock.lock();
  }
}

void ProcSampler::SampleOnce() {
  AddTickPoint();  // while awake anyway: one more anchor for converting the recording's ticks
  const int64_t now = NowNs();
  if (cpu_util_) {
    uint64_t busy = 0, total = 0;
    // /proc/stat counts in jiffies (10 ms): between two readings inside one jiffy nothing
    // moved, so keep the older baseline until the totals advance.
    if (ReadCpuJiffies(&busy, &total) && (!have_last_ || total > last_total_)) {
      if (have_last_) {
        double util = 100.0 * static_cast<double>(busy - last_busy_) /
                      static_cast<double>(total - last_total_);
        cpu_.samples.push_back({now, util});
      }
      last_busy_ = busy;
      last_total_ = total;
      have_last_ = true;
    }
  }
  if (host_memory_) {
    double rss = 0;
    if (ReadRssBytes(&rss)) memory_.samples.push_back({now, rss / (1024.0 * 1024.0)});
  }
}

}  // namespace opscope::internal
