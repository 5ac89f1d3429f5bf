// opscope check BASELINE CANDIDATE [--max-regression PCT] [--metric M]... [--min-steps N]
//                                  [--skip-steps N] [--json] [--junit FILE] [--markdown FILE]
//                                  [--html FILE]:
// a regression verdict for CI (include/opscope/check.h). Exit 0: no regression; 1: a regression;
// 2: could not compare (the message names the file). Two traces, or two jobs (folders of rank
// traces).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "opscope/check.h"
#include "opscope/html_report.h"
#include "opscope/import.h"
#include "opscope/job.h"
#include "tools/commands.h"
#include "tools/html_output.h"
#include "tools/job_commands.h"
#include "tools/progress.h"

namespace opscope::tools {
namespace {

struct CheckArgs {
  std::string baseline, candidate;
  std::vector<std::string> metrics;
  CheckOptions options;
  bool json = false;
  bool quiet = false;
  std::string junit, markdown, html;
  int html_rows = kHtmlDefaultRows;
};

// Imports one side; "" when it worked, else the message (it names the file).
std::string LoadTrace(const std::string& path, Trace* trace, bool quiet) {
  ImportStats stats;
  ImportOptions options;
  ProgressBar progress("import " + std::filesystem::path(path).filename().string(), quiet);
  options.progress = progress.Callback();
  const Status st = ImportTrace(path, trace, &stats, options);
  progress.Done();
  return st.ok() ? "" : st.message();
}

// A job side: every rank must import, or the comparison would be of different rank sets.
std::string LoadJobSide(const std::string& path, JobReport* job) {
  std::vector<RankFile> files;
  const Status st = ResolveTraceFiles({path}, &files);
  if (!st.ok()) return st.message();
  KeepFreedMemoryForTheNextTrace();
  *job = AnalyzeJob(LoadRankSummaries(files));
  if (!job->error.empty()) return path + ": " + job->error;
  if (!job->errors.empty()) return job->errors.front().message();  // names the file and offset
  return "";
}

CheckResult Compare(const CheckArgs& args) {
  const bool jobs =
      std::filesystem::is_directory(args.baseline) || std::filesystem::is_directory(args.candidate);
  CheckResult result;
  if (jobs) {
    JobReport a, b;
    std::string error = LoadJobSide(args.baseline, &a);
    if (error.empty()) error = LoadJobSide(args.candidate, &b);
    if (!error.empty()) return CheckFailed(error, args.baseline, args.candidate);
    result = CheckJobs(a, b, args.options);
  } else {
    Trace a, b;
    std::string error = LoadTrace(args.baseline, &a, args.quiet);
    if (error.empty()) error = LoadTrace(args.candidate, &b, args.quiet);
    if (!error.empty()) return CheckFailed(error, args.baseline, args.candidate);
    result = CheckTraces(a, b, args.options);
  }
  result.baseline = args.baseline;
  result.candidate = args.candidate;
  return result;
}

bool WriteFile(const std::string& path, const std::string& text, const char* what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "opscope check: cannot write the %s to %s\n", what, path.c_str());
    return false;
  }
  return true;
}

int RunCheck(CheckArgs args) {
  for (const std::string& spec : args.metrics) {
    CheckMetric metric;
    const Status st = CheckMetric::Parse(spec, &metric);
    if (!st.ok()) {
      std::fprintf(stderr, "opscope check: --metric %s\n", st.message().c_str());
      return 2;
    }
    args.options.metrics.push_back(std::move(metric));
  }
  const CheckResult result = Compare(args);
  if (result.verdict == CheckResult::Verdict::kError) {
    std::fprintf(stderr, "opscope check: %s\n", result.error.c_str());
  }
  const std::string out = args.json ? result.ToJson() + "\n" : result.ToText();
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  bool written = true;
  if (!args.junit.empty()) written &= WriteFile(args.junit, result.ToJUnit(), "JUnit XML");
  if (!args.markdown.empty()) written &= WriteFile(args.markdown, result.ToMarkdown(), "Markdown");
  if (!args.html.empty()) {
    HtmlOptions html;
    html.rows = args.html_rows;
    written &= WriteHtmlOutput("check", args.html, CheckHtml(result, html));
  }
  return written ? result.exit_code() : 2;
}

}  // namespace

void AddCheckCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CheckArgs>();
  auto* cmd = app.add_subcommand(
      "check",
      "Regression verdict for CI: compare a candidate profile with a baseline (traces or job "
      "folders) by step time, device busy time and each op's and kernel's device time; exit 0 "
      "no regression, 1 regression, 2 could not compare");
  cmd->add_option("baseline", args->baseline, "Baseline trace, or a job's folder")->required();
  cmd->add_option("candidate", args->candidate, "Candidate trace (or job folder)")->required();
  cmd->add_option("--max-regression", args->options.max_regression_pct,
                  "Percent a metric's median may rise and still pass (default 5)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--metric", args->metrics,
                  "What decides: step, device, op:NAME or kernel:NAME (repeatable; default step, "
                  "device and every op and kernel holding --min-share of device time)");
  cmd->add_option("--min-steps", args->options.min_steps,
                  "Fewer steps on a side (after --skip-steps) cannot be compared: exit 2 "
                  "(default 1; a trace without ProfilerStep# is one step)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--skip-steps", args->options.skip_steps,
                  "Leading steps dropped on each side (warm-up; default 0)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--alpha", args->options.alpha,
                  "Significance level of the rank test on per-step figures (default 0.05)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--min-share", args->options.min_share_pct,
                  "Default metrics: ops and kernels holding at least this percent of device busy "
                  "time (default 1)")
      ->check(CLI::NonNegativeNumber);
  auto* rows = cmd->add_option("--rows", args->options.rows,
                               "Moved rows listed (the diff's, by impact; default 10; -1 = all)");
  cmd->add_flag("--json", args->json, "Print the result as JSON");
  cmd->add_option("--junit", args->junit, "Also write JUnit XML (one test case per metric)");
  cmd->add_option("--markdown", args->markdown, "Also write Markdown (for a pull-request comment)");
  cmd->add_option("--html", args->html,
                  "Also write a self-contained HTML report (charts of the metrics and what moved)");
  cmd->add_flag("--quiet", args->quiet, "No progress bar on stderr (none is drawn off a terminal)");
  cmd->callback([args, rows, exit_code] {
    if (rows->count() > 0) args->html_rows = args->options.rows;
    *exit_code = RunCheck(*args);
  });
}

}  // namespace opscope::tools
