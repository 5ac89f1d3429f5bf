// Multi-rank jobs in the CLI: loading rank files (over MPI processes when started by mpirun) and
// printing the job report (see job_commands.h).
#include "tools/job_commands.h"

#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "opscope/html_report.h"
#include "opscope/import.h"
#include "opscope/key_averages.h"
#include "tools/html_output.h"
#include "tools/progress.h"

namespace opscope::tools {
namespace {

void PrintImportErrors(const char* command, const std::vector<RankSummary>& summaries) {
  for (const RankSummary& s : summaries) {
    if (!s.error.empty()) {  // the message names the file
      std::fprintf(stderr, "opscope %s: %s (this rank is left out; the report is partial)\n",
                   command, s.error.c_str());
    }
  }
}

// --rank N: that rank's key_averages table (or JSON), from its file imported again.
int PrintRankTable(const JobReportArgs& args, const JobReport& job) {
  const RankSummary* found = nullptr;
  for (const RankSummary& s : job.summaries) {
    if (s.rank == args.rank && s.error.empty()) found = &s;
  }
  if (!found) {
    std::fprintf(stderr, "opscope report: rank %d is not in this job (%zu ranks read)\n", args.rank,
                 job.ranks.size());
    return 1;
  }
  Trace trace;
  const Status st = ImportTrace(found->file, &trace);
  if (!st.ok()) {
    std::fprintf(stderr, "opscope report: %s\n", st.message().c_str());  // names the file
    return 1;
  }
  const std::string sort = !args.sort_by.empty()       ? args.sort_by
                           : trace.HasDeviceActivity() ? "device_time_total"
                                                       : "cpu_time_total";
  try {
    const KeyAverages avg = KeyAverages::FromTrace(trace);
    std::string out = args.json ? avg.ToJson(sort, args.rows) + "\n"
                                : "Rank " + std::to_string(args.rank) + ": " + found->file +
                                      "\n\n" + avg.Table(sort, args.rows);
    std::fwrite(out.data(), 1, out.size(), stdout);
  } catch (const std::exception& e) {  // a sort key key_averages does not know
    std::fprintf(stderr, "opscope report: %s\n", e.what());
    return 1;
  }
  return 0;
}

double PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void PrintStats(const std::vector<MpiJob::ProcessStats>& stats, const JobReport& job,
                double analysis_s) {
  for (size_t p = 0; p < stats.size(); ++p) {
    const MpiJob::ProcessStats& s = stats[p];
    std::fprintf(stderr,
                 "opscope report: process %zu of %zu: %lld rank files, %.1f MB of trace in %.3f s "
                 "(%.0f MB/s, %.3f s CPU), peak RSS %.1f MB\n",
                 p, stats.size(), static_cast<long long>(s.files), s.bytes / 1e6, s.seconds,
                 s.seconds > 0 ? s.bytes / 1e6 / s.seconds : 0.0, s.cpu_seconds, s.peak_rss_mb);
    if (s.mpi_init_start_s >= 0) {  // under MPI: where its time went, from its start
      std::fprintf(stderr,
                   "opscope report: process %zu, seconds since it started: MPI_Init %.2f-%.2f, "
                   "import %.2f-%.2f",
                   p, s.mpi_init_start_s, s.mpi_init_end_s, s.import_start_s, s.import_end_s);
      if (s.gathered_s >= 0) std::fprintf(stderr, ", summaries gathered %.2f", s.gathered_s);
      std::fprintf(stderr, "\n");
    }
  }
  std::fprintf(stderr, "opscope report: job analysis on process 0: %.3f s, peak RSS %.1f MB\n",
               analysis_s, PeakRssMb());
  // What MPI gathers on process 0: the summaries' encoding (the same with or without MPI).
  size_t collectives = 0;
  for (const RankSummary& s : job.summaries) collectives += s.collectives.size();
  std::fprintf(stderr,
               "opscope report: summaries gathered: %zu bytes for %zu ranks and %zu collectives\n",
               SerializeRankSummaries(job.summaries).size(), job.summaries.size(), collectives);
}

}  // namespace

// A job's rank traces are imported one after another on each worker. With glibc's defaults the
// memory of each trace, once freed, goes back to the kernel (the heap is trimmed above 128 KiB
// free at its top; blocks above the dynamic mmap threshold are unmapped), and the next trace
// faults it in again page by page: on 64 MB ranks that was twice the page faults and a tenth of
// a one-core job's CPU time. Here blocks up to 32 MiB (glibc's largest threshold) come from the
// heap and up to 1 GiB of free heap stays mapped for the next trace; the peak is what one trace
// per worker needs either way. A setting made with glibc's MALLOC_* variables is kept.
void KeepFreedMemoryForTheNextTrace() {
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) mallopt(M_MMAP_THRESHOLD, 32 << 20);
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

Status ResolveTraceFiles(const std::vector<std::string>& paths, std::vector<RankFile>* files) {
  return FindRankFiles(paths, files);
}

bool LoadJob(const char* command, const std::vector<RankFile>& files, const JobOptions& options,
             JobReport* report) {
  KeepFreedMemoryForTheNextTrace();
  std::vector<RankSummary> summaries = LoadRankSummaries(files);
  PrintImportErrors(command, summaries);
  *report = AnalyzeJob(std::move(summaries), options);
  if (!report->error.empty()) {
    std::fprintf(stderr, "opscope %s: %s\n", command, report->error.c_str());
    return false;
  }
  return true;
}

int RunJobReport(const JobReportArgs& args, const std::vector<RankFile>& files, MpiJob& mpi) {
  KeepFreedMemoryForTheNextTrace();
  std::vector<RankSummary> summaries;
  std::vector<MpiJob::ProcessStats> stats;
  // Process 0 draws the rank files done by every process (only it draws: under mpirun the
  // others' stderr would interleave).
  ProgressBar progress("import rank files", args.quiet || mpi.rank() != 0);
  RankFileProgress on_file;
  if (progress.enabled()) {
    on_file = [&progress](size_t done, size_t total) {
      progress.UpdateCount(done, total, "rank files");
    };
  }
  const Status loaded = mpi.LoadSummaries(files, &summaries, &stats, args.threads, on_file);
  progress.Done();
  if (!loaded.ok()) {
    std::fprintf(stderr, "opscope report: %s\n", loaded.message().c_str());
    return mpi.ShareExitCode(2);
  }
  if (mpi.rank() != 0) return mpi.ShareExitCode(0);  // process 0 reports
  const auto start = std::chrono::steady_clock::now();
  PrintImportErrors("report", summaries);
  JobOptions options;
  options.align_clocks = args.align_clocks;
  options.rows = args.rows;
  const JobReport job = AnalyzeJob(std::move(summaries), options);
  if (!job.error.empty()) {
    std::fprintf(stderr, "opscope report: %s\n", job.error.c_str());
    return mpi.ShareExitCode(2);
  }
  int code = 0;
  if (args.rank >= 0) {
    code = PrintRankTable(args, job);
  } else {
    if (!args.html.empty()) {
      HtmlOptions html;
      html.rows = args.html_rows;
      if (!WriteHtmlOutput("report", args.html, JobHtml(job, html))) code = 1;
    }
    if (args.html.empty() || args.json) {
      const std::string out = args.json ? JobReportJson(job) + "\n" : FormatJobReport(job, options);
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
    }
  }
  if (args.stats) {
    PrintStats(stats, job,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return mpi.ShareExitCode(code);
}

}  // namespace opscope::tools
