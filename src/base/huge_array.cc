#include "base/huge_array.h"

#include <algorithm>

#include "base/parallel_for.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace opscope::internal {

void PrefaultParallel(const void* data, size_t bytes, int threads) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  if (threads < 2 || bytes < kHugeArrayMinBytes) return;
  // MADV_POPULATE_WRITE (Linux 5.14) faults the pages in writable without writing them; a
  // part it cannot populate (an older kernel: EINVAL) is left to fault on first write, as
  // without this call. Its range must start on a page: the first part starts at the page
  // holding `data`, which belongs to the same allocation's mapping or heap.
  constexpr uintptr_t kPage = 4096;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data) & ~(kPage - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(data) + bytes;
  const size_t parts = (end - begin + kHugePageBytes - 1) / kHugePageBytes;
  ParallelFor(threads, parts, [&](size_t part) {
    const uintptr_t from = begin + part * kHugePageBytes;
    const uintptr_t to = std::min(end, from + kHugePageBytes);
    madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
  });
#else
  (void)data;
  (void)bytes;
  (void)threads;
#endif
}

}  // namespace opscope::internal
