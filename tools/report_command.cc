// opscope report TRACE [--sort KEY] [--rows N] [--json]: import a torch.profiler / Kineto trace
// (plain or gzip) and print key_averages, the device timeline, top kernels and launch statistics.
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "opscope/analysis.h"
#include "tools/commands.h"

namespace opscope::tools {

namespace {

struct ReportArgs {
  std::string path;
  std::string sort_by;
  int rows = 20;
  bool json = false;
};

int RunReport(const ReportArgs& args) {
  Trace trace;
  ImportStats stats;
  ImportStatus st = ImportTrace(args.path, &trace, &stats);
  if (!st.ok()) {
    std::fprintf(stderr, "opscope report: %s\n", st.message().c_str());
    return 1;
  }
  for (const std::string& w : stats.warnings) {
    std::fprintf(stderr, "opscope report: warning: %s\n", w.c_str());
  }
  if (stats.skipped > stats.warnings.size()) {
    std::fprintf(stderr, "opscope report: %llu events skipped in all\n",
                 static_cast<unsigned long long>(stats.skipped));
  }
  ReportOptions options;
  options.sort_by = args.sort_by;
  options.rows = args.rows;
  try {
    const std::string out = args.json ? ReportJson(trace, options) : FormatReport(trace, options);
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (args.json) std::fputc('\n', stdout);
  } catch (const std::exception& e) {  // e.g. a sort key key_averages does not know
    std::fprintf(stderr, "opscope report: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

void AddReportCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand(
      "report",
      "Summarise a torch.profiler / Kineto trace (.json or .json.gz): key_averages, "
      "device timeline, top kernels, launch statistics");
  cmd->add_option("trace", args->path, "Trace file (Kineto / Chrome trace JSON, plain or gzip)")
      ->required();
  cmd->add_option("--sort", args->sort_by,
                  "key_averages sort key (self_cpu_time_total, cpu_time_total, "
                  "device_time_total, self_cuda_time_total, count, ...)");
  cmd->add_option("--rows", args->rows, "Rows per table (default 20; -1 = all)");
  cmd->add_flag("--json", args->json, "Print one JSON document instead of tables");
  cmd->callback([args, exit_code] { *exit_code = RunReport(*args); });
}

}  // namespace opscope::tools
