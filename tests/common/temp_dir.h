// A test's scratch directory under the system temp directory, removed with everything in it when
// the object goes out of scope, so test runs leave nothing behind in /tmp.
#ifndef OPSCOPE_TESTS_COMMON_TEMP_DIR_H_
#define OPSCOPE_TESTS_COMMON_TEMP_DIR_H_

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace opscope::testing {

class ScopedTempDir {
 public:
  // `prefix` names the test folder's files (e.g. "opscope_roundtrip"); the process id keeps
  // concurrent ctest processes apart. The directory starts empty.
  explicit ScopedTempDir(const std::string& prefix)
      : path_(std::filesystem::temp_directory_path() /
              (prefix + "_" + std::to_string(::getpid()))) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    std::filesystem::create_directories(path_);
  }
  ~ScopedTempDir() {
    std::error_code ec;  // never throw from a destructor; a leftover is only litter
    std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // `name` inside the directory, as a string for APIs that take one.
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace opscope::testing

#endif  // OPSCOPE_TESTS_COMMON_TEMP_DIR_H_
