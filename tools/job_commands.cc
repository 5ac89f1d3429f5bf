// Multi-rank jobs in the CLI: loading rank files (over MPI processes when present) and printing
// the job report (see job_commands.h).
#include "tools/job_commands.h"

#include <cstdio>
#include <exception>

#include "opscope/key_averages.h"

namespace opscope::tools {
namespace {

void PrintImportErrors(const char* command, const std::vector<RankSummary>& summaries) {
  for (const RankSummary& s : summaries) {
    if (!s.error.empty()) {
      std::fprintf(stderr, "opscope %s: %s: %s (this rank is left out; the report is partial)\n",
                   command, s.file.c_str(), s.error.c_str());
    }
  }
}

std::vector<RankSummary> LoadSummaries(const std::vector<RankFile>& files) {
  std::vector<RankSummary> out;
  out.reserve(files.size());
  for (const RankFile& f : files) out.push_back(LoadRankSummary(f));
  return out;
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

}  // namespace

bool ResolveTraceFiles(const std::vector<std::string>& paths, std::vector<RankFile>* files,
                       std::string* error) {
  return FindRankFiles(paths, files, error);
}

bool LoadJob(const char* command, const std::vector<RankFile>& files, const JobOptions& options,
             JobReport* report) {
  std::vector<RankSummary> summaries = LoadSummaries(files);
  PrintImportErrors(command, summaries);
  *report = AnalyzeJob(std::move(summaries), options);
  if (!report->error.empty()) {
    std::fprintf(stderr, "opscope %s: %s\n", command, report->error.c_str());
    return false;
  }
  return true;
}

int RunJobReport(const JobReportArgs& args, const std::vector<RankFile>& files) {
  JobOptions options;
  options.align_clocks = args.align_clocks;
  options.rows = args.rows;
  JobReport job;
  if (!LoadJob("report", files, options, &job)) return 2;
  if (args.rank >= 0) return PrintRankTable(args, job);
  const std::string out = args.json ? JobReportJson(job) + "\n" : FormatJobReport(job, options);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace opscope::tools
