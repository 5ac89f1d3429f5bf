// ParallelFor's fork-join pool (parallel_for.h): workers, chunk hand-out and error propagation.
#include "base/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>

namespace opscope::internal {

void ParallelFor(int threads, size_t n, const std::function<void(size_t)>& body) {
  if (threads <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(n);  // each slot written by the thread that ran i
  auto work = [&] {
    for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < n;) {
      try {
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
  };
  std::vector<std::thread> pool;
  const size_t extra = std::min(static_cast<size_t>(threads), n) - 1;
  pool.reserve(extra);
  for (size_t t = 0; t < extra; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // e.g. a process limit: the threads running take the work
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

std::vector<std::pair<uint32_t, uint32_t>> SplitRange(uint32_t n, size_t parts) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  parts = std::max<size_t>(1, std::min<size_t>(parts, n));
  if (n == 0) return out;
  out.reserve(parts);
  for (size_t p = 0; p < parts; ++p) {
    const auto begin = static_cast<uint32_t>(uint64_t{n} * p / parts);
    const auto end = static_cast<uint32_t>(uint64_t{n} * (p + 1) / parts);
    if (end > begin) out.emplace_back(begin, end);
  }
  return out;
}

}  // namespace opscope::internal
