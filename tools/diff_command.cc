// opscope diff A B [--json] [--quiet]: compare two traces op by op (added, removed, changed in
// calls, host or device time), sorted by impact; two jobs (folders of rank traces) rank by rank and
// collective by collective.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "opscope/analysis.h"
#include "opscope/html_report.h"
#include "opscope/import.h"
#include "tools/commands.h"
#include "tools/html_output.h"
#include "tools/job_commands.h"
#include "tools/progress.h"

namespace opscope::tools {

namespace {

struct DiffArgs {
  std::string a, b;
  int rows = 30;
  bool json = false;
  bool quiet = false;
  std::string html;
  int html_rows = kHtmlDefaultRows;
};

// `role`: which of the two traces ("A (the baseline)" or "B"), for the messages.
bool Load(const char* role, const std::string& path, Trace* trace, bool quiet) {
  ImportStats stats;
  ImportOptions options;
  ProgressBar progress("import " + std::filesystem::path(path).filename().string(), quiet);
  options.progress = progress.Callback();
  Status st = ImportTrace(path, trace, &stats, options);
  progress.Done();
  if (!st.ok()) {
    std::fprintf(stderr, "opscope diff: trace %s: %s\n", role, st.message().c_str());
    return false;
  }
  if (stats.skipped > 0) {
    std::fprintf(stderr, "opscope diff: warning: trace %s: %s: %llu events skipped%s%s\n", role,
                 path.c_str(), static_cast<unsigned long long>(stats.skipped),
                 stats.warnings.empty() ? "" : "; first: ",
                 stats.warnings.empty() ? "" : stats.warnings.front().c_str());
  }
  return true;
}

// Two jobs: each folder (or file) is a set of rank traces.
int RunJobDiff(const DiffArgs& args) {
  std::vector<RankFile> files_a, files_b;
  Status st = ResolveTraceFiles({args.a}, &files_a);
  if (st.ok()) st = ResolveTraceFiles({args.b}, &files_b);
  if (!st.ok()) {
    std::fprintf(stderr, "opscope diff: %s\n", st.message().c_str());
    return 1;
  }
  JobReport a, b;
  if (!LoadJob("diff", files_a, {}, &a) || !LoadJob("diff", files_b, {}, &b)) return 2;
  if (!args.html.empty()) {
    HtmlOptions html;
    html.rows = args.html_rows;
    if (!WriteHtmlOutput("diff", args.html, JobDiffHtml(a, b, args.a, args.b, html))) return 1;
    if (!args.json) return 0;
  }
  const std::string out = args.json ? JobDiffJson(a, b) + "\n" : FormatJobDiff(a, b, args.rows);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

// A folder of rank traces, or a profile of several hosts (ListTraceParts); not a folder that is
// one trace itself (a Neuron Explorer output directory of one host), which diffs as a single
// trace does.
bool IsJobFolder(const std::string& path) {
  if (std::filesystem::is_directory(path) && DetectTraceFormat(path) == TraceFormat::kUnknown) {
    return true;
  }
  std::vector<std::string> parts;
  return ListTraceParts(path, &parts).ok() && !parts.empty();
}

int RunDiff(const DiffArgs& args) {
  if (IsJobFolder(args.a) || IsJobFolder(args.b)) {
    return RunJobDiff(args);
  }
  Trace a, b;
  if (!Load("A (the baseline)", args.a, &a, args.quiet) || !Load("B", args.b, &b, args.quiet)) {
    return 1;
  }
  if (!args.html.empty()) {
    HtmlOptions html;
    html.rows = args.html_rows;
    if (!WriteHtmlOutput("diff", args.html, TraceDiffHtml(a, b, args.a, args.b, html))) return 1;
    if (!args.json) return 0;
  }
  const TraceDiff diff = DiffTraces(a, b);
  const std::string out = args.json ? diff.ToJson() + "\n" : diff.ToText(args.rows);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

void AddDiffCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand(
      "diff",
      "Compare two traces: ops added, removed, or changed in calls or time, by impact; or two "
      "jobs (folders of rank traces) rank by rank and collective by collective");
  cmd->add_option("a", args->a, "Baseline trace (.json or .json.gz), or a job's folder")
      ->required();
  cmd->add_option("b", args->b, "Trace (or job folder) to compare against the baseline")
      ->required();
  auto* rows =
      cmd->add_option("--rows", args->rows, "Rows to print (default 30; -1 = all; --html: 500)");
  cmd->add_flag("--json", args->json, "Print JSON instead of a table");
  cmd->add_flag("--quiet", args->quiet, "No progress bar on stderr (none is drawn off a terminal)");
  cmd->add_option("--html", args->html,
                  "Also write a self-contained HTML report of what moved (opens offline)");
  cmd->callback([args, rows, exit_code] {
    args->html_rows = rows->count() > 0 ? args->rows : kHtmlDefaultRows;
    *exit_code = RunDiff(*args);
  });
}

}  // namespace opscope::tools
