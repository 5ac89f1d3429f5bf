// Parquet files written in tests, page by page, through the same generated Thrift types the
// reader decodes with (serialized with Thrift's compact protocol), so a test can build exactly
// the file it needs: any encoding, codec, page version, checksum, or a deliberate fault. Also the
// small encoders those pages need (PLAIN, RLE / bit-packed hybrid, DELTA_BINARY_PACKED).
//
//   TestFileWriter w({Root(1), Leaf("x", Type::INT64, Rep::REQUIRED)});
//   w.BeginRowGroup(3);
//   w.BeginColumn(Codec::kSnappy);
//   w.AddDataPageV1(3, PlainInt64({1, 2, 3}));
//   w.EndColumn();
//   std::string bytes = w.Finish();
//
// Test code only (not thread-safe, aborts the test on misuse).
#ifndef OPSCOPE_IMPORT_PARQUET_PARQUET_TEST_WRITER_H_
#define OPSCOPE_IMPORT_PARQUET_PARQUET_TEST_WRITER_H_

#include <parquet_types.h>  // generated from parquet.thrift at build time

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "import/parquet/schema.h"

namespace opscope::parquet::testing {

using Type = ::parquet::Type::type;
using Rep = ::parquet::FieldRepetitionType::type;

::parquet::SchemaElement Root(int children);
::parquet::SchemaElement Group(
    std::string name, Rep rep, int children,
    ::parquet::ConvertedType::type converted = static_cast<::parquet::ConvertedType::type>(-1));
::parquet::SchemaElement Leaf(std::string name, Type type, Rep rep, int32_t type_length = 0);

// Thrift compact serialization of any generated struct.
template <typename T>
std::string Serialize(const T& value);

// Encoders.
std::string PlainInt32(const std::vector<int32_t>& v);
std::string PlainInt64(const std::vector<int64_t>& v);
std::string PlainDouble(const std::vector<double>& v);
std::string PlainByteArrays(const std::vector<std::string>& v);
// RLE / bit-packed hybrid without a length prefix: runs of >= 8 equal values as RLE runs, the
// rest bit-packed.
std::string RleHybrid(const std::vector<uint32_t>& v, int bit_width);
// v1 levels: the hybrid with its 4-byte length prefix.
std::string Levels(const std::vector<uint32_t>& v, int max_level);
std::string DeltaBinaryPacked(const std::vector<int64_t>& v, int block = 128, int miniblocks = 4);
// The same bytes compressed with `codec` (the codec libraries' own encoders).
std::string Compress(Codec codec, std::string_view raw);

class TestFileWriter {
 public:
  explicit TestFileWriter(std::vector<::parquet::SchemaElement> schema);

  void BeginRowGroup(int64_t rows);
  // Starts the next leaf column's chunk in this row group.
  void BeginColumn(Codec codec = Codec::kUncompressed);
  void AddDictionaryPage(int32_t num_values, const std::string& plain);
  // A v1 data page whose body (levels then values, uncompressed) is `body`.
  void AddDataPageV1(int32_t num_values, const std::string& body,
                     ::parquet::Encoding::type encoding = ::parquet::Encoding::PLAIN,
                     bool with_crc = false);
  void AddDataPageV2(int32_t num_values, int32_t num_nulls, int32_t num_rows,
                     const std::string& rep_levels, const std::string& def_levels,
                     const std::string& values,
                     ::parquet::Encoding::type encoding = ::parquet::Encoding::PLAIN);
  // Raw bytes appended to the chunk (a page built by hand) holding `num_values` level entries.
  void AddRaw(const std::string& bytes, int64_t num_values);
  void EndColumn();
  // The whole file; `magic` replaces the trailing "PAR1" (e.g. "PARE").
  std::string Finish(std::string_view magic = "PAR1");

  ::parquet::FileMetaData& meta() { return meta_; }
  // Flips one bit of the next page body written (to test checksums).
  void CorruptNextPage() { corrupt_next_ = true; }

 private:
  void AddPage(::parquet::PageHeader header, const std::string& stored);

  std::string bytes_ = "PAR1";
  ::parquet::FileMetaData meta_;
  std::vector<int> leaves_;  // schema element index of each leaf column
  std::vector<std::vector<std::string>> paths_;
  size_t column_ = 0;
  Codec codec_ = Codec::kUncompressed;
  ::parquet::ColumnChunk chunk_;
  int64_t chunk_start_ = 0;
  bool corrupt_next_ = false;
};

}  // namespace opscope::parquet::testing

#endif  // OPSCOPE_IMPORT_PARQUET_PARQUET_TEST_WRITER_H_
