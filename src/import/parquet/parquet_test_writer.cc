// Parquet files written page by page for the reader's tests.
#include "import/parquet/parquet_test_writer.h"

#include <brotli/encode.h>
#include <gtest/gtest.h>
#include <lz4.h>
#include <snappy.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <zlib.h>
#include <zstd.h>

#include <bit>
#include <cstring>
#include <memory>

namespace opscope::parquet::testing {
namespace {

void PutU32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }

void PutUleb(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutBigEndian32(std::string* out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out->push_back(static_cast<char>(v >> s));
}

// Packs `n` values of `width` bits, least significant bit first.
void PackBits(const uint64_t* v, size_t n, int width, std::string* out) {
  std::string bytes((n * width + 7) / 8, '\0');
  size_t bit = 0;
  for (size_t i = 0; i < n; ++i) {
    for (int b = 0; b < width; ++b, ++bit) {
      if ((v[i] >> b) & 1) bytes[bit / 8] = static_cast<char>(bytes[bit / 8] | (1 << (bit % 8)));
    }
  }
  *out += bytes;
}

std::string Gzip(std::string_view raw) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, raw.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string Lz4Block(std::string_view raw) {
  std::string out(LZ4_compressBound(static_cast<int>(raw.size())), '\0');
  const int n = LZ4_compress_default(raw.data(), out.data(), static_cast<int>(raw.size()),
                                     static_cast<int>(out.size()));
  out.resize(n);
  return out;
}

}  // namespace

::parquet::SchemaElement Root(int children) {
  ::parquet::SchemaElement e;
  e.__set_name("schema");
  e.__set_num_children(children);
  return e;
}

::parquet::SchemaElement Group(std::string name, Rep rep, int children,
                               ::parquet::ConvertedType::type converted) {
  ::parquet::SchemaElement e;
  e.__set_name(std::move(name));
  e.__set_repetition_type(rep);
  e.__set_num_children(children);
  if (converted >= 0) e.__set_converted_type(converted);
  return e;
}

::parquet::SchemaElement Leaf(std::string name, Type type, Rep rep, int32_t type_length) {
  ::parquet::SchemaElement e;
  e.__set_name(std::move(name));
  e.__set_repetition_type(rep);
  e.__set_type(type);
  if (type_length > 0) e.__set_type_length(type_length);
  return e;
}

template <typename T>
std::string Serialize(const T& value) {
  auto buffer = std::make_shared<apache::thrift::transport::TMemoryBuffer>();
  apache::thrift::protocol::TCompactProtocolT<apache::thrift::transport::TMemoryBuffer> protocol(
      buffer);
  value.write(&protocol);
  return buffer->getBufferAsString();
}
template std::string Serialize(const ::parquet::FileMetaData&);
template std::string Serialize(const ::parquet::PageHeader&);

std::string PlainInt32(const std::vector<int32_t>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}
std::string PlainInt64(const std::vector<int64_t>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 8);
}
std::string PlainDouble(const std::vector<double>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 8);
}
std::string PlainByteArrays(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) {
    PutU32(&out, static_cast<uint32_t>(s.size()));
    out += s;
  }
  return out;
}

std::string RleHybrid(const std::vector<uint32_t>& v, int bit_width) {
  std::string out;
  size_t i = 0;
  while (i < v.size()) {
    size_t run = 1;
    while (i + run < v.size() && v[i + run] == v[i]) ++run;
    const size_t left = v.size() - i;
    if (run >= 8 || run == left) {
      PutUleb(&out, uint64_t{run} << 1);
      for (int b = 0; b < (bit_width + 7) / 8; ++b) out.push_back(static_cast<char>(v[i] >> 8 * b));
      i += run;
      continue;
    }
    // One group of 8 (the last one padded with zeros).
    uint64_t group[8] = {};
    for (size_t k = 0; k < 8 && i + k < v.size(); ++k) group[k] = v[i + k];
    PutUleb(&out, (uint64_t{1} << 1) | 1);
    PackBits(group, 8, bit_width, &out);
    i += std::min<size_t>(8, left);
  }
  return out;
}

std::string Levels(const std::vector<uint32_t>& v, int max_level) {
  const int width = std::bit_width(static_cast<unsigned>(max_level));
  const std::string data = RleHybrid(v, width);
  std::string out;
  PutU32(&out, static_cast<uint32_t>(data.size()));
  return out + data;
}

