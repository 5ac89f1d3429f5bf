// The huge-page array helpers keep vector semantics: contents, order and growth.
#include "trace/huge_array.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace opscope::internal {
namespace {

TEST(HugeArray, ReserveKeepsContentsAboveAndBelowTheThreshold) {
  for (size_t n : {size_t{100}, kHugeArrayMinBytes / sizeof(uint64_t) + 1000}) {
    std::vector<uint64_t> v = {1, 2, 3};
    ReserveHuge(&v, n);
    EXPECT_GE(v.capacity(), n);
    EXPECT_EQ(v, (std::vector<uint64_t>{1, 2, 3}));
    const size_t capacity = v.capacity();
    ReserveHuge(&v, 2);  // never shrinks
    EXPECT_EQ(v.capacity(), capacity);
  }
}

TEST(HugeArray, PushBackGrowsByDoublingThroughTheThreshold) {
  std::vector<uint32_t> v;
  size_t reallocations = 0;
  const size_t n = 3 * kHugeArrayMinBytes / sizeof(uint32_t);
  for (size_t i = 0; i < n; ++i) {
    const size_t capacity = v.capacity();
    PushBackHuge(&v, static_cast<uint32_t>(i * 7));
    if (v.capacity() != capacity) ++reallocations;
  }
  ASSERT_EQ(v.size(), n);
  for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(v[i], static_cast<uint32_t>(i * 7));
  EXPECT_LE(reallocations, 24u);  // log2(n / 16) + 1: amortized O(1) per element
}

TEST(HugeArray, GrowAndAssign) {
  std::vector<int> v = {5, 6};
  GrowHuge(&v, 10);
  EXPECT_GE(v.capacity(), 12u);
  EXPECT_EQ(v, (std::vector<int>{5, 6}));
  const size_t n = kHugeArrayMinBytes / sizeof(int) + 3;
  AssignHuge(&v, n, -1);
  ASSERT_EQ(v.size(), n);
  EXPECT_EQ(v.front(), -1);
  EXPECT_EQ(v.back(), -1);
  AssignHuge(&v, 4, 9);
  EXPECT_EQ(v, (std::vector<int>{9, 9, 9, 9}));
}

}  // namespace
}  // namespace opscope::internal
