// ParallelFor: a small fork-join pool for analyses over a finalized trace (the report's per-track
// passes, the Explorer's per-lane index).
//
//   std::vector<Partial> parts(SplitRange(n, parts).size());
//   ParallelFor(threads, parts.size(), [&](size_t i) { parts[i] = Scan(ranges[i]); });
//   // then merge parts[0], parts[1], ... in index order: the result does not depend on threads.
//
// Thread safety: `body` runs concurrently for different indices and must write only state owned
// by its index (or synchronize). Which thread runs an index is not fixed; callers get results
// independent of the thread count by merging per-index results in index order.
#ifndef OPSCOPE_BASE_PARALLEL_FOR_H_
#define OPSCOPE_BASE_PARALLEL_FOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace opscope::internal {

// Runs body(i) for every i in [0, n), on up to `threads` threads counting the calling thread
// (threads <= 1 or n <= 1: in index order on the calling thread, no thread started). Returns when
// every index has run. A thread that cannot be started leaves its share to the others. If bodies
// throw, the remaining indices are skipped and the exception of the lowest index that threw is
// rethrown on the calling thread.
void ParallelFor(int threads, size_t n, const std::function<void(size_t)>& body);

// [begin, end) ranges covering [0, n) in order, at most `parts` of them, of nearly equal size
// (none empty; none at all when n == 0).
std::vector<std::pair<uint32_t, uint32_t>> SplitRange(uint32_t n, size_t parts);

}  // namespace opscope::internal

#endif  // OPSCOPE_BASE_PARALLEL_FOR_H_
