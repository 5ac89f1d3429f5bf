// Sub-commands of the `opscope` CLI. Each lives in its own file and registers itself on the app.
#ifndef OPSCOPE_TOOLS_COMMANDS_H_
#define OPSCOPE_TOOLS_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace opscope::tools {

// Each Add*Command adds a subcommand whose callback runs it and stores the exit code in *exit_code.
void AddDemoCommand(CLI::App& app, int* exit_code);     // opscope demo rmsnorm ...
void AddReportCommand(CLI::App& app, int* exit_code);   // opscope report TRACE ...
void AddDiffCommand(CLI::App& app, int* exit_code);     // opscope diff A B ...
void AddExploreCommand(CLI::App& app, int* exit_code);  // opscope explore PATH...
void AddModelCommand(CLI::App& app, int* exit_code);    // opscope model OP --shape ...
void AddConvertCommand(CLI::App& app, int* exit_code);  // opscope convert IN OUT

}  // namespace opscope::tools

#endif  // OPSCOPE_TOOLS_COMMANDS_H_
