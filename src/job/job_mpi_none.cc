// MpiJob in a build without MPI: a one-process job, and a clear error under an MPI launcher.
#include "job/mpi_share.h"
#include "opscope/job_mpi.h"

namespace opscope {

bool MpiBuilt() { return false; }

struct MpiJob::MpiThread {};

MpiJob::MpiJob(int*, char***) {
  if (StartedByMpiLauncher()) {
    error_ =
        "this opscope was built without MPI, so it cannot share a job between processes; "
        "install OpenMPI (Debian: openmpi-bin libopenmpi-dev) and rebuild, or run it without "
        "mpirun";
  }
}

MpiJob::~MpiJob() = default;

Status MpiJob::LoadSummaries(const std::vector<RankFile>& files, std::vector<RankSummary>* all,
                             std::vector<ProcessStats>* stats, int threads,
                             const RankFileProgress& progress) {
  stats->assign(1, {});
  *all = job::LoadAllAndMeasure(files, threads, &stats->front(), progress);
  return Status::Ok();
}

int MpiJob::ShareExitCode(int code) { return code; }

std::string MpiJob::WaitForMpi() { return {}; }

}  // namespace opscope
