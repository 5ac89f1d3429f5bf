// Reading a whole file for tests, shared by every test folder.
#ifndef OPSCOPE_TESTS_COMMON_READ_FILE_H_
#define OPSCOPE_TESTS_COMMON_READ_FILE_H_

#include <zlib.h>

#include <filesystem>
#include <string>

namespace opscope::testing {

// The whole of a file, inflated when it is gzip (zlib reads plain files as they are); "" when it
// cannot be opened. Independent of opscope's own readers, so tests can use it for ground truth.
inline std::string ReadMaybeGzip(const std::filesystem::path& path) {
  gzFile f = gzopen(path.string().c_str(), "rb");
  if (f == nullptr) return {};
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

}  // namespace opscope::testing

#endif  // OPSCOPE_TESTS_COMMON_READ_FILE_H_
