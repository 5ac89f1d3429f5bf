// Reading files into the page cache before a timed run, so that every run reads them from memory.
//
// The development VM runs a DAMON "pageout" scheme (kdamond): memory not touched for about a
// minute is paged out, the page cache included, at up to 128 MB/s, whatever the free memory. A
// benchmark's input that was last read a minute ago is then read again from the disk inside the
// timed run (seen: a 268 MB trace's one-thread import at 2.2 s wall against 1.45 s of CPU time,
// the difference spent waiting in read()). Reading the files just before each run makes every
// run read from the page cache, as the benchmarks intend; the read is not timed.
#ifndef OPSCOPE_BENCH_PAGE_CACHE_H_
#define OPSCOPE_BENCH_PAGE_CACHE_H_

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace opscope::bench {

// Reads `path` (a file, or every file under a directory) to its end and drops the bytes. Files
// that cannot be read are left to the timed run to report.
inline void WarmPageCache(const std::string& path) {
  std::vector<char> buffer(size_t{1} << 20);
  auto read_all = [&](const std::string& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    while (::read(fd, buffer.data(), buffer.size()) > 0) {
    }
    ::close(fd);
  };
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    read_all(path);
    return;
  }
  for (const auto& e : std::filesystem::recursive_directory_iterator(path, ec)) {
    if (e.is_regular_file(ec)) read_all(e.path().string());
  }
}

}  // namespace opscope::bench

#endif  // OPSCOPE_BENCH_PAGE_CACHE_H_
