// A column chunk's pages: header, checksum, decompression, levels, values.
#include "import/parquet/column_reader.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "import/parquet/codec.h"
#include "import/parquet/rle_decoder.h"
#include "import/parquet/value_decoder.h"

namespace opscope::parquet {
namespace {

using ::parquet::PageHeader;

int LevelBitWidth(int16_t max_level) {
  return max_level <= 0 ? 0 : std::bit_width(static_cast<uint16_t>(max_level));
}

// The deprecated BIT_PACKED level encoding: most significant bit first, no length prefix.
std::string BitPackedLevels(const uint8_t* data, size_t size, int width, int64_t n, int16_t* out,
                            size_t* used) {
  const uint64_t bits = static_cast<uint64_t>(n) * width;
  if ((bits + 7) / 8 > size) return "BIT_PACKED levels run past the page's end";
  uint64_t bit = 0;
  for (int64_t i = 0; i < n; ++i) {
    int v = 0;
    for (int b = 0; b < width; ++b, ++bit) v = v << 1 | ((data[bit / 8] >> (7 - bit % 8)) & 1);
    out[i] = static_cast<int16_t>(v);
  }
  *used = static_cast<size_t>((bits + 7) / 8);
  return "";
}

// Decodes `n` levels from the front of [*pos, end) and moves *pos past them. v1 pages prefix
// RLE levels with their byte length; v2 pages give it in the header (`v2_bytes`, or -1 for v1).
// *at_max (when not null): how many of them are `max_level` (for definition levels, the page's
// non-null values), counted in the pass that checks them.
std::string DecodeLevels(int32_t encoding, int64_t v2_bytes, const uint8_t** pos,
                         const uint8_t* end, int64_t n, int16_t max_level, const char* what,
                         PodBuffer<int16_t>* out, int64_t* at_max) {
  int16_t* dst = out->Extend(static_cast<size_t>(n));
  const int width = LevelBitWidth(max_level);
  const auto avail = static_cast<size_t>(end - *pos);
  size_t used = 0;
  if (v2_bytes < 0 && encoding == static_cast<int32_t>(Encoding::kBitPacked)) {
    if (std::string why = BitPackedLevels(*pos, avail, width, n, dst, &used); !why.empty()) {
      return why;
    }
  } else {
    if (v2_bytes < 0 && encoding != static_cast<int32_t>(Encoding::kRle)) {
      return std::string("unsupported ") + what + " level encoding " + EncodingName(encoding);
    }
    size_t len = static_cast<size_t>(v2_bytes);
    const uint8_t* start = *pos;
    if (v2_bytes < 0) {
      uint32_t prefix = 0;
      if (avail < 4) return std::string(what) + " levels cut short";
      std::memcpy(&prefix, *pos, 4);
      start += 4;
      len = prefix;
      used = 4;
    }
    if (len > avail - used) return std::string(what) + " levels run past the page's end";
    RleDecoder d(start, len, width);
    if (d.GetBatch(reinterpret_cast<uint16_t*>(dst), static_cast<size_t>(n)) !=
        static_cast<size_t>(n)) {
      return std::string(what) +
             " levels: " + (d.error() ? d.error() : "fewer levels than the page's values");
    }
    used += len;
  }
  int16_t top = 0;
  int64_t at = 0;
  for (int64_t i = 0; i < n; ++i) {
    top = std::max(top, dst[i]);
    at += dst[i] == max_level;
  }
  if (at_max != nullptr) *at_max = at;
  if (top > max_level) {
    return std::string(what) + " level " + std::to_string(top) + " above the column's maximum " +
           std::to_string(max_level);
  }
  *pos += used;
  return "";
}

class ChunkReader {
 public:
  ChunkReader(const ChunkSource& source, const ::parquet::ColumnMetaData& meta,
              const ColumnDescriptor& column, ColumnData* out)
      : src_(source), meta_(meta), column_(column), out_(out) {}

  Status Read(uint64_t begin, uint64_t end);