std::string DeltaBinaryPacked(const std::vector<int64_t>& v, int block, int miniblocks) {
  std::string out;
  PutUleb(&out, block);
  PutUleb(&out, miniblocks);
  PutUleb(&out, v.size());
  auto zigzag = [](int64_t x) { return (static_cast<uint64_t>(x) << 1) ^ (x < 0 ? ~0ull : 0); };
  PutUleb(&out, v.empty() ? 0 : zigzag(v[0]));
  const size_t per_mini = block / miniblocks;
  for (size_t start = 1; start < v.size(); start += block) {
    const size_t n = std::min<size_t>(block, v.size() - start);
    std::vector<uint64_t> deltas(n);
    for (size_t i = 0; i < n; ++i) {
      deltas[i] = static_cast<uint64_t>(v[start + i]) - static_cast<uint64_t>(v[start + i - 1]);
    }
    int64_t min = static_cast<int64_t>(deltas[0]);
    for (uint64_t d : deltas) min = std::min(min, static_cast<int64_t>(d));
    PutUleb(&out, zigzag(min));
    for (uint64_t& d : deltas) d -= static_cast<uint64_t>(min);
    std::vector<int> widths(miniblocks, 0);
    for (size_t i = 0; i < n; ++i) {
      widths[i / per_mini] =
          std::max(widths[i / per_mini], static_cast<int>(std::bit_width(deltas[i])));
    }
    for (int w : widths) out.push_back(static_cast<char>(w));
    for (size_t m = 0; m * per_mini < n; ++m) {
      std::vector<uint64_t> mini(per_mini, 0);
      for (size_t i = 0; i < per_mini && m * per_mini + i < n; ++i)
        mini[i] = deltas[m * per_mini + i];
      PackBits(mini.data(), per_mini, widths[m], &out);
    }
  }
  return out;
}

std::string Compress(Codec codec, std::string_view raw) {
  switch (codec) {
    case Codec::kUncompressed:
      return std::string(raw);
    case Codec::kSnappy: {
      std::string out;
      snappy::Compress(raw.data(), raw.size(), &out);
      return out;
    }
    case Codec::kGzip:
      return Gzip(raw);
    case Codec::kZstd: {
      std::string out(ZSTD_compressBound(raw.size()), '\0');
      out.resize(ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 3));
      return out;
    }
    case Codec::kLz4Raw:
      return Lz4Block(raw);
    case Codec::kLz4: {
      std::string out;
      const std::string block = Lz4Block(raw);
      PutBigEndian32(&out, static_cast<uint32_t>(raw.size()));
      PutBigEndian32(&out, static_cast<uint32_t>(block.size()));
      return out + block;
    }
    case Codec::kBrotli: {
      std::string out(BrotliEncoderMaxCompressedSize(raw.size()) + 16, '\0');
      size_t n = out.size();
      EXPECT_TRUE(BrotliEncoderCompress(5, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, raw.size(),
                                        reinterpret_cast<const uint8_t*>(raw.data()), &n,
                                        reinterpret_cast<uint8_t*>(out.data())));
      out.resize(n);
      return out;
    }
    case Codec::kLzo:
      break;
  }
  ADD_FAILURE() << "no encoder for " << ToString(codec);
  return "";
}

TestFileWriter::TestFileWriter(std::vector<::parquet::SchemaElement> schema) {
  meta_.__set_version(1);
  // Leaves and their paths from the depth-first elements.
  struct Open {
    int remaining;
    std::string name;
  };
  std::vector<Open> open;
  for (size_t i = 0; i < schema.size(); ++i) {
    const auto& e = schema[i];
    while (!open.empty() && open.back().remaining == 0) open.pop_back();
    if (!open.empty()) --open.back().remaining;
    if (i == 0 || e.__isset.num_children) {
      open.push_back({e.num_children, i == 0 ? "" : e.name});
      continue;
    }
    std::vector<std::string> path;
    for (const Open& o : open) {
      if (!o.name.empty()) path.push_back(o.name);
    }
    path.push_back(e.name);
    leaves_.push_back(static_cast<int>(i));
    paths_.push_back(path);
  }
  meta_.__set_schema(std::move(schema));
}

void TestFileWriter::BeginRowGroup(int64_t rows) {
  ::parquet::RowGroup rg;
  rg.__set_num_rows(rows);
  meta_.row_groups.push_back(rg);
  meta_.num_rows += rows;
  column_ = 0;
}

void TestFileWriter::BeginColumn(Codec codec) {
  ASSERT_LT(column_, leaves_.size());
  codec_ = codec;
  chunk_ = ::parquet::ColumnChunk();
  chunk_start_ = static_cast<int64_t>(bytes_.size());
  auto& m = chunk_.meta_data;
  m.type = meta_.schema[leaves_[column_]].type;
  m.path_in_schema = paths_[column_];
  m.codec = static_cast<::parquet::CompressionCodec::type>(codec);
  m.num_values = 0;
  m.data_page_offset = -1;
  chunk_.__isset.meta_data = true;
  chunk_.file_offset = chunk_start_;
}

