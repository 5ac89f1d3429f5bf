// Sub-commands of the `opscope` CLI. Each lives in its own file and registers itself on the app.
#ifndef OPSCOPE_TOOLS_COMMANDS_H_
#define OPSCOPE_TOOLS_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <charconv>
#include <string>

#include "opscope/import.h"  // kMaxThreads

namespace opscope::tools {

// --threads N: 0 (the default: the cores available) or a positive count, which runs on at most
// opscope::kMaxThreads threads; a negative count or anything but a decimal integer is refused
// with a message saying what is expected.
inline CLI::Validator ThreadCountValidator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        // Digits only: a count too large for any integer type is still a count (capped below).
        unsigned long long n = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, n);
        if (text.empty() || ptr != end ||
            (ec != std::errc() && ec != std::errc::result_out_of_range)) {
          return "expected 0 (the cores available) or a count of threads (at most " +
                 std::to_string(kMaxThreads) + " are used), got '" + text + "'";
        }
        if (ec == std::errc::result_out_of_range || n > static_cast<unsigned>(kMaxThreads)) {
          text = std::to_string(kMaxThreads);
        }
        return "";
      },
      "0..N", "thread count");
}

// Each Add*Command adds a subcommand whose callback runs it and stores the exit code in *exit_code.
void AddDemoCommand(CLI::App& app, int* exit_code);     // opscope demo rmsnorm ...
void AddReportCommand(CLI::App& app, int* exit_code);   // opscope report TRACE ...
void AddDiffCommand(CLI::App& app, int* exit_code);     // opscope diff A B ...
void AddCheckCommand(CLI::App& app, int* exit_code);    // opscope check BASELINE CANDIDATE ...
void AddExploreCommand(CLI::App& app, int* exit_code);  // opscope explore PATH...
void AddModelCommand(CLI::App& app, int* exit_code);    // opscope model OP --shape ...
void AddConvertCommand(CLI::App& app, int* exit_code);  // opscope convert IN OUT

}  // namespace opscope::tools

#endif  // OPSCOPE_TOOLS_COMMANDS_H_
