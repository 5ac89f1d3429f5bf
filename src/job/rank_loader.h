// Loading rank files from a queue of work: the one loop behind LoadRankSummaries and the MPI
// processes' shares, which take their files one at a time from process 0 (job_mpi.cc).
#ifndef OPSCOPE_SRC_JOB_RANK_LOADER_H_
#define OPSCOPE_SRC_JOB_RANK_LOADER_H_

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "opscope/job.h"

namespace opscope::job {

// The cores this process may run on: its CPU affinity (an MPI launcher that binds a process to
// one core leaves it one), else every core of the host.
int CoresOfThisProcess();

// The next file to load, as an index into the files, or nullopt when none is left. Called by the
// workers one call at a time (under a lock), never concurrently.
using NextRankFile = std::function<std::optional<size_t>()>;

// Loads the files `next` hands out on `threads` workers (0: CoresOfThisProcess()), each taking
// its next file when it is done with the last; with fewer files than cores, each import gets the
// remaining cores. Returns (index, summary) of every file taken, in the order they were done.
// `progress` (may be empty) is called after each file with the files done here and the files'
// total, one call at a time. Memory: one trace per worker, each dropped once summarized.
std::vector<std::pair<size_t, RankSummary>> LoadTakenRankSummaries(
    const std::vector<RankFile>& files, const NextRankFile& next, int threads,
    const RankFileProgress& progress);

// Indices of `files`, largest first (ties in their order in `files`): the order that lets workers
// that take the next file when free finish together.
std::vector<size_t> LargestFirst(const std::vector<RankFile>& files);

}  // namespace opscope::job

#endif  // OPSCOPE_SRC_JOB_RANK_LOADER_H_
