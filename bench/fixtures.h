// The shared fixture traces the benchmarks measure real content on: OPSCOPE_FIXTURES_DIR, from
// the CMake cache variable OPSCOPE_SHARED_DIR (a target that includes this defines it).
#ifndef OPSCOPE_BENCH_FIXTURES_H_
#define OPSCOPE_BENCH_FIXTURES_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

namespace opscope::bench {

// The largest JSON trace (plain or gzip) under `root`/traces; empty when there is none.
inline std::filesystem::path LargestFixtureTrace(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  fs::path best;
  uintmax_t best_size = 0;
  std::error_code ec;
  if (!fs::is_directory(root / "traces", ec)) return best;
  for (const auto& e : fs::recursive_directory_iterator(root / "traces", ec)) {
    if (e.is_regular_file() && e.file_size() > best_size &&
        e.path().string().find(".json") != std::string::npos) {
      best = e.path();
      best_size = e.file_size();
    }
  }
  return best;
}

}  // namespace opscope::bench

#endif  // OPSCOPE_BENCH_FIXTURES_H_
