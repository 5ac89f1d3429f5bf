// Spreading a job's rank files over MPI processes: `mpirun -n K opscope report DIR --json`.
//
// Every process lists the same rank files and imports and summarizes its share, one file per core
// it has: the files by size, each to the process with the fewest bytes so far (ShareOf), known
// from the launcher's environment before MPI_Init returns, so that the import runs while MPI
// starts. Where the environment does not give the rank, MPI starts first and process 0 hands the
// files out, largest first, to whichever process has a core free.
// The summaries go to process 0, which puts them back in the files' order and analyses the whole
// job exactly as one process would (the summaries' encoding is lossless), so the report is
// byte-identical. A process's memory is one trace per core it imports on plus its summaries.
// While waiting (for a file, for the gather, for process 0's report) a process sleeps between
// polls instead of spinning on a core as OpenMPI's blocking calls do.
//
//   opscope::MpiJob mpi(&argc, &argv);             // MPI_Init when started by an MPI launcher
//   std::vector<opscope::RankSummary> all;         // filled on process 0 only
//   std::vector<opscope::MpiJob::ProcessStats> stats;
//   opscope::Status st = mpi.LoadSummaries(files, &all, &stats);
//   if (!st.ok()) { ... }                           // st.message() says what and where
//   if (mpi.rank() == 0) { ... AnalyzeJob(std::move(all)) ... }
//
// This is the optional opscope::job_mpi component: built with MPI when CMake finds it (OpenMPI
// from Debian's libopenmpi-dev); without it MpiBuilt() is false and a process started by an MPI
// launcher gets an error saying so.
//
// Thread safety: one MpiJob per process, used from the thread that made it.
#ifndef OPSCOPE_JOB_MPI_H_
#define OPSCOPE_JOB_MPI_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "opscope/job.h"
#include "opscope/status.h"

namespace opscope {

// True when this build links MPI.
bool MpiBuilt();
// True when an MPI launcher (mpirun / mpiexec / srun with PMI or PMIx) started this process with
// more than one process in the job.
bool StartedByMpiLauncher();

// A share of `files` fixed in advance, for process `rank` of `size`: files by size, largest first,
// each to the process with the fewest bytes so far (ties: the lowest process; LPT scheduling). The
// same on every process. MpiJob uses it when the launcher's environment gives the process's rank,
// so that it imports while MPI_Init runs, and where MPI cannot be called from several threads;
// otherwise process 0 hands the files out as the processes become free.
std::vector<RankFile> ShareOf(const std::vector<RankFile>& files, int rank, int size);

class MpiJob {
 public:
  // Initializes MPI when StartedByMpiLauncher() and MpiBuilt(); otherwise a one-process job.
  // Check error() afterwards: a launcher without MPI in the build is an error. Where the
  // launcher's environment gives this process's rank, the job's size and the processes on this
  // host (OpenMPI's OMPI_COMM_WORLD_RANK, _SIZE and _LOCAL_SIZE), MPI_Init runs on a thread of its
  // own and returns here at once: rank() and size() are the environment's, LoadSummaries imports
  // this process's share while MPI starts, then checks them against MPI's. Otherwise MPI_Init
  // returns before this does.
  MpiJob(int* argc, char*** argv);
  ~MpiJob();  // MPI_Finalize (on the thread that called MPI_Init)
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& error() const { return error_; }

  // What one process did in LoadSummaries.
  struct ProcessStats {
    int64_t files = 0;
    double bytes = 0;        // of the rank files as stored
    double seconds = 0;      // importing and summarizing them (wall)
    double cpu_seconds = 0;  // the same in CPU time (user + system)
    double peak_rss_mb = 0;  // the process's peak resident memory afterwards
    // When each step began and ended, in seconds since the process started (the kernel's clock
    // ticks: 10 ms resolution); -1 where it did not happen (no MPI).
    double mpi_init_start_s = -1;
    double mpi_init_end_s = -1;
    double import_start_s = -1;
    double import_end_s = -1;
    double gathered_s = -1;  // process 0 only: every process's summaries gathered
  };

  // Loads this process's share of `files` on `threads` cores (0 = its host's cores divided among
  // the job's processes on that host, at most the cores it is bound to) and gathers every process's
  // summaries, and `stats` (one per process), on process 0 (both stay empty elsewhere). Collective:
  // every process must call it. Unavailable when the summaries exceed what one gather carries;
  // InvalidInput, naming the sending process and its files, when process 0 cannot read what one
  // sent (another opscope build there). `progress` (may be empty) is called with the files done
  // and their total, one call at a time: on process 0, the files done by every process (the others'
  // as they ask for their next file), elsewhere the process's own.
  Status LoadSummaries(const std::vector<RankFile>& files, std::vector<RankSummary>* all,
                       std::vector<ProcessStats>* stats, int threads = 0,
                       const RankFileProgress& progress = {});
  // Process 0's exit code to every process (collective); returns it. After a LoadSummaries that
  // gathered the summaries MPI is finalizing (process 0 finalizes while it writes the report) and
  // each process keeps its own code: the launcher reports process 0's failure.
  int ShareExitCode(int code);

 private:
  // This process's files, as process 0 hands them out (or, when MPI cannot be called from
  // several threads, the share ShareOf gives it): (index in `files`, summary) pairs.
  std::vector<std::pair<size_t, RankSummary>> LoadShare(const std::vector<RankFile>& files,
                                                        int threads, ProcessStats* stats,
                                                        const RankFileProgress& progress);
  // Waits for MPI_Init (started by the constructor) and checks MPI's rank and size against the
  // environment's; the error, or empty.
  std::string WaitForMpi();

  struct MpiThread;  // MPI_Init_thread, then MPI_Finalize when asked (job_mpi.cc)

  int rank_ = 0;
  int size_ = 1;
  int host_size_ = 1;  // the job's processes on this host
  bool initialized_ = false;
  bool hand_out_files_ = false;  // MPI_THREAD_SERIALIZED provided: files handed out on request
  bool init_pending_ = false;    // MPI_Init runs on mpi_thread_; rank_ and size_ are the env's
  bool finalizing_ = false;      // the summaries are gathered; mpi_thread_ calls MPI_Finalize
  std::unique_ptr<MpiThread> mpi_thread_;
  double init_start_s_ = -1, init_end_s_ = -1;  // MPI_Init, in seconds since the process started
  std::string error_;
};

}  // namespace opscope

#endif  // OPSCOPE_JOB_MPI_H_
