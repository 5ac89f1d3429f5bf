// The same op scope as profiler_bench.cc, compiled with profiling compiled out.
#define OPSCOPE_DISABLE_PROFILING
#include "opscope/profiler.h"

namespace opscope::bench {

// Runs `n` empty host-op scopes; OPSCOPE_SCOPE expands to nothing here.
__attribute__((noinline)) int CompiledOutOps(int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    OPSCOPE_SCOPE("bench_op");
    sum += i;
    asm volatile("" : "+r"(sum));
  }
  return sum;
}

}  // namespace opscope::bench
