// DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY decoding.
#include "import/parquet/delta_decoder.h"

#include <algorithm>
#include <cstring>

#include "import/parquet/bit_unpack.h"
#include "import/parquet/rle_decoder.h"

namespace opscope::parquet {
namespace {

uint64_t ZigZag(uint64_t v) { return (v >> 1) ^ (~(v & 1) + 1); }

}  // namespace

std::string DeltaBinaryPackedDecoder::Init(const uint8_t* data, size_t size) {
  *this = DeltaBinaryPackedDecoder();
  pos_ = data;
  end_ = data + size;
  uint64_t first = 0;
  if (!ReadUleb128(&pos_, end_, &values_per_block_) ||
      !ReadUleb128(&pos_, end_, &miniblocks_per_block_) || !ReadUleb128(&pos_, end_, &total_) ||
      !ReadUleb128(&pos_, end_, &first)) {
    return "DELTA_BINARY_PACKED header cut short";
  }
  if (values_per_block_ == 0 || miniblocks_per_block_ == 0 ||
      values_per_block_ > (uint64_t{1} << 31) || values_per_block_ % miniblocks_per_block_ != 0 ||
      (values_per_block_ / miniblocks_per_block_) % 8 != 0) {
    return "DELTA_BINARY_PACKED header has block size " + std::to_string(values_per_block_) +
           " with " + std::to_string(miniblocks_per_block_) + " miniblocks";
  }
  values_per_miniblock_ = values_per_block_ / miniblocks_per_block_;
  left_ = total_;
  first_ = total_ > 0;
  packed_left_ = total_ > 0 ? total_ - 1 : 0;
  last_ = ZigZag(first);
  miniblock_ = miniblocks_per_block_;  // the next miniblock starts a block
  return "";
}

std::string DeltaBinaryPackedDecoder::StartMiniblock() {
  if (miniblock_ >= miniblocks_per_block_) {
    uint64_t min_delta = 0;
    if (!ReadUleb128(&pos_, end_, &min_delta)) return "DELTA_BINARY_PACKED block cut short";
    min_delta_ = ZigZag(min_delta);
    if (static_cast<uint64_t>(end_ - pos_) < miniblocks_per_block_) {
      return "DELTA_BINARY_PACKED bit widths cut short";
    }
    widths_ = pos_;
    pos_ += miniblocks_per_block_;
    miniblock_ = 0;
  }
  width_ = widths_[miniblock_++];
  if (width_ > 64) return "DELTA_BINARY_PACKED bit width " + std::to_string(width_);
  // A full miniblock is stored even when the values end inside it; a writer that cut the padding
  // is still read as long as the values themselves are there.
  const uint64_t full = values_per_miniblock_ * width_ / 8;
  const uint64_t needed = (std::min(values_per_miniblock_, packed_left_) + 7) / 8 * width_;
  const auto avail = static_cast<uint64_t>(end_ - pos_);
  if (avail < needed) return "DELTA_BINARY_PACKED miniblock past the end of the data";
  mini_data_ = pos_;
  mini_bytes_ = static_cast<size_t>(std::min(full, avail));
  pos_ += mini_bytes_;
  mini_left_ = values_per_miniblock_;
  return "";
}

template <typename T>
std::string DeltaBinaryPackedDecoder::Decode(T* out, size_t n) {
  if (n > left_) {
    return "DELTA_BINARY_PACKED holds " + std::to_string(left_) + " more values, " +
           std::to_string(n) + " wanted";
  }
  size_t i = 0;
  if (first_ && n > 0) {
    out[i++] = static_cast<T>(last_);
    first_ = false;
  }
  uint64_t v = last_;
  while (i < n) {
    if (pending_pos_ == pending_n_) {
      if (mini_left_ == 0) {
        if (std::string why = StartMiniblock(); !why.empty()) return why;
      }
      // Whole groups of 8 from the miniblock (its value count is a multiple of 8).
      const size_t k = static_cast<size_t>(std::min<uint64_t>(mini_left_, kPending));
      const uint64_t consumed = values_per_miniblock_ - mini_left_;
      const auto offset =
          static_cast<size_t>(std::min<uint64_t>(consumed * width_ / 8, mini_bytes_));
      UnpackBits(mini_data_ + offset, mini_bytes_ - offset, width_, pending_, k);
      mini_left_ -= k;
      packed_left_ -= std::min<uint64_t>(packed_left_, k);
      pending_pos_ = 0;
      pending_n_ = k;
    }
    const size_t use = std::min(pending_n_ - pending_pos_, n - i);
    const uint64_t* deltas = pending_ + pending_pos_;
    for (size_t j = 0; j < use; ++j) {
      v += min_delta_ + deltas[j];
      out[i + j] = static_cast<T>(v);
    }
    pending_pos_ += use;
    i += use;
  }
  last_ = v;
  left_ -= n;
  return "";
}

template std::string DeltaBinaryPackedDecoder::Decode<int32_t>(int32_t*, size_t);
template std::string DeltaBinaryPackedDecoder::Decode<int64_t>(int64_t*, size_t);

std::string DecodeDeltaLengthByteArray(const uint8_t* data, size_t size, int64_t count,
                                       ValueBuffer* out) {
  DeltaBinaryPackedDecoder lengths;
  if (std::string why = lengths.Init(data, size); !why.empty()) return why;
  if (lengths.total_values() != static_cast<uint64_t>(count)) {
    return "DELTA_LENGTH_BYTE_ARRAY holds " + std::to_string(lengths.total_values()) +
           " lengths for " + std::to_string(count) + " values";
  }
  // The lengths go into the offset slots, then become offsets.
  const size_t first = out->offsets.size();
  int64_t* slots = out->offsets.Extend(static_cast<size_t>(count));
  int32_t chunk[256];
  for (int64_t done = 0; done < count;) {
    const size_t k = static_cast<size_t>(std::min<int64_t>(256, count - done));
    if (std::string why = lengths.Decode(chunk, k); !why.empty()) return why;
    for (size_t j = 0; j < k; ++j) slots[done + j] = chunk[j];
    done += static_cast<int64_t>(k);
  }
  const uint8_t* bytes = lengths.end();
  const auto avail = static_cast<uint64_t>(data + size - bytes);
  int64_t total = 0;
  const int64_t base = out->offsets[first - 1];
  for (int64_t j = 0; j < count; ++j) {
    if (slots[j] < 0) return "DELTA_LENGTH_BYTE_ARRAY length " + std::to_string(slots[j]);
    total += slots[j];
    if (static_cast<uint64_t>(total) > avail) {
      return "DELTA_LENGTH_BYTE_ARRAY values run past the end of the page";
    }
    slots[j] = base + total;
  }
  if (total > 0) std::memcpy(out->data.Extend(static_cast<size_t>(total)), bytes, total);
  out->count += count;
  return "";
}

std::string DecodeDeltaByteArray(const uint8_t* data, size_t size, int64_t count,
                                 int32_t fixed_length, uint64_t max_bytes, ValueBuffer* out) {
  DeltaBinaryPackedDecoder prefixes;
  if (std::string why = prefixes.Init(data, size); !why.empty()) return why;
  if (prefixes.total_values() != static_cast<uint64_t>(count)) {
    return "DELTA_BYTE_ARRAY holds " + std::to_string(prefixes.total_values()) +
           " prefix lengths for " + std::to_string(count) + " values";
  }
  PodBuffer<int32_t> prefix;
  if (std::string why = prefixes.Decode(prefix.Extend(static_cast<size_t>(count)), count);
      !why.empty()) {
    return why;
  }
  ValueBuffer suffixes;
  suffixes.offsets.push_back(0);
  const auto rest = static_cast<size_t>(data + size - prefixes.end());
  if (std::string why = DecodeDeltaLengthByteArray(prefixes.end(), rest, count, &suffixes);
      !why.empty()) {
    return why;
  }
  // Each value is the previous one's first prefix[i] bytes and its suffix. The previous value of
  // the first is the last one already in `out` (some writers carry it across pages).
  const bool fixed = fixed_length > 0;
  int64_t prev_len = 0;
  if (out->count > 0) {
    prev_len = fixed ? fixed_length : out->offsets[out->count] - out->offsets[out->count - 1];
  }
  uint64_t total = 0;
  int64_t len = prev_len;
  for (int64_t i = 0; i < count; ++i) {
    if (prefix[i] < 0 || prefix[i] > len) {
      return "DELTA_BYTE_ARRAY prefix length " + std::to_string(prefix[i]) + " of a " +
             std::to_string(len) + "-byte value";
    }
    len = prefix[i] + (suffixes.offsets[i + 1] - suffixes.offsets[i]);
    if (fixed && len != fixed_length) {
      return "DELTA_BYTE_ARRAY value of " + std::to_string(len) + " bytes in a column of " +
             std::to_string(fixed_length);
    }
    total += static_cast<uint64_t>(len);
    if (total > max_bytes) {
      return "DELTA_BYTE_ARRAY values decode to more than " + std::to_string(max_bytes) + " bytes";
    }
  }
  out->data.reserve(out->data.size() + total);
  int64_t prev_start = static_cast<int64_t>(out->data.size()) - prev_len;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t suffix_len = suffixes.offsets[i + 1] - suffixes.offsets[i];
    const int64_t start = static_cast<int64_t>(out->data.size());
    uint8_t* dst = out->data.Extend(static_cast<size_t>(prefix[i] + suffix_len));
    if (prefix[i] > 0) std::memcpy(dst, out->data.data() + prev_start, prefix[i]);
    if (suffix_len > 0) {
      std::memcpy(dst + prefix[i], suffixes.data.data() + suffixes.offsets[i], suffix_len);
    }
    if (!fixed) out->offsets.push_back(start + prefix[i] + suffix_len);
    prev_start = start;
  }
  out->count += count;
  return "";
}

}  // namespace opscope::parquet