 private:
  Status Fail(uint64_t page_offset, const std::string& why) const {
    return Status::InvalidInput("column '" + column_.path + "' row group " +
                                    std::to_string(src_.row_group) + ", page at byte " +
                                    std::to_string(page_offset) + ": " + why,
                                page_offset)
        .InFile(*src_.file_name);
  }
  std::string ReadPage(const PageHeader& h, const uint8_t* body);
  std::string Uncompress(const uint8_t* data, size_t size, size_t raw_size, const uint8_t** out);
  std::string Dictionary(const PageHeader& h, const uint8_t* body);
  std::string DataPageV1(const PageHeader& h, const uint8_t* body);
  std::string DataPageV2(const PageHeader& h, const uint8_t* body);
  // `data` holds `size` bytes as stored; `raw_size` bytes once decompressed (when `compressed`);
  // `count` non-null values.
  std::string Values(int32_t encoding, const uint8_t* data, size_t size, size_t raw_size,
                     bool compressed, int64_t count);
  // Values() for a dictionary-indexed column: indices, or new dictionary entries.
  std::string IndexedValues(Encoding encoding, const uint8_t* data, size_t size, size_t raw_size,
                            bool compressed, int64_t count);
  std::string CheckBudget(int64_t n);

  const ChunkSource& src_;
  const ::parquet::ColumnMetaData& meta_;
  const ColumnDescriptor& column_;
  ColumnData* out_;
  // The current page decompressed, and the chunk's dictionary: kept in `out` between reads so
  // their memory is reused.
  PodBuffer<uint8_t>& scratch_ = *out_->mutable_scratch();
  ValueBuffer& dictionary_ = *out_->mutable_dictionary();
  bool has_dictionary_ = false;
};

Status ChunkReader::Read(uint64_t begin, uint64_t end) {
  const uint8_t* file = src_.data;
  const int64_t want = meta_.num_values;
  uint64_t pos = begin;
  while (out_->num_levels() < want) {
    if (pos >= end) {
      return Fail(pos, "the column chunk ends after " + std::to_string(out_->num_levels()) +
                           " of its " + std::to_string(want) + " values");
    }
    PageHeader h;
    uint32_t header_bytes = 0;
    if (std::string why = DecodePageHeader(file + pos, end - pos, &h, &header_bytes);
        !why.empty()) {
      return Fail(pos, "page header: " + why);
    }
    const uint64_t body = pos + header_bytes;
    if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0 ||
        static_cast<uint64_t>(h.compressed_page_size) > end - body) {
      return Fail(pos, "page of " + std::to_string(h.compressed_page_size) +
                           " bytes runs past the column chunk's end at byte " +
                           std::to_string(end));
    }
    if (static_cast<uint64_t>(h.uncompressed_page_size) > src_.options->max_page_bytes) {
      return Fail(pos, "page of " + std::to_string(h.uncompressed_page_size) +
                           " bytes uncompressed, over the reader's limit of " +
                           std::to_string(src_.options->max_page_bytes) +
                           " (ReadOptions::max_page_bytes)");
    }
    if (h.__isset.crc && src_.options->verify_checksums) {
      const uint32_t crc = crc32_gzip_refl(0, file + body, h.compressed_page_size);
      if (crc != static_cast<uint32_t>(h.crc)) {
        char text[64];
        std::snprintf(text, sizeof(text), "stored %08x, computed %08x",
                      static_cast<uint32_t>(h.crc), crc);
        return Fail(pos, std::string("page checksum mismatch (CRC-32 ") + text + ")");
      }
    }
    if (std::string why = ReadPage(h, file + body); !why.empty()) return Fail(pos, why);
    pos = body + static_cast<uint64_t>(h.compressed_page_size);
  }
  if (out_->num_levels() > want) {
    return Fail(begin, "pages hold " + std::to_string(out_->num_levels()) +
                           " values, the column chunk " + std::to_string(want));
  }
  return Status::Ok();
}

std::string ChunkReader::ReadPage(const PageHeader& h, const uint8_t* body) {
  switch (RawEnum(h.type)) {
    case ::parquet::PageType::DICTIONARY_PAGE:
      if (!h.__isset.dictionary_page_header) return "dictionary page without its header";
      return Dictionary(h, body);
    case ::parquet::PageType::DATA_PAGE:
      if (!h.__isset.data_page_header) return "data page without its header";
      return DataPageV1(h, body);
    case ::parquet::PageType::DATA_PAGE_V2:
      if (!h.__isset.data_page_header_v2) return "data page v2 without its header";
      return DataPageV2(h, body);
    default:
      return "";  // index pages and page types this reader does not know are skipped
  }
}

// Points *out at the page's raw bytes: the stored bytes themselves when uncompressed, else the
// scratch buffer they are decompressed into.
std::string ChunkReader::Uncompress(const uint8_t* data, size_t size, size_t raw_size,
                                    const uint8_t** out) {
  const auto codec = static_cast<Codec>(RawEnum(meta_.codec));
  if (codec == Codec::kUncompressed) {
    *out = data;
    return "";
  }
  scratch_.clear();
  uint8_t* dst = scratch_.Extend(raw_size);
  *out = dst;
  return Decompress(codec, data, size, dst, raw_size);
}

std::string ChunkReader::Dictionary(const PageHeader& h, const uint8_t* body) {
  if (has_dictionary_) return "a second dictionary page";
  if (out_->num_levels() > 0) return "a dictionary page after data pages";
  const auto& dh = h.dictionary_page_header;
  const int32_t encoding = RawEnum(dh.encoding);
  if (encoding != ::parquet::Encoding::PLAIN && encoding != ::parquet::Encoding::PLAIN_DICTIONARY) {
    return "unsupported dictionary page encoding " + EncodingName(encoding);
  }
  if (dh.num_values < 0) return "dictionary page of " + std::to_string(dh.num_values) + " values";
  const uint8_t* raw = nullptr;
  size_t raw_size = static_cast<size_t>(h.uncompressed_page_size);
  if (RawEnum(meta_.codec) == ::parquet::CompressionCodec::UNCOMPRESSED) {
    raw_size = static_cast<size_t>(h.compressed_page_size);
  }
  if (std::string why = Uncompress(body, h.compressed_page_size, raw_size, &raw); !why.empty()) {
    return why;
  }
  has_dictionary_ = true;
  return DecodeDictionaryPage(column_, raw, raw_size, dh.num_values, &dictionary_);
}

// Refuses a page whose levels and values would decode past the page or row group limits.
std::string ChunkReader::CheckBudget(int64_t n) {
  const uint64_t per_value = (column_.max_def > 0 ? 2 : 0) + (column_.max_rep > 0 ? 2 : 0) +
                             std::max<int32_t>(8, FixedWidth(column_.type, column_.type_length));
  const uint64_t bytes = static_cast<uint64_t>(n) * per_value;
  if (bytes > src_.options->max_page_bytes) {
    return "page of " + std::to_string(n) + " values decodes to more than the reader's limit of " +
           std::to_string(src_.options->max_page_bytes) + " bytes (ReadOptions::max_page_bytes)";
  }
  *src_.row_group_bytes += bytes;
  if (*src_.row_group_bytes > src_.options->max_row_group_bytes) {
    return "the row group's columns decode to more than the reader's limit of " +
           std::to_string(src_.options->max_row_group_bytes) +
           " bytes (ReadOptions::max_row_group_bytes)";
  }
  return "";
}

// The values after a page's levels: as many as its entries at the maximum definition level.
// PLAIN fixed-width values are decompressed straight into the column (no second copy).
std::string ChunkReader::Values(int32_t encoding, const uint8_t* data, size_t size, size_t raw_size,
                                bool compressed, int64_t count) {
  if (encoding < 0 || encoding > static_cast<int32_t>(Encoding::kAlp) ||
      ToString(static_cast<Encoding>(encoding)).empty()) {
    return "unsupported encoding " + EncodingName(encoding);
  }
  const uint64_t before = out_->bytes_held();
  std::string why;
  const auto width = static_cast<uint64_t>(FixedWidth(column_.type, column_.type_length));
  if (out_->dictionary_indexed()) {
    why = IndexedValues(static_cast<Encoding>(encoding), data, size, raw_size, compressed, count);
  } else if (compressed && encoding == static_cast<int32_t>(Encoding::kPlain) && width > 0 &&
             column_.type != PhysicalType::kBoolean) {
    const uint64_t need = static_cast<uint64_t>(count) * width;
    if (need > raw_size)
      return "PLAIN data holds fewer than the page's " + std::to_string(count) + " values";
    ValueBuffer* values = out_->mutable_values();
    const size_t old = values->data.size();
    why = Decompress(static_cast<Codec>(RawEnum(meta_.codec)), data, size,
                     values->data.Extend(raw_size), raw_size);
    values->data.resize(old + need);
    values->count += count;
  } else {
    const uint8_t* raw = data;
    if (compressed) why = Uncompress(data, size, raw_size, &raw);
    if (why.empty()) {
      why =
          DecodeValues(static_cast<Encoding>(encoding), column_, raw, compressed ? raw_size : size,
                       count, has_dictionary_ ? &dictionary_ : nullptr,
                       src_.options->max_page_bytes, out_->mutable_values());
    }
  }
  if (why.empty()) *src_.row_group_bytes += out_->bytes_held() - before;
  return why;
}

std::string ChunkReader::IndexedValues(Encoding encoding, const uint8_t* data, size_t size,
                                       size_t raw_size, bool compressed, int64_t count) {
  const uint8_t* raw = data;
  if (compressed) {
    if (std::string why = Uncompress(data, size, raw_size, &raw); !why.empty()) return why;
    size = raw_size;
  }
  std::string why;
  if (encoding == Encoding::kRleDictionary || encoding == Encoding::kPlainDictionary) {
    if (!has_dictionary_ && count > 0) return "dictionary-encoded page without a dictionary page";
    why =
        DecodeDictionaryIndices(raw, size, count, dictionary_, out_->mutable_dictionary_indices());
  } else {
    why = AppendToDictionary(encoding, column_, raw, size, count, src_.options->max_page_bytes,
                             &dictionary_, out_->mutable_dictionary_indices());
  }
  if (why.empty()) out_->mutable_values()->count += count;
  return why;
}

std::string ChunkReader::DataPageV1(const PageHeader& h, const uint8_t* body) {
  const auto& dh = h.data_page_header;
  const int64_t n = dh.num_values;
  if (n < 0) return "data page of " + std::to_string(n) + " values";
  if (std::string why = CheckBudget(n); !why.empty()) return why;
  const bool compressed = RawEnum(meta_.codec) != ::parquet::CompressionCodec::UNCOMPRESSED;
  const auto stored = static_cast<size_t>(h.compressed_page_size);
  const size_t raw_size = compressed ? static_cast<size_t>(h.uncompressed_page_size) : stored;
  if (column_.max_def == 0 && column_.max_rep == 0) {  // values alone: decoded as stored
    out_->add_levels(n);
    return Values(RawEnum(dh.encoding), body, stored, raw_size, compressed, n);
  }
  const uint8_t* raw = nullptr;
  if (std::string why = Uncompress(body, stored, raw_size, &raw); !why.empty()) return why;
  const uint8_t* pos = raw;
  const uint8_t* end = raw + raw_size;
  int64_t count = n;
  if (column_.max_rep > 0) {
    if (std::string why =
            DecodeLevels(RawEnum(dh.repetition_level_encoding), -1, &pos, end, n, column_.max_rep,
                         "repetition", out_->mutable_rep_levels(), nullptr);
        !why.empty()) {
      return why;
    }
  }
  if (column_.max_def > 0) {
    if (std::string why =
            DecodeLevels(RawEnum(dh.definition_level_encoding), -1, &pos, end, n, column_.max_def,
                         "definition", out_->mutable_def_levels(), &count);
        !why.empty()) {
      return why;
    }
  }
  out_->add_levels(n);
  return Values(RawEnum(dh.encoding), pos, static_cast<size_t>(end - pos), 0, false, count);
}

std::string ChunkReader::DataPageV2(const PageHeader& h, const uint8_t* body) {
  const auto& dh = h.data_page_header_v2;
  const int64_t n = dh.num_values;
  if (n < 0) return "data page of " + std::to_string(n) + " values";
  if (std::string why = CheckBudget(n); !why.empty()) return why;
  // Levels first, never compressed; then the values, compressed unless is_compressed is false.
  const int64_t rep_bytes = dh.repetition_levels_byte_length;
  const int64_t def_bytes = dh.definition_levels_byte_length;
  if (rep_bytes < 0 || def_bytes < 0 || rep_bytes + def_bytes > h.compressed_page_size ||
      rep_bytes + def_bytes > h.uncompressed_page_size) {
    return "data page v2 levels of " + std::to_string(rep_bytes) + " + " +
           std::to_string(def_bytes) + " bytes do not fit the page";
  }
  const uint8_t* pos = body;
  int64_t count = n;
  if (column_.max_rep > 0) {
    if (std::string why = DecodeLevels(0, rep_bytes, &pos, pos + rep_bytes, n, column_.max_rep,
                                       "repetition", out_->mutable_rep_levels(), nullptr);
        !why.empty()) {
      return why;
    }
  }
  pos = body + rep_bytes;
  if (column_.max_def > 0) {
    if (std::string why = DecodeLevels(0, def_bytes, &pos, pos + def_bytes, n, column_.max_def,
                                       "definition", out_->mutable_def_levels(), &count);
        !why.empty()) {
      return why;
    }
  }
  out_->add_levels(n);
  const uint8_t* values = body + rep_bytes + def_bytes;
  const auto stored = static_cast<size_t>(h.compressed_page_size - rep_bytes - def_bytes);
  const auto raw_size = static_cast<size_t>(h.uncompressed_page_size - rep_bytes - def_bytes);
  // An empty stored section holds no values whatever the codec (no stream to decompress).
  const bool compressed = dh.is_compressed && stored > 0 &&
                          RawEnum(meta_.codec) != ::parquet::CompressionCodec::UNCOMPRESSED;
  return Values(RawEnum(dh.encoding), values, stored, raw_size, compressed, count);
}

}  // namespace

