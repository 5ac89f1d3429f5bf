// opscope demo: registered here; the command is implemented with its component.
#include <cstdio>

#include "tools/commands.h"

namespace opscope::tools {

void AddDemoCommand(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("demo", "(not yet available in this build)");
  cmd->allow_extras();
  cmd->callback([exit_code] {
    std::fprintf(stderr, "opscope demo: not available in this build\n");
    *exit_code = 2;
  });
}

}  // namespace opscope::tools
