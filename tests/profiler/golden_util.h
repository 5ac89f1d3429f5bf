// Helpers shared by the profiler's golden and end-to-end tests.
#ifndef OPSCOPE_TESTS_PROFILER_GOLDEN_UTIL_H_
#define OPSCOPE_TESTS_PROFILER_GOLDEN_UTIL_H_

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace opscope::testing {

inline std::string SourceDir() {
  const char* dir = std::getenv("OPSCOPE_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

// Reads tests/profiler/golden/<name>; returns "<missing: path>" if absent so the diff says so.
inline std::string ReadGolden(const std::string& name) {
  std::string path = SourceDir() + "/tests/profiler/golden/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) return "<missing: " + path + ">";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace opscope::testing

#endif  // OPSCOPE_TESTS_PROFILER_GOLDEN_UTIL_H_
