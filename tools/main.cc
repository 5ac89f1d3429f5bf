// opscope: profile, import, compare and explore ML traces.
#include <cstdio>
#include <exception>

#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "opscope: profile models on simulated and real accelerators, read torch.profiler "
      "traces, and explore them in a browser"};
  app.require_subcommand(1);
  int exit_code = 0;
  opscope::tools::AddDemoCommand(app, &exit_code);
  opscope::tools::AddReportCommand(app, &exit_code);
  opscope::tools::AddDiffCommand(app, &exit_code);
  opscope::tools::AddExploreCommand(app, &exit_code);
  opscope::tools::AddModelCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opscope: error: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
