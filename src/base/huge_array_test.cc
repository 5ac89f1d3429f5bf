// The huge-page array helpers keep vector semantics: contents, order and growth.
#include "base/huge_array.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory_resource>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

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

TEST(HugeArray, ResourceMapsLargeBlocksOnHugePageBoundaries) {
  std::pmr::memory_resource* resource = HugePageResource();
  EXPECT_TRUE(resource->is_equal(*HugePageResource()));
  for (size_t bytes : {size_t{24}, kHugeResourceMinBytes - 8, kHugeResourceMinBytes,
                       3 * kHugeResourceMinBytes + 40}) {
    void* p = resource->allocate(bytes, alignof(uint64_t));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignof(uint64_t), 0u);
    if (bytes >= kHugeResourceMinBytes) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePageBytes, 0u) << bytes;
    }
    auto* bytes_p = static_cast<unsigned char*>(p);
    bytes_p[0] = 1;  // the whole block is writable
    bytes_p[bytes - 1] = 2;
    EXPECT_EQ(bytes_p[0] + bytes_p[bytes - 1], 3);
    resource->deallocate(p, bytes, alignof(uint64_t));
  }
}

TEST(HugeArray, PmrVectorOnTheResourceKeepsItsContentsAsItGrows) {
  std::pmr::vector<uint64_t> v(HugePageResource());
  const size_t n = 3 * kHugeResourceMinBytes / sizeof(uint64_t) + 5;
  for (size_t i = 0; i < n; ++i) v.push_back(i * 3);
  ASSERT_EQ(v.size(), n);
  for (size_t i = 0; i < n; i += 1021) ASSERT_EQ(v[i], i * 3);
  EXPECT_EQ(v.back(), (n - 1) * 3);
  std::pmr::vector<uint64_t> moved(std::move(v));
  EXPECT_EQ(moved.size(), n);
  moved.clear();
  moved.shrink_to_fit();
  EXPECT_EQ(moved.capacity(), 0u);
}

#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
// Pages of `bytes` at `p` that are resident.
size_t Resident(void* p, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((bytes + page - 1) / page);
  if (mincore(p, bytes, in.data()) != 0) return 0;
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

TEST(HugeArray, PrefaultParallelBacksFreshMemoryOnSeveralThreads) {
  const size_t bytes = size_t{9} << 20;  // four 2 MiB parts and a partial one
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  if (madvise(p, 4096, MADV_POPULATE_WRITE) != 0) {
    munmap(p, bytes);
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE";
  }
  char* const c = static_cast<char*>(p);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  ASSERT_EQ(Resident(c + page, bytes - page), 0u);  // the first page: the probe above
  PrefaultParallel(c + 100, bytes - 100, 1);        // one thread: left to the first write
  EXPECT_EQ(Resident(c + page, bytes - page), 0u);
  PrefaultParallel(c + 100, bytes - 100, 2);  // an unaligned start, every page of it after
  EXPECT_EQ(Resident(c, bytes), bytes / page);
  munmap(p, bytes);
}
#endif

TEST(HugeArray, PrefaultParallelKeepsContents) {
  std::vector<uint32_t> v(size_t{5} << 20);  // 20 MiB
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint32_t>(i * 2654435761u);
  PrefaultParallel(v.data() + 3, (v.size() - 3) * sizeof(uint32_t), 4);
  PrefaultParallel(v.data(), 100, 2);  // below the size it acts on
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(v[i], static_cast<uint32_t>(i * 2654435761u)) << i;
  }
}

}  // namespace
}  // namespace opscope::internal
