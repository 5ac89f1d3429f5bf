// Value decoding for every encoding, in batches with no per-value calls or allocations.
#include "import/parquet/value_decoder.h"

#include <algorithm>
#include <cstring>

#include "import/parquet/bit_unpack.h"
#include "import/parquet/delta_decoder.h"
#include "import/parquet/rle_decoder.h"

namespace opscope::parquet {
namespace {

constexpr size_t kBatch = 1024;

std::string TooFew(std::string_view encoding, int64_t count) {
  return std::string(encoding) + " data holds fewer than the page's " + std::to_string(count) +
         " values";
}

std::string PlainByteArrays(const uint8_t* data, size_t size, int64_t count, ValueBuffer* out) {
  // Each value takes at least its 4-byte length: a count the bytes cannot hold is refused before
  // anything is sized from it.
  if (static_cast<uint64_t>(count) > size / 4) return TooFew("PLAIN", count);
  // The values' bytes are fewer than the page's: one extension covers them (with slack for the
  // fixed-size moves of short values), trimmed to what was written at the end.
  const size_t old_size = out->data.size();
  uint8_t* const first = out->data.Extend(size + kCopySlack);
  uint8_t* dst = first;
  int64_t* offsets = out->offsets.Extend(static_cast<size_t>(count));
  int64_t end = out->offsets[out->offsets.size() - static_cast<size_t>(count) - 1];
  const uint8_t* p = data;
  const uint8_t* limit = data + size;
  std::string why;
  for (int64_t i = 0; i < count; ++i) {
    if (limit - p < 4) {
      why = TooFew("PLAIN", count);
      break;
    }
    uint32_t len;
    std::memcpy(&len, p, 4);
    p += 4;
    const auto left = static_cast<size_t>(limit - p);
    if (len > left) {
      why = "PLAIN byte array runs past the page's end";
      break;
    }
    if (len <= kCopySlack && left >= kCopySlack) {
      std::memcpy(dst, p, kCopySlack);
    } else {
      std::memcpy(dst, p, len);
    }
    dst += len;
    p += len;
    end += len;
    offsets[i] = end;
  }
  out->data.resize(old_size + static_cast<size_t>(dst - first));
  return why;
}

// Copies `count` dictionary entries picked by `indices` (each checked < dict.count).
void GatherFixed(const ValueBuffer& dict, size_t width, const uint32_t* indices, size_t n,
                 uint8_t* dst) {
  const uint8_t* src = dict.data.data();
  switch (width) {
    case 1:
      for (size_t i = 0; i < n; ++i) dst[i] = src[indices[i]];
      break;
    case 4: {
      auto* d = reinterpret_cast<uint32_t*>(dst);
      const auto* s = reinterpret_cast<const uint32_t*>(src);
      for (size_t i = 0; i < n; ++i) d[i] = s[indices[i]];
      break;
    }
    case 8: {
      auto* d = reinterpret_cast<uint64_t*>(dst);
      const auto* s = reinterpret_cast<const uint64_t*>(src);
      for (size_t i = 0; i < n; ++i) d[i] = s[indices[i]];
      break;
    }
    default:
      for (size_t i = 0; i < n; ++i) std::memcpy(dst + i * width, src + indices[i] * width, width);
  }
}

std::string Dictionary(const ColumnDescriptor& column, const uint8_t* data, size_t size,
                       int64_t count, const ValueBuffer* dict, uint64_t max_bytes,
                       ValueBuffer* out) {
  if (count == 0) return "";
  if (dict == nullptr) return "dictionary-encoded page without a dictionary page";
  if (size < 1) return "dictionary indices missing";
  const int width = data[0];
  if (width > 32) return "dictionary index bit width " + std::to_string(width);
  RleDecoder indices(data + 1, size - 1, width);
  const bool bytes = column.type == PhysicalType::kByteArray;
  const size_t w = static_cast<size_t>(FixedWidth(column.type, column.type_length));
  uint32_t idx[kBatch];
  uint64_t gathered = 0;
  for (int64_t done = 0; done < count;) {
    const size_t n = std::min<size_t>(kBatch, static_cast<size_t>(count - done));
    if (indices.GetBatch(idx, n) != n) {
      return indices.error() ? std::string("dictionary indices: ") + indices.error()
                             : TooFew("dictionary index", count);
    }
    uint32_t max_index = 0;
    for (size_t i = 0; i < n; ++i) max_index = std::max(max_index, idx[i]);
    if (max_index >= dict->count) {
      return "dictionary index " + std::to_string(max_index) + " out of range (the dictionary " +
             "holds " + std::to_string(dict->count) + " values)";
    }
    if (bytes) {
      const int64_t* off = dict->offsets.data();
      uint64_t total = 0;
      for (size_t i = 0; i < n; ++i) total += off[idx[i] + 1] - off[idx[i]];
      gathered += total;
      if (gathered > max_bytes) {
        return "dictionary values decode to more than " + std::to_string(max_bytes) + " bytes";
      }
      // The dictionary is padded (kCopySlack readable bytes past its end) and so is the output:
      // values up to kCopySlack bytes copy as one fixed-size move instead of a memcpy call each.
      uint8_t* dst = out->data.Extend(total + kCopySlack);
      out->data.resize(out->data.size() - kCopySlack);
      int64_t end = static_cast<int64_t>(out->data.size() - total);
      int64_t* offsets = out->offsets.Extend(n);
      const uint8_t* src = dict->data.data();
      for (size_t i = 0; i < n; ++i) {
        const int64_t len = off[idx[i] + 1] - off[idx[i]];
        if (len <= static_cast<int64_t>(kCopySlack)) {
          std::memcpy(dst, src + off[idx[i]], kCopySlack);
        } else {
          std::memcpy(dst, src + off[idx[i]], len);
        }
        dst += len;
        end += len;
        offsets[i] = end;
      }
    } else {
      GatherFixed(*dict, w, idx, n, out->data.Extend(n * w));
    }
    done += static_cast<int64_t>(n);
  }
  out->count += count;
  return "";
}

std::string RleBooleans(const uint8_t* data, size_t size, int64_t count, ValueBuffer* out) {
  if (size < 4) return "RLE boolean length missing";
  uint32_t len;
  std::memcpy(&len, data, 4);
  if (len > size - 4) return "RLE boolean data runs past the page's end";
  RleDecoder d(data + 4, len, 1);
  uint8_t* dst = out->data.Extend(static_cast<size_t>(count));
  if (d.GetBatch(dst, static_cast<size_t>(count)) != static_cast<size_t>(count)) {
    return d.error() ? std::string("RLE booleans: ") + d.error() : TooFew("RLE", count);
  }
  out->count += count;
  return "";
}

std::string ByteStreamSplit(size_t width, const uint8_t* data, size_t size, int64_t count,
                            ValueBuffer* out) {
  // K streams of N bytes fill the page's data: N = size / K.
  const size_t n = size / width;
  if (n < static_cast<size_t>(count)) return TooFew("BYTE_STREAM_SPLIT", count);
  uint8_t* dst = out->data.Extend(static_cast<size_t>(count) * width);
  const auto c = static_cast<size_t>(count);
  for (size_t k = 0; k < width; ++k) {
    const uint8_t* stream = data + k * n;
    for (size_t i = 0; i < c; ++i) dst[i * width + k] = stream[i];
  }
  out->count += count;
  return "";
}

template <typename T>
std::string DeltaInts(const uint8_t* data, size_t size, int64_t count, ValueBuffer* out) {
  DeltaBinaryPackedDecoder d;
  if (std::string why = d.Init(data, size); !why.empty()) return why;
  if (d.total_values() < static_cast<uint64_t>(count)) return TooFew("DELTA_BINARY_PACKED", count);
  T* dst = reinterpret_cast<T*>(out->data.Extend(static_cast<size_t>(count) * sizeof(T)));
  if (std::string why = d.Decode(dst, static_cast<size_t>(count)); !why.empty()) return why;
  out->count += count;
  return "";
}

std::string Unsupported(Encoding encoding, const ColumnDescriptor& column) {
  return "unsupported encoding " + std::string(ToString(encoding)) + " for a " +
         std::string(ToString(column.type)) + " column";
}

}  // namespace

std::string DecodePlain(const ColumnDescriptor& column, const uint8_t* data, size_t size,
                        int64_t count, ValueBuffer* out) {
  if (count == 0) return "";
  if (column.type == PhysicalType::kByteArray) {
    if (std::string why = PlainByteArrays(data, size, count, out); !why.empty()) return why;
    out->count += count;
    return "";
  }
  const auto c = static_cast<uint64_t>(count);
  if (column.type == PhysicalType::kBoolean) {
    if ((c + 7) / 8 > size) return TooFew("PLAIN", count);
    const size_t rounded = static_cast<size_t>((c + 7) / 8 * 8);
    const size_t old = out->data.size();
    UnpackBits(data, size, 1, out->data.Extend(rounded), rounded);
    out->data.resize(old + static_cast<size_t>(c));
  } else {
    const auto w = static_cast<uint64_t>(FixedWidth(column.type, column.type_length));
    if (c * w > size) return TooFew("PLAIN", count);
    std::memcpy(out->data.Extend(static_cast<size_t>(c * w)), data, static_cast<size_t>(c * w));
  }
  out->count += count;
  return "";
}

std::string DecodeDictionaryPage(const ColumnDescriptor& column, const uint8_t* data, size_t size,
                                 int64_t count, ValueBuffer* dict) {
  if (column.type == PhysicalType::kByteArray) dict->offsets.push_back(0);
  if (std::string why = DecodePlain(column, data, size, count, dict); !why.empty()) return why;
  std::memset(dict->data.Extend(kCopySlack), 0, kCopySlack);
  dict->data.resize(dict->data.size() - kCopySlack);
  return "";
}

std::string DecodeValues(Encoding encoding, const ColumnDescriptor& column, const uint8_t* data,
                         size_t size, int64_t count, const ValueBuffer* dictionary,
                         uint64_t max_bytes, ValueBuffer* out) {
  const PhysicalType t = column.type;
  switch (encoding) {
    case Encoding::kPlain:
      return DecodePlain(column, data, size, count, out);
    case Encoding::kPlainDictionary:
    case Encoding::kRleDictionary:
      return Dictionary(column, data, size, count, dictionary, max_bytes, out);
    case Encoding::kRle:
      if (t != PhysicalType::kBoolean) break;
      return RleBooleans(data, size, count, out);
    case Encoding::kDeltaBinaryPacked:
      if (t == PhysicalType::kInt32) return DeltaInts<int32_t>(data, size, count, out);
      if (t == PhysicalType::kInt64) return DeltaInts<int64_t>(data, size, count, out);
      break;
    case Encoding::kDeltaLengthByteArray:
      if (t != PhysicalType::kByteArray) break;
      return DecodeDeltaLengthByteArray(data, size, count, out);
    case Encoding::kDeltaByteArray:
      if (t != PhysicalType::kByteArray && t != PhysicalType::kFixedLenByteArray) break;
      return DecodeDeltaByteArray(data, size, count,
                                  t == PhysicalType::kByteArray ? 0 : column.type_length, max_bytes,
                                  out);
    case Encoding::kByteStreamSplit:
      if (t == PhysicalType::kBoolean || t == PhysicalType::kByteArray ||
          t == PhysicalType::kInt96) {
        break;
      }
      return ByteStreamSplit(static_cast<size_t>(FixedWidth(t, column.type_length)), data, size,
                             count, out);
    case Encoding::kBitPacked:
    case Encoding::kAlp:
      break;
  }
  return Unsupported(encoding, column);
}

std::string DecodeDictionaryIndices(const uint8_t* data, size_t size, int64_t count,
                                    const ValueBuffer& dict, PodBuffer<int32_t>* indices) {
  if (count == 0) return "";
  if (size < 1) return "dictionary indices missing";
  const int width = data[0];
  if (width > 32) return "dictionary index bit width " + std::to_string(width);
  RleDecoder decoder(data + 1, size - 1, width);
  auto* dst = reinterpret_cast<uint32_t*>(indices->Extend(static_cast<size_t>(count)));
  for (int64_t done = 0; done < count;) {
    const size_t n = std::min<size_t>(kBatch, static_cast<size_t>(count - done));
    if (decoder.GetBatch(dst + done, n) != n) {
      return decoder.error() ? std::string("dictionary indices: ") + decoder.error()
                             : TooFew("dictionary index", count);
    }
    uint32_t max_index = 0;
    for (size_t i = 0; i < n; ++i) max_index = std::max(max_index, dst[done + i]);
    if (max_index >= dict.count) {
      return "dictionary index " + std::to_string(max_index) + " out of range (the dictionary " +
             "holds " + std::to_string(dict.count) + " values)";
    }
    done += static_cast<int64_t>(n);
  }
  return "";
}

std::string AppendToDictionary(Encoding encoding, const ColumnDescriptor& column,
                               const uint8_t* data, size_t size, int64_t count, uint64_t max_bytes,
                               ValueBuffer* dict, PodBuffer<int32_t>* indices) {
  if (dict->offsets.empty()) dict->offsets.push_back(0);  // a chunk with no dictionary page
  if (dict->count + count > INT32_MAX) return "more than 2^31 distinct values in a column chunk";
  // Decoded apart, then appended: DELTA_BYTE_ARRAY's first value may share a prefix with the
  // column's previous value (parquet-mr carries it across pages), which is seeded first.
  ValueBuffer page;
  page.offsets.push_back(0);
  int64_t seed = 0;
  if (encoding == Encoding::kDeltaByteArray && !indices->empty()) {
    const std::string_view last = dict->ByteArray((*indices)[indices->size() - 1]);
    if (!last.empty()) std::memcpy(page.data.Extend(last.size()), last.data(), last.size());
    page.offsets.push_back(static_cast<int64_t>(last.size()));
    page.count = seed = 1;
  }
  if (std::string why =
          DecodeValues(encoding, column, data, size, count, nullptr, max_bytes, &page);
      !why.empty()) {
    return why;
  }
  const auto first = static_cast<int32_t>(dict->count);
  const int64_t from = page.offsets[static_cast<size_t>(seed)];
  const int64_t bytes = page.offsets[static_cast<size_t>(page.count)] - from;
  const int64_t base = dict->offsets[static_cast<size_t>(dict->count)];
  if (bytes > 0)
    std::memcpy(dict->data.Extend(static_cast<size_t>(bytes)), page.data.data() + from,
                static_cast<size_t>(bytes));
  int64_t* offsets = dict->offsets.Extend(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    offsets[i] = base + page.offsets[static_cast<size_t>(seed + i + 1)] - from;
  }
  dict->count += count;
  int32_t* dst = indices->Extend(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) dst[i] = first + static_cast<int32_t>(i);
  return "";
}

}  // namespace opscope::parquet
