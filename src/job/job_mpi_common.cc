// What the MPI job needs with or without MPI: launcher detection and the share of each process.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <numeric>

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

std::vector<RankFile> ShareOf(const std::vector<RankFile>& files, int rank, int size) {
  if (size <= 1) return files;
  std::vector<size_t> order(files.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return files[a].bytes > files[b].bytes; });
  std::vector<uint64_t> load(static_cast<size_t>(size), 0);
  std::vector<size_t> mine;
  for (size_t i : order) {
    const auto p = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[p] += std::max<uint64_t>(files[i].bytes, 1);
    if (static_cast<int>(p) == rank) mine.push_back(i);
  }
  std::sort(mine.begin(), mine.end());  // import in path order
  std::vector<RankFile> out;
  for (size_t i : mine) out.push_back(files[i]);
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

std::vector<RankSummary> LoadAndMeasure(const std::vector<RankFile>& files, int threads,
                                        MpiJob::ProcessStats* stats,
                                        const RankFileProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = CpuSeconds();
  std::vector<RankSummary> out = LoadRankSummaries(files, threads, progress);
  for (const RankFile& f : files) stats->bytes += static_cast<double>(f.bytes);
  stats->files = static_cast<int64_t>(files.size());
  stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stats->cpu_seconds = CpuSeconds() - cpu_start;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  stats->peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  return out;
}

}  // namespace job
}  // namespace opscope
