// MpiJob with MPI: rank files handed out to the processes as they become free, summaries gathered
// on process 0.
#include "opscope/job_mpi.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "job/mpi_share.h"

namespace opscope {
namespace {

using std::chrono::microseconds;

// A process asks process 0 for its next rank file, sending how many it has done (long long).
constexpr int kTagAsk = 7101;
constexpr int kTagFile = 7102;  // process 0's answer: a file's index, or -1 when none is left

// Waits for `request` without holding a core. OpenMPI's blocking calls poll in a busy loop, so a
// process that has finished its files would spin on a core in the gather while the others still
// import (and every process while process 0 writes the report), taking a core that they, or other
// users of the host, need. This polls with MPI_Test (which also makes MPI progress) and sleeps
// between polls, 50 us at first, up to 2 ms.
void WaitWithoutSpinning(MPI_Request* request) {
  auto pause = microseconds(50);
  for (int done = 0;;) {
    MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, microseconds(2000));
  }
}

// Process 0's side of handing out rank files: answers the other processes' requests (kTagAsk)
// with the next file of `order`, taken from `next` (which process 0's own workers share), until
// every other process has been told that none is left. Each request says how many files its
// process has done: `on_done` gets the other processes' total whenever it grows. Runs on its own
// thread, the only thread of process 0 that calls MPI meanwhile; sleeps (50 us to 1 ms) while
// nobody asks.
void ServeFiles(const std::vector<size_t>& order, std::atomic<size_t>* next, int processes,
                const std::function<void(size_t)>& on_done) {
  std::vector<long long> done_by(static_cast<size_t>(processes), 0);
  long long others_done = 0;
  auto pause = microseconds(50);
  for (int told_none_left = 0; told_none_left < processes - 1;) {
    int asked = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagAsk, MPI_COMM_WORLD, &asked, &status);
    if (!asked) {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, microseconds(1000));
      continue;
    }
    pause = microseconds(50);
    long long done = 0;
    MPI_Recv(&done, 1, MPI_LONG_LONG, status.MPI_SOURCE, kTagAsk, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    long long& known = done_by[static_cast<size_t>(status.MPI_SOURCE)];
    if (done > known) {
      others_done += done - known;
      known = done;
      on_done(static_cast<size_t>(others_done));
    }
    const size_t i = next->fetch_add(1);
    const long long answer = i < order.size() ? static_cast<long long>(order[i]) : -1;
    if (answer < 0) ++told_none_left;
    MPI_Request sent;
    MPI_Isend(&answer, 1, MPI_LONG_LONG, status.MPI_SOURCE, kTagFile, MPI_COMM_WORLD, &sent);
    WaitWithoutSpinning(&sent);
  }
}

// A process other than 0 asks process 0 for its next rank file, saying how many it has `done`;
// once told none is left it no longer asks. Called by its workers one at a time
// (LoadTakenRankSummaries' lock).
std::optional<size_t> AskProcess0(bool* none_left, size_t done) {
  if (*none_left) return std::nullopt;
  long long ask = static_cast<long long>(done);
  long long answer = -1;
  MPI_Request requests[2];
  MPI_Irecv(&answer, 1, MPI_LONG_LONG, 0, kTagFile, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(&ask, 1, MPI_LONG_LONG, 0, kTagAsk, MPI_COMM_WORLD, &requests[1]);
  WaitWithoutSpinning(&requests[1]);
  WaitWithoutSpinning(&requests[0]);
  if (answer < 0) {
    *none_left = true;
    return std::nullopt;
  }
  return static_cast<size_t>(answer);
}

// Gathers every process's `mine` on process 0 (`all`, one string per process; empty elsewhere).
// Collective. False on every process when the total exceeds what one MPI_Gatherv carries (2 GiB:
// MPI counts are int).
bool GatherBytes(const std::string& mine, int rank, int size, std::vector<std::string>* all) {
  const auto my_size = static_cast<unsigned long long>(mine.size());
  std::vector<unsigned long long> sizes(rank == 0 ? static_cast<size_t>(size) : 0);
  MPI_Request request;
  MPI_Igather(&my_size, 1, MPI_UNSIGNED_LONG_LONG, sizes.data(), 1, MPI_UNSIGNED_LONG_LONG, 0,
              MPI_COMM_WORLD, &request);
  WaitWithoutSpinning(&request);
  std::vector<int> counts, displs;
  int fits = 1;
  if (rank == 0) {
    unsigned long long total = 0;
    for (unsigned long long s : sizes) {
      displs.push_back(static_cast<int>(std::min<unsigned long long>(total, INT32_MAX)));
      counts.push_back(static_cast<int>(std::min<unsigned long long>(s, INT32_MAX)));
      total += s;
    }
    fits = total <= static_cast<unsigned long long>(std::numeric_limits<int>::max());
  }
  MPI_Ibcast(&fits, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
  WaitWithoutSpinning(&request);
  if (!fits) return false;
  std::string gathered(rank == 0 ? static_cast<size_t>(displs.back() + counts.back()) : 0, '\0');
  MPI_Igatherv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, gathered.data(), counts.data(),
               displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD, &request);
  WaitWithoutSpinning(&request);
  for (size_t p = 0; p < counts.size(); ++p) {
    all->push_back(gathered.substr(static_cast<size_t>(displs[p]), static_cast<size_t>(counts[p])));
  }
  return true;
}

}  // namespace

