// The memory the demos may use (see demo_memory.h).
#include "tools/demo_memory.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

namespace opscope::tools {
namespace {

constexpr int64_t kUnknown = std::numeric_limits<int64_t>::max();

// A number from the first line of `path` ("max" or a missing file: kUnknown).
int64_t ReadNumberFile(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return kUnknown;
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return kUnknown;
  }
}

// MemAvailable from /proc/meminfo, in bytes.
int64_t MemAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return kUnknown;
}

// What this process maps now (/proc/self/statm's size), in bytes.
int64_t MappedBytes() {
  std::ifstream in("/proc/self/statm");
  int64_t pages = 0;
  return in >> pages ? pages * sysconf(_SC_PAGESIZE) : 0;
}

int64_t LimitLeft(int resource) {
  rlimit lim{};
  if (getrlimit(resource, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return kUnknown;
  const auto cur = static_cast<int64_t>(std::min<rlim_t>(lim.rlim_cur, kUnknown));
  return std::max<int64_t>(0, cur - MappedBytes());
}

}  // namespace

int64_t AvailableMemoryBytes() {
  int64_t bytes = std::min({MemAvailable(), LimitLeft(RLIMIT_AS), LimitLeft(RLIMIT_DATA)});
  const int64_t cgroup_max = ReadNumberFile("/sys/fs/cgroup/memory.max");
  const int64_t cgroup_now = ReadNumberFile("/sys/fs/cgroup/memory.current");
  if (cgroup_max != kUnknown && cgroup_now != kUnknown) {
    bytes = std::min(bytes, std::max<int64_t>(0, cgroup_max - cgroup_now));
  }
  return bytes;
}

std::string FormatMemoryBytes(int64_t bytes) {
  if (bytes == kUnknown) return "an unknown amount";
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  return fmt::format("{} bytes", bytes);
}

void CheckDemoFits(int64_t rows, int64_t hidden) {
  int64_t copy = 0, all = 0;
  const bool overflow = __builtin_mul_overflow(rows, hidden, &copy) ||
                        __builtin_mul_overflow(copy, int64_t{4}, &copy) ||
                        __builtin_mul_overflow(copy, int64_t{kRmsNormDemoCopies}, &all);
  const int64_t available = AvailableMemoryBytes();
  if (!overflow && all <= available) return;
  throw std::runtime_error(fmt::format(
      "--shape {},{} does not fit: the demo holds {} copies of the [{}, {}] f32 tensor x ({} "
      "each: x on the host, the CPU reference output, x in the simulated device's memory, which "
      "is host memory, a call's output and intermediate, and the output read back), {} in all, "
      "and this process can allocate {}; use a smaller --shape",
      rows, hidden, kRmsNormDemoCopies, rows, hidden,
      overflow ? "more than 64 bits count" : FormatMemoryBytes(copy),
      overflow ? "more than 64 bits count" : FormatMemoryBytes(all), FormatMemoryBytes(available)));
}

}  // namespace opscope::tools
