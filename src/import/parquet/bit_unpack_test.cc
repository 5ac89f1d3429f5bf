// Bit unpacking at every width against a bit-by-bit reference, with and without room to load
// whole words past the data.
#include "import/parquet/bit_unpack.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace opscope::parquet {
namespace {

template <typename T>
void CheckWidths(int max_width) {
  std::mt19937_64 rng(42);
  for (int width = 0; width <= max_width; ++width) {
    for (size_t n : {8u, 16u, 64u, 1000u}) {
      std::vector<uint64_t> values(n);
      const uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
      for (uint64_t& v : values) v = rng() & mask;
      std::vector<uint8_t> packed((n * width + 7) / 8, 0);
      for (size_t i = 0, bit = 0; i < n; ++i) {
        for (int b = 0; b < width; ++b, ++bit) {
          if ((values[i] >> b) & 1) packed[bit / 8] |= static_cast<uint8_t>(1 << (bit % 8));
        }
      }
      // Exact size (the tail goes through the padded copy) and generous size (whole words).
      for (size_t slack : {0u, 32u}) {
        std::vector<uint8_t> in = packed;
        in.resize(packed.size() + slack, 0xFF);
        std::vector<T> out(n);
        UnpackBits(in.data(), packed.size() + slack, width, out.data(), n);
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(out[i], static_cast<T>(values[i])) << "width " << width << " i " << i;
        }
      }
    }
  }
}

TEST(BitUnpackTest, EveryWidthOfEveryOutputType) {
  CheckWidths<uint8_t>(8);
  CheckWidths<uint16_t>(16);
  CheckWidths<uint32_t>(32);
  CheckWidths<uint64_t>(64);
}

}  // namespace
}  // namespace opscope::parquet
