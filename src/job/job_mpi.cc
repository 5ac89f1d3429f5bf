// MpiJob with MPI: rank files spread over the processes, summaries gathered on process 0.
#include "opscope/job_mpi.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <algorithm>
#include <limits>
#include <thread>

#include "job/mpi_share.h"

namespace opscope {

bool MpiBuilt() { return true; }

MpiJob::MpiJob(int* argc, char*** argv) {
  if (!StartedByMpiLauncher()) return;
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    error_ = "MPI_Init failed";
    return;
  }
  initialized_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm host;  // the processes sharing this host's memory, and so its cores
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) ==
      MPI_SUCCESS) {
    MPI_Comm_size(host, &host_size_);
    MPI_Comm_free(&host);
  }
}

MpiJob::~MpiJob() {
  if (initialized_) MPI_Finalize();
}

Status MpiJob::LoadSummaries(const std::vector<RankFile>& files, std::vector<RankSummary>* all,
                             std::vector<ProcessStats>* stats, int threads,
                             const RankFileProgress& progress) {
  if (threads <= 0) {  // this host's cores, shared by its processes
    threads = std::max(
        1, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, host_size_));
  }
  ProcessStats my_stats;
  std::vector<RankSummary> mine =
      job::LoadAndMeasure(ShareOf(files, rank_, size_), threads, &my_stats, progress);
  if (size_ == 1) {
    stats->assign(1, my_stats);
    *all = std::move(mine);
    return Status::Ok();
  }
  constexpr int kFields = 5;
  const double fields[kFields] = {static_cast<double>(my_stats.files), my_stats.bytes,
                                  my_stats.seconds, my_stats.cpu_seconds, my_stats.peak_rss_mb};
  std::vector<double> gathered_stats(rank_ == 0 ? kFields * static_cast<size_t>(size_) : 0);
  MPI_Gather(fields, kFields, MPI_DOUBLE, gathered_stats.data(), kFields, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  for (size_t p = 0; p < gathered_stats.size(); p += kFields) {
    const double* f = &gathered_stats[p];
    stats->push_back({static_cast<int64_t>(f[0]), f[1], f[2], f[3], f[4]});
  }
  const std::string bytes = SerializeRankSummaries(mine);
  mine.clear();
  // Sizes first (as 64-bit), then the bytes; MPI counts are int, so process 0 checks the total.
  const auto my_size = static_cast<unsigned long long>(bytes.size());
  std::vector<unsigned long long> sizes(rank_ == 0 ? static_cast<size_t>(size_) : 0);
  MPI_Gather(&my_size, 1, MPI_UNSIGNED_LONG_LONG, sizes.data(), 1, MPI_UNSIGNED_LONG_LONG, 0,
             MPI_COMM_WORLD);
  std::vector<int> counts, displs;
  int fits = 1;
  if (rank_ == 0) {
    unsigned long long total = 0;
    for (unsigned long long s : sizes) {
      displs.push_back(static_cast<int>(std::min<unsigned long long>(total, INT32_MAX)));
      counts.push_back(static_cast<int>(std::min<unsigned long long>(s, INT32_MAX)));
      total += s;
    }
    fits = total <= static_cast<unsigned long long>(std::numeric_limits<int>::max());
  }
  MPI_Bcast(&fits, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!fits) {
    return Status::Unavailable(
        "the rank summaries exceed 2 GiB, more than one MPI gather can carry");
  }
  std::string gathered(rank_ == 0 ? static_cast<size_t>(displs.back() + counts.back()) : 0, '\0');
  MPI_Gatherv(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, gathered.data(),
              counts.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank_ != 0) return Status::Ok();
  for (int p = 0; p < size_; ++p) {
    const Status parsed =
        ParseRankSummaries(std::string_view(gathered).substr(static_cast<size_t>(displs[p]),
                                                             static_cast<size_t>(counts[p])),
                           all);
    if (!parsed.ok()) {
      // Name what that process read: a version mismatch means another opscope build there.
      std::vector<std::string> paths;
      for (const RankFile& f : ShareOf(files, p, size_)) paths.push_back(f.path);
      return Status::InvalidInput(
          fmt::format("summaries from MPI process {} (of {}): {}", p,
                      paths.empty() ? std::string("no rank files")
                                    : fmt::format("{}", fmt::join(paths, ", ")),
                      parsed.message()),
          parsed.offset());
    }
  }
  return Status::Ok();
}

int MpiJob::ShareExitCode(int code) {
  if (initialized_) MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return code;
}

}  // namespace opscope