bool MpiBuilt() { return true; }

// The thread that calls MPI_Init_thread and, when the job is done, MPI_Finalize (MPI wants both
// on one thread). Between the two it only waits: the process's other threads make the MPI calls,
// one at a time (MPI_THREAD_SERIALIZED).
struct MpiJob::MpiThread {
  std::mutex mu;
  std::condition_variable cv;
  bool init_done = false;  // guarded by mu
  bool finalize = false;   // guarded by mu: set by ~MpiJob
  int init_rc = MPI_SUCCESS;
  int provided = MPI_THREAD_SINGLE;
  double start_s = -1, end_s = -1;  // MPI_Init_thread, in seconds since the process started
  std::thread thread;

  MpiThread(int* argc, char*** argv) {
    thread = std::thread([this, argc, argv] {
      const double start = job::SecondsSinceProcessStart();
      int got = MPI_THREAD_SINGLE;
      const int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &got);
      std::unique_lock<std::mutex> lock(mu);
      init_rc = rc;
      provided = got;
      start_s = start;
      end_s = job::SecondsSinceProcessStart();
      init_done = true;
      cv.notify_all();
      cv.wait(lock, [this] { return finalize; });
      if (init_rc == MPI_SUCCESS) MPI_Finalize();
    });
  }
  // MPI_Finalize on this thread, now; returns at once.
  void StartFinalize() {
    {
      std::lock_guard<std::mutex> lock(mu);
      finalize = true;
    }
    cv.notify_all();
  }
  void WaitForInit() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return init_done; });
  }
  ~MpiThread() {
    StartFinalize();
    thread.join();
  }
};

MpiJob::MpiJob(int* argc, char*** argv) {
  if (!StartedByMpiLauncher()) return;
  // Where OpenMPI still waits in a blocking call (MPI_Init, MPI_Finalize), it yields the core to
  // other threads between polls. And its ob1 messaging layer (shared memory on a host, TCP
  // between hosts) instead of UCX: a job sends a few small messages per rank file and gathers
  // its summaries once, and UCX's start-up, probing the network devices, took 0.33-0.43 s of
  // MPI_Init against 0.13-0.19 s (OpenMPI 4.1, 2 processes). A value the user set is kept.
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
  setenv("OMPI_MCA_pml", "ob1", 0);
  int env_rank = 0, env_size = 1, env_host_size = 1;
  // MPI_Init alongside the import only where nothing in it rewrites code that the import's
  // threads run: OpenMPI's memory "patcher" patches mmap/munmap/brk in place during MPI_Init (for
  // registration caches that ob1's shared memory and TCP do not use), and UCX's hooks do the same.
  const char* pml = std::getenv("OMPI_MCA_pml");
  const bool overlap = job::LauncherRankAndSize(&env_rank, &env_size, &env_host_size) &&
                       pml != nullptr && std::strcmp(pml, "ob1") == 0 &&
                       std::getenv("OMPI_MCA_memory") == nullptr;
  if (overlap) setenv("OMPI_MCA_memory", "^patcher", 1);
  mpi_thread_ = std::make_unique<MpiThread>(argc, argv);
  if (overlap) {
    init_pending_ = true;
    rank_ = env_rank;
    size_ = env_size;
    host_size_ = env_host_size;
    return;
  }
  error_ = WaitForMpi();
}

std::string MpiJob::WaitForMpi() {
  if (mpi_thread_ == nullptr || initialized_) return {};
  mpi_thread_->WaitForInit();
  init_start_s_ = mpi_thread_->start_s;
  init_end_s_ = mpi_thread_->end_s;
  if (mpi_thread_->init_rc != MPI_SUCCESS) return "MPI_Init failed";
  initialized_ = true;
  // Serialized: calls come from this thread and, on process 0, from the thread that answers the
  // others' requests for files, one at a time; never from the thread that called MPI_Init.
  if (mpi_thread_->provided < MPI_THREAD_SERIALIZED) {
    return "this MPI library does not allow MPI calls from more than one thread "
           "(MPI_THREAD_SERIALIZED)";
  }
  hand_out_files_ = !init_pending_;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (init_pending_ && (rank != rank_ || size != size_)) {
    return fmt::format(
        "MPI says this is process {} of {}, but the launcher's environment "
        "(OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE) said process {} of {}, from which this "
        "process chose its rank files",
        rank, size, rank_, size_);
  }
  init_pending_ = false;
  rank_ = rank;
  size_ = size;
  MPI_Comm host;  // the processes sharing this host's memory, and so its cores
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) ==
      MPI_SUCCESS) {
    MPI_Comm_size(host, &host_size_);
    MPI_Comm_free(&host);
  }
  return {};
}

