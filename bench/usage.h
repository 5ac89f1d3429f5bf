// `--help` for the benchmarks: each prints its usage line and exits 0 when asked, before it
// generates anything (some take minutes), and names an argument it does not take.
#ifndef OPSCOPE_BENCH_USAGE_H_
#define OPSCOPE_BENCH_USAGE_H_

#include <cstdio>
#include <cstring>

namespace opscope::bench {

// Whether an argument is --help or -h.
inline bool WantsHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

// Prints `usage` (to stdout when asked for, else to stderr after naming `bad`) and returns the
// exit status: 0 for --help, 2 for an argument the bench does not take.
inline int Usage(const char* usage, const char* bad = nullptr) {
  if (bad == nullptr) {
    std::printf("%s\n", usage);
    return 0;
  }
  std::fprintf(stderr, "unknown argument %s\n%s\n", bad, usage);
  return 2;
}

}  // namespace opscope::bench

#endif  // OPSCOPE_BENCH_USAGE_H_
