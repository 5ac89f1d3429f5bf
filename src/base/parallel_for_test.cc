// Tests of ParallelFor: every index run once, on any thread count, with exceptions carried back.
#include "base/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace opscope::internal {
namespace {

TEST(ParallelFor, RunsEveryIndexOnceAtAnyThreadCount) {
  for (int threads : {0, 1, 2, 3, 8}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{100}}) {
      std::vector<std::atomic<int>> runs(n);
      ParallelFor(threads, n, [&](size_t i) { runs[i].fetch_add(1); });
      for (size_t i = 0; i < n; ++i)
        EXPECT_EQ(runs[i].load(), 1) << threads << " " << n << " " << i;
    }
  }
}

TEST(ParallelFor, OneThreadRunsInIndexOrder) {
  std::vector<size_t> order;
  ParallelFor(1, 5, [&](size_t i) { order.push_back(i); });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
}

TEST(ParallelFor, RethrowsTheLowestIndexThatThrew) {
  for (int threads : {1, 2, 4}) {
    try {
      // With one thread, index 3 stops the run before index 5; with more, either may run first,
      // but 3 always runs (indices are taken in order) and is the one rethrown.
      ParallelFor(threads, 8, [](size_t i) {
        if (i == 3 || i == 5) throw std::runtime_error("index " + std::to_string(i));
      });
      ADD_FAILURE() << "no exception with " << threads << " threads";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "index 3") << threads;
    }
  }
}

TEST(SplitRange, CoversTheRangeInOrderWithoutEmptyParts) {
  EXPECT_TRUE(SplitRange(0, 4).empty());
  for (uint32_t n : {1u, 2u, 5u, 1000u, 1001u}) {
    for (size_t parts : {size_t{0}, size_t{1}, size_t{3}, size_t{8}, size_t{2000}}) {
      const auto ranges = SplitRange(n, parts);
      ASSERT_FALSE(ranges.empty());
      EXPECT_LE(ranges.size(), std::max<size_t>(parts, 1));
      uint32_t at = 0;
      for (const auto& [begin, end] : ranges) {
        EXPECT_EQ(begin, at);
        EXPECT_LT(begin, end);
        at = end;
      }
      EXPECT_EQ(at, n);
    }
  }
}

}  // namespace
}  // namespace opscope::internal