Status ReadColumnChunk(const ChunkSource& source, const ::parquet::ColumnChunk& chunk,
                       const ColumnDescriptor& column, ColumnData* out) {
  const auto fail = [&](uint64_t offset, const std::string& why) {
    return Status::InvalidInput("column '" + column.path + "' row group " +
                                    std::to_string(source.row_group) + ": " + why,
                                offset)
        .InFile(*source.file_name);
  };
  if (chunk.__isset.crypto_metadata || chunk.__isset.encrypted_column_metadata) {
    return fail(0, "the column is encrypted (Parquet modular encryption is not supported)");
  }
  if (chunk.__isset.file_path && !chunk.file_path.empty()) {
    return fail(0, "the column chunk lies in another file ('" + chunk.file_path +
                       "'), which this reader does not follow");
  }
  if (!chunk.__isset.meta_data) return fail(0, "the column chunk has no metadata");
  const ::parquet::ColumnMetaData& meta = chunk.meta_data;
  if (RawEnum(meta.type) != static_cast<int>(column.type)) {
    return fail(0, "the column chunk's type " + std::to_string(RawEnum(meta.type)) +
                       " differs from the schema's " + std::string(ToString(column.type)));
  }
  if (!IsSupportedCodec(RawEnum(meta.codec))) {
    return fail(0, "unsupported codec " + CodecName(RawEnum(meta.codec)));
  }
  if (meta.num_values == 0 && source.row_group_rows == 0) {
    return Status::Ok();  // nothing to read (some writers leave an empty chunk's offsets at 0)
  }
  // The chunk starts at its dictionary page when it has one (0 is a known writer bug: page data
  // never starts inside the magic).
  uint64_t begin = static_cast<uint64_t>(meta.data_page_offset);
  if (meta.__isset.dictionary_page_offset && meta.dictionary_page_offset > 0 &&
      static_cast<uint64_t>(meta.dictionary_page_offset) < begin) {
    begin = static_cast<uint64_t>(meta.dictionary_page_offset);
  }
  const uint64_t size = static_cast<uint64_t>(meta.total_compressed_size);
  if (meta.data_page_offset < 0 || meta.total_compressed_size < 0 || meta.num_values < 0 ||
      begin < source.data_begin || begin > source.data_end || size > source.data_end - begin) {
    return fail(begin, "the column chunk [" + std::to_string(meta.data_page_offset) + ", +" +
                           std::to_string(meta.total_compressed_size) +
                           ") lies outside the file's data [" + std::to_string(source.data_begin) +
                           ", " + std::to_string(source.data_end) + ")");
  }
  out->mutable_dictionary()->Clear();
  ChunkReader reader(source, meta, column, out);
  if (Status st = reader.Read(begin, begin + size); !st.ok()) return st;
  // Every row of the row group has its first entry in every column (a rep level of 0).
  int64_t rows = out->num_levels();
  if (column.max_rep > 0) {
    rows = 0;
    for (int16_t r : out->rep_levels()) rows += r == 0;
    if (out->num_levels() > 0 && out->rep_levels()[0] != 0) {
      return fail(begin, "the column chunk's first repetition level is not 0");
    }
  }
  if (rows != source.row_group_rows) {
    return fail(begin, "the column chunk holds " + std::to_string(rows) + " rows, its row group " +
                           std::to_string(source.row_group_rows));
  }
  return Status::Ok();
}

}  // namespace opscope::parquet
