// The RLE / bit-packed hybrid: the format's own example, mixed runs read in odd batch sizes, and
// malformed runs stopping with an error instead of reading past the data.
#include "import/parquet/rle_decoder.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "import/parquet/parquet_test_writer.h"

namespace opscope::parquet {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

TEST(RleDecoderTest, SpecExampleBitPackedOneToSeven) {
  // Encodings.md: 0..7 at width 3 bit-packed is 10001000 11000110 11111010.
  const uint8_t data[] = {0x03, 0x88, 0xC6, 0xFA};
  RleDecoder d(data, sizeof(data), 3);
  uint32_t out[8];
  ASSERT_EQ(d.GetBatch(out, 8), 8u);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(out[i], i);
  EXPECT_EQ(d.GetBatch(out, 1), 0u);
  EXPECT_EQ(d.error(), nullptr);
}

TEST(RleDecoderTest, MixedRunsInOddBatches) {
  std::mt19937 rng(7);
  for (int width : {1, 2, 5, 8, 13, 16, 20, 32}) {
    std::vector<uint32_t> values;
    const uint32_t mask = width == 32 ? ~0u : (1u << width) - 1;
    while (values.size() < 5000) {
      const uint32_t v = rng() & mask;
      const size_t run = rng() % 3 == 0 ? 1 + rng() % 40 : 1;
      values.insert(values.end(), run, v);
    }
    const std::string enc = testing::RleHybrid(values, width);
    RleDecoder d(Bytes(enc), enc.size(), width);
    std::vector<uint32_t> out(values.size());
    size_t done = 0;
    for (size_t batch = 1; done < values.size(); batch = batch % 37 + 3) {
      done += d.GetBatch(out.data() + done, std::min(batch, values.size() - done));
    }
    EXPECT_EQ(out, values) << "width " << width;
    if (width <= 16) {
      RleDecoder d16(Bytes(enc), enc.size(), width);
      std::vector<uint16_t> out16(values.size());
      ASSERT_EQ(d16.GetBatch(out16.data(), out16.size()), values.size());
      for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(out16[i], values[i]);
    }
  }
}

TEST(RleDecoderTest, WidthZeroIsAllZeros) {
  const uint8_t data[] = {0x14};  // an RLE run of 10, no value bytes at width 0
  RleDecoder d(data, sizeof(data), 0);
  uint8_t out[10];
  ASSERT_EQ(d.GetBatch(out, 10), 10u);
  for (uint8_t v : out) EXPECT_EQ(v, 0);
}

TEST(RleDecoderTest, MalformedRunsStopWithAnError) {
  const uint8_t cut_header[] = {0x80};  // a varint that never ends
  RleDecoder a(cut_header, sizeof(cut_header), 3);
  uint32_t out[16];
  EXPECT_EQ(a.GetBatch(out, 16), 0u);
  EXPECT_NE(a.error(), nullptr);

  const uint8_t cut_value[] = {0x04, 0x01};  // RLE run of 2 at width 16 needs 2 value bytes
  RleDecoder b(cut_value, sizeof(cut_value), 16);
  EXPECT_EQ(b.GetBatch(out, 2), 0u);
  EXPECT_NE(b.error(), nullptr);

  // A bit-packed run claiming 100 groups with 3 bytes behind it yields what the bytes hold.
  const uint8_t short_packed[] = {0xC9, 0x01, 0x88, 0xC6, 0xFA};
  RleDecoder c(short_packed, sizeof(short_packed), 3);
  EXPECT_EQ(c.GetBatch(out, 16), 8u);
}

TEST(RleDecoderTest, ReadsUleb128) {
  const uint8_t data[] = {0xE5, 0x8E, 0x26};
  const uint8_t* p = data;
  uint64_t v = 0;
  ASSERT_TRUE(ReadUleb128(&p, data + 3, &v));
  EXPECT_EQ(v, 624485u);
  EXPECT_EQ(p, data + 3);
  p = data;
  EXPECT_FALSE(ReadUleb128(&p, data + 2, &v));
}

}  // namespace
}  // namespace opscope::parquet
