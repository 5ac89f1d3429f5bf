// Atomic trace files (trace_file.h).
#include "profiler/trace_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace opscope::internal {
namespace {

constexpr std::string_view kTempMarker = ".tmp.";

// While alive, SIGXFSZ (a write past `ulimit -f`) makes the write fail with EFBIG instead of
// killing the process. Only a default disposition is replaced; nesting and threads are counted.
class SigxfszAsError {
 public:
  SigxfszAsError() {
    std::lock_guard<std::mutex> lock(mu_);
    if (depth_++ > 0) return;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    installed_ = sigaction(SIGXFSZ, nullptr, &saved_) == 0 && saved_.sa_handler == SIG_DFL &&
                 sigaction(SIGXFSZ, &ignore, nullptr) == 0;
  }
  ~SigxfszAsError() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--depth_ > 0 || !installed_) return;
    sigaction(SIGXFSZ, &saved_, nullptr);
    installed_ = false;
  }

 private:
  static inline std::mutex mu_;
  static inline int depth_ = 0;
  static inline bool installed_ = false;
  static inline struct sigaction saved_ {};
};

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  std::string out(name);
  for (char& c : out) {
    if (c == '/' || c == '@') c = '_';
  }
  return out;
}

// "<path>.tmp.<pid>@<host>": the writer's process, so a later run can tell a leftover from a
// file being written.
std::string TempPathFor(const std::string& path) {
  return fmt::format("{}{}{}@{}", path, kTempMarker, getpid(), HostName());
}

// The pid in a temp file name of this host, or 0 when the name is not one (or of another host).
// Names without "@host" (older versions) are taken as this host's.
pid_t TempFilePid(std::string_view name, const std::string& host) {
  const size_t marker = name.rfind(kTempMarker);
  if (marker == std::string_view::npos) return 0;
  std::string_view base = name.substr(0, marker);
  if (base.ends_with(".gz")) base.remove_suffix(3);
  if (!base.ends_with(".json") && !base.ends_with(".pftrace") &&
      !base.ends_with(".perfetto-trace")) {
    return 0;
  }
  std::string_view rest = name.substr(marker + kTempMarker.size());
  const size_t at = rest.find('@');
  if (at != std::string_view::npos) {
    if (rest.substr(at + 1) != host) return 0;
    rest = rest.substr(0, at);
  }
  int64_t pid = 0;
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (ec != std::errc() || ptr != rest.data() + rest.size() || pid <= 0 || pid > INT32_MAX) {
    return 0;
  }
  return static_cast<pid_t>(pid);
}

std::string Bytes(uint64_t n) {
  if (n < 10 * 1024) return fmt::format("{} bytes", n);
  if (n < 10 * 1024 * 1024) return fmt::format("{:.1f} KiB", n / 1024.0);
  return fmt::format("{:.1f} MiB", n / 1048576.0);
}

// Writes all of `data` to `fd`; false with errno set on failure. `*written` counts what went out.
bool WriteAll(int fd, std::string_view data, uint64_t* written) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), std::min<size_t>(data.size(), 1u << 24));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    *written += static_cast<uint64_t>(n);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Writes `json` to `tmp`, gzip-compressed when `gzip`. "" or the reason, with how much was
// written before it failed.
std::string WriteFileContents(const std::string& tmp, std::string_view json, bool gzip) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return std::strerror(errno);
  uint64_t written = 0;   // bytes of the file
  uint64_t consumed = 0;  // bytes of the JSON document handled
  bool ok = true;
  if (!gzip) {
    ok = WriteAll(fd, json, &written);
    consumed = written;
  } else {
    z_stream z{};
    ok = deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    std::string out(1 << 20, '\0');
    int flush = Z_NO_FLUSH;
    while (ok) {
      const size_t chunk = std::min<size_t>(json.size() - consumed, 1u << 24);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(json.data() + consumed));
      z.avail_in = static_cast<uInt>(chunk);
      flush = consumed + chunk == json.size() ? Z_FINISH : Z_NO_FLUSH;
      int rc = Z_OK;
      do {
        z.next_out = reinterpret_cast<Bytef*>(out.data());
        z.avail_out = static_cast<uInt>(out.size());
        rc = deflate(&z, flush);
        ok = WriteAll(fd, std::string_view(out.data(), out.size() - z.avail_out), &written);
      } while (ok && z.avail_out == 0);
      consumed += chunk - z.avail_in;
      if (!ok || rc == Z_STREAM_END) break;
    }
    deflateEnd(&z);
  }
  const int write_errno = errno;
  if (::close(fd) != 0 && ok) return std::strerror(errno);
  if (ok) return "";
  return fmt::format("{} after {} of the {} document had been written", std::strerror(write_errno),
                     Bytes(consumed), Bytes(json.size()));
}

}  // namespace

size_t RemoveStaleTempTraces(const std::string& dir, int depth) {
  namespace fs = std::filesystem;
  const std::string host = HostName();
  size_t removed = 0;
  std::error_code ec;
  auto options = fs::directory_options::skip_permission_denied;
  for (fs::recursive_directory_iterator it(dir, options, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it.depth() >= depth) it.disable_recursion_pending();
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    const pid_t pid = TempFilePid(it->path().filename().string(), host);
    if (pid == 0 || pid == getpid()) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // still running (or not ours to know)
    std::error_code rm_ec;
    if (fs::remove(it->path(), rm_ec)) ++removed;
  }
  return removed;
}

Status WriteTraceFile(const std::string& path, std::string_view bytes, bool gzip,
                      std::string_view what) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  RemoveStaleTempTraces(dir.empty() ? "." : dir.string(), 0);
  const std::string tmp = TempPathFor(path);
  SigxfszAsError sigxfsz;
  std::string error = WriteFileContents(tmp, bytes, gzip);
  if (error.empty() && std::rename(tmp.c_str(), path.c_str()) != 0) error = std::strerror(errno);
  if (error.empty()) return Status::Ok();
  std::remove(tmp.c_str());
  return Status::IoError(
      fmt::format("cannot write {} to '{}': {}; '{}' was not written (its partial "
                  "temporary file was removed)",
                  what, path, error, path),
      path);
}

}  // namespace opscope::internal
