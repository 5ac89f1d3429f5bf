// Whole files written in the test: values through every page kind and codec, nulls, row groups
// on threads, and each way a file can be refused, with the error naming the place.
#include "import/parquet/parquet_file.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "import/parquet/parquet_test_writer.h"

namespace opscope::parquet {
namespace {

using testing::Leaf;
using testing::Root;
using testing::TestFileWriter;
using R = ::parquet::FieldRepetitionType;
using T = ::parquet::Type;
using E = ::parquet::Encoding;

struct Opened {
  std::string bytes;
  std::unique_ptr<ParquetFile> file;
};

Opened Open(std::string bytes) {
  Opened o{std::move(bytes), nullptr};
  const Status st = ParquetFile::OpenBuffer(
      "t.parquet", reinterpret_cast<const uint8_t*>(o.bytes.data()), o.bytes.size(), &o.file);
  EXPECT_TRUE(st.ok()) << st.message();
  return o;
}

Status OpenStatus(const std::string& bytes) {
  std::unique_ptr<ParquetFile> file;
  return ParquetFile::OpenBuffer("t.parquet", reinterpret_cast<const uint8_t*>(bytes.data()),
                                 bytes.size(), &file);
}

Status ReadAll(const ParquetFile& f, RowGroupData* rg, int row_group = 0,
               const ReadOptions& options = {}) {
  std::vector<int> cols(f.schema().num_columns());
  for (size_t i = 0; i < cols.size(); ++i) cols[i] = static_cast<int>(i);
  return f.ReadRowGroup(row_group, cols, options, rg);
}

TEST(ParquetFileTest, PlainColumnsWithEveryCodec) {
  for (Codec codec : {Codec::kUncompressed, Codec::kSnappy, Codec::kGzip, Codec::kBrotli,
                      Codec::kZstd, Codec::kLz4Raw, Codec::kLz4}) {
    TestFileWriter w(
        {Root(2), Leaf("id", T::INT64, R::REQUIRED), Leaf("name", T::BYTE_ARRAY, R::REQUIRED)});
    w.BeginRowGroup(3);
    w.BeginColumn(codec);
    w.AddDataPageV1(2, testing::PlainInt64({10, -20}));
    w.AddDataPageV1(1, testing::PlainInt64({1LL << 40}));
    w.EndColumn();
    w.BeginColumn(codec);
    w.AddDataPageV1(3, testing::PlainByteArrays({"a", "", "ccc"}));
    w.EndColumn();
    Opened o = Open(w.Finish());
    ASSERT_TRUE(o.file);
    EXPECT_EQ(o.file->num_rows(), 3);
    RowGroupData rg;
    ASSERT_TRUE(ReadAll(*o.file, &rg).ok()) << ToString(codec);
    EXPECT_EQ(std::vector<int64_t>(rg.columns[0].int64s().begin(), rg.columns[0].int64s().end()),
              (std::vector<int64_t>{10, -20, 1LL << 40}));
    EXPECT_TRUE(rg.columns[0].def_levels().empty());
    EXPECT_EQ(rg.columns[1].ByteArray(0), "a");
    EXPECT_EQ(rg.columns[1].ByteArray(1), "");
    EXPECT_EQ(rg.columns[1].ByteArray(2), "ccc");
  }
}

TEST(ParquetFileTest, NullsDictionaryAndPageV2) {
  TestFileWriter w(
      {Root(2), Leaf("x", T::INT32, R::OPTIONAL), Leaf("s", T::BYTE_ARRAY, R::OPTIONAL)});
  w.BeginRowGroup(6);
  w.BeginColumn(Codec::kSnappy);
  // v1: levels 1 0 1, values 5 7; v2: levels 0 1 1 (RLE without length prefix), values 9 11.
  w.AddDataPageV1(3, testing::Levels({1, 0, 1}, 1) + testing::PlainInt32({5, 7}));
  w.AddDataPageV2(3, 1, 3, "", testing::RleHybrid({0, 1, 1}, 1), testing::PlainInt32({9, 11}));
  w.EndColumn();
  w.BeginColumn(Codec::kZstd);
  w.AddDictionaryPage(2, testing::PlainByteArrays({"red", "green"}));
  std::string indices = std::string(1, '\x01') + testing::RleHybrid({1, 0, 1, 1, 1}, 1);
  w.AddDataPageV1(6, testing::Levels({1, 1, 1, 0, 1, 1}, 1) + indices, E::RLE_DICTIONARY);
  w.EndColumn();
  Opened o = Open(w.Finish());
  RowGroupData rg;
  ASSERT_TRUE(ReadAll(*o.file, &rg).ok());
  const ColumnData& x = rg.columns[0];
  EXPECT_EQ(x.num_levels(), 6);
  EXPECT_EQ(std::vector<int16_t>(x.def_levels().begin(), x.def_levels().end()),
            (std::vector<int16_t>{1, 0, 1, 0, 1, 1}));
  EXPECT_EQ(std::vector<int32_t>(x.int32s().begin(), x.int32s().end()),
            (std::vector<int32_t>{5, 7, 9, 11}));
  const ColumnData& s = rg.columns[1];
  ASSERT_EQ(s.num_values(), 5);
  EXPECT_EQ(s.ByteArray(0), "green");
  EXPECT_EQ(s.ByteArray(1), "red");
  EXPECT_EQ(s.ByteArray(4), "green");
}

// ReadOptions::dictionary_index_columns: indices into the chunk's dictionary, the values of a
// page stored without it (a writer's fallback) appended to the dictionary, and every value the
// same as the copied read gives.
TEST(ParquetFileTest, DictionaryIndicesWithAPlainFallbackPage) {
  TestFileWriter w({Root(1), Leaf("s", T::BYTE_ARRAY, R::OPTIONAL)});
  w.BeginRowGroup(7);
  w.BeginColumn(Codec::kSnappy);
  w.AddDictionaryPage(2, testing::PlainByteArrays({"tensor", "vector"}));
  std::string indices = std::string(1, '\x01') + testing::RleHybrid({1, 0, 1}, 1);
  w.AddDataPageV1(4, testing::Levels({1, 1, 0, 1}, 1) + indices, E::RLE_DICTIONARY);
  w.AddDataPageV1(3, testing::Levels({1, 1, 1}, 1) + testing::PlainByteArrays({"gpsimd", "", "x"}));
  w.EndColumn();
  Opened o = Open(w.Finish());
  RowGroupData copied, indexed;
  ASSERT_TRUE(ReadAll(*o.file, &copied).ok());
  ReadOptions options;
  options.dictionary_index_columns = {0};
  ASSERT_TRUE(ReadAll(*o.file, &indexed, 0, options).ok());
  const ColumnData& c = indexed.columns[0];
  ASSERT_TRUE(c.dictionary_indexed());
  EXPECT_FALSE(copied.columns[0].dictionary_indexed());
  EXPECT_EQ(std::vector<int32_t>(c.dictionary_indices().begin(), c.dictionary_indices().end()),
            (std::vector<int32_t>{1, 0, 1, 2, 3, 4}));
  EXPECT_EQ(c.dictionary().count, 5);
  ASSERT_EQ(c.num_values(), 6);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(c.ByteArray(i), copied.columns[0].ByteArray(i)) << i;
  EXPECT_EQ(c.ByteArray(3), "gpsimd");
  // An index past the dictionary is refused, naming the column.
  TestFileWriter bad({Root(1), Leaf("s", T::BYTE_ARRAY, R::REQUIRED)});
  bad.BeginRowGroup(1);
  bad.BeginColumn();
  bad.AddDictionaryPage(1, testing::PlainByteArrays({"a"}));
  bad.AddDataPageV1(1, std::string(1, '\x02') + testing::RleHybrid({3}, 2), E::RLE_DICTIONARY);
  bad.EndColumn();
  Opened b = Open(bad.Finish());
  const Status st = ReadAll(*b.file, &indexed, 0, options);
  EXPECT_NE(st.message().find("column 's' row group 0"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("out of range"), std::string::npos) << st.message();
}

TEST(ParquetFileTest, DeltaEncodedPages) {
  TestFileWriter w({Root(1), Leaf("t", T::INT64, R::REQUIRED)});
  std::vector<int64_t> v;
  for (int i = 0; i < 1000; ++i) v.push_back(1700000000000000000LL + i * 1000 + (i % 7));
  w.BeginRowGroup(1000);
  w.BeginColumn(Codec::kZstd);
  w.AddDataPageV2(1000, 0, 1000, "", "", testing::DeltaBinaryPacked(v), E::DELTA_BINARY_PACKED);
  w.EndColumn();
  Opened o = Open(w.Finish());
  RowGroupData rg;
  ASSERT_TRUE(ReadAll(*o.file, &rg).ok());
  EXPECT_EQ(std::vector<int64_t>(rg.columns[0].int64s().begin(), rg.columns[0].int64s().end()), v);
}

TEST(ParquetFileTest, RowGroupsOnThreadsMatchOneThread) {
  TestFileWriter w({Root(1), Leaf("v", T::INT64, R::REQUIRED)});
  for (int g = 0; g < 9; ++g) {
    std::vector<int64_t> v(100 + g);
    for (size_t i = 0; i < v.size(); ++i) v[i] = g * 1000 + static_cast<int64_t>(i);
    w.BeginRowGroup(static_cast<int64_t>(v.size()));
    w.BeginColumn(Codec::kSnappy);
    w.AddDataPageV1(static_cast<int32_t>(v.size()), testing::PlainInt64(v));
    w.EndColumn();
  }
  Opened o = Open(w.Finish());
  ASSERT_EQ(o.file->num_row_groups(), 9);
  for (int threads : {1, 3}) {
    std::mutex mu;
    std::map<int, int64_t> sums;
    const std::vector<int> cols = {0};
    ReadOptions opts;
    opts.threads = threads;
    ASSERT_TRUE(o.file
                    ->ReadRowGroups(cols, opts,
                                    [&](RowGroupData& rg) {
                                      int64_t sum = 0;
                                      for (int64_t x : rg.columns[0].int64s()) sum += x;
                                      std::lock_guard<std::mutex> lock(mu);
                                      sums[rg.row_group] = sum;
                                      return Status::Ok();
                                    })
                    .ok());
    ASSERT_EQ(sums.size(), 9u);
    const int64_t n = 104;
    EXPECT_EQ(sums[4], 4000 * n + n * (n - 1) / 2);
  }
}

TEST(ParquetFileTest, ChecksumsAreVerified) {
  for (bool corrupt : {false, true}) {
    TestFileWriter w({Root(1), Leaf("v", T::INT32, R::REQUIRED)});
    w.BeginRowGroup(4);
    w.BeginColumn();
    if (corrupt) w.CorruptNextPage();
    w.AddDataPageV1(4, testing::PlainInt32({1, 2, 3, 4}), E::PLAIN, /*with_crc=*/true);
    w.EndColumn();
    Opened o = Open(w.Finish());
    RowGroupData rg;
    const Status st = ReadAll(*o.file, &rg);
    EXPECT_EQ(st.ok(), !corrupt) << st.message();
    if (corrupt) {
      EXPECT_EQ(st.message().rfind("t.parquet: column 'v' row group 0, page at byte 4: page "
                                   "checksum mismatch",
                                   0),
                0u)
          << st.message();
      ReadOptions no_check;
      no_check.verify_checksums = false;
      EXPECT_TRUE(ReadAll(*o.file, &rg, 0, no_check).ok());
    }
  }
}

TEST(ParquetFileTest, ErrorsNameTheFileColumnRowGroupAndPage) {
  TestFileWriter w({Root(1), Leaf("v", T::INT32, R::REQUIRED)});
  w.BeginRowGroup(2);
  w.BeginColumn();
  w.AddDataPageV1(2, testing::PlainInt32({1, 2}), E::BIT_PACKED);
  w.EndColumn();
  Opened o = Open(w.Finish());
  RowGroupData rg;
  const Status st = ReadAll(*o.file, &rg);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(),
            "t.parquet: column 'v' row group 0, page at byte 4: unsupported encoding BIT_PACKED "
            "for a INT32 column");
  EXPECT_EQ(st.file(), "t.parquet");
  EXPECT_EQ(st.offset(), 4u);
}

TEST(ParquetFileTest, HostileSizesAreRefused) {
  // A page claiming a huge uncompressed size.
  TestFileWriter big({Root(1), Leaf("v", T::INT32, R::REQUIRED)});
  big.BeginRowGroup(1);
  big.BeginColumn(Codec::kSnappy);
  ::parquet::PageHeader h;
  h.type = ::parquet::PageType::DATA_PAGE;
  h.uncompressed_page_size = 2000000000;
  h.compressed_page_size = 4;
  h.__isset.data_page_header = true;
  h.data_page_header.num_values = 1;
  big.AddRaw(testing::Serialize(h) + "abcd", 1);
  big.EndColumn();
  Opened o = Open(big.Finish());
  RowGroupData rg;
  Status st = ReadAll(*o.file, &rg);
  EXPECT_NE(st.message().find("ReadOptions::max_page_bytes"), std::string::npos) << st.message();

  // A page running past its column chunk.
  TestFileWriter past({Root(1), Leaf("v", T::INT32, R::REQUIRED)});
  past.BeginRowGroup(1);
  past.BeginColumn();
  h.uncompressed_page_size = 400;
  h.compressed_page_size = 400;
  past.AddRaw(testing::Serialize(h) + "abcd", 1);
  past.EndColumn();
  o = Open(past.Finish());
  st = ReadAll(*o.file, &rg);
  EXPECT_NE(st.message().find("runs past the column chunk's end"), std::string::npos)
      << st.message();

  // A column chunk outside the file, and a footer longer than the file.
  TestFileWriter outside({Root(1), Leaf("v", T::INT32, R::REQUIRED)});
  outside.BeginRowGroup(1);
  outside.BeginColumn();
  outside.AddDataPageV1(1, testing::PlainInt32({1}));
  outside.EndColumn();
  outside.meta().row_groups[0].columns[0].meta_data.data_page_offset = 1 << 30;
  o = Open(outside.Finish());
  st = ReadAll(*o.file, &rg);
  EXPECT_NE(st.message().find("lies outside the file's data"), std::string::npos) << st.message();
  std::string bytes = outside.Finish();
  bytes[bytes.size() - 6] = '\x7f';
  EXPECT_NE(OpenStatus(bytes).message().find("exceeds the file"), std::string::npos);
}

TEST(ParquetFileTest, NotParquetEncryptedAndCutFilesAreRefused) {
  EXPECT_NE(OpenStatus("hello").message().find("not a Parquet file"), std::string::npos);
  EXPECT_NE(OpenStatus("PAR1xxxxxxxxxxxxxxxxPAR2").message().find("not a Parquet file"),
            std::string::npos);
  TestFileWriter w({Root(1), Leaf("v", T::INT32, R::REQUIRED)});
  w.BeginRowGroup(1);
  w.BeginColumn();
  w.AddDataPageV1(1, testing::PlainInt32({1}));
  w.EndColumn();
  EXPECT_NE(OpenStatus(w.Finish("PARE")).message().find("encrypted"), std::string::npos);
  std::string ok = w.Finish();
  // Cut inside the footer: the length no longer fits, or the Thrift stops short.
  for (size_t cut : {ok.size() - 3, ok.size() / 2}) {
    std::string cut_file = ok.substr(0, cut) + ok.substr(ok.size() - 8);
    EXPECT_EQ(OpenStatus(cut_file).code(), Status::Code::kInvalidInput);
  }
  w.meta().row_groups[0].columns[0].__isset.crypto_metadata = true;
  Opened o = Open(w.Finish());
  RowGroupData rg;
  EXPECT_NE(ReadAll(*o.file, &rg).message().find("the column is encrypted"), std::string::npos);
}

TEST(ParquetFileTest, ValuesShortOfTheRowGroupAreRefused) {
  TestFileWriter w({Root(1), Leaf("v", T::INT32, R::REQUIRED)});
  w.BeginRowGroup(5);
  w.BeginColumn();
  w.AddDataPageV1(3, testing::PlainInt32({1, 2, 3}));
  w.EndColumn();
  Opened o = Open(w.Finish());
  RowGroupData rg;
  EXPECT_NE(ReadAll(*o.file, &rg).message().find("holds 3 rows, its row group 5"),
            std::string::npos);
}

TEST(ParquetFileTest, OpensFromAPath) {
  std::unique_ptr<ParquetFile> f;
  const Status st = ParquetFile::Open("/nonexistent/x.parquet", &f);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_NE(st.message().find("/nonexistent/x.parquet"), std::string::npos);
}

}  // namespace
}  // namespace opscope::parquet
