// What the demos may allocate: the memory this process can still get (the machine's available
// memory, its address-space and data limits, its cgroup's limit), a check that refuses a demo
// that cannot fit before anything is allocated, and allocation failures turned into errors that
// say what was being allocated and how much.
#ifndef OPSCOPE_TOOLS_DEMO_MEMORY_H_
#define OPSCOPE_TOOLS_DEMO_MEMORY_H_

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

namespace opscope::tools {

// Bytes this process can still allocate and touch: the least of /proc/meminfo's MemAvailable,
// RLIMIT_AS and RLIMIT_DATA less what the process already maps, and its cgroup's memory.max less
// memory.current. INT64_MAX where none is known.
int64_t AvailableMemoryBytes();

// "16.0 GiB", "512.0 MiB", "4096 bytes".
std::string FormatMemoryBytes(int64_t bytes);

// The RMSNorm demo's copies of x [rows, hidden] f32 held at its peak: x on the host, the CPU
// reference output, x on the device (the simulated HBM is host memory), a call's output and its
// intermediate, and the output read back.
inline constexpr int kRmsNormDemoCopies = 6;

// Throws std::runtime_error when kRmsNormDemoCopies copies of an f32 [rows, hidden] tensor do not
// fit AvailableMemoryBytes(), saying how much is needed and how much there is.
void CheckDemoFits(int64_t rows, int64_t hidden);

// fn(), with std::bad_alloc turned into std::runtime_error naming `what` and `bytes`.
template <typename Fn>
auto Allocating(const std::string& what, int64_t bytes, Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    throw std::runtime_error("out of memory allocating " + what + " (" + FormatMemoryBytes(bytes) +
                             "; " + FormatMemoryBytes(AvailableMemoryBytes()) +
                             " available to this process)");
  }
}

}  // namespace opscope::tools

#endif  // OPSCOPE_TOOLS_DEMO_MEMORY_H_
