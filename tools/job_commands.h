// The multi-rank side of `opscope report`, `opscope diff` and `opscope explore`: a set of paths
// that names more than one trace is a distributed job (include/opscope/job.h).
#ifndef OPSCOPE_TOOLS_JOB_COMMANDS_H_
#define OPSCOPE_TOOLS_JOB_COMMANDS_H_

#include <string>
#include <vector>

#include "opscope/job.h"
#include "opscope/job_mpi.h"
#include "opscope/status.h"

namespace opscope::tools {

struct JobReportArgs {
  std::vector<std::string> paths;
  std::string sort_by;  // for --rank: the key_averages sort key
  int rows = 20;
  bool json = false;
  int rank = -1;  // --rank N: that rank's key_averages table
  bool align_clocks = true;
  bool stats = false;   // --stats: each process's files, MB, seconds, MB/s and peak RSS on stderr
  int threads = 0;      // --threads N: cores a process imports on (0: the cores available, shared
                        // by the MPI processes on a host); one rank file per core
  bool quiet = false;   // --quiet: no progress bar on stderr
  std::string html;     // --html FILE: also a self-contained HTML report
  int html_rows = 500;  // its tables' row limit (--rows when given)
};

// The trace files `paths` name (a file as given; folders searched): FindRankFiles.
Status ResolveTraceFiles(const std::vector<std::string>& paths, std::vector<RankFile>* files);

// Imports every rank file (one per core, each trace dropped once summarized; spread over the MPI
// processes when started by mpirun) and analyses the job. Process 0 prints the report (text or
// JSON); every process returns process 0's exit code.
int RunJobReport(const JobReportArgs& args, const std::vector<RankFile>& files, MpiJob& mpi);

// Loads and analyses one job for diff/explore; `command` prefixes messages. False on a fatal
// error (printed).
// Keeps freed heap memory mapped for the next trace a worker imports (mallopt; glibc's MALLOC_*
// variables, when set, win): traces imported one after another reuse the pages the last one's
// temporaries faulted in. Call before importing several traces.
void KeepFreedMemoryForTheNextTrace();

bool LoadJob(const char* command, const std::vector<RankFile>& files, const JobOptions& options,
             JobReport* report);

}  // namespace opscope::tools

#endif  // OPSCOPE_TOOLS_JOB_COMMANDS_H_
