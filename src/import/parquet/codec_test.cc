// Every codec round trip through its library's encoder, the variants the format allows (several
// gzip members, LZ4 without Hadoop's framing), and pages that lie about their size.
#include "import/parquet/codec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "import/parquet/parquet_test_writer.h"

namespace opscope::parquet {
namespace {

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

std::string Sample() {
  std::string s;
  for (int i = 0; i < 5000; ++i) s += "row " + std::to_string(i * 7919 % 1000) + ";";
  return s;
}

std::string Inflate(Codec codec, const std::string& stored, size_t raw_size, std::string* why) {
  std::string out(raw_size, '\0');
  *why = Decompress(codec, Bytes(stored), stored.size(), reinterpret_cast<uint8_t*>(out.data()),
                    out.size());
  return out;
}

TEST(CodecTest, EveryCodecRoundTrips) {
  const std::string raw = Sample();
  for (Codec c : {Codec::kUncompressed, Codec::kSnappy, Codec::kGzip, Codec::kBrotli, Codec::kZstd,
                  Codec::kLz4Raw, Codec::kLz4}) {
    std::string why;
    EXPECT_EQ(Inflate(c, testing::Compress(c, raw), raw.size(), &why), raw) << ToString(c);
    EXPECT_EQ(why, "") << ToString(c);
    // One byte more or fewer than the stream holds is malformed.
    Inflate(c, testing::Compress(c, raw), raw.size() + 1, &why);
    EXPECT_NE(why, "") << ToString(c);
    Inflate(c, testing::Compress(c, raw), raw.size() - 1, &why);
    EXPECT_NE(why, "") << ToString(c);
  }
}

TEST(CodecTest, ConcatenatedGzipMembersAndZstdFrames) {
  const std::string a = Sample();
  const std::string b = "second member";
  std::string why;
  EXPECT_EQ(
      Inflate(Codec::kGzip, testing::Compress(Codec::kGzip, a) + testing::Compress(Codec::kGzip, b),
              a.size() + b.size(), &why),
      a + b);
  EXPECT_EQ(why, "");
  EXPECT_EQ(
      Inflate(Codec::kZstd, testing::Compress(Codec::kZstd, a) + testing::Compress(Codec::kZstd, b),
              a.size() + b.size(), &why),
      a + b);
  EXPECT_EQ(why, "");
}

TEST(CodecTest, Lz4WithoutHadoopFramingIsABlock) {
  const std::string raw = Sample();
  std::string why;
  EXPECT_EQ(Inflate(Codec::kLz4, testing::Compress(Codec::kLz4Raw, raw), raw.size(), &why), raw);
  EXPECT_EQ(why, "");
}

TEST(CodecTest, GarbageIsMalformedNotACrash) {
  const std::string garbage = "\xff\x00\x12\x34 this is not compressed data at all \x80\x81";
  for (Codec c :
       {Codec::kSnappy, Codec::kGzip, Codec::kBrotli, Codec::kZstd, Codec::kLz4Raw, Codec::kLz4}) {
    std::string why;
    Inflate(c, garbage, 1000, &why);
    EXPECT_NE(why, "") << ToString(c);
  }
  std::string why;
  Inflate(Codec::kLzo, garbage, 10, &why);
  EXPECT_NE(why.find("unsupported codec LZO"), std::string::npos) << why;
  EXPECT_FALSE(IsSupportedCodec(3));
  EXPECT_FALSE(IsSupportedCodec(8));
  EXPECT_TRUE(IsSupportedCodec(7));
}

}  // namespace
}  // namespace opscope::parquet
