// What the MPI job needs with or without MPI: launcher detection and the share of each process.
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <optional>
#include <string>

#include "job/mpi_share.h"
#include "opscope/job_mpi.h"

namespace opscope {

bool StartedByMpiLauncher() {
  // OpenMPI's mpirun, then PMIx (OpenMPI 4+, srun --mpi=pmix) and PMI (MPICH, srun --mpi=pmi2).
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(var)) return std::atoi(v) > 1;
  }
  if (std::getenv("PMIX_RANK") != nullptr) return true;  // PMIx without a size variable
  return false;
}

namespace job {

double SecondsSinceProcessStart() {
  // Field 22 of /proc/self/stat, after the command name in parentheses (which may hold spaces):
  // the start time in clock ticks since boot.
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return -1;
  const char* at = stat.c_str() + paren + 1;
  for (int field = 3; field < 22; ++field) {  // `at` is at the space before `field`
    at = std::strchr(at + 1, ' ');
    if (at == nullptr) return -1;
  }
  const double start_s =
      static_cast<double>(std::strtoull(at + 1, nullptr, 10)) / sysconf(_SC_CLK_TCK);
  timespec now{};
  clock_gettime(CLOCK_BOOTTIME, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9 - start_s;
}

bool LauncherRankAndSize(int* rank, int* size, int* host_size) {
  const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
  const char* s = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* h = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (r == nullptr || s == nullptr || h == nullptr) return false;
  *rank = std::atoi(r);
  *size = std::atoi(s);
  *host_size = std::atoi(h);
  return *size >= 1 && *rank >= 0 && *rank < *size && *host_size >= 1 && *host_size <= *size;
}

std::vector<size_t> ShareIndices(const std::vector<RankFile>& files, int rank, int size) {
  std::vector<size_t> mine;
  if (size <= 1) {
    mine.resize(files.size());
    std::iota(mine.begin(), mine.end(), 0);
    return mine;
  }
  std::vector<uint64_t> load(static_cast<size_t>(size), 0);
  for (size_t i : LargestFirst(files)) {
    const auto p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[p] += std::max<uint64_t>(files[i].bytes, 1);
    if (static_cast<int>(p) == rank) mine.push_back(i);
  }
  std::sort(mine.begin(), mine.end());  // import in path order
  return mine;
}

}  // namespace job

std::vector<RankFile> ShareOf(const std::vector<RankFile>& files, int rank, int size) {
  std::vector<RankFile> out;
  for (size_t i : job::ShareIndices(files, rank, size)) out.push_back(files[i]);
  return out;
}

namespace job {
namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

std::vector<std::pair<size_t, RankSummary>> LoadAndMeasure(const std::vector<RankFile>& files,
                                                           const NextRankFile& next, int threads,
                                                           MpiJob::ProcessStats* stats,
                                                           const RankFileProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = CpuSeconds();
  stats->import_start_s = SecondsSinceProcessStart();
  auto out = LoadTakenRankSummaries(files, next, threads, progress);
  stats->import_end_s = SecondsSinceProcessStart();
  for (const auto& [i, summary] : out) stats->bytes += static_cast<double>(files[i].bytes);
  stats->files = static_cast<int64_t>(out.size());
  stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats->cpu_seconds = CpuSeconds() - cpu_start;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  stats->peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  return out;
}

std::vector<RankSummary> LoadAllAndMeasure(const std::vector<RankFile>& files, int threads,
                                           MpiJob::ProcessStats* stats,
                                           const RankFileProgress& progress) {
  const std::vector<size_t> order = LargestFirst(files);
  size_t next = 0;
  auto taken = LoadAndMeasure(
      files,
      [&]() -> std::optional<size_t> {
        if (next >= order.size()) return std::nullopt;
        return order[next++];
      },
      threads, stats, progress);
  std::vector<RankSummary> out(files.size());
  for (auto& [i, summary] : taken) out[i] = std::move(summary);
  return out;
}

}  // namespace job
}  // namespace opscope