MpiJob::~MpiJob() = default;  // mpi_thread_ calls MPI_Finalize

std::vector<std::pair<size_t, RankSummary>> MpiJob::LoadShare(const std::vector<RankFile>& files,
                                                              int threads, ProcessStats* stats,
                                                              const RankFileProgress& progress) {
  if (!hand_out_files_) {  // the share by size, fixed in advance
    const std::vector<size_t> share = job::ShareIndices(files, rank_, size_);
    size_t next = 0;
    return job::LoadAndMeasure(
        files,
        [&]() -> std::optional<size_t> {
          if (next >= share.size()) return std::nullopt;
          return share[next++];
        },
        threads, stats, progress);
  }
  if (rank_ != 0) {
    bool none_left = false;
    size_t done = 0;  // files done here; set and read under LoadTakenRankSummaries' lock
    return job::LoadAndMeasure(
        files, [&] { return AskProcess0(&none_left, done); }, threads, stats,
        [&](size_t done_here, size_t total) {
          done = done_here;
          if (progress) progress(done_here, total);
        });
  }
  // Process 0 hands out the files, largest first, to whichever process is free (its own workers
  // included): a process slowed by other load on its core takes fewer, and all finish together.
  const std::vector<size_t> order = job::LargestFirst(files);
  std::atomic<size_t> next{0};
  // Process 0's bar counts the files done by every process: its own, and the others' as their
  // requests for the next file report them.
  std::mutex progress_mu;  // guards the counts and calls of `progress`
  size_t mine_done = 0, others_done = 0;
  auto report = [&] {
    if (progress) progress(std::min(mine_done + others_done, files.size()), files.size());
  };
  std::thread server([&] {
    ServeFiles(order, &next, size_, [&](size_t others) {
      std::lock_guard<std::mutex> lock(progress_mu);
      others_done = others;
      report();
    });
  });
  auto mine = job::LoadAndMeasure(
      files,
      [&]() -> std::optional<size_t> {
        const size_t i = next.fetch_add(1);
        if (i >= order.size()) return std::nullopt;
        return order[i];
      },
      threads, stats,
      [&](size_t done_here, size_t) {
        std::lock_guard<std::mutex> lock(progress_mu);
        mine_done = done_here;
        report();
      });
  server.join();
  return mine;
}

namespace {

// Every process's ProcessStats, gathered on process 0 (in process order; others get none).
void GatherProcessStats(const MpiJob::ProcessStats& my_stats, int rank, int size,
                        std::vector<MpiJob::ProcessStats>* stats) {
  constexpr int kFields = 9;
  const double fields[kFields] = {static_cast<double>(my_stats.files),
                                  my_stats.bytes,
                                  my_stats.seconds,
                                  my_stats.cpu_seconds,
                                  my_stats.peak_rss_mb,
                                  my_stats.mpi_init_start_s,
                                  my_stats.mpi_init_end_s,
                                  my_stats.import_start_s,
                                  my_stats.import_end_s};
  std::vector<double> gathered_stats(rank == 0 ? kFields * static_cast<size_t>(size) : 0);
  MPI_Request request;
  MPI_Igather(fields, kFields, MPI_DOUBLE, gathered_stats.data(), kFields, MPI_DOUBLE, 0,
              MPI_COMM_WORLD, &request);
  WaitWithoutSpinning(&request);
  for (size_t p = 0; p < gathered_stats.size(); p += kFields) {
    const double* f = &gathered_stats[p];
    stats->push_back({static_cast<int64_t>(f[0]), f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]});
  }
}

