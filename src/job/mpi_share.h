// Shared by the MPI and the no-MPI builds of MpiJob.
#ifndef OPSCOPE_SRC_JOB_MPI_SHARE_H_
#define OPSCOPE_SRC_JOB_MPI_SHARE_H_

#include <utility>
#include <vector>

#include "job/rank_loader.h"
#include "opscope/job_mpi.h"

namespace opscope::job {

// Seconds since this process started, from the kernel's record of its start (clock ticks: 10 ms
// resolution).
double SecondsSinceProcessStart();

// What the launcher's environment says of this process before MPI_Init: its rank, the job's
// size and the job's processes on this host (OpenMPI's OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE,
// OMPI_COMM_WORLD_LOCAL_SIZE). False unless all three are there and consistent.
bool LauncherRankAndSize(int* rank, int* size, int* host_size);

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
