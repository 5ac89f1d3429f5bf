// opscope: profile, import, compare and explore ML traces.
#include <cstdio>
#include <exception>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "tools/commands.h"

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // The heap grows and shrinks in steps of 64 MiB: an import allocates and frees arrays of many
  // MiB (growing vectors, Finalize's index arrays), and with glibc's default each freed top of the
  // heap went back to the system and the next array faulted its pages in again, one 4 KiB trap
  // each (15-30 us apiece on the development VM). Kept, they are reused: one-thread `opscope
  // report` of a 134 MB trace took 7,780 -> 4,400 page faults and 19% less CPU time, for 1-3 MB
  // more peak RSS. A process-wide choice, so made here, for the CLI, not in the library.
  mallopt(M_TOP_PAD, 64 << 20);
#endif
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
  opscope::tools::AddConvertCommand(app, &exit_code);
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