// Process 0: each process's summaries (`bytes_by`, of the file indices in `taken_by`) parsed and
// appended to `all` in the order of `files`, the order one process gives. Errors name the process
// and the rank files it read.
Status PutBackInOrder(const std::vector<RankFile>& files, const std::vector<std::string>& taken_by,
                      const std::vector<std::string>& bytes_by, std::vector<RankSummary>* all) {
  const int size = static_cast<int>(taken_by.size());
  // Each process's summaries, put back in the order of `files`: the order one process gives.
  std::vector<RankSummary> in_order(files.size());
  std::vector<bool> present(files.size(), false);
  for (int p = 0; p < size; ++p) {
    std::vector<size_t> indices;
    const std::string& t = taken_by[static_cast<size_t>(p)];
    for (size_t at = 0; at + sizeof(uint64_t) <= t.size(); at += sizeof(uint64_t)) {
      uint64_t index = 0;
      std::memcpy(&index, t.data() + at, sizeof(index));
      indices.push_back(static_cast<size_t>(index));
    }
    std::vector<RankSummary> got;
    Status parsed = ParseRankSummaries(bytes_by[static_cast<size_t>(p)], &got);
    if (parsed.ok() && got.size() != indices.size()) {
      parsed = Status::InvalidInput(
          fmt::format("{} summaries for {} rank files", got.size(), indices.size()),
          bytes_by[static_cast<size_t>(p)].size());
    }
    if (!parsed.ok()) {
      // Name what that process read: a version mismatch means another opscope build there.
      std::vector<std::string> paths;
      for (size_t i : indices) {
        if (i < files.size()) paths.push_back(files[i].path);
      }
      return Status::InvalidInput(
          fmt::format("summaries from MPI process {} (of {}): {}", p,
                      paths.empty() ? std::string("no rank files")
                                    : fmt::format("{}", fmt::join(paths, ", ")),
                      parsed.message()),
          parsed.offset());
    }
    for (size_t k = 0; k < got.size(); ++k) {
      if (indices[k] >= files.size() || present[indices[k]]) {
        return Status::InvalidInput(
            fmt::format("MPI process {} sent a rank file twice or out of range", p), 0);
      }
      in_order[indices[k]] = std::move(got[k]);
      present[indices[k]] = true;
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (present[i]) all->push_back(std::move(in_order[i]));
  }
  return Status::Ok();
}

}  // namespace

Status MpiJob::LoadSummaries(const std::vector<RankFile>& files, std::vector<RankSummary>* all,
                             std::vector<ProcessStats>* stats, int threads,
                             const RankFileProgress& progress) {
  if (threads <= 0) {  // this host's cores, shared by its processes, within this one's affinity
    const int host_cores = static_cast<int>(std::thread::hardware_concurrency());
    threads =
        std::max(1, std::min(job::CoresOfThisProcess(), host_cores / std::max(1, host_size_)));
  }
  if (size_ == 1) {
    stats->assign(1, {});
    *all = job::LoadAllAndMeasure(files, threads, &stats->front(), progress);
    return Status::Ok();
  }
  ProcessStats my_stats;
  std::vector<std::pair<size_t, RankSummary>> mine = LoadShare(files, threads, &my_stats, progress);
  // MPI_Init, where it ran alongside the import, must have agreed with the environment's rank.
  const std::string mpi_error = WaitForMpi();
  if (!mpi_error.empty()) {
    // The other processes would wait for this one's share forever: end the job, saying why.
    std::fprintf(stderr, "opscope: %s\n", mpi_error.c_str());
    if (initialized_) MPI_Abort(MPI_COMM_WORLD, 2);
    error_ = mpi_error;
    return Status::Unavailable(mpi_error);
  }
  my_stats.mpi_init_start_s = init_start_s_;
  my_stats.mpi_init_end_s = init_end_s_;
  GatherProcessStats(my_stats, rank_, size_, stats);
  // Which files each process read (indices, for the error below), then their summaries.
  std::string taken;
  std::vector<RankSummary> summaries;
  for (auto& [i, summary] : mine) {
    const auto index = static_cast<uint64_t>(i);
    taken.append(reinterpret_cast<const char*>(&index), sizeof(index));
    summaries.push_back(std::move(summary));
  }
  mine.clear();
  const std::string bytes = SerializeRankSummaries(summaries);
  summaries.clear();
  std::vector<std::string> taken_by, bytes_by;
  if (!GatherBytes(taken, rank_, size_, &taken_by) ||
      !GatherBytes(bytes, rank_, size_, &bytes_by)) {
    return Status::Unavailable(
        "the rank summaries exceed 2 GiB, more than one MPI gather can carry");
  }
  // Nothing more goes through MPI: every process finalizes now, process 0 while it analyses the
  // job and writes the report, so that its exit does not wait for MPI_Finalize's own exchange.
  finalizing_ = true;
  mpi_thread_->StartFinalize();
  if (rank_ != 0) return Status::Ok();
  stats->front().gathered_s = job::SecondsSinceProcessStart();
  return PutBackInOrder(files, taken_by, bytes_by, all);
}

int MpiJob::ShareExitCode(int code) {
  if (mpi_thread_ != nullptr && error_.empty()) error_ = WaitForMpi();
  if (initialized_ && error_.empty() && !finalizing_) {
    MPI_Request request;
    MPI_Ibcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
    WaitWithoutSpinning(&request);
  }
  return code;
}

}  // namespace opscope
