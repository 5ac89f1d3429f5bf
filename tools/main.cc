// opscope: profile, import, compare and explore ML traces.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "tools/commands.h"

namespace {

// Every command prints through stdout's buffer (reports, JSON, tables, help): a write that failed
// there (a full disk, /dev/full, a file over its size limit) left the output incomplete, so the
// command fails with `failed_write` (1; `opscope check`'s "could not compare", 2) whatever it
// returned. Returns the exit code to use.
int FinishStdout(int exit_code, int failed_write) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_errno = errno;
  if (flushed && !std::ferror(stdout)) return exit_code;
  std::fprintf(stderr,
               "opscope: error: writing the output to stdout failed: %s; it is incomplete\n",
               flush_errno != 0 ? std::strerror(flush_errno) : "write error");
  return exit_code == 0 ? failed_write : exit_code;
}

}  // namespace

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
  const bool check = argc > 1 && std::string_view(argv[1]) == "check";
  const int failed_write = check ? 2 : 1;
  opscope::tools::AddDemoCommand(app, &exit_code);
  opscope::tools::AddReportCommand(app, &exit_code);
  opscope::tools::AddDiffCommand(app, &exit_code);
  opscope::tools::AddCheckCommand(app, &exit_code);
  opscope::tools::AddExploreCommand(app, &exit_code);
  opscope::tools::AddModelCommand(app, &exit_code);
  opscope::tools::AddConvertCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // `opscope check` promises CI three exit codes: a command line it cannot use is "could not
    // compare" (2), not CLI11's own codes.
    const int code = app.exit(e);
    return FinishStdout(check && code != 0 ? 2 : code, failed_write);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opscope: error: %s\n", e.what());
    return FinishStdout(1, failed_write);
  }
  return FinishStdout(exit_code, failed_write);
}
