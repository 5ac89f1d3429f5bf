// opscope diff A B [--json]: compare two traces op by op (added, removed, changed in calls, host
// or device time), sorted by impact.
#include <cstdio>
#include <memory>
#include <string>

#include "opscope/analysis.h"
#include "tools/commands.h"

namespace opscope::tools {

namespace {

struct DiffArgs {
  std::string a, b;
  int rows = 30;
  bool json = false;
};

bool Load(const std::string& path, Trace* trace) {
  ImportStats stats;
  Status st = ImportTrace(path, trace, &stats);
  if (!st.ok()) {
    std::fprintf(stderr, "opscope diff: %s\n", st.message().c_str());
    return false;
  }
  if (stats.skipped > 0) {
    std::fprintf(stderr, "opscope diff: warning: %s: %llu events skipped%s%s\n", path.c_str(),
                 static_cast<unsigned long long>(stats.skipped),
                 stats.warnings.empty() ? "" : "; first: ",
                 stats.warnings.empty() ? "" : stats.warnings.front().c_str());
  }
  return true;
}

int RunDiff(const DiffArgs& args) {
  Trace a, b;
  if (!Load(args.a, &a) || !Load(args.b, &b)) return 1;
  const TraceDiff diff = DiffTraces(a, b);
  const std::string out = args.json ? diff.ToJson() + "\n" : diff.ToText(args.rows);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

void AddDiffCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand(
      "diff", "Compare two traces: ops added, removed, or changed in calls or time, by impact");
  cmd->add_option("a", args->a, "Baseline trace (.json or .json.gz)")->required();
  cmd->add_option("b", args->b, "Trace to compare against the baseline")->required();
  cmd->add_option("--rows", args->rows, "Rows to print (default 30; -1 = all)");
  cmd->add_flag("--json", args->json, "Print JSON instead of a table");
  cmd->callback([args, exit_code] { *exit_code = RunDiff(*args); });
}

}  // namespace opscope::tools
