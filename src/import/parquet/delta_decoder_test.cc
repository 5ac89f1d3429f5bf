// DELTA_BINARY_PACKED and the byte array encodings built on it: the format's examples, random
// values across blocks (wrapping at the type's width), reads in odd pieces, malformed input.
#include "import/parquet/delta_decoder.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "import/parquet/parquet_test_writer.h"

namespace opscope::parquet {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

std::vector<int64_t> DecodeAll(const std::string& enc, size_t piece = 1000000) {
  DeltaBinaryPackedDecoder d;
  EXPECT_EQ(d.Init(Bytes(enc), enc.size()), "");
  std::vector<int64_t> out(d.total_values());
  for (size_t done = 0; done < out.size();) {
    const size_t n = std::min(piece, out.size() - done);
    EXPECT_EQ(d.Decode(out.data() + done, n), "");
    done += n;
    piece = piece % 29 + 1;
  }
  EXPECT_EQ(d.end(), Bytes(enc) + enc.size());
  return out;
}

TEST(DeltaDecoderTest, SpecExamples) {
  // Example 1: 1..5 with block size 8, one miniblock: every delta equals the minimum.
  const std::vector<int64_t> one = {1, 2, 3, 4, 5};
  EXPECT_EQ(DecodeAll(testing::DeltaBinaryPacked(one, 8, 1)), one);
  // Example 2: 7 5 3 1 2 3 4 5: minimum delta -2, relative deltas on 2 bits.
  const std::vector<int64_t> two = {7, 5, 3, 1, 2, 3, 4, 5};
  const std::string enc = testing::DeltaBinaryPacked(two, 8, 1);
  EXPECT_EQ(DecodeAll(enc), two);
  EXPECT_EQ(static_cast<uint8_t>(enc[5]), 2);  // the miniblock's bit width after min delta -2
}

TEST(DeltaDecoderTest, RandomValuesAcrossBlocksInOddPieces) {
  std::mt19937_64 rng(3);
  std::vector<int64_t> v(3000);
  int64_t x = 0;
  for (int64_t& e : v) e = x += static_cast<int64_t>(rng() % 2000) - 1000;
  v[100] = std::numeric_limits<int64_t>::max();  // deltas that wrap
  v[101] = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(DecodeAll(testing::DeltaBinaryPacked(v), 7), v);
  EXPECT_EQ(DecodeAll(testing::DeltaBinaryPacked(v, 256, 8)), v);
  // As int32: the same values truncated, since the arithmetic wraps at the type's width.
  std::vector<int64_t> small(v.begin(), v.begin() + 90);
  const std::string enc = testing::DeltaBinaryPacked(small);
  DeltaBinaryPackedDecoder d;
  ASSERT_EQ(d.Init(Bytes(enc), enc.size()), "");
  std::vector<int32_t> out(small.size());
  ASSERT_EQ(d.Decode(out.data(), out.size()), "");
  for (size_t i = 0; i < small.size(); ++i) EXPECT_EQ(out[i], static_cast<int32_t>(small[i]));
}

TEST(DeltaDecoderTest, OneValueHasNoBlocks) {
  EXPECT_EQ(DecodeAll(testing::DeltaBinaryPacked({42})), std::vector<int64_t>{42});
  EXPECT_EQ(DecodeAll(testing::DeltaBinaryPacked({})), std::vector<int64_t>{});
}

TEST(DeltaDecoderTest, MalformedInputIsRefused) {
  DeltaBinaryPackedDecoder d;
  const uint8_t bad_block[] = {0x03, 0x01, 0x05, 0x02};  // block of 3 values
  EXPECT_NE(d.Init(bad_block, sizeof(bad_block)), "");
  const uint8_t cut[] = {0x80, 0x01, 0x04};
  EXPECT_NE(d.Init(cut, sizeof(cut)), "");
  // A valid header whose blocks are missing.
  std::string enc = testing::DeltaBinaryPacked({1, 5, 9, 30, 2, 8});
  enc.resize(6);
  ASSERT_EQ(d.Init(Bytes(enc), enc.size()), "");
  std::vector<int64_t> out(6);
  EXPECT_NE(d.Decode(out.data(), 6), "");
  EXPECT_NE(d.Decode(out.data(), 7), "");  // more than the header holds
}

std::string LengthEncoded(const std::vector<std::string>& v) {
  std::vector<int64_t> lengths;
  std::string bytes;
  for (const std::string& s : v) {
    lengths.push_back(static_cast<int64_t>(s.size()));
    bytes += s;
  }
  return testing::DeltaBinaryPacked(lengths) + bytes;
}

std::vector<std::string> Strings(const ValueBuffer& b) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < b.count; ++i) out.emplace_back(b.ByteArray(i));
  return out;
}

TEST(DeltaDecoderTest, DeltaLengthByteArray) {
  const std::vector<std::string> v = {"Hello", "World", "Foobar", "ABCDEF"};
  const std::string enc = LengthEncoded(v);
  ValueBuffer out;
  out.offsets.push_back(0);
  ASSERT_EQ(DecodeDeltaLengthByteArray(Bytes(enc), enc.size(), 4, &out), "");
  EXPECT_EQ(Strings(out), v);
  ValueBuffer again;
  again.offsets.push_back(0);
  EXPECT_NE(DecodeDeltaLengthByteArray(Bytes(enc), enc.size() - 1, 4, &again), "");
  EXPECT_NE(DecodeDeltaLengthByteArray(Bytes(enc), enc.size(), 3, &again), "");
}

TEST(DeltaDecoderTest, DeltaByteArray) {
  // Encodings.md: axis, axle, babble, babyhood as prefixes 0 2 0 3 and suffixes.
  const std::string enc =
      testing::DeltaBinaryPacked({0, 2, 0, 3}) + LengthEncoded({"axis", "le", "babble", "yhood"});
  ValueBuffer out;
  out.offsets.push_back(0);
  ASSERT_EQ(DecodeDeltaByteArray(Bytes(enc), enc.size(), 4, 0, 1 << 20, &out), "");
  EXPECT_EQ(Strings(out), (std::vector<std::string>{"axis", "axle", "babble", "babyhood"}));
  // A prefix longer than the previous value, and a cap on what prefixes may expand to.
  const std::string bad = testing::DeltaBinaryPacked({0, 9}) + LengthEncoded({"ab", "c"});
  ValueBuffer b;
  b.offsets.push_back(0);
  EXPECT_NE(DecodeDeltaByteArray(Bytes(bad), bad.size(), 2, 0, 1 << 20, &b), "");
  ValueBuffer c;
  c.offsets.push_back(0);
  EXPECT_NE(DecodeDeltaByteArray(Bytes(enc), enc.size(), 4, 0, 10, &c), "");
}

}  // namespace
}  // namespace opscope::parquet
