// Shared by the MPI and the no-MPI builds of MpiJob.
#ifndef OPSCOPE_SRC_JOB_MPI_SHARE_H_
#define OPSCOPE_SRC_JOB_MPI_SHARE_H_

#include <vector>

#include "opscope/job_mpi.h"

namespace opscope::job {

// Loads `files` on `threads` cores (LoadRankSummaries: each trace dropped once summarized) and
// measures it; `progress` as LoadRankSummaries'.
std::vector<RankSummary> LoadAndMeasure(const std::vector<RankFile>& files, int threads,
                                        MpiJob::ProcessStats* stats,
                                        const RankFileProgress& progress);

}  // namespace opscope::job

#endif  // OPSCOPE_SRC_JOB_MPI_SHARE_H_
