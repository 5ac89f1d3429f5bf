// PodBuffer's memory: contents survive every way a buffer grows (malloc, a malloc block moved to a
// mapping, a mapping grown in place or moved), and mapped blocks start on a 2 MiB boundary so each
// 2 MiB of them can be one transparent huge page.
#include "import/parquet/pod_buffer.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <vector>

namespace opscope::parquet {
namespace {

constexpr uintptr_t kTwoMiB = uintptr_t{2} << 20;

TEST(PodBufferTest, GrowsThroughEveryKindOfBlockKeepingItsContents) {
  PodBuffer<uint32_t> b;
  uint32_t next = 0;
  // A few elements at a time, from a malloc block to a mapping of tens of MiB.
  while (b.size() < (size_t{48} << 20) / sizeof(uint32_t)) {
    const size_t n = 1 + b.size() / 3;
    uint32_t* p = b.Extend(n);
    for (size_t i = 0; i < n; ++i) p[i] = next++;
    if (b.capacity() * sizeof(uint32_t) >= pod_memory::kMapBytes) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kTwoMiB, 0u) << b.capacity();
    }
  }
  for (size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(b[i], static_cast<uint32_t>(i)) << i;
  }
}

// A mapped block that cannot grow in place (the address space after it taken) moves its pages to a
// new aligned mapping.
TEST(PodBufferTest, AMappedBlockBlockedFromGrowingInPlaceMovesWithItsContents) {
  PodBuffer<uint8_t> b;
  b.resize(pod_memory::kMapBytes);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 7);
  const size_t bytes = b.capacity();
  // Take the address space right after the block.
  void* const end = b.data() + bytes;
  void* after = mmap(end, 4096, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  const bool blocked = after == end;  // a kernel without the flag maps elsewhere
  const uint8_t* before = b.data();
  b.resize(bytes * 4);
  if (blocked) {
    EXPECT_NE(b.data(), before);
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kTwoMiB, 0u);
  for (size_t i = 0; i < pod_memory::kMapBytes; ++i) {
    ASSERT_EQ(b[i], static_cast<uint8_t>(i * 7)) << i;
  }
  if (after != MAP_FAILED) munmap(after, 4096);
}

}  // namespace
}  // namespace opscope::parquet
