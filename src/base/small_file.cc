// ReadSmallFile (see small_file.h).
#include "base/small_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace opscope::internal {

namespace {

// Why a file of this type is not read, or nullptr when it may be.
const char* RefusedType(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory, not a file";
  if (S_ISFIFO(mode)) return "is a named pipe, not a file (give a regular file)";
  if (S_ISSOCK(mode)) return "is a socket, not a file";
  return nullptr;
}

}  // namespace

Status ReadSmallFile(const std::string& path, const char* what, size_t max_bytes,
                     std::string* text) {
  text->clear();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::NotFound(
        fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)), path);
  }
  if (const char* why = RefusedType(st.st_mode)) {
    return Status::InvalidInput(fmt::format("{} '{}' {}", what, path, why), 0, path);
  }
  // O_NONBLOCK: a path swapped for a pipe after the stat still does not block the open.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return Status::NotFound(
        fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)), path);
  }
  if (::fstat(fd, &st) == 0 && RefusedType(st.st_mode) != nullptr) {
    ::close(fd);
    return Status::InvalidInput(fmt::format("{} '{}' {}", what, path, RefusedType(st.st_mode)), 0,
                                path);
  }
  std::string out(max_bytes + 1, '\0');
  size_t have = 0;
  int read_errno = 0;
  while (have < out.size()) {
    const ssize_t n = ::read(fd, out.data() + have, out.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_errno = errno;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  if (read_errno != 0) {
    return Status::IoError(
        fmt::format("cannot read {} '{}': {}", what, path, std::strerror(read_errno)), path);
  }
  if (have > max_bytes) {
    return Status::InvalidInput(
        fmt::format("{} '{}' is larger than {} bytes (the limit for this kind of file)", what, path,
                    max_bytes),
        max_bytes, path);
  }
  out.resize(have);
  if (const size_t nul = out.find('\0'); nul != std::string::npos) {
    return Status::InvalidInput(
        fmt::format("{} '{}' is not a text file (a NUL byte at offset {})", what, path, nul), nul,
        path);
  }
  *text = std::move(out);
  return Status::Ok();
}

}  // namespace opscope::internal
