// Shared by the MPI and the no-MPI builds of MpiJob.
#ifndef OPSCOPE_SRC_JOB_MPI_SHARE_H_
#define OPSCOPE_SRC_JOB_MPI_SHARE_H_

#include <utility>
#include <vector>

#include "job/rank_loader.h"
#include "opscope/job_mpi.h"

namespace opscope::job {

// ShareOf as indices into `files`, in path order.
std::vector<size_t> ShareIndices(const std::vector<RankFile>& files, int rank, int size);

// Loads the files of `files` that `next` hands out (LoadTakenRankSummaries) and measures it:
// `stats` gets the files taken, their bytes, the time, CPU time and peak RSS.
std::vector<std::pair<size_t, RankSummary>> LoadAndMeasure(const std::vector<RankFile>& files,
                                                           const NextRankFile& next, int threads,
                                                           MpiJob::ProcessStats* stats,
                                                           const RankFileProgress& progress);

// Every file of `files` loaded in this process alone, in the order of `files`.
std::vector<RankSummary> LoadAllAndMeasure(const std::vector<RankFile>& files, int threads,
                                           MpiJob::ProcessStats* stats,
                                           const RankFileProgress& progress);

}  // namespace opscope::job

#endif  // OPSCOPE_SRC_JOB_MPI_SHARE_H_