void TestFileWriter::AddPage(::parquet::PageHeader header, const std::string& stored) {
  std::string body = stored;
  if (corrupt_next_ && !body.empty()) {
    body[body.size() / 2] = static_cast<char>(body[body.size() / 2] ^ 1);
    corrupt_next_ = false;
  }
  bytes_ += Serialize(header);
  bytes_ += body;
}

void TestFileWriter::AddDictionaryPage(int32_t num_values, const std::string& plain) {
  ::parquet::PageHeader h;
  h.type = ::parquet::PageType::DICTIONARY_PAGE;
  const std::string stored = Compress(codec_, plain);
  h.uncompressed_page_size = static_cast<int32_t>(plain.size());
  h.compressed_page_size = static_cast<int32_t>(stored.size());
  h.dictionary_page_header.num_values = num_values;
  h.dictionary_page_header.encoding = ::parquet::Encoding::PLAIN;
  h.__isset.dictionary_page_header = true;
  chunk_.meta_data.__set_dictionary_page_offset(static_cast<int64_t>(bytes_.size()));
  AddPage(h, stored);
}

void TestFileWriter::AddDataPageV1(int32_t num_values, const std::string& body,
                                   ::parquet::Encoding::type encoding, bool with_crc) {
  ::parquet::PageHeader h;
  h.type = ::parquet::PageType::DATA_PAGE;
  const std::string stored = Compress(codec_, body);
  h.uncompressed_page_size = static_cast<int32_t>(body.size());
  h.compressed_page_size = static_cast<int32_t>(stored.size());
  if (with_crc) {
    h.__set_crc(static_cast<int32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(stored.data()), static_cast<uInt>(stored.size()))));
  }
  auto& d = h.data_page_header;
  d.num_values = num_values;
  d.encoding = encoding;
  d.definition_level_encoding = ::parquet::Encoding::RLE;
  d.repetition_level_encoding = ::parquet::Encoding::RLE;
  h.__isset.data_page_header = true;
  if (chunk_.meta_data.data_page_offset < 0) {
    chunk_.meta_data.data_page_offset = static_cast<int64_t>(bytes_.size());
  }
  chunk_.meta_data.num_values += num_values;
  AddPage(h, stored);
}

void TestFileWriter::AddDataPageV2(int32_t num_values, int32_t num_nulls, int32_t num_rows,
                                   const std::string& rep_levels, const std::string& def_levels,
                                   const std::string& values, ::parquet::Encoding::type encoding) {
  ::parquet::PageHeader h;
  h.type = ::parquet::PageType::DATA_PAGE_V2;
  const std::string stored = rep_levels + def_levels + Compress(codec_, values);
  h.uncompressed_page_size =
      static_cast<int32_t>(rep_levels.size() + def_levels.size() + values.size());
  h.compressed_page_size = static_cast<int32_t>(stored.size());
  auto& d = h.data_page_header_v2;
  d.num_values = num_values;
  d.num_nulls = num_nulls;
  d.num_rows = num_rows;
  d.encoding = encoding;
  d.repetition_levels_byte_length = static_cast<int32_t>(rep_levels.size());
  d.definition_levels_byte_length = static_cast<int32_t>(def_levels.size());
  h.__isset.data_page_header_v2 = true;
  if (chunk_.meta_data.data_page_offset < 0) {
    chunk_.meta_data.data_page_offset = static_cast<int64_t>(bytes_.size());
  }
  chunk_.meta_data.num_values += num_values;
  AddPage(h, stored);
}

void TestFileWriter::AddRaw(const std::string& bytes, int64_t num_values) {
  chunk_.meta_data.num_values += num_values;
  if (chunk_.meta_data.data_page_offset < 0) {
    chunk_.meta_data.data_page_offset = static_cast<int64_t>(bytes_.size());
  }
  bytes_ += bytes;
}

void TestFileWriter::EndColumn() {
  auto& m = chunk_.meta_data;
  m.total_compressed_size = static_cast<int64_t>(bytes_.size()) - chunk_start_;
  m.total_uncompressed_size = m.total_compressed_size;
  if (m.data_page_offset < 0) m.data_page_offset = chunk_start_;
  meta_.row_groups.back().columns.push_back(chunk_);
  meta_.row_groups.back().total_byte_size += m.total_compressed_size;
  ++column_;
}

std::string TestFileWriter::Finish(std::string_view magic) {
  const std::string footer = Serialize(meta_);
  std::string out = bytes_ + footer;
  PutU32(&out, static_cast<uint32_t>(footer.size()));
  out += magic;
  return out;
}

}  // namespace opscope::parquet::testing
